"""The one result type of every fit: :class:`FitResult` over ArviZ ``InferenceData`` (engine, private)."""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

import numpy as np
from arviz import InferenceData

from .. import _validation as v
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._mixing import MixingBlock, check_mixing
from ._settings import SamplingSettings

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["FitResult", "PooledDraws", "finish_fit", "record_run", "standard_stats"]

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


def record_run(idata: Any, settings: SamplingSettings, **attrs: Any) -> Any:
    """Finish a fit's ``InferenceData`` in place: :func:`standard_stats`, then the settings and ``attrs`` in its attrs.

    ``idata.attrs`` gets :meth:`SamplingSettings.as_attrs` (``noiseaware_seed``, ...) and then
    ``attrs`` (the fit's own records, e.g. ``noiseaware_prior``). Returns ``idata``.
    """
    standard_stats(idata)
    idata.attrs.update({**settings.as_attrs(), **attrs})
    return idata


@contextlib.contextmanager
def _constant_entries_ok() -> Iterator[None]:
    """ArviZ's ESS / R-hat of a constant entry (a correlation matrix's diagonal) divide 0 by 0: NaN, quietly."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "divide by zero", RuntimeWarning)
        yield


class FitResult(InferenceData):
    r"""A fit's posterior: an ArviZ ``InferenceData`` that also knows the settings that made it.

    Every fit of the package returns this class or a subclass (``CopulaFit``, ``DirichletFit``,
    ``DPCopulaFit``, ``DPMCMCFit``, ``AugmentationFit``, ``CovarianceFit``). It *is* an
    :class:`arviz.InferenceData`, so every ArviZ function takes it as it takes the result of
    ``pm.sample`` (``az.summary(fit)``, ``az.plot_trace(fit)``, ``az.to_netcdf(fit, path)``, and
    ``az.loo(fit)`` where the fit stores a ``log_likelihood`` group), and it adds
    :meth:`summary`, :meth:`interval`, :meth:`draws_of`, :meth:`plot`, :attr:`diagnostics` and
    :attr:`settings`. :attr:`idata` returns the result itself (code written for the older
    ``result.idata`` keeps working).

    Parameters
    ----------
    idata : arviz.InferenceData, optional
        The groups and ``attrs`` to take over (the datasets are shared, not copied).
    settings : SamplingSettings, optional
        The resolved sampler settings (the seed used, chains, draws, warmup, target_accept).
    **groups : xarray.Dataset or record
        Further groups, as for :class:`arviz.InferenceData` (they win over ``idata``'s); and the
        fit's own fields, one keyword for each name in :attr:`fields` (all required).

    Notes
    -----
    ArviZ's selection methods (``sel``, ``isel``, ``copy``, ...) return the same class with the
    fit's own attributes copied. Readers that build a new object (``az.from_netcdf``,
    ``az.concat``) return a plain ``InferenceData``: the groups and ``attrs`` survive (the
    result's class is recorded in ``attrs["noiseaware_result"]``), the Python-side helpers do not.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> res = FitResult(az.from_dict(posterior={"mu": rng.normal(size=(2, 400))}))
    >>> lo, hi = res.interval(0.9, var="mu")
    >>> bool(-2.0 < lo < -1.0 < 1.0 < hi < 2.0)
    True
    >>> isinstance(res, az.InferenceData), res.posterior["mu"].shape
    (True, (2, 400))
    >>> sorted(res.diagnostics)
    ['accept_rate', 'divergences', 'ess_bulk_min', 'r_hat_max']
    """

    #: The variable :meth:`interval`, :meth:`draws_of` and :attr:`diagnostics` use by default.
    default_var: ClassVar[str | None] = None
    #: The fit's own fields (the release, the prior, the column names, ...): keyword arguments of
    #: the constructor, all required, kept as attributes of the same names and, like
    #: :attr:`settings`, shared by selections (``sel``, ``isel``, ``copy``) rather than copied.
    fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, idata: InferenceData | None = None, /, *, settings: SamplingSettings | None = None, **groups: Any
    ) -> None:
        missing = [name for name in self.fields if name not in groups]
        if missing:
            raise NoiseawareTypeError(
                f"{type(self).__name__}: the fields {list(self.fields)} must be given as keywords; "
                f"got no {', '.join(missing)}."
            )
        own = {name: groups.pop(name) for name in self.fields}
        attrs: dict[str, Any] = {}
        if idata is not None:
            if not isinstance(idata, InferenceData):
                raise NoiseawareTypeError(
                    v.message(type(self).__name__, "idata", "must be an arviz.InferenceData", type(idata).__name__)
                )
            lazy = dict(idata.__dict__.get("_lazy_groups", {}))  # another fit's groups not built yet stay so
            groups = {name: getattr(idata, name) for name in idata.groups() if name not in lazy} | groups
            attrs = dict(idata.attrs)
        else:
            lazy = {}
        attrs["noiseaware_result"] = type(self).__name__
        super().__init__(attrs=attrs, **groups)
        self.settings = settings
        for name, value in own.items():
            setattr(self, name, value)
        self._lazy_groups: dict[str, Callable[[FitResult], Any]] = {}
        for name, compute in lazy.items():
            if name not in groups:
                self.add_lazy_group(name, compute)

    def add_lazy_group(self, name: str, compute: Callable[[FitResult], Any]) -> None:
        """List group ``name`` now; ``compute(self)`` builds its Dataset on first access (then it is kept).

        For groups that cost more than the fit should pay up front, such as a pointwise
        log-likelihood that only ``az.loo`` / ``az.waic`` read: ArviZ reaches every group through
        ``getattr``, which builds it. A selection (``sel``, ``isel``) builds it from the selected
        posterior.
        """
        if name in self.groups():
            raise NoiseawareValueError(v.message(type(self).__name__, "name", "must be a new group", name))
        self._lazy_groups[name] = compute
        self._groups.append(name)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: a listed group not built yet
        lazy = self.__dict__.get("_lazy_groups")
        if lazy and name in lazy:
            data = lazy.pop(name)(self)
            object.__setattr__(self, name, data)
            return data
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __deepcopy__(self, memo: dict[int, Any]) -> FitResult:
        # ArviZ's sel/isel/copy deep-copy the object: the groups and attrs are copied, the fit's own
        # fields and settings (release, prior: immutable) are shared, as they describe the same fit
        new = copy.copy(self)
        new._groups = list(self._groups)
        new._groups_warmup = list(self._groups_warmup)
        new._attrs = copy.deepcopy(self._attrs, memo)
        new._lazy_groups = dict(self.__dict__.get("_lazy_groups", {}))
        for name in self.groups():
            if name not in new._lazy_groups:  # a group not built yet is built later from the copy's data
                setattr(new, name, copy.deepcopy(getattr(self, name), memo))
        return new

    @property
    def idata(self) -> FitResult:
        """The result itself (it is an ``InferenceData``); kept for code written for older versions."""
        return self

    # ------------------------------------------------------------------ the convention's methods
    def _var(self, var: str | None, owner: str) -> str:
        post = self["posterior"]
        name = var if var is not None else (self.default_var or str(next(iter(post.data_vars))))
        if name not in post:
            known = sorted(str(k) for k in post.data_vars)
            raise NoiseawareValueError(v.message(owner, "var", f"must name a posterior variable {known}", name))
        return name

    def draws_of(self, var: str | None = None) -> np.ndarray:
        """Draws of ``var`` pooled over chains, shape ``(chains * draws, *event_shape)``."""
        name = self._var(var, f"{type(self).__name__}.draws_of")
        x = np.asarray(self["posterior"][name].values)
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
            return az.summary(self, var_names=var_names, hdi_prob=level)

    def plot(self, path: str | None = None, *, var_names: Any = None) -> Any:
        """ArviZ trace plot of ``var_names`` (default: all); saves a PNG at ``path``. Needs matplotlib."""
        import arviz as az
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        with warnings.catch_warnings():
            # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (its issue, not ours)
            warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
            axes = az.plot_trace(self, var_names=var_names)
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
        if "sample_stats" in self.groups():
            stats = self["sample_stats"]
            if "diverging" in stats:
                out["divergences"] = float(np.sum(np.asarray(stats["diverging"])))
            if "accept_rate" in stats:
                out["accept_rate"] = float(np.mean(np.asarray(stats["accept_rate"])))
        post = self["posterior"]
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


class PooledDraws(property):
    """A result property: the posterior draws of one variable pooled over chains.

    ``name = PooledDraws(doc)`` in a :class:`FitResult` subclass is the read-only property
    ``fit.name == fit.draws_of("name")``: shape ``(chains * draws, *event_shape)``.

    Parameters
    ----------
    doc : str
        The property's docstring.
    """

    def __init__(self, doc: str) -> None:
        super().__init__(self._draws)
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def _draws(self, fit: FitResult) -> np.ndarray:
        return fit.draws_of(self.name)

    @overload  # type: ignore[override]
    def __get__(self, obj: None, objtype: type | None = None) -> PooledDraws: ...

    @overload
    def __get__(self, obj: FitResult, objtype: type | None = None) -> np.ndarray: ...

    def __get__(self, obj: FitResult | None, objtype: type | None = None) -> np.ndarray | PooledDraws:
        return super().__get__(obj, objtype)  # type: ignore[no-any-return]


_Fit = TypeVar("_Fit", bound=FitResult)


def finish_fit(
    result: type[_Fit],
    idata: Any,
    settings: SamplingSettings,
    *,
    owner: str,
    check: Sequence[str],
    block: MixingBlock,
    attrs: Mapping[str, Any] | None = None,
    **fields: Any,
) -> _Fit:
    """The end of a fit: record the run, wrap it in its result class, and check its mixing when asked.

    :func:`record_run` puts the settings and ``attrs`` into ``idata.attrs``; the result is
    ``result(idata, settings=settings, **fields)``; with ``settings.check_mixing``,
    :func:`check_mixing` checks the posterior variables ``check`` and warns in the name of ``owner``
    and ``block``.
    """
    record_run(idata, settings, **(attrs or {}))
    res = result(idata, settings=settings, **fields)
    if settings.check_mixing:
        check_mixing(idata, check, owner=owner, block=block)
    return res
