r"""Noise-aware DPCopula: the joint posterior of the copula correlation and every margin (:func:`fit_dpcopula`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain
from .._engine import (
    check_settings,
    fit_kind,
    group,
    is_result,
    release_attrs,
    set_group,
)
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release
from ._dpcopula_release import _check, _domains, _split
from ._margins import margin_posterior

__all__ = ["fit_dpcopula", "margin_draws"]

#: The kind ``fit_dpcopula`` records in ``attrs["noiseaware_result"]``.
KIND = "copula.fit_dpcopula"


# ----------------------------------------------------------------------------- the result
def _margin_name(j: int) -> str:
    """The posterior variable of the ``j``-th column's margin (its cell dimension: ``cell_j``)."""
    return f"margin_{j}"


def _str_list(raw: Any) -> list[str]:
    """A list of strings stored in ``attrs`` (netCDF gives a one-element list back as a bare string)."""
    if isinstance(raw, str):
        return [raw]
    return [str(x) for x in np.atleast_1d(np.asarray(raw, dtype=object)).tolist()]


def _attach_margins(result: Any, margins: Any, release: Release) -> Any:
    """Store each margin's draws beside ``R`` in ``result``'s posterior, and the columns' records in its attrs.

    ``margins[j]`` has shape ``(chains * draws, K_j)``, draw ``s`` paired with draw ``s`` of ``R``
    pooled over chains; it is stored as ``margin_j`` of dims ``(chain, draw, cell_j)`` (the cell
    codes of :func:`cell_codes` as coordinates; the column's name in the variable's ``attrs``).
    ``attrs`` get the release's ``noiseaware_columns``, ``noiseaware_dtypes``,
    ``noiseaware_domains`` (the JSON of each :meth:`Domain.to_dict`) and the release itself.
    In place; returns ``result``.
    """
    import xarray as xr

    post = group(result, "posterior")
    chains, draws = int(post.sizes["chain"]), int(post.sizes["draw"])
    cols = [str(c) for c in release.metadata["columns"]]
    new = {}
    for j, (col, m) in enumerate(zip(cols, margins, strict=True)):
        m = np.asarray(m, dtype=np.float64)
        if m.ndim != 2 or m.shape[0] != chains * draws:
            raise NoiseawareValueError(
                f"fit_dpcopula: margin {j} has shape {m.shape}; expected ({chains * draws}, K) to pair with R's draws."
            )
        cell = f"cell_{j}"
        new[_margin_name(j)] = xr.DataArray(
            m.reshape(chains, draws, m.shape[1]),
            dims=("chain", "draw", cell),
            coords={"chain": post["chain"].values, "draw": post["draw"].values, cell: np.arange(m.shape[1])},
            attrs={"column": col},
        )
    set_group(result, "posterior", post.assign(new))
    result.attrs.update(
        {
            "noiseaware_columns": cols,
            "noiseaware_dtypes": [str(t) for t in release.metadata["dtypes"]],
            "noiseaware_domains": json.dumps([d.to_dict() for d in _domains(release)], allow_nan=False),
            **release_attrs(release),
        }
    )
    return result


def _check_fit(fit: Any, name: str = "fit") -> Any:
    kind = fit_kind(fit) if is_result(fit) else None
    if kind != KIND:
        raise NoiseawareTypeError(
            v.message(
                name,
                "must be the result of copula.fit_dpcopula (an xarray.DataTree under ArviZ 1, an arviz.InferenceData "
                "under ArviZ 0.x, or its copy read back with az.from_netcdf)",
                f"a {kind} result" if kind is not None else type(fit).__name__,
            )
        )
    return fit


