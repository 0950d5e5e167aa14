r"""The one sampling convention: argument names, defaults and their validation (engine, private).

Every fit of the package (``copula.fit``, ``copula.fit_dpcopula``, ``dirichlet.fit``,
``dirichlet.dpmcmc``, ``dirichlet.dpmcmc_batch``, ``augment.sample``, ``covariance.fit``) takes the
same keyword-only sampler arguments with the same defaults, those of :func:`check_settings`
(``SamplingSettings.defaults()``),

``chains=4, draws=1000, warmup=1000, seed=None, progressbar=False, target_accept=None, check_mixing=True``

Each fit spells the seven out in its own ``def`` (so ``inspect.signature``, a type checker and an
editor see them without running code) and passes them to :func:`check_settings`, which checks
them, with one message shape (``"<fit>: draws must be an integer >= 1; got draws=-1."``). Their
numpydoc entries are written in each fit's docstring in the one wording of :data:`SAMPLING_DOC`
(``tests/test_signatures.py`` checks the signatures and the wording against this module).
``draws`` and ``warmup`` are *per chain* (as in ``pm.sample`` and NumPyro's
``MCMC``). ``seed=None`` draws a fresh 31-bit seed from the operating system; the seed used is
recorded in the result (``noiseaware.results.settings(result).seed``,
``result.attrs["noiseaware_seed"]``) so that any run can be repeated. ``target_accept=None`` means the
standard target of the fit's sampler:
:data:`NUTS_TARGET_ACCEPT` (0.8, the default of Stan, PyMC and NumPyro) for NUTS, and
:data:`RWM_TARGET_ACCEPT` (0.3) for the random-walk Metropolis moves whose step size the
data-augmentation samplers adapt (a random walk in a few dimensions is most efficient near an
acceptance rate of 0.234-0.44: Roberts, Gelman & Gilks 1997; 0.8 would make its steps tiny). A
number sets the target of whatever step size the fit adapts.
"""

from __future__ import annotations

import inspect
import secrets
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .. import _validation as v
from ..exceptions import NoiseawareTypeError
from ._mixing import ESS_PER_CHAIN, RHAT_MAX

__all__ = [
    "CORES_DOC",
    "NUTS_TARGET_ACCEPT",
    "RWM_TARGET_ACCEPT",
    "SAMPLER_DOC",
    "SAMPLING_DOC",
    "TARGET_DOC",
    "SamplingSettings",
    "check_settings",
    "sampling_doc",
    "setting_doc",
]

#: Target acceptance probability of NUTS's step-size adaptation when ``target_accept=None``.
NUTS_TARGET_ACCEPT = 0.8
#: Target acceptance probability of an adapted random-walk Metropolis move when ``target_accept=None``.
RWM_TARGET_ACCEPT = 0.3

