"""``ragstats.read_logs``: inspect_ai logs and lm-evaluation-harness samples as a panel
DataFrame (``stats import``, in process: the library's ``import`` analysis)."""

from __future__ import annotations

import os
import tempfile
from typing import Any, Optional, Sequence, Union

from ._call import _analyse

KEYS = ["dataset", "question", "trajectory", "read", "arm", "cluster"]


def read_logs(
    paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    *,
    frame: str = "pandas",
    arm: Optional[str] = None,
    dataset_from: Optional[str] = None,
    arm_from: Optional[str] = None,
    score: Union[str, Sequence[str], None] = None,
    cluster_from: Optional[str] = None,
    missing_as: Optional[float] = None,
    filter: Optional[str] = None,  # noqa: A002 (the CLI's --filter)
    ledger_out: Union[str, os.PathLike, None] = None,
    report: bool = False,
) -> Any:
    """The panel ``stats import PATHS`` writes, as a DataFrame: one row per sample and
    epoch (``dataset``, ``question``, ``trajectory``, ``read``, ``arm``, one column per
    score), ready for every analysis (``ragstats.variance(df, contrast=...)``).

    ``paths``: inspect_ai ``.eval``/``.json`` logs, lm-eval ``samples_*.jsonl`` files, or
    directories searched recursively for them (lm-eval's ``output/`` with a folder per
    model; told apart by content). ``frame``: ``pandas`` (default), ``polars`` or
    ``pyarrow``. The other keywords are ``stats import``'s mapping flags (docs/import.md);
    ``ledger_out`` also writes the runs' token usage as a cost ledger. Bad logs raise
    ``ragstats.InputError`` with the CLI's message. Key columns are strings.

    ``report=True`` returns ``(frame, result)``: ``result`` is the import's
    :class:`Result`, whose ``to_dict()`` is ``stats import --format json`` (``logs`` read,
    ``skipped`` files of the directories with their reason, ``notes``) and whose ``notes``
    are the lines the CLI prints after its table (which rule named an older harness's
    metrics, repeated runs read as reads, samples left out).

    Example::

        df = ragstats.read_logs("logs/")
        ragstats.variance(df, metric="match", contrast="openai/gpt-x-openai/gpt-y")
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    logs = [os.fspath(p) for p in paths]
    with tempfile.TemporaryDirectory(prefix="ragstats-") as d:
        out = os.path.join(d, "panel.csv")
        settings: dict = {
            "out": out,
            "ledger_out": ledger_out,
            "arm": arm,
            "dataset_from": dataset_from,
            "arm_from": arm_from,
            "score": score,
            "cluster_from": cluster_from,
            "missing_as": missing_as,
            "filter": filter,
        }
        result = _analyse("import", {"logs": logs}, settings, False, None)
        df = _read_panel(out, frame)
        return (df, result) if report else df


def _read_panel(path: str, frame: str) -> Any:
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    keys = [c for c in header if c in KEYS]
    if frame == "pandas":
        import pandas as pd

        return pd.read_csv(path, dtype={k: str for k in keys}, keep_default_na=False, na_values={c: [""] for c in header if c not in keys})
    if frame == "polars":
        import polars as pl

        return pl.read_csv(path, schema_overrides={k: pl.Utf8 for k in keys})
    if frame == "pyarrow":
        import pyarrow as pa
        from pyarrow import csv

        return csv.read_csv(path, convert_options=csv.ConvertOptions(column_types={k: pa.string() for k in keys}))
    raise ValueError(f"frame={frame!r}: expected 'pandas', 'polars' or 'pyarrow'")
