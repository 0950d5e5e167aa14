r"""The one sampling convention: argument names, defaults and their validation (engine, private).

Every fit of the package (``copula.fit``, ``copula.fit_dpcopula``, ``dirichlet.fit``,
``dirichlet.dpmcmc``, ``dirichlet.dpmcmc_batch``, ``augment.sample``, ``covariance.fit``) takes the
same keyword-only sampler arguments with the same defaults,

``chains=4, draws=1000, warmup=1000, seed=None, progressbar=False, target_accept=None, check_mixing=True``

and checks them here, with one message shape (``"<fit>: draws must be an integer >= 1; got
draws=-1."``). ``draws`` and ``warmup`` are *per chain* (as in ``pm.sample`` and NumPyro's
``MCMC``). ``seed=None`` draws a fresh 31-bit seed from the operating system; the seed used is
recorded in the result (``result.settings.seed``, ``idata.attrs["noiseaware_seed"]``) so that any run
can be repeated. ``target_accept=None`` means the standard target of the fit's sampler:
:data:`NUTS_TARGET_ACCEPT` (0.8, the default of Stan, PyMC and NumPyro) for NUTS, and
:data:`RWM_TARGET_ACCEPT` (0.3) for the random-walk Metropolis moves whose step size the
data-augmentation samplers adapt (a random walk in a few dimensions is most efficient near an
acceptance rate of 0.234-0.44: Roberts, Gelman & Gilks 1997; 0.8 would make its steps tiny). A
number sets the target of whatever step size the fit adapts.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import _validation as v
from ..exceptions import NoiseawareTypeError

__all__ = [
    "DEFAULTS",
    "NUTS_TARGET_ACCEPT",
    "RWM_TARGET_ACCEPT",
    "SETTING_NAMES",
    "SamplingSettings",
    "check_settings",
    "settings_of",
]

#: Target acceptance probability of NUTS's step-size adaptation when ``target_accept=None``.
NUTS_TARGET_ACCEPT = 0.8
#: Target acceptance probability of an adapted random-walk Metropolis move when ``target_accept=None``.
RWM_TARGET_ACCEPT = 0.3
#: The convention's arguments, in their keyword-only order, with their one set of defaults.
DEFAULTS: dict[str, Any] = {
    "chains": 4,
    "draws": 1000,
    "warmup": 1000,
    "seed": None,
    "progressbar": False,
    "target_accept": None,
    "check_mixing": True,
}
SETTING_NAMES = tuple(DEFAULTS)


@dataclass(frozen=True)
class SamplingSettings:
    """The resolved settings of one run: what :func:`check_settings` returns and every result records.

    Attributes
    ----------
    chains, draws, warmup : int
        Chains, kept draws per chain, warmup iterations per chain.
    seed : int
        The seed used (drawn from the OS when the caller gave ``None``; ``seed_given`` says which).
    progressbar : bool
    target_accept : float
        The resolved target acceptance probability of the adapted step size.
    check_mixing : bool
    seed_given : bool
        Whether the caller chose the seed.
    """

    chains: int
    draws: int
    warmup: int
    seed: int
    progressbar: bool
    target_accept: float
    check_mixing: bool = True
    seed_given: bool = True

    def as_attrs(self) -> dict[str, Any]:
        """The settings as ``InferenceData.attrs`` entries (``noiseaware_seed``, ...; booleans as ints)."""
        return {
            "noiseaware_seed": int(self.seed),
            "noiseaware_chains": self.chains,
            "noiseaware_draws": self.draws,
            "noiseaware_warmup": self.warmup,
            "noiseaware_target_accept": float(self.target_accept),
        }


def check_settings(
    owner: str,
    *,
    chains: Any = DEFAULTS["chains"],
    draws: Any = DEFAULTS["draws"],
    warmup: Any = DEFAULTS["warmup"],
    seed: Any = DEFAULTS["seed"],
    progressbar: Any = DEFAULTS["progressbar"],
    target_accept: Any = DEFAULTS["target_accept"],
    check_mixing: Any = DEFAULTS["check_mixing"],
    default_target: float = NUTS_TARGET_ACCEPT,
) -> SamplingSettings:
    r"""Validate the convention's arguments of fit ``owner`` and resolve ``seed`` and ``target_accept``.

    Rules: ``chains`` an integer :math:`\ge 1`, ``draws`` :math:`\ge 1`, ``warmup`` :math:`\ge 0`,
    ``seed`` ``None`` or an integer in :math:`[0, 2^{63})`, ``progressbar`` and ``check_mixing``
    ``True`` or ``False``, ``target_accept`` ``None`` (then ``default_target``) or a number in
    :math:`(0, 1)`.

    Parameters
    ----------
    owner : str
        The fit's public name, the first word of every message.
    chains, draws, warmup, seed, progressbar, target_accept, check_mixing
        As the caller gave them.
    default_target : float
        The fit's sampler's target when ``target_accept`` is None (:data:`NUTS_TARGET_ACCEPT` or
        :data:`RWM_TARGET_ACCEPT`).

    Returns
    -------
    SamplingSettings

    Raises
    ------
    NoiseawareTypeError
        A setting of the wrong type (``seed="x"``, ``progressbar=1``).
    NoiseawareValueError
        A setting out of range (``chains=0``, ``draws=-1``, ``target_accept=1.5``).

    Examples
    --------
    >>> s = check_settings("fit", chains=2, draws=10, seed=3)
    >>> s.chains, s.draws, s.warmup, s.seed, s.target_accept
    (2, 10, 1000, 3, 0.8)
    >>> check_settings("fit", draws=-1)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.NoiseawareValueError: fit: draws must be an integer >= 1; got draws=-1.
    """
    chains = v.integer(owner, "chains", chains, minimum=1)
    draws = v.integer(owner, "draws", draws, minimum=1)
    warmup = v.integer(owner, "warmup", warmup, minimum=0)
    given = seed is not None
    seed = secrets.randbits(31) if seed is None else v.integer(owner, "seed", seed, minimum=0, maximum=2**63 - 1)
    for name, flag in (("progressbar", progressbar), ("check_mixing", check_mixing)):
        if not isinstance(flag, bool):
            raise NoiseawareTypeError(v.message(owner, name, "must be True or False", flag))
    target = default_target if target_accept is None else v.open_unit(owner, "target_accept", target_accept)
    return SamplingSettings(chains, draws, warmup, seed, progressbar, float(target), check_mixing, given)


def settings_of(
    owner: str, given: Mapping[str, Any], *, default_target: float = NUTS_TARGET_ACCEPT
) -> SamplingSettings:
    """:func:`check_settings` on the convention's arguments picked by name from ``given``.

    A fit calls ``settings_of(owner, locals())`` first thing, so that its explicit keyword-only
    arguments (which ``help()`` and ``inspect.signature`` show) reach the one validation without
    being listed again.

    Examples
    --------
    >>> def fit(*, chains=4, draws=1000, warmup=1000, seed=None, progressbar=False, target_accept=None,
    ...         check_mixing=True, other=1):
    ...     return settings_of("fit", locals())
    >>> s = fit(chains=2, seed=5)
    >>> s.chains, s.seed, s.target_accept
    (2, 5, 0.8)
    """
    return check_settings(owner, default_target=default_target, **{name: given[name] for name in SETTING_NAMES})
