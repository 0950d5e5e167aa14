r"""Typed schemas of the released statistics: what a :class:`~noiseaware.Release` of each may hold.

A release file is the contract between curator and analyst, and every field the analyst side
reads is checked here, on construction *and* on load, against the other fields: the mechanism
family a statistic can have, its composition rule, its sensitivity (recomputed from ``n``, ``d``,
``a``, ...), its shape, its labels and every metadata key (type, range, and consistency — e.g. a
``median_pairs`` release must have ``high_count == ceil(n/2)`` and list all column pairs once, in
order). A release whose fields disagree raises :class:`~noiseaware.exceptions.ReleaseFormatError`
naming the field and the rule.

The package sits at the level of the release record (it imports only the validation helpers and
the domains), so that :mod:`noiseaware.release` can use it and the curator side
(:mod:`noiseaware._privatize`) registers its implementations against the same names; a test
checks that the two registries hold the same statistics. Its modules, by concern:

- ``_schema``: :class:`StatisticSchema`, the field types with their ranges (``Int(minimum=2)``,
  ``Float(gt=0.0)``, ``ListOf(...)``, ``Record(...)``, on :mod:`noiseaware._validation`) and the rules
  every family shares (pairs, columns, shapes, labels, sensitivity, noise reach);
- ``_rules``: the sensitivity formulas and the noise reach (also read by the curator);
- one module per family of statistics (``_basic``, ``_dirichlet``, ``_dpcopula``, ``_covariance``),
  each a tuple ``SCHEMAS`` of its schemas.

Neighbour relation (every statistic): *substitution* — two data sets are neighbours when they
have the same number of records ``n`` (public) and differ in one record. Each schema's
sensitivity rule is stated under that relation.

Adding a statistic: write a :class:`StatisticSchema` (families, compositions, each metadata field
once with its type and range, a ``check(release, meta)`` for the rules between fields, reading the
typed values ``meta``) in its family's module; then register the curator's implementation under the
same name in :mod:`noiseaware._privatize`.
"""

from __future__ import annotations

from . import _basic, _covariance, _dirichlet, _dpcopula, _regression
from ._dirichlet import noisy_rates
from ._regression import EIGEN_SHARE, INTERCEPT, moment_rule, regression_entries
from ._regression import METHODS as REGRESSION_METHODS
from ._rules import (
    ENTRY_ORDER,
    IMPLAUSIBLE_LOG2,
    NEIGHBOURS,
    entry_index,
    kendall_sensitivity,
    mean_sensitivity,
    noise_reach,
    pace_ggm_sensitivity,
    regression_eigen_sensitivity,
    regression_l1_sensitivity,
    regression_sensitivity,
    second_moment_sensitivity,
)
from ._schema import SIMULATION_NOTE, FieldType, StatisticSchema

__all__ = [
    "EIGEN_SHARE",
    "ENTRY_ORDER",
    "IMPLAUSIBLE_LOG2",
    "INTERCEPT",
    "NEIGHBOURS",
    "REGRESSION_METHODS",
    "SCHEMAS",
    "SIMULATION_NOTE",
    "FieldType",
    "StatisticSchema",
    "entry_index",
    "kendall_sensitivity",
    "mean_sensitivity",
    "moment_rule",
    "noise_reach",
    "noisy_rates",
    "pace_ggm_sensitivity",
    "regression_eigen_sensitivity",
    "regression_entries",
    "regression_l1_sensitivity",
    "regression_sensitivity",
    "second_moment_sensitivity",
]

#: Schemas of every statistic a release may hold, by name.
SCHEMAS: dict[str, StatisticSchema] = {
    s.name: s for family in (_basic, _dirichlet, _dpcopula, _covariance, _regression) for s in family.SCHEMAS
}
