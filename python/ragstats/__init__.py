"""ragstats: the statistics of evaluating agentic RAG systems, from Python.

The same engine and the same numbers as the ``stats`` command: every function takes a panel
as a path or a table (pandas, polars, pyarrow, anything with ``__arrow_c_stream__``) and
keyword arguments named like the command's flags, and returns a :class:`Result` whose
``to_dict()`` is the command's ``--format json``. See docs/python.md.

>>> import ragstats
>>> v = ragstats.variance("data/demo/panel.csv", contrast="adaptive-open")
>>> round(v.to_dict()["estimate"], 6)
0.010276
"""

from __future__ import annotations

import json
from typing import Any, Optional

from . import _ragstats
from ._ragstats import InputError, RuntimeError  # noqa: A004 (ragstats.RuntimeError)

__version__ = _ragstats.__version__
__all__ = ["InputError", "Result", "RuntimeError", "variance", "__version__"]


class Result:
    """One analysis's result: the JSON document, the text output and the main table."""

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
        """The main table as a polars DataFrame."""
        import polars as pl

        cols = self.columns
        rows = self.rows()
        return pl.DataFrame({c: [r[i] for r in rows] for i, c in enumerate(cols)}, strict=False)

    def _repr_html_(self) -> str:
        return self._outcome.html()

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


def variance(
    panel: Any,
    *,
    metric: Optional[str] = None,
    contrast: Optional[str] = None,
    arm: Optional[str] = None,
    drop_incomplete: bool = False,
    selector: Optional[str] = None,
) -> Result:
    """Nested variance components (question > trajectory > read) per stratum, pooled, and
    the combined estimate with its standard error: ``stats variance``.

    Balanced strata by ANOVA, unbalanced ones by REML.

    >>> v = variance("data/demo/panel.csv", contrast="adaptive-open")
    >>> v.to_dict()["run"]["command"]
    'variance'
    """
    return Result(
        _ragstats.variance(
            panel,
            metric=metric,
            contrast=contrast,
            arm=arm,
            drop_incomplete=drop_incomplete,
            selector=selector,
        )
    )
