"""How a Python call becomes a command run: keyword arguments into the command's flags,
data frames registered as in-memory tables under names the flags give them, and the
result wrapped as a :class:`Result`."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Optional

from . import _ragstats


class Result:
    """One analysis's result: the JSON document, the text output, the main table and, where
    the command draws one and ``plot=True`` asked for it, the figure."""

    def __init__(self, outcome: Any) -> None:
        self._outcome = outcome

    def to_dict(self) -> dict:
        """The JSON document: equal to ``json.loads`` of the command's ``--format json``."""
        return json.loads(self._outcome.document_json())

    def to_json(self) -> str:
        """The JSON document as text (compact)."""
        return self._outcome.document_json()

    @property
    def text(self) -> str:
        """The command's text output."""
        return self._outcome.text()

    @property
    def notes(self) -> list:
        """What the command writes to stderr after its output (notes, warnings)."""
        return self._outcome.notes()

    @property
    def exit_code(self) -> int:
        """The exit code the command would end with (0 unless it flags a problem, as
        ``mcq validate`` does for violations)."""
        return self._outcome.exit_code()

    @property
    def columns(self) -> list:
        """The main table's column names (the command's CSV header)."""
        return self._outcome.columns()

    def rows(self) -> list:
        """The main table's rows (floats, ints, strings; None where undefined or missing)."""
        return self._outcome.rows()

    def to_pandas(self):
        """The main table (the command's ``--format csv``) as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=self.columns)

    def to_polars(self):
        """The main table (the command's ``--format csv``) as a polars DataFrame."""
        import polars as pl

        rows = self.rows()
        return pl.DataFrame(
            {c: [r[i] for r in rows] for i, c in enumerate(self.columns)}, strict=False
        )

    def figure(self) -> Optional[str]:
        """The SVG figure, when the call asked for one with ``plot=True``."""
        return self._outcome.figure()

    def _repr_svg_(self) -> Optional[str]:
        return self.figure()

    def _repr_html_(self) -> str:
        return self._outcome.html()

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _is_table(v: Any) -> bool:
    return hasattr(v, "__arrow_c_stream__") or type(v).__module__.split(".")[0] == "pandas"


def _value(tables: dict, v: Any) -> str:
    """A flag's value as the command line gives it; a table is registered under a name."""
    if _is_table(v):
        t = type(v)
        base = f"{t.__module__.split('.')[0]}.{t.__qualname__}"
        name, n = f"<{base}>", 2
        while name in tables:
            name, n = f"<{base} {n}>", n + 1
        tables[name] = v
        return name
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, bool):
        raise TypeError(f"expected a value, got {v!r}")
    return str(v)


def _positional(argv: list, tables: dict, v: Any, repeated: bool) -> None:
    if v is None:
        return
    if repeated and isinstance(v, (list, tuple)):
        argv.extend(_value(tables, x) for x in v)
    else:
        argv.append(_value(tables, v))


def _flag(argv: list, tables: dict, long: str, v: Any, repeated: bool, default: Any) -> None:
    # A value equal to the CLI's default is left out, as a user would leave out the flag.
    if v is None or (default is not None and v == default):
        return
    values = v if repeated and isinstance(v, (list, tuple)) else [v]
    for x in values:
        argv += [long, _value(tables, x)]


def _tqdm_progress() -> Optional[Callable[[int, int], None]]:
    """A progress callback drawing a tqdm bar, when tqdm is installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = None

    def show(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, leave=False)
        bar.total = total
        bar.n = done
        bar.refresh()

    return show


def _run(argv: list, tables: dict, progress: Optional[Callable[[int, int], Any]]) -> Result:
    return Result(_ragstats.call(argv, tables, progress or _tqdm_progress()))
