"""One mixing check and one :class:`~noiseaware.exceptions.MixingWarning` for every fit (engine, private)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import MixingWarning

__all__ = [
    "AUGMENTATION_ADVICE",
    "ESS_PER_CHAIN",
    "NUTS_ADVICE",
    "RHAT_MAX",
    "MixingBlock",
    "check_mixing",
]

#: Minimum bulk effective sample size per chain before :class:`MixingWarning` (Vehtari et al. 2021).
ESS_PER_CHAIN = 100
#: Maximum rank-normalized split R-hat before :class:`MixingWarning` (Vehtari et al. 2021).
RHAT_MAX = 1.01

#: What to do when a block that is NUTS alone (no latent records) mixes poorly; a fit names its own parameters'
#: boundaries through :meth:`MixingBlock.nuts` (``boundary=``), since only it knows them.
NUTS_ADVICE = (
    "This block is NUTS alone (no data augmentation): with a short run the usual cause is too few draws "
    "(R-hat is itself noisy below a few hundred effective draws per chain); run more draws and chains "
    "(the defaults are chains=4, draws=1000, warmup=1000). If it persists, raise target_accept, and look "
    "for a parameter pressed against a boundary of its support."
)
#: What to do when a data-augmentation sampler (latent records alternate with the parameters) mixes poorly.
AUGMENTATION_ADVICE = (
    "Data augmentation is sticky when the privacy noise dominates (Eng et al. 2024, §6): run more draws "
    "(and warmup), or treat the results as unreliable."
)
_GENERIC_ADVICE = (
    "Run more draws (and warmup), or treat the results as unreliable; data augmentation is sticky "
    "when the privacy noise dominates (Eng et al. 2024, §6)."
)


@dataclass(frozen=True)
class MixingBlock:
    """The sampler block that draws the checked parameters, as :class:`MixingWarning` names it.

    Attributes
    ----------
    text : str
        What samples them, e.g. ``"NUTS on the correlation matrix R"``.
    advice : str
        What to do (:data:`NUTS_ADVICE`, :data:`AUGMENTATION_ADVICE`, or the fit's own).
    names : str
        How to read indexed names such as ``R[0]`` (empty when the names are scalars).
    """

    text: str
    advice: str
    names: str = ""

    @classmethod
    def nuts(cls, text: str, names: str = "", boundary: str = "") -> MixingBlock:
        """A block that NUTS alone samples (no latent records), with :data:`NUTS_ADVICE`.

        ``boundary`` names the boundaries this block's parameters can be pressed against (e.g. ``"a
        correlation near +-1"``), added to the advice; without it the advice names none.

        Examples
        --------
        >>> MixingBlock.nuts("NUTS on R", boundary="a correlation near +-1").advice[-50:]
        'a boundary of its support: a correlation near +-1.'
        """
        return cls(text, NUTS_ADVICE if not boundary else f"{NUTS_ADVICE[:-1]}: {boundary}.", names)


def _label(name: str, da: Any, j: int, size: int) -> str:
    """``name[i, k]``: the full index of the ``j``-th flat entry, with its coordinate values where labelled."""
    if size == 1:
        return name
    dims = list(da.dims[2:])
    idx = np.unravel_index(j, tuple(int(da.sizes[d]) for d in dims))
    words = []
    for d, i in zip(dims, idx, strict=True):
        if d in da.coords and not str(d).startswith(f"{name}_dim_"):
            words.append(f"{d} {da[d].values[i]}")
    full = f"{name}[{', '.join(str(int(i)) for i in idx)}]"
    return f"{full} ({', '.join(words)})" if words else full


def check_mixing(
    idata: Any,
    var_names: Sequence[str] | None = None,
    *,
    warn: bool = True,
    owner: str = "sample",
    block: MixingBlock | None = None,
) -> list[str]:
    r"""Flag parameters whose draws are too few or too autocorrelated to trust.

    A scalar parameter fails when its bulk effective sample size is below ``ESS_PER_CHAIN = 100``
    per chain or (with two or more chains) its rank-normalized split R-hat exceeds
    ``RHAT_MAX = 1.01``. Both thresholds are those recommended by Vehtari, Gelman, Simpson,
    Carpenter & Bürkner (2021, "Rank-normalization, folding, and localization: an improved R-hat
    for assessing convergence of MCMC", Bayesian Analysis 16(2), §4-5): R-hat below 1.01, and a
    bulk ESS of at least 100 per chain so that R-hat itself and the Monte Carlo errors of means and
    quantiles are estimated reliably (ESS 400 for four chains). Every fit of the package runs this
    check on its parameters (``check_mixing=True``, the default) and issues the same warning.

    Why these, and not the acceptance rate: data augmentation mixes slowly when the privacy noise
    is large compared with the confidential-data posterior. In Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
    Augmentation for Private Posterior Estimation in R*, §6 (Liu & Wu 1999) the
    convergence rate is the fraction of missing information
    :math:`\gamma = 1 - E[\mathrm{Var}(\theta\mid x)]/\mathrm{Var}(\theta\mid s_{dp})`, which
    tends to 1 as epsilon tends to 0: the chain becomes sticky. The record acceptance rate does
    not show it -- it is *high* for small epsilon (at least ``exp(-epsilon)`` for a record-level
    epsilon-DP mechanism, Ju et al. 2022) -- but the autocorrelation of theta does, and that is
    what ESS and R-hat measure. The warning reports the acceptance rates (mean and range over
    chains, from ``sample_stats.accept_rate``) beside them, for context.

    Parameters
    ----------
    idata : xarray.DataTree, arviz.InferenceData or xarray.Dataset
        A result with a ``posterior`` group (and ``sample_stats.accept_rate`` when from a fit), or
        the posterior itself as a Dataset.
    var_names : sequence of str, optional
        Variables to check (default: all of ``posterior``).
    warn : bool
        Issue a :class:`~noiseaware.exceptions.MixingWarning` listing the failures.
    owner : str
        The fit named at the start of the warning.
    block : MixingBlock, optional
        The sampler block that draws these parameters: the warning names it, says how to read
        indexed names, and gives that block's advice. Without it the advice is generic.

    Returns
    -------
    list of str
        One line per failing scalar parameter (empty when mixing looks adequate).

    Warns
    -----
    MixingWarning
        When ``warn`` and some parameter fails; the message lists the failures, with ESS, R-hat,
        lag-1 autocorrelation and the acceptance rates.

    Examples
    --------
    Independent draws pass; a random walk (a stuck chain) does not:

    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> rng = np.random.default_rng(0)
    >>> check_mixing(from_groups({"posterior": {"theta": rng.normal(size=(4, 500))}}))
    []
    >>> walk = np.cumsum(rng.normal(size=(4, 500)), axis=1)
    >>> check_mixing(from_groups({"posterior": {"theta": walk}}), warn=False)[0].startswith("theta: bulk ESS")
    True

    An entry of a vector is named by its flat index and, where the dimension has labels, by them:

    >>> pairs = from_groups({"posterior": {"R": walk[..., None]}}, coords={"pair": ["a x b"]}, dims={"R": ["pair"]})
    >>> check_mixing(pairs, warn=False)[0].startswith("R: bulk ESS")  # one entry: a scalar name
    True
    """
    import arviz as az

    from ._host import group, has_group

    post = group(idata, "posterior")
    names = list(var_names) if var_names is not None else list(post.data_vars)
    chains = int(post.sizes["chain"])
    draws = int(post.sizes["draw"])
    sub = post[names]
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # a constant entry (fixed, or a correlation matrix's diagonal) has 0/0 ESS and R-hat: skipped below
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "divide by zero", RuntimeWarning)
        ess = az.ess(sub, method="bulk")
        rhat = az.rhat(sub) if chains > 1 else None
    problems = []
    for name in names:
        e = np.atleast_1d(np.asarray(ess[name]))
        r = np.atleast_1d(np.asarray(rhat[name])) if rhat is not None else np.full(e.shape, np.nan)
        x = np.asarray(sub[name]).reshape(chains, draws, -1)
        for j, (ej, rj) in enumerate(zip(e.ravel(), r.ravel(), strict=True)):
            if not np.isfinite(ej) and np.ptp(x[..., j]) == 0.0:
                continue  # a constant (e.g. fixed) component
            bad_ess = not (ej >= ESS_PER_CHAIN * chains)
            bad_rhat = bool(np.isfinite(rj) and rj > RHAT_MAX)
            if bad_ess or bad_rhat:
                xc = x[..., j] - x[..., j].mean(axis=1, keepdims=True)
                den = float((xc * xc).sum())
                lag1 = float((xc[:, 1:] * xc[:, :-1]).sum()) / den if den > 0 else float("nan")
                label = _label(name, sub[name], j, e.size)
                problems.append(f"{label}: bulk ESS {ej:.0f}, R-hat {rj:.3f}, lag-1 autocorrelation {lag1:.3f}")
    if problems and warn:
        acc = ""
        stats = group(idata, "sample_stats") if has_group(idata, "sample_stats") else {}
        if "accept_rate" in stats:
            rates = np.asarray(stats["accept_rate"]).reshape(chains, -1).mean(axis=1)
            acc = (
                f" Mean acceptance rate {rates.mean():.3f} (chains {np.min(rates):.3f}-{np.max(rates):.3f};"
                " a high rate does not mean good mixing)."
            )
        where = f" in {block.text}" if block is not None else ""
        names_note = f" {block.names}" if block is not None and block.names else ""
        advice = block.advice if block is not None else _GENERIC_ADVICE
        if draws < ESS_PER_CHAIN:
            advice = (
                f"With draws={draws} per chain the check cannot pass (the bulk ESS is at most about the number "
                f"of draws): run at least {ESS_PER_CHAIN} draws per chain, better the default 1000. " + advice
            )
        warnings.warn(
            f"{owner}: poor mixing{where}; need bulk ESS >= {ESS_PER_CHAIN} per chain ({ESS_PER_CHAIN * chains} "
            f"here) and R-hat <= {RHAT_MAX}; got "
            + "; ".join(problems[:5])
            + (" ..." if len(problems) > 5 else "")
            + "."
            + names_note
            + acc
            + " "
            + advice,
            MixingWarning,
            stacklevel=3,
        )
    return problems
