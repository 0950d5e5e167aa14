r"""Every fit's result: the host stack's own container, and the functions that read it (engine, private).

A fit returns what the installed stack's ``pm.sample`` returns -- an :class:`xarray.DataTree` under
ArviZ >= 1, an :class:`arviz.InferenceData` under ArviZ 0.x (:mod:`._host`) -- never a subclass.
What the package knows about the run (the resolved settings, the kind of fit, the variable its
helpers read by default, the fit's own records such as the prior) is stored in the result's root
``attrs`` under ``noiseaware_*`` names, so a result read back from a netCDF file (``az.from_netcdf``)
is as good as the one the fit returned. The functions below (public as :mod:`noiseaware.results`)
read only the groups and those attributes.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner, owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._host import group, group_names, has_group, is_result, set_group
from ._mixing import MixingBlock, check_mixing
from ._settings import SamplingSettings

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = [
    "diagnostics",
    "draws",
    "finish_fit",
    "interval",
    "plot",
    "record_run",
    "settings",
    "standard_stats",
    "summary",
]

#: Names other samplers give the acceptance statistic; every fit stores it as ``accept_rate``.
_ACCEPT_ALIASES = ("acceptance_rate", "accept_prob", "mean_tree_accept")


def standard_stats(idata: Any) -> Any:
    """Rename the acceptance statistic of ``sample_stats`` to the convention's ``accept_rate`` (in place)."""
    if not has_group(idata, "sample_stats"):
        return idata
    stats = group(idata, "sample_stats")
    if "accept_rate" not in stats:
        for name in _ACCEPT_ALIASES:
            if name in stats:
                set_group(idata, "sample_stats", stats.rename({name: "accept_rate"}))
                break
    return idata


def record_run(idata: Any, settings: SamplingSettings, **attrs: Any) -> Any:
    """Finish a fit's result in place: :func:`standard_stats`, then the settings and ``attrs`` in its root attrs.

    ``idata.attrs`` gets :meth:`SamplingSettings.as_attrs` (``noiseaware_seed``, ...) and then
    ``attrs`` (the fit's own records, e.g. ``noiseaware_prior``). Returns ``idata``.
    """
    standard_stats(idata)
    from ._host import _netcdf_attr

    idata.attrs.update({k: _netcdf_attr(x) for k, x in {**settings.as_attrs(), **attrs}.items()})
    return idata


