r"""The augmentation model: the four ingredients of Eng et al. (2024) §4.1, and mechanism log-densities."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax.numpy as jnp

from .. import _core
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import Mechanism

__all__ = ["AugmentationModel", "mechanism_log_density"]

_BK = _core.get_backend("jax")
_OWNER = "AugmentationModel"
#: Mechanism families :func:`mechanism_log_density` knows.
SUPPORTED_FAMILIES = ("geometric", "discrete_gaussian", "laplace", "gaussian", "randomized_response", "tgm", "rgm")


def mechanism_log_density(mechanism: Mechanism) -> Callable[[Any, Any], Any]:
    r"""The log-density :math:`\log\eta(s_{dp}\mid s)` of a mechanism, as a JAX function.

    For the additive mechanisms (noise applied independently to every entry of ``s``)

    .. math:: \log\eta(s_{dp}\mid s) = \sum_j \log p_{\text{noise}}(s_{dp,j} - s_j),

    with the exact noise laws of :mod:`noiseaware.mechanisms`: two-sided geometric
    ``(1-a)/(1+a) a^{|k|}`` (``"geometric"``, the discrete Laplace of Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
    Augmentation for Private Posterior Estimation in R*, §4.3), discrete
    Gaussian ``e^{-k^2/2 sigma^2}/Z(sigma)`` (``"discrete_gaussian"``), Laplace and Gaussian. For
    k-ary randomized response (Eng et al. 2024, §5, Example 1) ``s`` holds a record's true answers and

    .. math:: \log\eta(s_{dp}\mid s) = \sum_j \bigl[\,\mathbb 1\{s_{dp,j}=s_j\}\log p
              + \mathbb 1\{s_{dp,j}\ne s_j\}\log\tfrac{1-p}{k-1}\bigr].

    The range-preserving TGM and RGM of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
    Gaussian Copula Correlations* (§4, Def. S.1) are entrywise laws too
    (``"tgm"``, ``"rgm"``). Every density is the noise-law registry's
    (the package's one noise-law registry), the one the mechanism itself uses.

    Parameters
    ----------
    mechanism : noiseaware.mechanisms.Mechanism
        One of the families ``"geometric"``, ``"discrete_gaussian"``, ``"laplace"``,
        ``"gaussian"``, ``"randomized_response"``, ``"tgm"``, ``"rgm"``.

    Returns
    -------
    callable
        ``log_density(s_dp, s) -> float64 scalar``; traceable by JAX (``jit``, ``vmap``, ``grad``
        in ``s`` for the continuous laws).

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`~noiseaware.mechanisms.Mechanism`.
    ValueError
        For another family (BTGM's outputs are a table of posterior means, and the exponential
        mechanism a selection rule: neither has such a form here).

    Examples
    --------
    >>> from noiseaware.mechanisms import GeometricMechanism
    >>> g = mechanism_log_density(GeometricMechanism(scale=2.0))
    >>> float(g(jnp.array([3.0, 5.0]), jnp.array([3.0, 4.0])))  # 2 log((1-a)/(1+a)) + log a
    -3.314
    """
    if not isinstance(mechanism, Mechanism):
        raise NoiseawareTypeError(
            f"mechanism_log_density: mechanism must be a noiseaware Mechanism; got {type(mechanism).__name__}."
        )
    family = mechanism.family
    if family in SUPPORTED_FAMILIES:  # the registry's law of each entry's output
        law = _core.NOISE_LAWS[family]
        params = law.params_of(mechanism)

        def log_density(s_dp: Any, s: Any) -> Any:
            return jnp.sum(law.logpdf(_BK, jnp.asarray(s_dp, jnp.float64), s, *params))

        log_density.__name__ = family
        return log_density
    raise NoiseawareValueError(
        f"mechanism_log_density: mechanism family must be one of {list(SUPPORTED_FAMILIES)}; got family={family!r}. "
        "Pass log_density= to AugmentationModel for other mechanisms."
    )


def _callable(name: str, value: Any, required: bool) -> None:
    if value is None:
        if required:
            raise NoiseawareTypeError(f"{_OWNER}: {name} must be a callable; got {name}=None.")
        return
    if not callable(value):
        raise NoiseawareTypeError(f"{_OWNER}: {name} must be a callable or None; got {name}={value!r}.")


@dataclass(frozen=True, eq=False)
class AugmentationModel:
    r"""A model for data-augmentation MCMC on a privatized statistic (Eng et al. 2024, §3-§4).

    The confidential data are ``n`` records :math:`x_1,\dots,x_n`, independent given the
    parameters :math:`\theta` with law :math:`f(x_i\mid\theta)`; the curator released
    :math:`s_{dp}\sim\eta(\cdot\mid s)` for a *record-additive* statistic (Eng, Awan, Gong, Ju & Rao (2024), *dapper:
    Data Augmentation for Private Posterior Estimation in R*, §3)

    .. math:: s = \sum_{i=1}^n t_i(x_i, s_{dp}),\qquad \eta(s_{dp}\mid x) = g\bigl(s_{dp}, s\bigr).

    :func:`noiseaware.augment.sample` targets :math:`p(\theta, x\mid s_{dp})` by alternating a
    Metropolis-within-Gibbs sweep over the records (proposal :math:`x_i^*\sim f(\cdot\mid\theta)`,
    acceptance :math:`\min\{1, g(s_{dp}, s^*)/g(s_{dp}, s)\}`) with a draw of
    :math:`\theta\mid x` -- by ``posterior`` when given (dapper's ``post_f``), else by NUTS on
    ``model`` inside NumPyro's ``HMCGibbs``.

    Parameters
    ----------
    statistic : callable
        ``statistic(x_i, s_dp) -> array``: the contribution :math:`t_i(x_i, s_{dp})` of one
        record (dapper's ``st_f``). ``x_i`` is one record: an array when ``records`` is a single
        name, else a dict of arrays. Must be a JAX function of ``x_i``. With ``per_record=True``
        it receives the record's own row ``s_dp[i]`` and returns the record's true answers.
    log_density : callable, optional
        ``log_density(s_dp, s) -> scalar``: :math:`\log g(s_{dp}, s)` (dapper's ``priv_f``), a JAX
        function. Leave out when :func:`~noiseaware.augment.sample` gets a
        :class:`~noiseaware.Release`: the density is then built from the release's mechanism
        (:func:`mechanism_log_density`).
    model : callable, optional
        A NumPyro model of the *complete* data: samples the parameters and then the records at
        the sample sites named by ``records`` (unobserved, leading axis ``n``). Used to draw
        :math:`\theta\mid x` by NUTS (when ``posterior`` is None), to propose records (when
        ``latent`` is None) and to draw initial values from the prior.
    records : str or sequence of str
        Site name(s) of the records in ``model`` and keys of what ``latent`` returns. Default
        ``"x"``.
    latent : callable, optional
        ``latent(key, theta) -> records``: draws all ``n`` records from :math:`f(\cdot\mid\theta)`
        (dapper's ``latent_f``); ``theta`` is a dict of parameter values. Default: run ``model``
        with ``theta`` substituted.
    posterior : callable, optional
        ``posterior(key, records, theta) -> dict``: one draw of :math:`\theta` from
        :math:`p(\theta\mid x)` (dapper's ``post_f``; ``theta`` is the current value, for samplers
        that need a starting point). A returned array is named ``"theta"``. Default: NUTS on ``model``.
    per_record : bool, optional
        True when the mechanism acts on each record separately,
        :math:`\eta(s_{dp}\mid x)=\prod_i g(s_{dp,i}, t_i(x_i))` with ``s_dp`` of shape
        ``(n, ...)`` (randomized response). The sweep is then one vectorized pass (each record's
        ratio involves that record only). Default: taken from the release (composition
        ``"per_record"``), else False. Also the mode for **per-unit releases** -- one noisy value
        per unit, e.g. a ``counts`` release of one count per county with additive noise
        (``geometric``, ``discrete_gaussian``, ``laplace``, ``gaussian``): pass
        ``per_record=True``, let record ``i`` be unit ``i``'s latent true value(s) and the
        statistic return that unit's true answer (``lambda y_i, s_dp_i: y_i``). See Notes.
    indexed : bool
        When True the statistic is called as ``statistic(x_i, s_dp, i)`` with the record's index
        ``i`` (a traced integer), so one function can serve records that belong to different
        units -- e.g. ``jax.nn.one_hot(county[i], n_counties) * x_i`` for individual records
        behind per-county counts. Default False.
    model_args, model_kwargs
        Passed to ``model``.
    joint_move : callable, optional
        A Metropolis-Hastings move of parameters and records *together*, run once per iteration
        after the draw of :math:`\theta`:
        ``joint_move(key, theta, records, log_noise, step_size) -> (theta, records, accept_prob)``.
        ``theta`` is a dict of (constrained) parameter values, ``records`` the records in the
        form ``latent`` returns, ``log_noise(records)`` evaluates
        :math:`\log\eta(s_{dp}\mid s(\text{records}))` (the statistic is recomputed from the
        records), and ``step_size`` is a positive scalar that :func:`~noiseaware.augment.sample`
        adapts during warmup (dual averaging towards its ``joint_target_accept``) and then holds
        fixed. The move must leave :math:`p(\theta, x\mid s_{dp})` invariant -- it returns the
        new (or unchanged) state and its acceptance probability :math:`\min\{1, r\}`.
        Data augmentation mixes slowly when :math:`\theta\mid x` is much narrower than
        :math:`\theta\mid s_{dp}` (Eng et al. 2024, §6); a move that carries the records along with
        :math:`\theta` (e.g. through a bijection mapping draws of :math:`f(\cdot\mid\theta)` to
        draws of :math:`f(\cdot\mid\theta')`) breaks that coupling. See
        :func:`noiseaware.dirichlet.dpmcmc` for one.

    Raises
    ------
    TypeError
        If a function argument is not callable or ``records`` is not a name or names.
    ValueError
        If neither ``model`` nor ``latent`` (or neither ``model`` nor ``posterior``) is given.

    Notes
    -----
    Each record update costs O(size of s), not O(n): the statistic is updated as
    :math:`s^* = s - t_i(x_i) + t_i(x_i^*)` (Eng et al. 2024, §3, record additivity). The proposals do
    not depend on the current records, so they are drawn for all records at once.

    **Per-unit releases are exact.** An additive mechanism that adds independent noise to each
    entry has :math:`\eta(s_{dp}\mid s)=\prod_j p(s_{dp,j}-s_j)`. When entry ``i`` is unit
    ``i``'s true value :math:`y_i` and the units are the records (:math:`x_i=y_i`,
    :math:`f(y\mid\theta)=\prod_i f_i(y_i\mid\theta)`), this is
    :math:`\prod_i g(s_{dp,i}, t_i(y_i))` with :math:`g(s_{dp,i}, t)=p(s_{dp,i}-t)`: the
    record-level factorization of ``per_record=True``. The target is
    :math:`p(\theta, y\mid s_{dp})\propto p(\theta)\prod_i f_i(y_i\mid\theta)\,p(s_{dp,i}-y_i)`;
    the record step proposes :math:`y_i^*\sim f_i(\cdot\mid\theta)` and accepts with
    :math:`\min\{1, p(s_{dp,i}-y_i^*)/p(s_{dp,i}-y_i)\}` (the prior proposal cancels
    :math:`f_i`), a Metropolis-Hastings step that leaves the conditional of :math:`y_i` invariant;
    the ratio involves unit ``i`` only, so the vectorized pass is the sequential sweep. The draw of
    :math:`\theta\mid y` (NUTS or ``posterior``) sees no noise at all. Both steps leave the joint
    posterior invariant, so the chain's :math:`\theta`-marginal is the exact posterior under the
    release's noise law -- the convolution :math:`\sum_y f_i(y\mid\theta)p(s_{dp,i}-y)` is never
    truncated. The release's values and mechanism (family and scale) are read from the release.

    Examples
    --------
    A 2x2 table of N = 40 records with discrete Gaussian noise on its four cells, the conjugate
    Dirichlet draw as ``posterior``:

    >>> import jax, jax.numpy as jnp
    >>> from noiseaware.augment import AugmentationModel, sample
    >>> from noiseaware.mechanisms import DiscreteGaussianMechanism
    >>> aug = AugmentationModel(
    ...     statistic=lambda x, s_dp: jax.nn.one_hot(x, 4),
    ...     log_density=mechanism_log_density(DiscreteGaussianMechanism(sigma=2.0)),
    ...     latent=lambda key, th: jax.random.categorical(key, jnp.log(th["pi"]), shape=(40,)),
    ...     posterior=lambda key, x, th: {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))},
    ... )
    >>> idata = sample(aug, jnp.array([12, 9, 8, 11]), init={"pi": jnp.full(4, 0.25)}, draws=200, warmup=50,
    ...                chains=2, seed=0, check_mixing=False)
    >>> idata.posterior["pi"].shape, float(idata.sample_stats["accept_rate"].mean()) > 0.2
    ((2, 200, 4), True)
    """

    statistic: Callable[..., Any]
    log_density: Callable[[Any, Any], Any] | None = None
    model: Callable[..., Any] | None = None
    records: str | Sequence[str] = "x"
    latent: Callable[[Any, Any], Any] | None = None
    posterior: Callable[..., Any] | None = None
    per_record: bool | None = None
    model_args: tuple[Any, ...] = ()
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    joint_move: Callable[..., Any] | None = None
    indexed: bool = False

    def __post_init__(self) -> None:
        _callable("statistic", self.statistic, True)
        _callable("joint_move", self.joint_move, False)
        _callable("log_density", self.log_density, False)
        _callable("model", self.model, False)
        _callable("latent", self.latent, False)
        _callable("posterior", self.posterior, False)
        recs = self.records
        if isinstance(recs, str):
            names: tuple[str, ...] = (recs,)
        elif isinstance(recs, Sequence) and recs and all(isinstance(r, str) for r in recs):
            names = tuple(recs)
            if len(set(names)) != len(names):
                raise NoiseawareValueError(f"{_OWNER}: records must be distinct names; got records={recs!r}.")
        else:
            raise NoiseawareTypeError(
                f"{_OWNER}: records must be a site name or a list of names; got records={recs!r}."
            )
        if not isinstance(self.indexed, bool):
            raise NoiseawareTypeError(f"{_OWNER}: indexed must be True or False; got indexed={self.indexed!r}.")
        if self.per_record is not None and not isinstance(self.per_record, bool):
            raise NoiseawareTypeError(
                f"{_OWNER}: per_record must be True, False or None; got per_record={self.per_record!r}."
            )
        if self.model is None and self.latent is None:
            raise NoiseawareValueError(
                f"{_OWNER}: give model= (a NumPyro model of the complete data) or latent= (draws the records "
                "given theta); got neither."
            )
        if self.model is None and self.posterior is None:
            raise NoiseawareValueError(
                f"{_OWNER}: give model= (theta | records by NUTS) or posterior= (a direct draw of theta | records); "
                "got neither."
            )
        if not isinstance(self.model_args, tuple):
            object.__setattr__(self, "model_args", tuple(self.model_args))
        object.__setattr__(self, "model_kwargs", dict(self.model_kwargs))
        object.__setattr__(self, "_names", names)

    # ------------------------------------------------------------------ internal adapters
    @property
    def record_names(self) -> tuple[str, ...]:
        """The record site names, as a tuple."""
        return self._names  # type: ignore[attr-defined,no-any-return]

    def to_user_records(self, recs: Mapping[str, Any]) -> Any:
        """Internal dict of records -> the form user functions see (array or dict)."""
        if isinstance(self.records, str):
            return recs[self.records]
        return {k: recs[k] for k in self.record_names}

    def from_user_records(self, value: Any, where: str) -> dict[str, Any]:
        """What ``latent`` returned -> internal dict of records."""
        if isinstance(self.records, str):
            if isinstance(value, Mapping):
                if set(value) != {self.records}:
                    raise NoiseawareValueError(
                        f"{_OWNER}: {where} must return the records {self.records!r}; got keys {sorted(value)}."
                    )
                return {self.records: value[self.records]}
            return {self.records: value}
        if not isinstance(value, Mapping) or set(value) != set(self.record_names):
            got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            raise NoiseawareValueError(
                f"{_OWNER}: {where} must return a dict with keys {sorted(self.record_names)}; got {got}."
            )
        return {k: value[k] for k in self.record_names}

    def latent_fn(self) -> Callable[[Any, Mapping[str, Any]], dict[str, Any]]:
        """``(key, theta) -> dict of records``, from ``latent`` or from ``model``."""
        if self.latent is not None:
            user = self.latent

            def latent(key: Any, theta: Mapping[str, Any]) -> dict[str, Any]:
                return self.from_user_records(user(key, dict(theta)), "latent")

            return latent
        from numpyro import handlers

        model, names = self.model, self.record_names
        args, kwargs = self.model_args, self.model_kwargs

        def from_model(key: Any, theta: Mapping[str, Any]) -> dict[str, Any]:
            tr = handlers.trace(handlers.seed(handlers.substitute(model, data=dict(theta)), key)).get_trace(
                *args, **kwargs
            )
            return {k: tr[k]["value"] for k in names}

        return from_model

    def statistic_fn(self) -> Callable[..., Any]:
        """``(row dict, s_dp) -> t_i`` in float64; ``(row dict, s_dp, i) -> t_i`` when ``indexed``."""
        user = self.statistic
        if self.indexed:

            def indexed(row: Mapping[str, Any], s_dp: Any, i: Any) -> Any:
                return jnp.asarray(user(self.to_user_records(row), s_dp, i), dtype=jnp.float64)

            return indexed

        def statistic(row: Mapping[str, Any], s_dp: Any) -> Any:
            return jnp.asarray(user(self.to_user_records(row), s_dp), dtype=jnp.float64)

        return statistic

    def posterior_fn(self) -> Callable[[Any, Mapping[str, Any], Mapping[str, Any]], dict[str, Any]] | None:
        """``(key, records dict, theta dict) -> theta dict`` or None (NUTS)."""
        if self.posterior is None:
            return None
        user = self.posterior

        def posterior(key: Any, recs: Mapping[str, Any], theta: Mapping[str, Any]) -> dict[str, Any]:
            out = user(key, self.to_user_records(recs), dict(theta))
            if not isinstance(out, Mapping):
                out = {"theta": out}
            return {k: jnp.asarray(v) for k, v in out.items()}

        return posterior
