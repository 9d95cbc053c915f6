"""The ``stats mcq`` analyses: ``ragstats.mcq.score(...)``, ``ragstats.mcq.agree(...)`` …
(the same functions as ``ragstats.mcq_score`` and the others, typed alike)."""

from ._api import mcq_agree as agree
from ._api import mcq_compare as compare
from ._api import mcq_cost as cost
from ._api import mcq_filter as filter  # noqa: A004 (ragstats.mcq.filter)
from ._api import mcq_score as score
from ._api import mcq_validate as validate

__all__ = ["agree", "compare", "cost", "filter", "score", "validate"]