def _parts(
    fit: Any, name: str = "fit"
) -> tuple[np.ndarray, tuple[np.ndarray, ...], list[str], list[str], list[Domain]]:
    """What synthesis needs of a ``fit_dpcopula`` result: pooled ``R``, margins, columns, dtypes, domains."""
    _check_fit(fit, name)
    post = group(fit, "posterior")
    cols = _str_list(fit.attrs["noiseaware_columns"])
    dtypes = _str_list(fit.attrs["noiseaware_dtypes"])
    domains = [
        Domain.from_dict(d, f"attrs.noiseaware_domains[{j}]")
        for j, d in enumerate(json.loads(str(fit.attrs["noiseaware_domains"])))
    ]
    from ._result import _matrix_draws

    R = _matrix_draws(fit)
    margins = []
    for j in range(len(cols)):
        m = np.asarray(post[_margin_name(j)].values, dtype=np.float64)
        margins.append(m.reshape(-1, m.shape[-1]))
    return R, tuple(margins), cols, dtypes, domains


@owned("noiseaware.copula.margin_draws")
def margin_draws(fit: Any) -> tuple[np.ndarray, ...]:
    r"""Posterior draws of each margin's cell probabilities in a :func:`fit_dpcopula` result.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`fit_dpcopula` (or its copy read back with ``az.from_netcdf``).

    Returns
    -------
    tuple of ndarray
        One per column of the release, in its order: shape ``(chains * draws, K_j)``, pooled over
        chains as :func:`noiseaware.results.draws` pools ``R``, draw ``s`` paired with its draw
        ``s``. Each is the posterior variable ``margin_j`` (dims ``chain, draw, cell_j``).

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a ``fit_dpcopula`` result.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .5], [.5, 1]], size=500)
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=2.0, correlation="median",
    ...                    domains=[{"lower": -4.0, "upper": 4.0, "bins": 20}] * 2, rng=np.random.default_rng(1))
    >>> fit = fit_dpcopula(rel, chains=1, draws=40, warmup=100, seed=0, check_mixing=False)  # doctest: +SKIP
    >>> [m.shape for m in margin_draws(fit)]  # doctest: +SKIP
    [(40, 20), (40, 20)]

    (Skipped in the doctests: the NUTS fit compiles for 20-40 s; ``tests/dpcopula`` runs it.)
    """
    return _parts(fit)[1]


