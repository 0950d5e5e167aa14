"""The result of ``copula.fit``: :class:`CopulaFit`, and the partial slopes of a correlation matrix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._engine import FitResult
from ..exceptions import NoiseawareValueError
from ..release import Release

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["CopulaFit", "partial_slope"]


def partial_slope(R: Any, outcome: int, predictor: int, controls: Sequence[int] = ()) -> np.ndarray:
    r"""Standardized partial regression slope of ``outcome`` on ``predictor`` given ``controls``.

    For a correlation matrix ``R`` (or a stack of them, shape ``(..., p, p)``) the slope of
    the latent Gaussian ``Z_outcome`` on ``Z_predictor`` in the regression that also includes
    ``Z_controls`` is

    .. math:: \beta = \frac{R_{yx} - R_{yC} R_{CC}^{-1} R_{Cx}}{1 - R_{xC} R_{CC}^{-1} R_{Cx}},

    which for one control ``c`` is Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
    Gaussian Copula Correlations*, Supplement S.4's
    :math:`(R_{y,x} - R_{y,c} R_{x,c}) / (1 - R_{x,c}^2)`.

    Parameters
    ----------
    R : array_like, shape (..., p, p)
        Correlation matrix or a stack of them.
    outcome, predictor : int
        Column indices.
    controls : sequence of int
        Column indices conditioned on (may be empty: then ``beta = R_yx``).

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1.0, 0.3, 0.5], [0.3, 1.0, 0.2], [0.5, 0.2, 1.0]])
    >>> round(float(partial_slope(R, outcome=1, predictor=0, controls=[2])), 6)
    0.266667
    """
    R = np.asarray(R, dtype=np.float64)
    if R.ndim < 2 or R.shape[-1] != R.shape[-2]:
        raise NoiseawareValueError(f"partial_slope: R must have shape (..., p, p); got shape {R.shape}.")
    p = R.shape[-1]
    idx = [outcome, predictor, *controls]
    if any(not (0 <= int(i) < p) for i in idx) or len(set(idx)) != len(idx):
        raise NoiseawareValueError(
            f"partial_slope: outcome, predictor and controls must be distinct indices in [0, {p}); "
            f"got outcome={outcome}, predictor={predictor}, controls={list(controls)}."
        )
    c = list(controls)
    ryx = R[..., outcome, predictor]
    if not c:
        return np.asarray(ryx)
    Rcc = R[..., c, :][..., :, c]
    rcx = R[..., c, predictor]
    rcy = R[..., c, outcome]
    sol = np.linalg.solve(Rcc, np.stack([rcx, rcy], axis=-1))  # (..., |C|, 2)
    num = ryx - np.sum(rcy * sol[..., 0], axis=-1)
    den = 1.0 - np.sum(rcx * sol[..., 0], axis=-1)
    return np.asarray(num / den)


class CopulaFit(FitResult):
    """Posterior of a Bayes-NA fit (returned by :func:`fit`): an ArviZ ``InferenceData``.

    Every ArviZ function takes it as it takes ``pm.sample``'s result (``az.summary(fit)``,
    ``az.plot_trace(fit)``, ``az.loo(fit)`` over the pairs' composite log-likelihood terms).
    :meth:`summary`, :meth:`interval` and :meth:`plot` are specialised to the correlation matrix
    (one row per pair, element-wise intervals, a Figure-3-style plot); ``diagnostics`` and
    ``settings`` are those of every :class:`noiseaware.FitResult`.

    Attributes
    ----------
    idata : arviz.InferenceData
        Posterior draws (variable ``"R"``, dims ``chain, draw, row, col``), sample stats, and the
        observed noisy counts.
    columns : tuple of str
        Variable names, in the order of the release.
    backend : str
        ``"numpyro"`` or ``"pymc"``.
    release : Release
        The release that was fitted.
    settings : SamplingSettings
        The resolved sampler settings (the seed used, ...).
    """

    default_var = "R"
    fields = ("columns", "backend", "release")

    columns: tuple[str, ...]
    backend: str
    release: Release

    @property
    def _draws(self) -> np.ndarray:
        # computed from the posterior each time: ArviZ's sel/isel copy the object and change the posterior
        R = np.asarray(self["posterior"]["R"].values, dtype=np.float64)
        return R.reshape((-1, *R.shape[-2:]))

    @property
    def p(self) -> int:
        """Number of variables."""
        return len(self.columns)

    @property
    def draws(self) -> np.ndarray:
        """All posterior draws of ``R`` pooled over chains, shape ``(chains * draws, p, p)``."""
        return self._draws

    @property
    def posterior_mean(self) -> np.ndarray:
        """Posterior mean of ``R`` (the Bayes-NA point estimate), shape ``(p, p)``."""
        return np.asarray(self._draws.mean(axis=0))

    def interval(self, level: float = 0.95, var: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Element-wise equal-tailed credible interval at ``level``: ``(lower, upper)``, each ``(p, p)`` for ``R``."""
        if var is None or var == "R":
            level = v.open_unit("CopulaFit.interval", "level", level)
            q = np.quantile(self._draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
            return q[0], q[1]
        return super().interval(level, var)

    def functional(self, fn: Callable[[np.ndarray], Any]) -> np.ndarray:
        """Posterior draws of ``fn(R)`` for any user function of one ``(p, p)`` matrix."""
        return np.asarray([fn(R) for R in self._draws])

    def partial_slope(self, outcome: int | str, predictor: int | str, controls: Sequence[int | str] = ()) -> np.ndarray:
        """Posterior draws of :func:`partial_slope` (Wang et al. 2026, Supplement S.4); names or indices."""
        ctrl = [self._index(c) for c in controls]
        return partial_slope(self._draws, self._index(outcome), self._index(predictor), ctrl)

    def _index(self, col: int | str) -> int:
        if isinstance(col, str):
            if col not in self.columns:
                raise NoiseawareValueError(f"CopulaFit: unknown column {col!r}; columns are {list(self.columns)}.")
            return self.columns.index(col)
        return int(col)

    def pair_draws(self) -> Any:
        """The posterior of the ``p(p-1)/2`` free entries as an xarray Dataset (dims ``chain, draw, pair``)."""
        import xarray as xr

        iu, ju = np.triu_indices(self.p, 1)
        post = self["posterior"]["R"]
        da = post.isel({post.dims[2]: xr.DataArray(iu, dims="pair"), post.dims[3]: xr.DataArray(ju, dims="pair")})
        labels = [f"{self.columns[j]} x {self.columns[k]}" for j, k in zip(iu, ju, strict=True)]
        return xr.Dataset({"R": da.drop_vars(list(post.dims[2:]), errors="ignore").assign_coords(pair=labels)})

    def summary(self, level: float = 0.95, var_names: Any = None) -> pandas.DataFrame:
        """One row per pair: posterior mean, sd, interval, R-hat and bulk ESS (ArviZ).

        With ``var_names``, ArviZ's own summary of those variables (the engine's
        :meth:`noiseaware.FitResult.summary`).
        """
        import arviz as az
        import pandas as pd

        if var_names is not None:
            return super().summary(level, var_names)

        lo, hi = self.interval(level)
        mean, sd = self.posterior_mean, self._draws.std(axis=0, ddof=1)
        pairs = self.pair_draws()  # diagnostics on the free entries only (the diagonal is constant)
        rhat = np.asarray(az.rhat(pairs)["R"].values)
        ess = np.asarray(az.ess(pairs, method="bulk")["R"].values)
        rows = []
        pct = f"{100 * level:g}%"
        for i, (j, k) in enumerate(zip(*np.triu_indices(self.p, 1), strict=True)):
            rows.append(
                {
                    "pair": f"{self.columns[j]} x {self.columns[k]}",
                    "mean": mean[j, k],
                    "sd": sd[j, k],
                    f"lower {pct}": lo[j, k],
                    f"upper {pct}": hi[j, k],
                    "r_hat": rhat[i],
                    "ess_bulk": ess[i],
                }
            )
        return pd.DataFrame(rows).set_index("pair")

    def plot(
        self,
        path: str | None = None,
        *,
        level: float = 0.95,
        truth: np.ndarray | None = None,
        others: dict[str, np.ndarray] | None = None,
        title: str | None = None,
        var_names: Any = None,
    ) -> Any:
        """Figure-3-style plot: per pair, posterior mean (dot) and ``level`` interval (bar).

        ``truth`` (a ``(p, p)`` matrix) and ``others`` (name -> ``(p, p)`` point estimates, e.g.
        MLE-NN) are drawn beside. Saves a PNG when ``path`` is given; returns the figure.
        With ``var_names``, the engine's ArviZ trace plot of those variables instead.
        Needs matplotlib.
        """
        if var_names is not None:
            return super().plot(path, var_names=var_names)
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        iu = np.triu_indices(self.p, 1)
        lo, hi = self.interval(level)
        mean = self.posterior_mean
        labels = [f"{self.columns[j]} × {self.columns[k]}" for j, k in zip(*iu, strict=True)]
        y = np.arange(len(labels))[::-1].astype(float)
        fig, ax = plt.subplots(figsize=(6.5, 0.38 * len(labels) + 1.4))
        ax.hlines(y, lo[iu], hi[iu], color="tab:orange", lw=2.5, label=f"Bayes-NA {100 * level:g}% interval")
        ax.plot(mean[iu], y, "o", color="tab:orange", label="Bayes-NA posterior mean")
        markers = iter(["s", "D", "^", "v", "P"])
        for name, M in (others or {}).items():
            ax.plot(np.asarray(M)[iu], y, next(markers), mfc="none", color="tab:blue", label=name)
        if truth is not None:
            ax.plot(np.asarray(truth)[iu], y, "x", color="black", ms=8, label="truth")
        ax.axvline(0.0, color="grey", lw=0.8, ls=":")
        ax.set_yticks(y, labels)
        ax.set_xlim(-1.05, 1.05)
        ax.set_xlabel("copula correlation")
        eps = self.release.guarantee.epsilon
        ax.set_title(title or f"Bayes-NA posterior, n = {self.release.n}, ε = {eps:g} ({self.backend})")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
        fig.tight_layout()
        if path is not None:
            from .._io import write_figure

            try:
                write_figure(fig, path, dpi=120, owner="CopulaFit.plot")
            finally:
                plt.close(fig)
        return fig
