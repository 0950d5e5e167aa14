"""``privatize()``: the curator's entry point, and the registry of the statistics it knows.

Layout: :mod:`._common` (the registry, the :class:`Context` passed to every statistic, shared
helpers), :mod:`._pairs` (``median_pairs``, ``kendall_pairs``), :mod:`._tables` (``counts``,
``vector``, ``randomized_response``), :mod:`._dirichlet` (``dirichlet_logmean``), :mod:`._dpcopula`
(``dpcopula``, Li, Xiong & Jiang (2014), *Differentially Private Synthesization of Multi-Dimensional Data using Copula
Functions*), :mod:`._covariance` (``pace_ggm``, ``second_moment``; Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
*Private Adaptive Covariance Estimation via Gaussian Graphical Models*). Each statistic
has a typed schema of the same name (``docs/release-format.md``), which
:class:`~noiseaware.Release` checks on construction and on load.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned, owner_scope
from ..accounting import PrivacyBudget
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release
from . import _covariance, _dask, _dirichlet, _dpcopula, _pairs, _regression, _tables
from ._common import STATISTICS, Context, as_matrix
from ._dirichlet import censoring_counts
from ._pairs import kendall_tau_a, median_split_indicators

__all__ = ["STATISTICS", "as_matrix", "censoring_counts", "kendall_tau_a", "median_split_indicators", "privatize"]

#: Statistics that read Dask data block by block; every other one computes a Dask input into memory first.
_BLOCKWISE = frozenset({"median_pairs", "dirichlet_logmean"})

del _covariance, _dirichlet, _dpcopula, _pairs, _regression, _tables  # imported for their registrations


@owned("privatize")
def privatize(
    data: Any,
    statistic: str,
    *,
    epsilon: float | None = None,
    rho: float | None = None,
    mechanism: str | None = None,
    rng: np.random.Generator | None = None,
    budget: PrivacyBudget | None = None,
    **options: Any,
) -> Release:
    """Compute a statistic of confidential data and release it with DP noise.

    Parameters
    ----------
    data : numpy.ndarray or pandas.DataFrame
        The confidential data (rows are records unless the statistic says otherwise). Also a Dask
        array, DataFrame or Series (a Series where a pandas Series is accepted): ``dirichlet_logmean``
        and ``median_pairs`` read it block by block (data larger than memory), the other
        statistics compute it into memory first; either way the release is the in-memory one on
        the same data and ``rng`` seed. A DataFrame's partitions are matched to its columns by
        name (``docs/distributed.md``).
    statistic : str
        ``"median_pairs"`` (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian
        Copula Correlations*, §3.1-3.2, Algorithm S.1), ``"kendall_pairs"`` (Li, Xiong & Jiang (2014), *Differentially
        Private Synthesization of Multi-Dimensional Data using Copula Functions*,
        Algorithm 5, noisy Kendall's tau), ``"counts"`` (an integer vector or
        contingency table), ``"vector"`` (a real vector), ``"randomized_response"``
        (categorical answers, record level, Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for Private
        Posterior Estimation in R*, Example 1), ``"dirichlet_logmean"``
        (compositions, Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*,
        Algorithm 1: options ``candidates``, ``target_rate``,
        ``threshold``, ``threshold_share``, ``split``, ``zeros``, ``simplex_tol``; the parts
        released: :func:`noiseaware.dirichlet.parts`); ``"dpcopula"`` (Li et al. 2014, DPCopula: options
        ``domains`` (required), ``ratio``, ``correlation`` = ``"kendall"`` / ``"mle"`` / ``"median"``,
        ``blocks``, ``columns``, and for Algorithm 6 ``hybrid``, ``hybrid_threshold``, ``floor``,
        ``counts_share``; ``docs/dpcopula.md``); ``"pace_ggm"`` (Ferrando, Fuentes,
        Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical Models*,
        Algorithm 1, rho-zCDP: options ``bound`` (required), ``clip``, ``alpha``, ``beta``, ``T``),
        ``"second_moment"`` (SSP: all unique entries of X^T X / n, rho-zCDP; options ``bound``, ``clip``);
        ``"regression"`` (sufficient statistics of a linear regression: options ``response`` (required),
        ``predictors``, ``intercept``, ``bound`` or ``bounds``, ``clip``, ``columns``, ``method`` =
        ``"ssp"`` / ``"adassp"`` / ``"pace_ggm"``, ``delta``, and ``alpha``, ``beta``, ``T`` for
        ``pace_ggm``; ``docs/regression-point.md``).
    epsilon, rho : float
        The total budget: ``epsilon`` for pure DP, ``rho`` for zCDP. Give one (``counts`` and
        ``vector`` also accept a noise scale through ``scale=`` / ``sigma=`` instead). Every
        statistic warns with a :class:`~noiseaware.exceptions.PrivacyWarning` above
        ``epsilon = 5`` or ``rho = 12.5`` (the rho of a 5-DP mechanism).
    mechanism : str, optional
        Per statistic: ``median_pairs``: ``"geometric"`` (default), ``"tgm"``, ``"btgm"``,
        ``"rgm"``; ``counts``: ``"geometric"`` (default with epsilon), ``"discrete_gaussian"``
        (default with rho); ``vector``: ``"laplace"`` (default with epsilon), ``"gaussian"``
        (default with rho).
    rng : numpy.random.Generator, optional
        Simulation mode: draw the noise from this generator. The release is then marked
        ``secure=False`` and can only be serialized with ``to_json(..., allow_simulation=True)``:
        replaying the seed removes the noise exactly. By default noise comes from OpenDP's exact
        samplers.
    budget : noiseaware.accounting.PrivacyBudget, optional
        A ledger to draw from: the release's whole guarantee is charged to it (exact arithmetic)
        *before* any noise is drawn, and an overspend raises
        :class:`~noiseaware.exceptions.PrivacyBudgetError` with nothing released or spent.
    **options
        Statistic-specific options: ``columns``, ``tie_keys`` (median_pairs); ``sensitivity``,
        ``labels``, ``n``, ``scale``, ``sigma`` (counts, vector); ``categories``, ``p``
        (randomized_response).

    Returns
    -------
    Release

    Notes
    -----
    Neighbouring data sets differ by the substitution of one record, with ``n`` public; each
    statistic's sensitivity is stated under that relation in ``docs/release-format.md`` and
    ``docs/security.md``.

    Raises
    ------
    PrivacyBudgetError
        If ``budget`` has less left than the release needs.
    ValueError, TypeError
        For bad budgets, data (NaN, inf, too few rows or columns, non-numeric columns), bounds or
        options; each message names the argument, its value and the rule. Also, before any budget
        is charged, for a release whose JSON could exceed ``noiseaware.release.MAX_RELEASE_BYTES``
        (256 MiB, the most ``Release.from_json`` reads).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).normal(size=(100, 3))
    >>> rel = na.privatize(x, statistic="median_pairs", epsilon=1.0)
    >>> rel.mechanism.family, rel.composition, len(rel.values)
    ('geometric', 'sequential', 3)
    """
    if not isinstance(statistic, str):
        raise NoiseawareTypeError(v.message("statistic", f"must be one of {sorted(STATISTICS)}", statistic))
    v.choice("statistic", statistic, sorted(STATISTICS))
    if epsilon is not None and rho is not None:
        raise NoiseawareValueError(
            f"privatize: give one of epsilon or rho, not both; got epsilon={epsilon!r}, rho={rho!r}."
        )
    eps = v.epsilon(epsilon) if epsilon is not None else None
    r = v.rho(rho) if rho is not None else None
    for name, given, value in (("epsilon", epsilon, eps), ("rho", rho, r)):
        if value is not None and value < v.TINY:  # a share of a subnormal budget would round to 0
            v.refuse(name, f"must be >= {v.TINY!r} (the smallest normal float64)", given)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise NoiseawareTypeError(
            v.message(
                "rng", "must be a numpy.random.Generator or None", rng, "Use numpy.random.default_rng(seed)."
            )
        )
    if mechanism is not None and not isinstance(mechanism, str):
        raise NoiseawareTypeError(v.message("mechanism", "must be a string", mechanism))
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise NoiseawareTypeError(v.message("budget", "must be a noiseaware.accounting.PrivacyBudget", budget))
    ctx = Context(eps, r, rng, budget)
    if statistic not in _BLOCKWISE and _dask.is_dask(data):
        with owner_scope(f"privatize(statistic={statistic!r})"):
            data = _dask.materialize(data)
    release = STATISTICS[statistic](data, ctx, mechanism, dict(options))
    if len(ctx.charged) != 1 or not ctx.charged[0].isclose(release.guarantee):  # pragma: no cover - internal
        raise RuntimeError(f"privatize: statistic {statistic!r} did not charge its guarantee exactly once.")
    return release


