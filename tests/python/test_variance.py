"""ragstats.variance against `stats variance` on the demo panel, for every input kind."""

import pandas as pd
import polars as pl
import pyarrow.csv
import pytest

import ragstats
from conftest import PANEL, cli_json, stats

REL = "data/demo/panel.csv"


def test_to_dict_is_the_cli_json():
    got = ragstats.variance(REL, contrast="adaptive-open").to_dict()
    assert got == cli_json("variance", REL, "--contrast", "adaptive-open")
    assert got["run"]["command"] == "variance"
    # Python's float sums over the CSV (the core crate's doc test): 0.010275721225710013.
    assert abs(got["estimate"] - 0.010275721225710013) < 1e-15


@pytest.mark.parametrize(
    "frame",
    [pd.read_csv(PANEL), pl.read_csv(PANEL), pyarrow.csv.read_csv(PANEL)],
    ids=["pandas", "polars", "pyarrow"],
)
def test_frames_give_the_numbers_of_the_path(frame):
    want = ragstats.variance(REL, contrast="adaptive-open").to_dict()
    got = ragstats.variance(frame, contrast="adaptive-open").to_dict()
    assert got["run"]["inputs"]["panel"] == f"<{type(frame).__module__.split('.')[0]}.{type(frame).__name__}>"
    del got["run"], want["run"]
    assert got == want


def test_the_table_is_the_csv():
    v = ragstats.variance(REL, contrast="adaptive-open")
    df = v.to_pandas()
    csv = pd.read_csv(pd.io.common.StringIO(stats("variance", REL, "--contrast", "adaptive-open", "--format", "csv").stdout))
    assert list(df.columns) == list(csv.columns)
    assert len(df) == len(csv)
    for col in ["questions", "mean", "se", "ms", "df", "component", "share_single", "share_se2"]:
        # Empty CSV cells (pooled rows have no mean) are None in the table, NaN in read_csv.
        got = [None if pd.isna(x) else x for x in df[col].tolist()]
        assert got == [None if pd.isna(x) else x for x in csv[col].tolist()], col
    assert df["level"].tolist() == csv["level"].tolist()
    assert "<table" in v._repr_html_()
    assert v.text == stats("variance", REL, "--contrast", "adaptive-open").stdout


def test_bad_input_raises_input_error_with_the_row():
    df = pd.read_csv(PANEL)
    df.loc[4, "f1"] = None
    with pytest.raises(ragstats.InputError, match=r"^<pandas\.DataFrame>:5: missing score in column 'f1'$"):
        ragstats.variance(df, contrast="adaptive-open")
    with pytest.raises(ValueError, match="no-such-file.csv"):
        ragstats.variance("no-such-file.csv")
    # The library checks its settings and names the keyword, in its own words.
    with pytest.raises(ragstats.InputError, match="^arm: cannot be used with contrast: a contrast is the difference of two arms"):
        ragstats.variance(REL, contrast="adaptive-open", arm="open")
    # A panel that is neither a path nor a table is a TypeError naming the type.
    with pytest.raises(TypeError, match=r"expected a path or a table .*; got builtins\.int$"):
        ragstats.variance(42)
    with pytest.raises(TypeError, match=r"got builtins\.bool$"):
        ragstats.variance(True)
    # A keyword's bad value names the keyword, in the command line's words.
    with pytest.raises(ragstats.InputError, match="^duplicates: 'sum': expected error, mean or first$"):
        ragstats.variance(REL, duplicates="sum")
    with pytest.raises(ragstats.InputError, match="^failure_score: 'zero' is not a number$"):
        ragstats.variance(REL, contrast="adaptive-open", failure_score="zero")


def test_the_stats_entry_point_exits_like_the_binary():
    assert stats("variance", REL, "--contrast", "adaptive-open").returncode == 0
    bad = stats("variance", "no-such-file.csv")
    assert bad.returncode == 2
    assert "no-such-file.csv" in bad.stderr
    assert stats("no-such-command").returncode == 2
    assert stats("--version").stdout.startswith("stats ")
