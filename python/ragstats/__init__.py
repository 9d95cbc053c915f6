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
    gate,
    labels_agreement,
    labels_sample,
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
    sequential,
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
    """Runs ``stats ARGS...`` (output on this process's stdout and stderr) and returns its
    exit code: every command, including those that are not analyses (``run``, ``mcq run``
    …). The command line is its own program, not part of this package (the package calls
    the library, never the command line): it is ``$STATS`` when set, else ``stats`` on the
    ``PATH`` (``cargo install --path .`` in the repository installs it)."""
    import os
    import shutil
    import subprocess
    import sys

    exe = os.environ.get("STATS") or shutil.which("stats")
    if exe is None:
        raise FileNotFoundError(
            "the `stats` command line is not on the PATH: install it with "
            "`cargo install --path .` in the ragstats repository, or set STATS to its path"
        )
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run([exe, *[str(a) for a in args]]).returncode


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
    "gate",
    "labels_agreement",
    "labels_sample",
    "mcq",
    "merge",
    "plan",
    "read_logs",
    "run_audit",
    "score_answers",
    "sequential",
    "simulate",
    "slice",
    "subsets",
    "variance",
]