@dataclass(frozen=True)
class SamplingSettings:
    """The sampler settings of one run, resolved: what :func:`check_settings` returns and every result records.

    Its fields but ``seed_given`` are the settings every fit takes, in their keyword-only order
    (:meth:`names`); their defaults are those of :func:`check_settings` (:meth:`defaults`), where
    ``seed`` and ``target_accept`` default to None. A resolved instance has no None: the seed drawn
    and the fit's sampler's target, so the fields keep their types.

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
        Whether the caller chose the seed (recorded with the run, not a setting a fit takes).

    Examples
    --------
    >>> SamplingSettings.names()
    ('chains', 'draws', 'warmup', 'seed', 'progressbar', 'target_accept', 'check_mixing')
    >>> SamplingSettings.defaults()["seed"] is None, SamplingSettings.defaults()["draws"]
    (True, 1000)
    """

    chains: int
    draws: int
    warmup: int
    seed: int
    progressbar: bool
    target_accept: float
    check_mixing: bool = True
    seed_given: bool = field(default=True, metadata={"setting": False})

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The settings a fit takes, in their keyword-only order (the fields but ``seed_given``)."""
        return tuple(f.name for f in fields(cls) if f.metadata.get("setting", True))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """``{name: default}`` of :meth:`names`: the defaults of :func:`check_settings`, the fits' defaults."""
        params = inspect.signature(check_settings).parameters
        return {name: params[name].default for name in cls.names()}

    def as_attrs(self) -> dict[str, Any]:
        """The settings as ``InferenceData.attrs`` entries (``noiseaware_seed``, ...; booleans as ints)."""
        return {
            "noiseaware_seed": int(self.seed),
            "noiseaware_chains": self.chains,
            "noiseaware_draws": self.draws,
            "noiseaware_warmup": self.warmup,
            "noiseaware_target_accept": float(self.target_accept),
            "noiseaware_progressbar": int(self.progressbar),
            "noiseaware_check_mixing": int(self.check_mixing),
            "noiseaware_seed_given": int(self.seed_given),
        }

    @classmethod
    def from_attrs(cls, attrs: Any) -> SamplingSettings | None:
        """The settings :meth:`as_attrs` wrote into a result's ``attrs`` (None when they are not there).

        Reads a result back from a file as well: netCDF stores the booleans as integers.
        """
        try:
            return cls(
                chains=int(attrs["noiseaware_chains"]),
                draws=int(attrs["noiseaware_draws"]),
                warmup=int(attrs["noiseaware_warmup"]),
                seed=int(attrs["noiseaware_seed"]),
                progressbar=bool(int(attrs.get("noiseaware_progressbar", 0))),
                target_accept=float(attrs["noiseaware_target_accept"]),
                check_mixing=bool(int(attrs.get("noiseaware_check_mixing", 1))),
                seed_given=bool(int(attrs.get("noiseaware_seed_given", 1))),
            )
        except KeyError:
            return None


def check_settings(
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    default_target: float = NUTS_TARGET_ACCEPT,
) -> SamplingSettings:
    r"""Validate the convention's arguments of a fit and resolve ``seed`` and ``target_accept``.

    Rules: ``chains`` an integer :math:`\ge 1`, ``draws`` :math:`\ge 1`, ``warmup`` :math:`\ge 0`,
    ``seed`` ``None`` or an integer in :math:`[0, 2^{63})`, ``progressbar`` and ``check_mixing``
    ``True`` or ``False``, ``target_accept`` ``None`` (then ``default_target``) or a number in
    :math:`(0, 1)`. The defaults here are the convention's, the one place they are written besides
    each fit's own ``def`` (``tests/test_signatures.py`` holds the two to each other).

    Parameters
    ----------
    chains, draws, warmup, seed, progressbar, target_accept, check_mixing
        The settings as the caller gave them to the fit (:data:`SAMPLING_DOC`).
    default_target : float
        The fit's sampler's target when ``target_accept`` is None (:data:`NUTS_TARGET_ACCEPT` or
        :data:`RWM_TARGET_ACCEPT`).

    Returns
    -------
    SamplingSettings
        With ``seed`` and ``target_accept`` resolved.

    Raises
    ------
    NoiseawareTypeError
        A setting of the wrong type (``seed="x"``, ``progressbar=1``).
    NoiseawareValueError
        A setting out of range (``chains=0``, ``draws=-1``, ``target_accept=1.5``).

    Examples
    --------
    >>> s = check_settings(chains=2, draws=10, seed=3)
    >>> s.chains, s.draws, s.warmup, s.seed, s.target_accept
    (2, 10, 1000, 3, 0.8)
    >>> from noiseaware._validation import owner_scope
    >>> with owner_scope("fit"):
    ...     check_settings(draws=-1)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.NoiseawareValueError: fit: draws must be an integer >= 1; got draws=-1.
    """
    chains = v.integer("chains", chains, minimum=1)
    draws = v.integer("draws", draws, minimum=1)
    warmup = v.integer("warmup", warmup, minimum=0)
    seed_given = seed is not None
    seed = secrets.randbits(31) if seed is None else v.integer("seed", seed, minimum=0, maximum=2**63 - 1)
    for name, flag in (("progressbar", progressbar), ("check_mixing", check_mixing)):
        if not isinstance(flag, bool):
            raise NoiseawareTypeError(v.message(name, "must be True or False", flag))
    target = default_target if target_accept is None else v.open_unit("target_accept", target_accept)
    return SamplingSettings(chains, draws, warmup, seed, progressbar, float(target), check_mixing, seed_given)


