"""The keywords of the front door's analyses are typed from the library's settings types
(`scripts/gen-python-api.py` reads their JSON schemas): `mypy --strict` accepts a typed
script that uses them right and names each keyword used wrong."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

GOOD = """
import pathlib
import ragstats

v = ragstats.variance("data/demo/panel.csv", contrast="adaptive-open", duplicates="mean",
                      weights={"hotpotqa": 1.0, "musique": 2.0}, by="selector")
c = ragstats.correlate("data/demo/capability.csv", x=["planning", "evidence"], y="browsecomp",
                       method="spearman", backend="cpu", replicates=200, confidence=0.9)
a = ragstats.mcq.agree("data/mcq/annotations.jsonl", items="data/mcq/sample.jsonl",
                       gold_out=pathlib.Path("gold.jsonl"))
s = ragstats.score_answers("answers.jsonl", style="musique", per_item=True)
text: str = v.text
"""

BAD = """
import ragstats

ragstats.variance("p.csv", contrast=1)
ragstats.variance("p.csv", duplicates="sum")
ragstats.correlate("t.csv", x=["a"], y=["b"], method="pearsn")
ragstats.correlate("t.csv", x=["a"], y=["b"], backend="tpu")
ragstats.score_answers("a.jsonl", style="nq")
ragstats.variance("p.csv", contrst="a-b")
"""


def mypy(tmp_path, name, text):
    script = tmp_path / name
    script.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / ".mypy"), str(script)],
        capture_output=True, text=True, cwd=ROOT,
    )


@pytest.mark.skipif(shutil.which("mypy") is None and not (pathlib.Path(sys.executable).parent / "mypy").exists(),
                    reason="mypy is installed by .ci/run")
def test_mypy_strict_accepts_right_keywords_and_names_wrong_ones(tmp_path):
    good = mypy(tmp_path, "good.py", GOOD)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path, "bad.py", BAD)
    assert bad.returncode == 1, bad.stdout
    errors = [l for l in bad.stdout.splitlines() if ": error:" in l]
    # One error per wrong line, on that line, naming the keyword.
    lines = {int(l.split(":")[1]) for l in errors}
    assert lines == {4, 5, 6, 7, 8, 9}, bad.stdout
    for keyword in ['"contrast"', '"duplicates"', '"method"', '"backend"', '"style"', '"contrst"']:
        assert any(keyword in l for l in errors), (keyword, bad.stdout)
