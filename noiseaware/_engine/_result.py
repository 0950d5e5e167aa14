"""The one result type of every fit: :class:`FitResult` over ArviZ ``InferenceData`` (engine, private)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .. import _validation as v
from ..exceptions import NoiseawareValueError
from ._settings import SamplingSettings

if TYPE_CHECKING:  # pragma: no cover
    import arviz
    import pandas

__all__ = ["FitResult", "standard_stats"]

#: Names other samplers give the acceptance statistic; every fit stores it as ``accept_rate``.
_ACCEPT_ALIASES = ("acceptance_rate", "accept_prob", "mean_tree_accept")


def standard_stats(idata: Any) -> Any:
    """Rename the acceptance statistic of ``sample_stats`` to the convention's ``accept_rate`` (in place)."""
    if "sample_stats" not in idata.groups():
        return idata
    stats = idata["sample_stats"]
    if "accept_rate" not in stats:
        for name in _ACCEPT_ALIASES:
            if name in stats:
                idata.sample_stats = stats.rename({name: "accept_rate"})
                break
    return idata


@contextlib.contextmanager
def _constant_entries_ok() -> Iterator[None]:
    """ArviZ's ESS / R-hat of a constant entry (a correlation matrix's diagonal) divide 0 by 0: NaN, quietly."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "divide by zero", RuntimeWarning)
        yield


@dataclass
class FitResult:
    r"""A fit's posterior: ArviZ ``InferenceData`` plus the settings that made it.

    Every fit of the package returns this class or a subclass (``CopulaFit``, ``DirichletFit``,
    ``DPCopulaFit``, ``DPMCMCFit``, ``AugmentationFit``, ``CovarianceFit``) with the same
    :meth:`summary`, :meth:`interval`, :meth:`plot` and :attr:`diagnostics`.

    Attribute access falls through to :attr:`idata`: ``result.posterior``,
    ``result.sample_stats``, ``result.attrs``, ``result["posterior"]`` and ``result.groups()`` work
    as on the ``InferenceData`` that these fits returned before (so code written for the old
    return type keeps working); pass ``result.idata`` where a true ``InferenceData`` is required.

    Attributes
    ----------
    idata : arviz.InferenceData
        ``posterior``, ``sample_stats`` (the acceptance statistic always as ``accept_rate``;
        ``diverging`` for NUTS), and the fit's own groups and ``attrs``.
    settings : SamplingSettings or None
        The resolved sampler settings (the seed used, chains, draws, warmup, target_accept).

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> res = FitResult(az.from_dict(posterior={"mu": rng.normal(size=(2, 400))}))
    >>> lo, hi = res.interval(0.9, var="mu")
    >>> bool(-2.0 < lo < -1.0 < 1.0 < hi < 2.0)
    True
    >>> res.posterior["mu"].shape  # falls through to idata
    (2, 400)
    >>> sorted(res.diagnostics)
    ['accept_rate', 'divergences', 'ess_bulk_min', 'r_hat_max']
    """

    idata: arviz.InferenceData
    settings: SamplingSettings | None = field(default=None, kw_only=True, repr=False)

    #: The variable :meth:`interval`, :meth:`draws_of` and :attr:`diagnostics` use by default.
    default_var: ClassVar[str | None] = None

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails; never for idata itself (unpickling, copying)
        if name.startswith("__") or name in ("idata", "settings"):
            raise AttributeError(name)
        try:
            idata = object.__getattribute__(self, "idata")
        except AttributeError:
            raise AttributeError(name) from None
        try:
            return getattr(idata, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!s} (and its InferenceData) has no attribute {name!r}") from None

    def __getitem__(self, key: str) -> Any:
        return self.idata[key]

    # ------------------------------------------------------------------ the convention's methods
    def _var(self, var: str | None, owner: str) -> str:
        post = self.idata["posterior"]
        name = var if var is not None else (self.default_var or str(next(iter(post.data_vars))))
        if name not in post:
            known = sorted(str(k) for k in post.data_vars)
            raise NoiseawareValueError(v.message(owner, "var", f"must name a posterior variable {known}", name))
        return name

    def draws_of(self, var: str | None = None) -> np.ndarray:
        """Draws of ``var`` pooled over chains, shape ``(chains * draws, *event_shape)``."""
        name = self._var(var, f"{type(self).__name__}.draws_of")
        x = np.asarray(self.idata["posterior"][name].values)
        return x.reshape((-1, *x.shape[2:]))

    def interval(self, level: float = 0.95, var: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        r"""Equal-tailed credible interval of ``var`` at ``level``: ``(lower, upper)``.

        The :math:`(1-\text{level})/2` and :math:`(1+\text{level})/2` quantiles of the draws
        pooled over chains, elementwise (each of the variable's event shape).
        """
        owner = f"{type(self).__name__}.interval"
        level = v.open_unit(owner, "level", level)
        x = self.draws_of(self._var(var, owner))
        q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return q[0], q[1]

    def summary(self, level: float = 0.95, var_names: Any = None) -> pandas.DataFrame:
        """ArviZ's summary (mean, sd, HDI at ``level``, MCSE, ESS, R-hat) as a DataFrame."""
        import arviz as az

        level = v.open_unit(f"{type(self).__name__}.summary", "level", level)
        with _constant_entries_ok():
            return az.summary(self.idata, var_names=var_names, hdi_prob=level)

    def plot(self, path: str | None = None, *, var_names: Any = None) -> Any:
        """ArviZ trace plot of ``var_names`` (default: all); saves a PNG at ``path``. Needs matplotlib."""
        import arviz as az
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        with warnings.catch_warnings():
            # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (its issue, not ours)
            warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
            axes = az.plot_trace(self.idata, var_names=var_names)
        fig = np.asarray(axes).ravel()[0].figure
        if path is not None:
            from .._io import write_figure

            try:
                write_figure(fig, path, dpi=100, owner=f"{type(self).__name__}.plot")
            finally:
                plt.close(fig)
        return axes

    @property
    def diagnostics(self) -> dict[str, float]:
        """``divergences`` (count), ``accept_rate`` (mean), ``ess_bulk_min``, ``r_hat_max``.

        ESS and R-hat over ``default_var`` (else every posterior variable). Missing statistics are
        ``nan`` (``r_hat_max`` with one chain); ``divergences`` is 0 for samplers without them.
        """
        import arviz as az

        out = {"divergences": 0.0, "accept_rate": float("nan"), "ess_bulk_min": float("nan"), "r_hat_max": float("nan")}
        if "sample_stats" in self.idata.groups():
            stats = self.idata["sample_stats"]
            if "diverging" in stats:
                out["divergences"] = float(np.sum(np.asarray(stats["diverging"])))
            if "accept_rate" in stats:
                out["accept_rate"] = float(np.mean(np.asarray(stats["accept_rate"])))
        post = self.idata["posterior"]
        names = [self.default_var] if self.default_var in post else list(post.data_vars)
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
