"""Shared fixtures: the repository root (tests run from anywhere) and the CLI's JSON."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PANEL = str(ROOT / "data" / "demo" / "panel.csv")


def stats(*args: str) -> subprocess.CompletedProcess:
    """The wheel's `stats` entry point (the Rust CLI, in-process in a fresh interpreter)."""
    return subprocess.run(
        [sys.executable, "-m", "ragstats._cli", *args],
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