@owned("fit_dpcopula")
def fit_dpcopula(
    release: Release,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    margin_prior: float = 0.5,
) -> Any:
    r"""Noise-aware posterior of a ``dpcopula`` release made with ``correlation="median"``.

    The correlation posterior is the Bayes-NA of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian
    Inference for Gaussian Copula Correlations* (:func:`noiseaware.copula.fit`, NumPyro NUTS,
    LKJ(1) prior, the composite likelihood of eq. 18) on the release's ``median_pairs``
    component; each margin's posterior is :func:`margin_posterior` (Dirichlet prior, exact data
    augmentation over the geometric noise). The noises of the components are independent, so the
    joint posterior is the product; draws are paired by index. Pure post-processing.

    Parameters
    ----------
    release : Release
        A ``dpcopula`` release with ``metadata.correlation == "median"``.
    chains : int
        Number of chains (default 4). These and the next two are the Bayes-NA fit's.
    draws : int
        Kept draws per chain (default 1000). ``S = chains * draws`` joint draws are kept, and each
        margin's posterior gets as many.
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated. Seed of the NUTS fit; the margins' draws use ``seed + 1``.
    progressbar : bool
        Show the sampler's progress bar (default False).
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of NUTS's step size adapted during warmup; default
        (None) 0.8 (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when a free entry of the Bayes-NA fit's
        ``R`` has bulk ESS below 100 per chain or R-hat above 1.01 (default True).
    margin_prior : float
        Dirichlet concentration ``a0`` per cell (default 0.5, Jeffreys). On wide domains whose tails
        are empty the tails' posterior mass is set largely by this prior (the noise cannot tell 0
        from a few records per cell), so a larger ``a0`` inflates the margin's variance: use
        0.1-0.2 for wide stated domains with thin tails (docs/reproduction.md has the coverage
        study behind this advice). The draws are
        independent and exact for any ``a0`` (:func:`margin_posterior`).

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        Returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x): the
        groups of the Bayes-NA fit (:func:`noiseaware.copula.fit`: ``R`` and its Cholesky factor,
        ``sample_stats``, ``observed_data``, the pairs' ``log_likelihood``), and in the posterior
        beside ``R`` each margin's cell probabilities ``margin_j`` (dims ``chain, draw, cell_j``;
        the column's name in the variable's ``attrs["column"]``), paired with ``R`` draw by draw
        (the two posteriors are independent: disjoint noise). Root ``attrs``:
        ``noiseaware_result = "copula.fit_dpcopula"``, the sampler settings, the release (read with
        :func:`noiseaware.results.release`), ``noiseaware_columns``, ``noiseaware_dtypes``,
        ``noiseaware_domains`` (JSON), ``noiseaware_margin_prior``. :func:`synthesize` takes it (and
        its copy read back with ``az.from_netcdf``); :func:`margin_draws` reads the margins, and the
        functions of :mod:`noiseaware.results` and :func:`pair_summary` the correlations.

    Raises
    ------
    TypeError
        If ``release`` is not a ``dpcopula`` release.
    ValueError
        If its correlations are not a ``median_pairs`` component (Kendall and MLE releases have no
        noise-aware likelihood here: use :func:`synthesize` on the release for DPCopula's point
        estimate), or for bad settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .5], [.5, 1]], size=500)
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=2.0, correlation="median",
    ...                    domains=[{"lower": -4.0, "upper": 4.0, "bins": 20}] * 2, rng=np.random.default_rng(1))
    >>> fit = fit_dpcopula(rel, chains=1, draws=40, warmup=100, seed=0, check_mixing=False)  # doctest: +SKIP
    >>> from noiseaware import results
    >>> results.draws(fit, "R").shape, margin_draws(fit)[0].shape  # the pair's draws  # doctest: +SKIP
    ((40, 1), (40, 20))
    >>> copies = synthesize(fit, 1000, draws=5, seed=2)  # doctest: +SKIP

    (Skipped in the doctests: the NUTS fit compiles for 20-40 s; ``tests/dpcopula`` runs it.)
    """
    owner = "fit_dpcopula"
    rel = _check(release)
    if rel.metadata["correlation"] != "median":
        raise NoiseawareValueError(
            f"{owner}: noise-aware synthesis needs the correlations as a median_pairs component (Bayes-NA); got "
            f"correlation={rel.metadata['correlation']!r}. Release with privatize(..., correlation='median'), or "
            "use synthesize(release, n) for DPCopula's point estimate."
        )
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    a0 = v.positive("margin_prior", margin_prior)
    from .._engine import MixingBlock
    from ._fit import R_BLOCK, _finish, fit

    result = fit(
        rel.components[0],
        chains=st.chains,
        draws=st.draws,
        warmup=st.warmup,
        seed=st.seed,
        progressbar=st.progressbar,
        target_accept=st.target_accept,
        check_mixing=False,  # checked below, in this fit's name
    )
    post = group(result, "posterior")
    total = int(post.sizes["chain"]) * int(post.sizes["draw"])
    rng = np.random.default_rng(st.seed + 1)
    alpha = float(rel.mechanism.alpha)  # type: ignore[attr-defined]
    margins = [margin_posterior(h, alpha, n=rel.n, draws=total, prior=a0, seed=rng) for h in _split(rel)]
    _attach_margins(result, margins, rel)
    block = MixingBlock(
        R_BLOCK.text + " (the margins are exact independent draws and need no check)", R_BLOCK.advice, R_BLOCK.names
    )
    attrs = {
        "noiseaware_backend": str(result.attrs["noiseaware_backend"]),
        "noiseaware_prior": str(result.attrs["noiseaware_prior"]),
        "noiseaware_margin_prior": float(a0),
    }
    return _finish(KIND, result, st, block=block, attrs=attrs)
