"""ragstats: the statistics of evaluating agentic RAG systems, from Python.

The same engine and the same numbers as the ``stats`` command: every function runs one
command's analysis, takes its panel as a path or a table (pandas, polars, pyarrow, anything
with ``__arrow_c_stream__``) and keyword arguments named like the command's flags
(``--max-reads`` -> ``max_reads``, with the same defaults), and returns a :class:`Result`
whose ``to_dict()`` is the command's ``--format json``. See docs/python.md.

>>> import ragstats
>>> v = ragstats.variance("data/demo/panel.csv", contrast="adaptive-open")
>>> round(v.to_dict()["estimate"], 6)
0.010276
"""

from __future__ import annotations

from . import _ragstats
from ._api import (
    allocate,
    bootstrap,
    compare,
    consistency,
    correlate,
    cost,
    coverage,
    efficiency,
    forecast,
    mcq_agree,
    mcq_compare,
    mcq_cost,
    mcq_filter,
    mcq_score,
    mcq_validate,
    merge,
    plan,
    run_audit,
    score_answers,
    simulate,
    slice,
    subsets,
    variance,
)
from . import mcq
from ._call import Result
from ._logs import read_logs
from ._ragstats import InputError, RuntimeError  # noqa: A004 (ragstats.RuntimeError)

__version__ = _ragstats.__version__



def cli(args: list) -> int:
    """Runs ``stats ARGS...`` in this process (output on this process's stdout and stderr)
    and returns its exit code: every command, including those that are not analyses
    (``run``, ``mcq run``, ``simulate`` …)."""
    return _ragstats.run_cli(["stats", *[str(a) for a in args]])


__all__ = [
    "InputError",
    "Result",
    "RuntimeError",
    "__version__",
    "allocate",
    "bootstrap",
    "compare",
    "cli",
    "consistency",
    "correlate",
    "cost",
    "coverage",
    "efficiency",
    "forecast",
    "mcq",
    "merge",
    "plan",
    "read_logs",
    "run_audit",
    "score_answers",
    "simulate",
    "slice",
    "subsets",
    "variance",
]