# ----------------------------------------------------------------------------- the fits' documentation
#: The numpydoc text of ``cores``: one meaning in every fit that has it (``_engine._pymc.pymc_cores`` reads it).
CORES_DOC = (
    '``backend="pymc"`` with PyMC\'s own NUTS only: worker processes for the chains. Default (None): '
    "one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is already "
    "loaded, since forking a process with JAX's threads running can deadlock. Refused with "
    '``backend="numpyro"``.'
)
#: Whose step size ``target_accept`` sets, by the fit's sampler (``{sampler}`` in :data:`SAMPLING_DOC`).
SAMPLER_DOC = {"nuts": "NUTS's", "rwm": "the random-walk moves'"}
#: The documented default of ``target_accept``, by the fit's sampler (``{target}`` in :data:`SAMPLING_DOC`).
TARGET_DOC = {
    "nuts": f"{NUTS_TARGET_ACCEPT} (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro)",
    "rwm": (
        f"{RWM_TARGET_ACCEPT} (``RWM_TARGET_ACCEPT``: a random walk in a few dimensions is most efficient "
        "near an acceptance rate of 0.234-0.44, Roberts, Gelman & Gilks 1997; NUTS's 0.8 would make its "
        "steps small)"
    ),
}
#: The numpydoc entries ``(type, text)`` of the settings, the one wording every fit's docstring holds.
#: Per fit: ``{sampler}`` and ``{target}`` (:data:`SAMPLER_DOC`, :data:`TARGET_DOC`), ``{checked}`` (what
#: ``check_mixing`` checks, a phrase), and at most one sentence of the fit's own after an entry.
SAMPLING_DOC: dict[str, tuple[str, str]] = {
    "chains": ("int", "Number of chains (default 4)."),
    "draws": ("int", "Kept draws per chain (default 1000)."),
    "warmup": ("int", "Warmup (tuning) iterations per chain, run before the kept draws (default 1000)."),
    "seed": (
        "int, optional",
        "Random seed; drawn from the operating system when omitted. The seed used is recorded in "
        '``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so that any run '
        "can be repeated.",
    ),
    "progressbar": ("bool", "Show the sampler's progress bar (default False)."),
    "target_accept": (
        "float, optional",
        "Target acceptance probability, in (0, 1), of {sampler} step size adapted during warmup; "
        "default (None) {target}.",
    ),
    "check_mixing": (
        "bool",
        "Warn (:class:`~noiseaware.exceptions.MixingWarning`) when {checked} has bulk ESS below "
        f"{ESS_PER_CHAIN} per chain or R-hat above {RHAT_MAX} (default True).",
    ),
}


def setting_doc(name: str, *, sampler: str = "nuts", checked: str = "a parameter", note: str = "") -> str:
    """The numpydoc text of setting ``name`` for a fit with ``sampler`` (``"nuts"`` or ``"rwm"``).

    Examples
    --------
    >>> setting_doc("draws", note="Per chain.")
    'Kept draws per chain (default 1000). Per chain.'
    """
    text = SAMPLING_DOC[name][1].format(sampler=SAMPLER_DOC[sampler], target=TARGET_DOC[sampler], checked=checked)
    return f"{text} {note}" if note else text


def sampling_doc(indent: str, *, sampler: str = "nuts", checked: str = "a parameter",
                 notes: Mapping[str, str] | None = None) -> str:
    """The numpydoc entries of the seven settings, indented by ``indent``, as a fit's docstring holds them.

    For writing a new fit's docstring (print it and paste it); nothing calls it at import.
    """
    lines = []
    for name, (kind, _) in SAMPLING_DOC.items():
        text = setting_doc(name, sampler=sampler, checked=checked, note=(notes or {}).get(name, ""))
        body = textwrap.fill(text, 100, initial_indent=indent + "    ", subsequent_indent=indent + "    ",
                             break_long_words=False, break_on_hyphens=False)
        lines += [f"{indent}{name} : {kind}", body]
    return "\n".join(lines)
