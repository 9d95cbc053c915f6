"""Shared fixtures: the repository root (tests run from anywhere) and the CLI's JSON."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PANEL = str(ROOT / "data" / "demo" / "panel.csv")


def stats_exe() -> str:
    """The `stats` binary the tests compare the package with: `$STATS`, else the debug build
    in `$CARGO_TARGET_DIR` (or the repository's `target/`), which `cargo test` builds."""
    if os.environ.get("STATS"):
        return os.environ["STATS"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "debug" / "stats"
    assert exe.exists(), f"{exe} is missing: build it (cargo build) or set STATS"
    return str(exe)


def stats(*args: str) -> subprocess.CompletedProcess:
    """`stats ARGS…`: the Rust CLI, run as its own program."""
    return subprocess.run(
        [stats_exe(), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def cli_json(*args: str) -> dict:
    out = stats(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)
