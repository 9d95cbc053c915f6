"""Every Python analysis against its command: to_dict() equals `stats … --format json` on
the demo data (the inputs of tests/golden/), frames give the numbers of paths, bad input
raises InputError with the CLI's message, Ctrl-C stops a long bootstrap, and the generated
API is current."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import polars as pl
import pyarrow.csv
import pytest

import ragstats
from conftest import ROOT, cli_json, stats, stats_exe

P = "data/demo/panel.csv"
C = ["--contrast", "adaptive-open"]
B = ["--backend", "cpu", "--replicates", "2000"]
FAST = dict(backend="cpu", replicates=2000)
BARE = "data/demo/mcq-bare.jsonl"
INF = "data/demo/mcq-informative.jsonl"
CAP = ["data/demo/capability.csv", "--x", "planning,evidence,reasoning,noise", "--y", "browsecomp,xbench"]
CAPKW = dict(x="planning,evidence,reasoning,noise", y="browsecomp,xbench")

L = "data/demo/ledger.jsonl"
ARMS4 = "tests/fixtures/compare/arms4.csv"
PR = "data/demo/prices.toml"

# (id, the Python call, the same command's argv)
CASES = [
    ("cost", lambda: ragstats.cost(L, prices=PR, search_price="0:1:0.5"), ["cost", L, "--prices", PR, "--search-price", "0:1:0.5"]),
    (
        "efficiency",
        lambda: ragstats.efficiency(P, contrast="adaptive-open", ledger=L, prices=PR, currency="tokens,usd", **FAST),
        ["efficiency", P, *C, "--ledger", L, "--prices", PR, "--currency", "tokens,usd", *B],
    ),
    (
        "allocate",
        lambda: ragstats.allocate(P, contrast="adaptive-open", ledger=L, prices=PR, allocation=["A=446:2:1", "B=174:2:5"], **FAST),
        ["allocate", P, *C, "--ledger", L, "--prices", PR, "--allocation", "A=446:2:1", "--allocation", "B=174:2:5", *B],
    ),
    (
        "plan",
        lambda: ragstats.plan(audit=P, contrast="adaptive-open", ledger=L, mde=0.02, replicates=2000),
        ["plan", "--audit", P, *C, "--ledger", L, "--mde", "0.02", "--replicates", "2000"],
    ),
    ("variance", lambda: ragstats.variance(P, contrast="adaptive-open"), ["variance", P, *C]),
    (
        "forecast",
        lambda: ragstats.forecast(audit=P, contrast="adaptive-open", design=["446:2:1", "174:2:5"]),
        ["forecast", "--audit", P, *C, "--design", "446:2:1", "--design", "174:2:5"],
    ),
    ("bootstrap", lambda: ragstats.bootstrap(P, contrast="adaptive-open", **FAST), ["bootstrap", P, *C, *B]),
    (
        "bootstrap-bca",
        lambda: ragstats.bootstrap(P, contrast="adaptive-open", method="bca", components=True, design="446:2:1", **FAST),
        ["bootstrap", P, *C, *B, "--method", "bca", "--components", "--design", "446:2:1"],
    ),
    (
        "consistency",
        lambda: ragstats.consistency("data/demo/reads.csv", by="temperature", **FAST),
        ["consistency", "data/demo/reads.csv", "--by", "temperature", *B],
    ),
    (
        "score-answers",
        lambda: ragstats.score_answers("tests/golden/inputs/answers.jsonl", style="squad"),
        ["score-answers", "tests/golden/inputs/answers.jsonl", "--style", "squad"],
    ),
    ("correlate", lambda: ragstats.correlate(CAP[0], method="spearman", **CAPKW, **FAST), ["correlate", *CAP, "--method", "spearman", *B]),
    (
        "run-audit",
        lambda: ragstats.run_audit("data/mcq/generated/trajectories.jsonl"),
        ["run-audit", "data/mcq/generated/trajectories.jsonl", "--json"],
    ),
    ("mcq-validate", lambda: ragstats.mcq.validate("data/mcq/sample.jsonl"), ["mcq", "validate", "data/mcq/sample.jsonl"]),
    ("mcq-score", lambda: ragstats.mcq.score(BARE, positions=True, **FAST), ["mcq", "score", BARE, "--positions", *B]),
    ("mcq-compare", lambda: ragstats.mcq.compare(BARE, INF, **FAST), ["mcq", "compare", BARE, INF, *B]),
    ("mcq-compare-3", lambda: ragstats.mcq.compare(BARE, INF, [BARE], **FAST), ["mcq", "compare", BARE, INF, BARE, *B]),
    ("compare", lambda: ragstats.compare(ARMS4, reference="base", **FAST), ["compare", ARMS4, "--reference", "base", *B]),
    (
        "mcq-agree",
        lambda: ragstats.mcq.agree("data/mcq/annotations.jsonl", items="data/mcq/sample.jsonl"),
        ["mcq", "agree", "data/mcq/annotations.jsonl", "--items", "data/mcq/sample.jsonl"],
    ),
    (
        "mcq-cost",
        lambda: ragstats.mcq.cost("tests/golden/inputs/mcq-bare.ledger.jsonl", prices="tests/golden/inputs/mcq-prices.toml"),
        ["mcq", "cost", "tests/golden/inputs/mcq-bare.ledger.jsonl", "--prices", "tests/golden/inputs/mcq-prices.toml"],
    ),
]


@pytest.mark.parametrize("call,argv", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_to_dict_is_the_cli_json(call, argv):
    if argv[0] == "run-audit":
        out = stats(*argv)
        import json

        want = json.loads(out.stdout)
    else:
        want = cli_json(*argv)
    assert call().to_dict() == want


def test_merge_is_the_cli_merge(tmp_path):
    shards = []
    for rng in ["0..1200", "1200..2000"]:
        f = str(tmp_path / f"{rng}.bin")
        ragstats.bootstrap(P, contrast="adaptive-open", replicates_range=rng, replicates_out=f, backend="cpu", replicates=2000)
        shards.append(f)
    got = ragstats.merge(shards[::-1]).to_dict()
    assert got == cli_json("merge", *shards[::-1])
    whole = ragstats.bootstrap(P, contrast="adaptive-open", **FAST).to_dict()
    # The merged shards are the single run: the same interval to the last bit.
    assert got["ci"] == whole["ci"] and got["se"] == whole["se"]


def test_mcq_filter_writes_what_the_cli_writes(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    preds = [BARE, "tests/golden/inputs/mcq-informative-b.jsonl"]
    got = ragstats.mcq.filter("data/mcq/sample.jsonl", predictions=preds, out=str(a)).to_dict()
    want = cli_json("mcq", "filter", "data/mcq/sample.jsonl", "--predictions", *preds, "--out", str(b))
    assert a.read_text() == b.read_text()
    assert got["kept"] == want["kept"] and got["dropped"] == want["dropped"]


FRAMES = {
    "pandas": lambda: pd.read_csv(ROOT / P),
    "polars": lambda: pl.read_csv(ROOT / P),
    "pyarrow": lambda: pyarrow.csv.read_csv(ROOT / P),
}


def body(doc):
    return {k: v for k, v in doc.items() if k != "run"}


@pytest.mark.parametrize("kind", FRAMES)
def test_frames_give_the_numbers_of_the_path(kind):
    frame = FRAMES[kind]()
    for fn, kw in [
        (ragstats.variance, {}),
        (ragstats.bootstrap, dict(method="bca", **FAST)),
        (lambda p, **k: ragstats.forecast(audit=p, **k), dict(design=["446:2:1"])),
    ]:
        want = fn(P, contrast="adaptive-open", **kw).to_dict()
        got = fn(frame, contrast="adaptive-open", **kw).to_dict()
        assert body(got) == body(want)
        assert set(got["run"]["inputs"].values()) & {f"<{kind}.DataFrame>", "<pyarrow.Table>"}


def test_bad_input_raises_input_error_with_the_cli_message():
    df = pd.read_csv(ROOT / P)
    df.loc[4, "f1"] = None
    with pytest.raises(ragstats.InputError, match=r"^<pandas\.DataFrame>:5: missing score in column 'f1'$"):
        ragstats.variance(df, contrast="adaptive-open")
    # A bad value names the keyword, never the command line's flag.
    # (bootstrap takes its keywords as the library's settings: a value of the wrong kind is
    # a TypeError, a value out of range the library's words, each named by its keyword.)
    with pytest.raises(TypeError, match="^replicates: invalid type: string \"many\""):
        ragstats.bootstrap(P, replicates="many")
    with pytest.raises(ragstats.InputError, match="^confidence: 1.5 must be between 0 and 1") as e:
        ragstats.bootstrap(P, confidence=1.5)
    assert "--" not in str(e.value), e.value
    # An error of the library about one setting names its keyword, in the analysis's words.
    with pytest.raises(ragstats.InputError) as e:
        ragstats.variance(P, contrast="nope-open")
    assert str(e.value) == (
        "contrast: unknown arm 'nope' in the contrast nope-open; the panel's arms are: open, adaptive"
    )
    with pytest.raises(ragstats.InputError) as e:
        ragstats.variance(P, contrast="adaptive-open", failure_score=float("inf"))
    assert str(e.value) == "failure_score: inf is not a finite score"
    with pytest.raises(ValueError, match="no-such.csv"):
        ragstats.variance("no-such.csv")
    with pytest.raises(TypeError):
        ragstats.variance(P, drop_incomplete="yes please", contrast=True)


def test_plot_returns_the_figure():
    f = ragstats.variance(P, contrast="adaptive-open", plot=True)
    assert f.figure().startswith("<svg") and f._repr_svg_() == f.figure()
    assert ragstats.variance(P, contrast="adaptive-open").figure() is None


def big_panel(questions=20000):
    rng = np.random.default_rng(1)
    q = np.repeat(np.arange(questions), 15)
    t = np.tile(np.repeat(np.arange(3), 5), questions)
    r = np.tile(np.arange(5), 3 * questions)
    return pd.DataFrame({"question": q, "trajectory": t, "read": r, "f1": rng.random(questions * 15)})


def test_ctrl_c_stops_a_long_bootstrap():
    # Without the interrupt this run takes minutes and returns a result; with it, the call
    # raises KeyboardInterrupt. How soon it stops is a latency, not asserted here (a timed
    # bound failed on loaded machines); the engine checks for signals between chunks.
    df = big_panel()
    fired = []

    def interrupt():
        time.sleep(1.0)
        fired.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        ragstats.bootstrap(df, replicates=200000, backend="cpu")
    assert fired, "the bootstrap finished before the interrupt"


def test_progress_goes_to_the_callback_and_can_stop_the_run():
    seen = []

    def progress(done, total):
        seen.append((done, total))
        if len(seen) == 2:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        ragstats.bootstrap(big_panel(), replicates=200000, backend="cpu", progress=progress)
    assert seen[0][1] == 200000 and 0 <= seen[0][0] <= seen[1][0] <= 200000


def test_the_generated_api_is_current():
    gen = ROOT / "scripts" / "gen-python-api.py"
    out = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_cli_runs_any_command(monkeypatch):
    # The command line is its own program, found through $STATS (or the PATH).
    monkeypatch.setenv("STATS", stats_exe())
    assert ragstats.cli(["variance", P, *C, "--format", "csv"]) == 0
    assert ragstats.cli(["variance", "no-such.csv"]) == 2
    monkeypatch.delenv("STATS")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FileNotFoundError, match="cargo install --path ."):
        ragstats.cli(["variance", P])


def test_pandas_without_pyarrow_is_read_through_numpy(monkeypatch):
    """pandas exports Arrow only through pyarrow; without it (simulated: the export raises
    ImportError, as pandas does) the frame is read column by column, with the same numbers
    and the same errors."""
    df = pd.read_csv(ROOT / P)
    want = ragstats.bootstrap(df, contrast="adaptive-open", **FAST).to_dict()

    def no_pyarrow(self, *args, **kwargs):
        raise ImportError("`Import pyarrow` failed.")

    monkeypatch.setattr(pd.DataFrame, "__arrow_c_stream__", no_pyarrow)
    assert ragstats.bootstrap(df, contrast="adaptive-open", **FAST).to_dict() == want
    cat = df.assign(dataset=df["dataset"].astype("category"), arm=df["arm"].astype("category"))
    assert ragstats.bootstrap(cat, contrast="adaptive-open", **FAST).to_dict() == want
    df.loc[4, "f1"] = float("nan")
    with pytest.raises(ragstats.InputError, match=r"^<pandas\.DataFrame>:5: missing score in column 'f1'$"):
        ragstats.variance(df, contrast="adaptive-open")


def test_a_ledger_may_be_a_frame():
    """A cost ledger read into pandas (or polars) gives the numbers of its file: each row is
    read as the JSON object of its line (missing cells absent, whole floats integers)."""
    want = ragstats.efficiency(P, contrast="adaptive-open", ledger=L, prices=PR, currency="usd", **FAST).to_dict()
    for frame in [pd.read_json(ROOT / L, lines=True), pl.read_ndjson(ROOT / L)]:
        got = ragstats.efficiency(P, contrast="adaptive-open", ledger=frame, prices=PR, currency="usd", **FAST).to_dict()
        assert body(got) == body(want)
        assert got["run"]["inputs"]["ledger"].startswith("<")
    cost = ragstats.cost(pd.read_json(ROOT / L, lines=True), prices=PR).to_dict()
    assert body(cost) == body(ragstats.cost(L, prices=PR).to_dict())
    bad = pd.read_json(ROOT / L, lines=True)
    bad.loc[2, "kind"] = "robot"
    with pytest.raises(ragstats.InputError, match=r"^<pandas\.DataFrame>:3: .*robot"):
        ragstats.cost(bad)


def test_compare_reads_a_frame_as_its_file():
    import pandas as pd

    want = ragstats.compare(ARMS4, **FAST).to_dict()
    got = ragstats.compare(pd.read_csv(ARMS4), **FAST).to_dict()
    assert body(got) == body(want)
    assert [s["name"] for s in got["systems"]] == ["base", "a", "b", "c"]
    # A share of bootstrap replicates, named as such (it was `p_best`, issue #45).
    shares = [s["best_share"] for s in got["systems"]]
    assert "p_best" not in got["systems"][0] and "best_share" in got["methods"]
    assert shares == [0.0, 0.0, 0.0, 1.0]


def test_compare_by_a_column_of_a_frame_or_parquet_and_priced_by_a_ledger(tmp_path):
    """`by=` reads the systems from another column of a frame (the Arrow reader) or a
    Parquet file: the fixture with `arm` renamed `model` gives the fixture's comparison.
    `ledger=` prices the next step: with a ledger of constant costs (per trajectory and
    system 1,000 + 200 tokens, per read 500 + 100; four systems, so c_T = 4,800 and
    c_R = 2,400 tokens a cell), the allocation costs Q T (c_T + R c_R), by hand."""
    want = ragstats.compare(ARMS4, **FAST).to_dict()
    frame = pd.read_csv(ARMS4).rename(columns={"arm": "model"})
    assert body(ragstats.compare(frame, by="model", **FAST).to_dict()) == body(want)
    pq = tmp_path / "models.parquet"
    frame.to_parquet(pq)
    assert body(ragstats.compare(str(pq), by="model", **FAST).to_dict()) == body(want)
    with pytest.raises(ragstats.InputError, match="missing column 'modell'"):
        ragstats.compare(frame, by="modell", **FAST)

    rows = []
    panel = pd.read_csv(ARMS4)
    for (d, q, t, a), g in panel.groupby(["dataset", "question", "trajectory", "arm"], sort=False):
        rows.append(dict(kind="planner", dataset=d, question=q, arm=a, trajectory=int(t), step=0, model="m", input_tokens=1000, output_tokens=200))
        for r in g["read"]:
            rows.append(dict(kind="reader", dataset=d, question=q, arm=a, trajectory=int(t), read=int(r), model="m", input_tokens=500, output_tokens=100))
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    nxt = ragstats.compare(ARMS4, ledger=str(ledger), **FAST).to_dict()["next"]
    a = nxt["allocation"]
    assert (nxt["a"], nxt["b"]) == ("base", "a")
    assert a["currency"] == "tokens" and sum(a["per_stratum"]) == a["questions"]
    assert a["cost"] == a["questions"] * a["trajectories"] * (4800 + a["reads"] * 2400)
    assert a["se"] <= nxt["target_se"]
    # The target: |a − base| / (c + z_0.8), the estimate from tests/reference/compare.py.
    c = nxt["critical_value"]
    assert abs(nxt["target_se"] - 0.046549142708 / (c + 0.8416212335729143)) < 1e-11


def test_simulate_writes_what_the_cli_writes(tmp_path):
    r = ragstats.simulate(out=str(tmp_path / "py.csv"), ledger=str(tmp_path / "py.jsonl"), datasets="a=10,b=5", trajectories=2, reads=2, seed=3)
    out = stats("simulate", "--out", str(tmp_path / "cli.csv"), "--ledger", str(tmp_path / "cli.jsonl"), "--datasets", "a=10,b=5", "--trajectories", "2", "--reads", "2", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert (tmp_path / "py.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    d = r.to_dict()
    # 15 questions x 2 trajectories x 2 reads x 2 arms.
    assert d["panel"] == {"path": str(tmp_path / "py.csv"), "rows": 120}
    assert d["run"]["command"] == "simulate"
    assert r.text == out.stdout.replace("cli.", "py.")


def test_slice_writes_what_the_cli_writes(tmp_path):
    r = ragstats.slice(P, contrast="adaptive-open", design="24:2:1", per_stratum=True, seed=1, out=str(tmp_path / "py.csv"))
    out = stats("slice", P, "--contrast", "adaptive-open", "--design", "24:2:1", "--per-stratum", "--seed", "1", "--out", str(tmp_path / "cli.csv"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    d = r.to_dict()
    assert [(s["name"], s["questions"]) for s in d["strata"]] == [("hotpotqa", 24), ("musique", 24)]
    # 48 questions x 2 trajectories x 1 read x 2 arms.
    assert (d["rows"], d["trajectories"], d["reads"], d["choice"], d["seed"]) == (192, 2, 1, "seeded", 1)
    assert r.text.strip() == out.stderr.strip().replace("cli.csv", "py.csv")


def test_slice_of_a_frame_is_written_as_csv_and_analyses_like_the_file_slice(tmp_path):
    import pandas as pd
    frame = pd.read_csv(P)
    kw = dict(contrast="adaptive-open", design="24:2:1", per_stratum=True, seed=1)
    r = ragstats.slice(frame, out=str(tmp_path / "frame.csv"), **kw)
    ragstats.slice(P, out=str(tmp_path / "file.csv"), **kw)
    assert r.to_dict()["rows"] == 192
    a = ragstats.variance(str(tmp_path / "frame.csv"), contrast="adaptive-open").to_dict()
    b = ragstats.variance(str(tmp_path / "file.csv"), contrast="adaptive-open").to_dict()
    assert (a["estimate"], a["se"]) == (b["estimate"], b["se"])
    # A frame is written as CSV: a JSON-lines name is refused, naming the keyword.
    with pytest.raises(ragstats.InputError, match="^out: .*give a name ending in .csv"):
        ragstats.slice(frame, out=str(tmp_path / "frame.jsonl"), **kw)


def test_simulate_errors_name_the_keyword(tmp_path):
    with pytest.raises(ragstats.InputError, match='^mean: names dataset "nq"'):
        ragstats.simulate(out=str(tmp_path / "s.csv"), mean="nq=0.3")
    with pytest.raises(ragstats.InputError, match="^ledger: .* is also the panel's file"):
        ragstats.simulate(out=str(tmp_path / "s.csv"), ledger=str(tmp_path / "s.csv"))
    assert not (tmp_path / "s.csv").exists()


def test_prices_may_be_a_dict():
    import tomllib

    with open(PR, "rb") as f:
        prices = tomllib.load(f)
    want = ragstats.cost(L, prices=PR, search_price="0:1:0.5").to_dict()
    got = ragstats.cost(L, prices=prices, search_price="0:1:0.5").to_dict()
    assert body(got) == body(want)


@pytest.mark.parametrize("kind", ["pandas", "polars", "records"])
def test_mcq_results_and_items_may_be_frames_or_records(kind):
    import json as _json

    def load(path):
        rows = [_json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        if kind == "records":
            return rows
        if kind == "pandas":
            import pandas as pd

            return pd.DataFrame(rows)
        import polars as pl

        return pl.DataFrame(rows)

    want = ragstats.mcq.score(BARE, **FAST).to_dict()
    got = ragstats.mcq.score(load(BARE), **FAST).to_dict()
    assert body(got) == body(want)
    v = ragstats.mcq.validate(load("data/mcq/sample.jsonl")).to_dict()
    assert body(v) == body(ragstats.mcq.validate("data/mcq/sample.jsonl").to_dict())


def test_a_correlate_table_may_be_a_frame():
    import pandas as pd

    want = ragstats.correlate(CAP[0], method="spearman", **CAPKW, **FAST).to_dict()
    got = ragstats.correlate(pd.read_csv(CAP[0]), method="spearman", **CAPKW, **FAST).to_dict()
    assert body(got) == body(want)


LOGS = "tests/fixtures/import/logs/eval"
LOG_CONTRAST = "openai-api/scripted/model-b-openai-api/scripted/model-a"


@pytest.mark.parametrize("frame", ["pandas", "polars", "pyarrow"])
def test_read_logs_gives_the_panel_of_the_logs(frame, tmp_path):
    df = ragstats.read_logs(LOGS, frame=frame, ledger_out=str(tmp_path / "ledger.jsonl"))
    assert len(df) == 120
    want = ragstats.variance(LOGS, metric="match", contrast=LOG_CONTRAST).to_dict()
    got = ragstats.variance(df, metric="match", contrast=LOG_CONTRAST).to_dict()
    assert body(got) == body(want)
    # The numbers tests/it/import.rs checks against numpy.
    assert got["estimate"] == -0.03333333333333333
    assert (tmp_path / "ledger.jsonl").stat().st_size > 0


def test_a_list_of_logs_is_one_panel():
    files = [f"{LOGS}/arith-model-a.eval", f"{LOGS}/arith-model-b.eval"]
    got = ragstats.variance(files, metric="match", contrast=LOG_CONTRAST).to_dict()
    want = ragstats.variance(LOGS, metric="match", contrast=LOG_CONTRAST).to_dict()
    assert body(got) == body(want)
    assert got["run"]["inputs"]["panel"] == files
    # numpy's contrast of the two models' epoch means (tests/it/import.rs).
    assert got["estimate"] == -0.03333333333333333
    plan = ragstats.plan(
        audit=files, metric="match", contrast=LOG_CONTRAST, mde=0.05, unit_costs="1,1"
    ).to_dict()
    assert plan["run"]["inputs"]["audit"] == files
    with pytest.raises(ragstats.InputError, match="read as one panel only when each is"):
        ragstats.variance([files[0], "data/demo/panel.csv"], metric="match")


REAL_EVALS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "real-evals")


def test_read_logs_searches_lm_evals_output_folder_and_reports_its_notes():
    # ../shared/real-evals (PROVENANCE.md) must be there: this test fails, not skips, without it.
    folder = os.path.join(REAL_EVALS, "lmeval", "winogrande_limit10")
    assert os.path.isdir(folder), f"{folder} is missing (../shared/real-evals)"
    df, result = ragstats.read_logs(folder, report=True)
    doc = result.to_dict()
    assert len(doc["logs"]) == 10 and len(doc["skipped"]) == 10
    assert all(s["reason"].startswith("lm-eval results file") for s in doc["skipped"])
    assert result.notes == [f"note: {n}" for n in doc["notes"]]
    solar = "upstage/SOLAR-10.7B-Instruct-v1.0"
    assert any(n.startswith(f"{solar} on winogrande: 2 runs") for n in doc["notes"])
    # SOLAR's two runs are its reads 0 and 1; each run's mean is the harness's own
    # exact_match (results_*.json: 0.7 for 14-36-36, 0.8 for 15-04-32).
    runs = df[df["arm"] == solar].groupby("read")["exact_match"].mean()
    assert list(runs.index) == ["0", "1"]
    assert abs(runs["0"] - 0.7) < 1e-12 and abs(runs["1"] - 0.8) < 1e-12
    llama = "/vfroot/n22-model/f6e12a6705dc47f5af9f2b6bce90e0d4/93/40/e3564e474cf19dfb7e2fc364fe61/llama3.1-pro16-0827-Inst-nc-chat_241016"
    # Four systems, and the llama's loglikelihood run (acc, filter none) kept apart.
    assert set(df["arm"]) == {"LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct", "gpt-4o", solar, llama, f"{llama} [acc,none]"}
    # Without report=, the frame alone, the same rows.
    assert len(ragstats.read_logs(folder)) == len(df) == 100


def test_read_logs_refuses_a_bad_log_with_the_cli_message():
    with pytest.raises(ragstats.InputError, match="truncated.eval"):
        ragstats.read_logs("tests/fixtures/import/bad/truncated.eval")


def test_import_json_is_the_report_with_its_envelope(tmp_path):
    doc = cli_json("import", LOGS, "--out", str(tmp_path / "p.csv"))
    assert doc["run"]["command"] == "import"
    assert doc["run"]["inputs"] == {"logs": [LOGS]}
    assert (doc["rows"], doc["ledger_rows"], doc["scores"]) == (120, 120, ["includes", "match"])
    assert [l["arm"] for l in doc["logs"]] == ["openai-api/scripted/model-a", "openai-api/scripted/model-b"]


def test_further_tables_by_name():
    r = ragstats.compare(ARMS4, **FAST)
    assert {"systems", "pairs", "strata"} <= set(r.tables())
    pairs = r.to_pandas("pairs")
    doc = r.to_dict()
    assert list(pairs["estimate"]) == [p["estimate"] for p in doc["pairs"]]
    assert list(pairs["p_holm"]) == [p["p_holm"] for p in doc["pairs"]]
    systems = r.to_polars("systems")
    assert systems["name"].to_list() == ["base", "a", "b", "c"]
    v = ragstats.variance(P, contrast="adaptive-open")
    assert list(v.to_pandas("strata")["se"]) == [s["se"] for s in v.to_dict()["strata"]]
    with pytest.raises(KeyError, match="not a table"):
        r.to_pandas("metric")


def _jsonl_frame(path):
    return pd.DataFrame([json.loads(line) for line in open(ROOT / path, encoding="utf-8") if line.strip()])


@pytest.mark.parametrize(
    "name,call,path,load",
    [
        ("coverage", lambda x: ragstats.coverage(x, contrast="adaptive-open", panels=10, replicates=100, backend="cpu", analysis="variance", generator="gaussian"), P, lambda p: pd.read_csv(ROOT / p)),
        # The group column is read as text, as the CSV's cells are (a float column as a
        # group is refused by the Arrow reader, which reads group columns as keys).
        ("consistency", lambda x: ragstats.consistency(x, by="temperature", **FAST), "data/demo/reads.csv", lambda p: pd.read_csv(ROOT / p, dtype={"temperature": str})),
        ("score_answers", lambda x: ragstats.score_answers(x, style="squad"), "tests/golden/inputs/answers.jsonl", _jsonl_frame),
        ("mcq.compare", lambda x: ragstats.mcq.compare(x, INF, **FAST), BARE, _jsonl_frame),
        ("mcq.agree", lambda x: ragstats.mcq.agree(x, items="data/mcq/sample.jsonl"), "data/mcq/annotations.jsonl", _jsonl_frame),
        ("mcq.cost", lambda x: ragstats.mcq.cost(x, prices="tests/golden/inputs/mcq-prices.toml"), "tests/golden/inputs/mcq-bare.ledger.jsonl", _jsonl_frame),
    ],
    ids=lambda v: v if isinstance(v, str) and "/" not in v else None,
)
def test_every_table_input_takes_a_frame(name, call, path, load):
    # The same numbers from a pandas frame of the file as from the file.
    assert body(call(load(path)).to_dict()) == body(call(path).to_dict()), name