def finish_fit(
    kind: str,
    idata: Any,
    settings: SamplingSettings,
    *,
    check: Sequence[str],
    block: MixingBlock,
    default_var: str | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> Any:
    """The end of a fit: record the run in the result's attrs, and check its mixing when asked.

    :func:`record_run` puts the settings, ``noiseaware_result = kind`` (the fit's name, e.g.
    ``"copula.fit"``), ``noiseaware_default_var`` and ``attrs`` into ``idata.attrs``; with
    ``settings.check_mixing``, :func:`check_mixing` checks the posterior variables ``check`` and
    warns in the name of the current owner and ``block``. Returns ``idata`` itself (the host's container).
    """
    extra: dict[str, Any] = {"noiseaware_result": kind}
    if default_var is not None:
        extra["noiseaware_default_var"] = default_var
    record_run(idata, settings, **extra, **(attrs or {}))
    if settings.check_mixing and check:
        check_mixing(idata, check, owner=current_owner(), block=block)
    return idata


@contextlib.contextmanager
def _constant_entries_ok() -> Iterator[None]:
    """ArviZ's ESS / R-hat of a constant entry (a correlation matrix's diagonal) divide 0 by 0: NaN, quietly."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "divide by zero", RuntimeWarning)
        warnings.filterwarnings("ignore", "Degrees of freedom <= 0", RuntimeWarning)
        warnings.filterwarnings("ignore", ".*appears to have a single value", UserWarning)  # ArviZ 0.x's KDE
        yield


# ----------------------------------------------------------------------------- reading a result
def _check_result(result: Any) -> Any:
    if not is_result(result) or not has_group(result, "posterior"):
        raise NoiseawareTypeError(
            v.message(
                "result",
                "must be a fit's result (an xarray.DataTree under ArviZ 1, an arviz.InferenceData under ArviZ 0.x) "
                "with a posterior group",
                type(result).__name__,
            )
        )
    return result


def _var(result: Any, var: str | None) -> str:
    post = group(result, "posterior")
    default = result.attrs.get("noiseaware_default_var")
    name = var if var is not None else (str(default) if default is not None else str(next(iter(post.data_vars))))
    if name not in post:
        known = sorted(str(k) for k in post.data_vars)
        raise NoiseawareValueError(v.message("var", f"must name a posterior variable {known}", name))
    return name


@owned("noiseaware.results.draws")
def draws(result: Any, var: str | None = None) -> np.ndarray:
    r"""Posterior draws of ``var`` pooled over chains, shape ``(chains * draws, *event_shape)``.

    Parameters
    ----------
    result : xarray.DataTree or arviz.InferenceData
        A fit's result (or any ArviZ result with a ``posterior`` group, e.g. ``pm.sample``'s).
    var : str, optional
        A posterior variable; default: the fit's main variable (``attrs["noiseaware_default_var"]``,
        e.g. ``"R"`` for ``copula.fit``), else the first posterior variable.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    NoiseawareTypeError
        ``result`` is not a result with a ``posterior`` group.
    NoiseawareValueError
        ``var`` names no posterior variable.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> res = from_groups({"posterior": {"mu": np.zeros((2, 50, 3))}})
    >>> draws(res, "mu").shape
    (100, 3)
    """
    _check_result(result)
    x = np.asarray(group(result, "posterior")[_var(result, var)].values)
    return x.reshape((-1, *x.shape[2:]))


@owned("noiseaware.results.interval")
def interval(result: Any, level: float = 0.95, var: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Equal-tailed credible interval of ``var`` at ``level``: ``(lower, upper)``, elementwise.

    The :math:`(1-\text{level})/2` and :math:`(1+\text{level})/2` quantiles of the draws pooled
    over chains (:func:`draws`), each of the variable's event shape.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> res = from_groups({"posterior": {"mu": np.random.default_rng(0).normal(size=(2, 400))}})
    >>> lo, hi = interval(res, 0.9, var="mu")
    >>> bool(-2.0 < lo < -1.0 < 1.0 < hi < 2.0)
    True
    """
    _check_result(result)
    level = v.open_unit("level", level)
    x = draws(result, _var(result, var))
    q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return q[0], q[1]


@owned("noiseaware.results.summary")
def summary(result: Any, level: float = 0.95, var_names: Any = None) -> pandas.DataFrame:
    """ArviZ's summary of ``result`` (mean, sd, interval at ``level``, MCSE, ESS, R-hat) as a DataFrame of numbers.

    ``az.summary(result, ...)`` of the installed ArviZ with its own default interval (an HDI under
    ArviZ 0.x, columns ``hdi_2.5%``...; an equal-tailed one under ArviZ 1, ``eti95_lb``...), each at
    ``level``, unrounded (ArviZ 1 rounds for display by default and returns strings). Constant
    entries (a correlation matrix's diagonal) get NaN ESS and R-hat without a warning.
    """
    import arviz as az

    from ._host import arviz_major

    _check_result(result)
    level = v.open_unit("level", level)
    with _constant_entries_ok():
        if arviz_major() >= 1:
            return az.summary(result, var_names=var_names, ci_prob=level, round_to="none")
        return az.summary(result, var_names=var_names, hdi_prob=level)


@owned("noiseaware.results.plot")
def plot(result: Any, path: str | None = None, *, var_names: Any = None) -> Any:
    """ArviZ's trace plot of ``var_names`` (default: all posterior variables); saves a PNG at ``path``.

    Returns what ``az.plot_trace`` returns (a ``PlotCollection`` under ArviZ 1, an array of axes
    under ArviZ 0.x). Needs matplotlib.
    """
    import arviz as az
    import matplotlib

    from ._host import arviz_major

    _check_result(result)
    matplotlib.use("Agg", force=False)

    with warnings.catch_warnings(), _constant_entries_ok():
        # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (its issue, not ours)
        warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
        if arviz_major() >= 1:
            out = az.plot_trace(result, var_names=var_names, backend="matplotlib")
            fig = out.viz["figure"].item()
        else:
            out = az.plot_trace(result, var_names=var_names)
            fig = np.asarray(out).ravel()[0].figure
    if path is not None:
        from .._io import write_figure

        write_figure(fig, path, dpi=100, close=True)
    return out


