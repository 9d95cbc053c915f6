"""How a Python call reaches the library: its inputs (paths, lists of logs, tables,
records) and its keywords (the analysis's settings, as JSON) passed to the native module's
front door (``_ragstats.analyse``), and the result wrapped as a :class:`Result`."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Callable, Optional

from . import _ragstats

#: An analysis's input: a path (``str`` or ``os.PathLike``), a list of evaluation logs read
#: as one panel, a table (pandas, polars, pyarrow, anything with ``__arrow_c_stream__``), or
#: records (a list of dicts, each what one JSON line holds).
Input = Any


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

    def __getattr__(self, name: str) -> Any:
        """A field of the report (``v.estimate``, ``v.se``, ``v.ci``): the document's key."""
        if name.startswith("_"):
            raise AttributeError(name)
        doc = self.to_dict()
        if name in doc:
            return doc[name]
        raise AttributeError(f"{name!r}: the result's fields are {', '.join(doc)}")

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | set(self.to_dict()))

    def tables(self) -> list:
        """The names of the further tables: the tables the text output shows by name (such as
        variance's ``components``), then the document's keys that hold a list of objects
        (``strata``, ``pairs``, ``systems`` …; a document key wins over an output table of the
        same name), each readable with ``to_pandas(name)``."""
        doc = self.to_dict()
        records = [k for k, v in doc.items() if _is_records(v)]
        return [n for n in self._outcome.table_names() if n not in records] + records

    def _view_table(self, name: str) -> Optional[tuple]:
        """The output's table `name` as (columns, rows), unless the document holds records
        under that name (those win: they have every field)."""
        if _is_records(self.to_dict().get(name)):
            return None
        return self._outcome.named_table(name)

    def _records(self, name: str) -> list:
        doc = self.to_dict()
        v = doc.get(name)
        if not _is_records(v):
            raise KeyError(f"{name!r} is not a table of this result; its tables: {', '.join(self.tables()) or 'none'}")
        return v

    def to_pandas(self, name: Optional[str] = None):
        """The main table (the command's ``--format csv``) as a pandas DataFrame; with
        ``name``, that table of the document (``tables()``), nested fields flattened
        (``ci`` lists kept as lists, objects as ``a.b`` columns)."""
        import pandas as pd

        if name is not None:
            named = self._view_table(name)
            if named is not None:
                return pd.DataFrame(named[1], columns=named[0])
            return pd.json_normalize(self._records(name))
        return pd.DataFrame(self.rows(), columns=self.columns)

    def to_polars(self, name: Optional[str] = None):
        """The main table (the command's ``--format csv``) as a polars DataFrame; with
        ``name``, that table of the document (``tables()``), nested fields as structs."""
        import polars as pl

        if name is not None:
            named = self._view_table(name)
            if named is not None:
                columns, rows = named
                return pl.DataFrame({c: [r[i] for r in rows] for i, c in enumerate(columns)}, strict=False)
            return pl.DataFrame(self._records(name), strict=False)
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


def _is_records(v: Any) -> bool:
    """Whether `v` is records: a non-empty list of dicts (a document's table, or an input)."""
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _without_null_columns(v: Any) -> Any:
    """A polars frame with its Null-typed (all-missing) columns and fields cast to strings: polars
    exports such a column with a validity buffer that the Arrow C data interface's Null type
    does not have, and arrow-rs refuses it."""
    if type(v).__module__.split(".")[0] != "polars" or not hasattr(v, "schema"):
        return v
    import polars as pl

    def fix(t: Any) -> Any:
        if t == pl.Null:
            return pl.Utf8
        if isinstance(t, pl.Struct):
            return pl.Struct([pl.Field(f.name, fix(f.dtype)) for f in t.fields])
        if isinstance(t, pl.List):
            return pl.List(fix(t.inner))
        return t

    changed = {c: fix(t) for c, t in v.schema.items() if fix(t) != t}
    return v.with_columns(pl.col(c).cast(t) for c, t in changed.items()) if changed else v


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


def _setting(v: Any) -> Any:
    """A keyword's value as the settings' JSON holds it: paths as text, tuples as lists, and
    an infinite or NaN float (which JSON cannot hold) as its text, for the library to refuse
    in its words."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, (list, tuple)):
        return [_setting(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _setting(x) for k, x in v.items()}
    return v


def _analyse(
    name: str,
    inputs: dict,
    settings: dict,
    plot: bool,
    progress: Optional[Callable[[int, int], Any]],
) -> Result:
    """Runs the analysis `name` through the library: `inputs` by role (paths, lists of logs,
    tables), `settings` the keywords (those left at None are the analysis's defaults)."""
    inputs = {k: _without_null_columns(v) for k, v in inputs.items() if v is not None}
    given = {k: _setting(v) for k, v in settings.items() if v is not None}
    if isinstance(given.get("score"), str):
        given["score"] = [given["score"]]
    outcome = _ragstats.analyse(name, inputs, json.dumps(given), plot, progress or _tqdm_progress())
    return Result(outcome)
