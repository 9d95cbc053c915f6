"""The scripts under examples/ run as documented (from the repository root)."""

import subprocess
import sys

from conftest import ROOT


def test_python_tour_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python_tour.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "", "RAGSTATS_EXAMPLE_OUT": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split()[:2] == ["hotpotqa", "question"]
    assert any(l.startswith("estimate 0.010276, 95% CI [") for l in lines)
    assert any(l.startswith("446:2:1  SE ") for l in lines)