@owned("noiseaware.results.diagnostics")
def diagnostics(result: Any) -> dict[str, float]:
    """``divergences`` (count), ``accept_rate`` (mean), ``ess_bulk_min``, ``r_hat_max`` of a result.

    ESS and R-hat over the fit's main variable (``attrs["noiseaware_default_var"]``, else every
    posterior variable); constant entries are left out. Missing statistics are ``nan``
    (``r_hat_max`` with one chain); ``divergences`` is 0 for samplers without them.
    """
    import arviz as az

    _check_result(result)
    out = {"divergences": 0.0, "accept_rate": float("nan"), "ess_bulk_min": float("nan"), "r_hat_max": float("nan")}
    if has_group(result, "sample_stats"):
        stats = group(result, "sample_stats")
        if "diverging" in stats:
            out["divergences"] = float(np.sum(np.asarray(stats["diverging"])))
        for name in ("accept_rate", *_ACCEPT_ALIASES):
            if name in stats:
                out["accept_rate"] = float(np.mean(np.asarray(stats[name])))
                break
    post = group(result, "posterior")
    default = result.attrs.get("noiseaware_default_var")
    names = [str(default)] if default is not None and str(default) in post else list(post.data_vars)
    sub = post[names]
    with _constant_entries_ok():
        ess_ds = az.ess(sub, method="bulk")
        rhat_ds = az.rhat(sub) if int(post.sizes["chain"]) > 1 else None
    ess = np.concatenate([np.ravel(np.asarray(x)) for x in ess_ds.data_vars.values()])
    ess = ess[np.isfinite(ess)]
    if ess.size:
        out["ess_bulk_min"] = float(ess.min())
    if rhat_ds is not None:
        rhat = np.concatenate([np.ravel(np.asarray(x)) for x in rhat_ds.data_vars.values()])
        rhat = rhat[np.isfinite(rhat)]
        if rhat.size:
            out["r_hat_max"] = float(rhat.max())
    return out


@owned("noiseaware.results.settings")
def settings(result: Any) -> SamplingSettings | None:
    """The resolved sampler settings a fit recorded in ``result.attrs`` (None for a result no fit made).

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> attrs = {"noiseaware_seed": 3, "noiseaware_chains": 2, "noiseaware_draws": 10, "noiseaware_warmup": 5,
    ...          "noiseaware_target_accept": 0.8}  # what a fit records (booleans, when missing, take their defaults)
    >>> st = settings(from_groups({"posterior": {"mu": np.zeros((2, 10))}}, attrs=attrs))
    >>> st.seed, st.chains, st.draws, st.target_accept
    (3, 2, 10, 0.8)
    >>> settings(from_groups({"posterior": {"mu": np.zeros((2, 10))}})) is None  # a result no fit made
    True
    """
    _check_result(result)
    return SamplingSettings.from_attrs(result.attrs)


def fit_kind(result: Any) -> str | None:
    """The fit that made ``result`` (``attrs["noiseaware_result"]``, e.g. ``"copula.fit"``), or None."""
    kind = result.attrs.get("noiseaware_result")
    return None if kind is None else str(kind)


def release_attrs(release: Any) -> dict[str, str]:
    """The ``attrs`` entry that records the fitted release in a result: ``{"noiseaware_release": json}``.

    The release's own JSON form (:meth:`noiseaware.Release.to_dict`), which :func:`release` reads
    back with every check of :meth:`noiseaware.Release.from_dict`.
    """
    import json

    return {"noiseaware_release": json.dumps(release.to_dict(), allow_nan=False)}


def release(result: Any) -> Any:
    """The release a fit was made from (recorded in ``attrs["noiseaware_release"]``), or None.

    Returns a :class:`noiseaware.Release`, checked as when loaded from a file.
    """
    import json

    from ..release import Release

    raw = result.attrs.get("noiseaware_release")
    if raw is None:
        return None
    return Release.from_dict(json.loads(str(raw)))


__all__ += ["fit_kind", "group", "group_names", "has_group", "release", "release_attrs"]
