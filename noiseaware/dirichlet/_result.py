r"""Reading the result of :func:`~noiseaware.dirichlet.fit` and :func:`~noiseaware.dirichlet.dpmcmc`.

Both fits return the host stack's own container (an ``xarray.DataTree`` under ArviZ 1, an
``arviz.InferenceData`` under ArviZ 0.x) with the posterior variables ``alpha`` and
``composition`` (:math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`); their draws, pooled over chains, are
``noiseaware.results.draws(fit, "alpha")`` and ``noiseaware.results.draws(fit, "composition")``.
The functions here read what else the fit recorded in the result's root ``attrs`` (so they work as
well on a result read back with ``az.from_netcdf``): :func:`posterior_mean`, :func:`prior` (the
prior on :math:`\alpha` the fit used, ``attrs["noiseaware_prior"]``) and :func:`observed_parts`
(the released parts the fit observed, from the recorded release).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._dirichlet_release import LogMeanPart, logmean_parts
from .._engine import draws, group, has_group, is_result, release
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._boots import GammaCopulaPrior

__all__ = ["NO_POINTWISE", "PER_PART", "observed_parts", "posterior_mean", "prior", "prior_attrs"]

#: Why a fit observing one part of the release stores no ``log_likelihood`` group (its root attribute
#: ``noiseaware_log_likelihood``).
NO_POINTWISE = (
    "none: the fit observes one part of the release, one noisy vector s_L of correlated entries (the censored "
    "mean-log statistic of all its records); there are no per-record terms and no split into conditionally "
    "independent terms, so az.loo / az.compare are not defined for this fit (docs/dirichlet.md, 'Model comparison')"
)
#: What the ``log_likelihood`` group of a fit observing several parts holds (``noiseaware_log_likelihood``).
PER_PART = (
    "s_l: one term per observed part of the release (dimension observed_part), the Laplace density of its s_L "
    "given the draw's latent S_0; the parts are disjoint records with independent noise, so az.loo leaves one "
    "release part out (docs/dirichlet.md, 'Model comparison')"
)


def _check(fit: Any) -> Any:
    if not is_result(fit) or not has_group(fit, "posterior") or "alpha" not in group(fit, "posterior").data_vars:
        raise NoiseawareTypeError(
            v.message(
                "fit",
                "must be the result of dirichlet.fit or dirichlet.dpmcmc (an xarray.DataTree under ArviZ 1, an "
                "arviz.InferenceData under ArviZ 0.x) with a posterior variable alpha",
                type(fit).__name__,
            )
        )
    return fit


def prior_attrs(pr: GammaCopulaPrior, kind: str) -> dict[str, str]:
    """The ``attrs`` entry that records a Gamma / Gaussian-copula prior: ``{"noiseaware_prior": json}``.

    The JSON object has ``kind`` (``"p1"``, ``"p3"``, ``"p4"`` or ``"user"``), ``shape``, ``rate``
    and ``corr`` (a list of rows, or null), which :func:`prior` reads back.
    """
    corr = None if pr.corr is None else np.asarray(pr.corr, dtype=np.float64).tolist()
    text = {
        "kind": kind,
        "shape": np.asarray(pr.shape, dtype=np.float64).reshape(-1).tolist(),
        "rate": np.broadcast_to(np.asarray(pr.rate, dtype=np.float64), (pr.d,)).tolist(),
        "corr": corr,
    }
    return {"noiseaware_prior": json.dumps(text, allow_nan=False)}


@owned("noiseaware.dirichlet.posterior_mean")
def posterior_mean(fit: Any) -> np.ndarray:
    r"""Posterior mean of :math:`\alpha` over all chains and draws, shape ``(d,)``.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.dirichlet.fit` or :func:`~noiseaware.dirichlet.dpmcmc`
        (or the same read back with ``az.from_netcdf``).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a result with a posterior variable ``alpha``.

    Examples
    --------
    A stand-in for a fit's result, built as the fits build it:

    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> a = np.broadcast_to([1.0, 2.0, 3.0], (2, 50, 3))
    >>> fit = from_groups({"posterior": {"alpha": a, "composition": a / 6.0}}, dims={"alpha": ["part"]})
    >>> posterior_mean(fit)
    array([1., 2., 3.])
    """
    _check(fit)
    return np.asarray(draws(fit, "alpha"), dtype=np.float64).mean(axis=0)


@owned("noiseaware.dirichlet.prior")
def prior(fit: Any) -> GammaCopulaPrior:
    r"""The prior on :math:`\alpha` that the fit used, as a :class:`GammaCopulaPrior`.

    :func:`~noiseaware.dirichlet.fit` records its prior -- p1, or p3 / p4 as elicited from
    :math:`S_L(D_1,a)`, or the one given -- in ``attrs["noiseaware_prior"]`` (JSON: ``kind``,
    ``shape``, ``rate``, ``corr``); :func:`~noiseaware.dirichlet.dpmcmc` records its default prior p1
    there. A user's NumPyro distribution or log-density function given to ``dpmcmc`` is not
    recorded (only its description, ``attrs["prior"]``).

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.dirichlet.fit` or :func:`~noiseaware.dirichlet.dpmcmc`.

    Returns
    -------
    GammaCopulaPrior

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a result with a posterior variable ``alpha``.
    NoiseawareValueError
        If the result records no such prior (a user's prior of ``dpmcmc``, or a result no fit made).

    Examples
    --------
    >>> import json, numpy as np
    >>> from noiseaware.results import from_groups
    >>> recorded = {"kind": "p3", "shape": [2.0, 3.0], "rate": [1.0, 0.5], "corr": None}  # as dirichlet.fit writes
    >>> fit = from_groups({"posterior": {"alpha": np.ones((2, 10, 2))}},
    ...                   attrs={"noiseaware_prior": json.dumps(recorded)})
    >>> prior(fit).shape, prior(fit).rate, prior(fit).corr is None
    (array([2., 3.]), array([1. , 0.5]), True)
    """
    _check(fit)
    raw = fit.attrs.get("noiseaware_prior")
    if raw is None:
        described = fit.attrs.get("prior")
        v.refuse(
            "fit",
            "must record its prior in attrs['noiseaware_prior'] (dirichlet.fit does; dpmcmc only for its default "
            "prior p1)",
            type(fit).__name__ if described is None else f"a result with the prior {described!s}",
        )
    try:
        rec = json.loads(str(raw))
        corr = rec["corr"]
        return GammaCopulaPrior(
            shape=np.asarray(rec["shape"], dtype=np.float64),
            rate=np.asarray(rec["rate"], dtype=np.float64),
            corr=None if corr is None else np.asarray(corr, dtype=np.float64),
        )
    except (ValueError, KeyError, TypeError) as err:
        raise NoiseawareValueError(
            v.message("attrs['noiseaware_prior']", "must be the JSON record the fit wrote", str(raw), limit=200)
        ) from err


@owned("noiseaware.dirichlet.observed_parts")
def observed_parts(fit: Any) -> list[LogMeanPart]:
    r"""The released parts the fit observed: each :math:`S_L(D_l,a)` with its ``n``, ``a`` and Laplace scale.

    ``dirichlet.fit`` observes every part with prior p1 and the last part (:math:`D_2`) with p3, p4
    or a given prior; ``dpmcmc`` the part it was asked for (default: the last). Read from the
    release the fit recorded (:func:`noiseaware.results.release`) and the parts' indices in
    ``attrs["noiseaware_observed_parts"]``.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.dirichlet.fit` or :func:`~noiseaware.dirichlet.dpmcmc`.

    Returns
    -------
    list of LogMeanPart

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a result with a posterior variable ``alpha``.
    NoiseawareValueError
        If the result records no ``dirichlet_logmean`` release or no observed parts.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware.results import from_groups, release_attrs
    >>> x = np.random.default_rng(0).dirichlet([2.0, 3.0], size=400)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    >>> attrs = {**release_attrs(rel), "noiseaware_observed_parts": [1]}
    >>> fit = from_groups({"posterior": {"alpha": np.ones((2, 10, 2))}}, attrs=attrs)
    >>> [(p.n, p.d) for p in observed_parts(fit)]
    [(300, 2)]
    """
    _check(fit)
    rel = release(fit)
    idx = fit.attrs.get("noiseaware_observed_parts")
    if rel is None or idx is None:
        v.refuse(
            "fit",
            "must record its release and observed parts (attrs['noiseaware_release'], "
            "attrs['noiseaware_observed_parts']), as dirichlet.fit and dpmcmc do",
            type(fit).__name__,
        )
    parts = logmean_parts(rel)
    return [parts[int(i)] for i in np.atleast_1d(np.asarray(idx)).reshape(-1)]
