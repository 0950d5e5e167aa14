r"""The one sampling convention: argument names, defaults and their validation (engine, private).

Every fit of the package (``copula.fit``, ``copula.fit_dpcopula``, ``dirichlet.fit``,
``dirichlet.dpmcmc``, ``dirichlet.dpmcmc_batch``, ``augment.sample``, ``covariance.fit``) takes the
same keyword-only sampler arguments with the same defaults (:data:`DEFAULTS`),

``chains=4, draws=1000, warmup=1000, seed=None, progressbar=False, target_accept=None, check_mixing=True``

written once: a fit declares ``**sampling: Unpack[SamplingOptions]`` (PEP 692) and the decorator
:func:`sampling_keywords` gives it a signature that shows the seven with their defaults, rejects
unknown keywords and writes their numpydoc entries into its docstring. :func:`check_settings`
checks them, with one message shape (``"<fit>: draws must be an integer >= 1; got
draws=-1."``). ``draws`` and ``warmup`` are *per chain* (as in ``pm.sample`` and NumPyro's
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

import functools
import inspect
import secrets
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, Unpack

from .. import _validation as v
from ..exceptions import NoiseawareTypeError
from ._mixing import ESS_PER_CHAIN, RHAT_MAX

__all__ = [
    "DEFAULTS",
    "NUTS_TARGET_ACCEPT",
    "RWM_TARGET_ACCEPT",
    "SETTING_NAMES",
    "SamplingOptions",
    "SamplingSettings",
    "check_settings",
    "sampling_keywords",
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


class SamplingOptions(TypedDict, total=False):
    """The convention's arguments as a fit receives them, ``**sampling: Unpack[SamplingOptions]`` (PEP 692).

    Their defaults are :data:`DEFAULTS`; :func:`sampling_keywords` shows them in the fit's signature.
    """

    chains: int
    draws: int
    warmup: int
    seed: int | None
    progressbar: bool
    target_accept: float | None
    check_mixing: bool


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
    owner: str, *, default_target: float = NUTS_TARGET_ACCEPT, **options: Unpack[SamplingOptions]
) -> SamplingSettings:
    r"""Validate the convention's arguments of fit ``owner`` and resolve ``seed`` and ``target_accept``.

    Rules: ``chains`` an integer :math:`\ge 1`, ``draws`` :math:`\ge 1`, ``warmup`` :math:`\ge 0`,
    ``seed`` ``None`` or an integer in :math:`[0, 2^{63})`, ``progressbar`` and ``check_mixing``
    ``True`` or ``False``, ``target_accept`` ``None`` (then ``default_target``) or a number in
    :math:`(0, 1)`. An argument not given takes its value in :data:`DEFAULTS`.

    Parameters
    ----------
    owner : str
        The fit's public name, the first word of every message.
    default_target : float
        The fit's sampler's target when ``target_accept`` is None (:data:`NUTS_TARGET_ACCEPT` or
        :data:`RWM_TARGET_ACCEPT`).
    **options
        ``chains``, ``draws``, ``warmup``, ``seed``, ``progressbar``, ``target_accept``,
        ``check_mixing`` as the caller gave them (:class:`SamplingOptions`).

    Returns
    -------
    SamplingSettings

    Raises
    ------
    NoiseawareTypeError
        A setting of the wrong type (``seed="x"``, ``progressbar=1``), or a name that is not a setting.
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
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise NoiseawareTypeError(
            f"{owner}: {unknown[0]!r} is not a sampling setting; the settings are {', '.join(SETTING_NAMES)}."
        )
    given: dict[str, Any] = {**DEFAULTS, **options}
    chains = v.integer(owner, "chains", given["chains"], minimum=1)
    draws = v.integer(owner, "draws", given["draws"], minimum=1)
    warmup = v.integer(owner, "warmup", given["warmup"], minimum=0)
    seed = given["seed"]
    seed_given = seed is not None
    seed = secrets.randbits(31) if seed is None else v.integer(owner, "seed", seed, minimum=0, maximum=2**63 - 1)
    for name in ("progressbar", "check_mixing"):
        if not isinstance(given[name], bool):
            raise NoiseawareTypeError(v.message(owner, name, "must be True or False", given[name]))
    target_accept = given["target_accept"]
    target = default_target if target_accept is None else v.open_unit(owner, "target_accept", target_accept)
    return SamplingSettings(
        chains, draws, warmup, seed, given["progressbar"], float(target), given["check_mixing"], seed_given
    )


# ----------------------------------------------------------------------------- the fits' signatures and docs
#: The line a fit's docstring holds in its Parameters section, replaced by :data:`SAMPLING_DOC`.
SAMPLING_MARKER = "{sampling_parameters}"
#: The line under ``cores : int, optional`` in a fit's docstring, replaced by :data:`CORES_DOC`.
CORES_MARKER = "{cores_doc}"
#: The numpydoc text of ``cores``: one meaning in every fit (``_engine._pymc.pymc_cores`` reads it).
CORES_DOC = (
    '``backend="pymc"`` with PyMC\'s own NUTS only: worker processes for the chains. Default (None): '
    "one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is already "
    "loaded, since forking a process with JAX's threads running can deadlock. Refused with "
    '``backend="numpyro"``.'
)
_TARGET_DOC = {
    "nuts": f"{NUTS_TARGET_ACCEPT} (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro)",
    "rwm": (
        f"{RWM_TARGET_ACCEPT} (``RWM_TARGET_ACCEPT``: a random walk in a few dimensions is most efficient "
        "near an acceptance rate of 0.234-0.44, Roberts, Gelman & Gilks 1997; NUTS's 0.8 would make its "
        "steps small)"
    ),
}
#: The numpydoc entries of the convention's arguments; ``{target}``, ``{sampler}`` and ``{checked}``
#: are filled per fit by :func:`sampling_keywords`.
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
_F = TypeVar("_F", bound=Callable[..., Any])


def _doc_block(indent: str, sampler: str, checked: str, notes: Mapping[str, str]) -> str:
    sampler_text = "NUTS's" if sampler == "nuts" else "the random-walk moves'"
    lines = []
    for name, (kind, text) in SAMPLING_DOC.items():
        text = text.format(sampler=sampler_text, target=_TARGET_DOC[sampler], checked=checked)
        if name in notes:
            text = f"{text} {notes[name]}"
        body = textwrap.fill(text, 100, initial_indent=indent + "    ", subsequent_indent=indent + "    ",
                             break_long_words=False, break_on_hyphens=False)
        lines += [f"{indent}{name} : {kind}", body]
    return "\n".join(lines)


def sampling_keywords(
    *, sampler: str = "nuts", checked: str = "a parameter", notes: Mapping[str, str] | None = None
) -> Callable[[_F], _F]:
    """Decorate a fit that takes ``**sampling: Unpack[SamplingOptions]``: signature, keyword check, docs.

    The decorated fit

    * shows the convention's arguments in its ``__signature__`` (what ``help()``,
      ``inspect.signature`` and the API reference read) as keyword-only parameters with the
      defaults of :data:`DEFAULTS`, at the head of its keyword-only block;
    * rejects, before its body runs, a keyword that is neither a setting nor one of its own
      parameters, with Python's own message (``"fit() got an unexpected keyword argument 'x'"``);
    * has the line :data:`SAMPLING_MARKER` of its docstring replaced by the numpydoc entries of
      :data:`SAMPLING_DOC` (a docstring without it must name every setting itself, e.g. "As in
      :func:`dpmcmc`").

    Parameters
    ----------
    sampler : {"nuts", "rwm"}
        Whose step size ``target_accept`` sets, and so its documented default.
    checked : str
        What ``check_mixing`` checks, as a phrase ("an entry of ``R``").
    notes : mapping of str to str, optional
        A sentence to add to a setting's entry (``{"seed": "The margins use seed + 1."}``).

    Returns
    -------
    callable
        The decorator.
    """
    if sampler not in _TARGET_DOC:
        raise ValueError(f"sampling_keywords: sampler must be 'nuts' or 'rwm'; got sampler={sampler!r}.")
    notes = dict(notes or {})
    if set(notes) - set(DEFAULTS):
        raise ValueError(f"sampling_keywords: notes must name settings; got {sorted(notes)}.")

    def decorate(fn: _F) -> _F:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD or params[-1].name != "sampling":
            raise TypeError(f"sampling_keywords: {fn.__qualname__} must end with **sampling.")
        params.pop()
        head = next((i for i, p in enumerate(params) if p.kind is inspect.Parameter.KEYWORD_ONLY), len(params))
        # the TypedDict's annotations are ForwardRefs under postponed evaluation: show their text
        hints = {k: getattr(a, "__forward_arg__", a) for k, a in SamplingOptions.__annotations__.items()}
        settings = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=DEFAULTS[name], annotation=hints[name])
            for name in SETTING_NAMES
        ]
        signature = sig.replace(parameters=[*params[:head], *settings, *params[head:]])
        keywords = frozenset(
            p.name
            for p in signature.parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        )
        doc = fn.__doc__ or ""
        at = doc.find(SAMPLING_MARKER)
        if at >= 0:
            indent = doc[doc.rfind("\n", 0, at) + 1 : at]
            doc = doc.replace(indent + SAMPLING_MARKER, _doc_block(indent, sampler, checked, notes), 1)
        at = doc.find(CORES_MARKER)
        if at >= 0:
            indent = doc[doc.rfind("\n", 0, at) + 1 : at]
            body = textwrap.fill(CORES_DOC, 100, initial_indent=indent, subsequent_indent=indent)
            doc = doc.replace(indent + CORES_MARKER, body, 1)
        elif not all(name in doc for name in SETTING_NAMES):
            raise TypeError(
                f"sampling_keywords: the docstring of {fn.__qualname__} must hold a {SAMPLING_MARKER} line "
                "or name every setting."
            )

        @functools.wraps(fn)
        def fit(*args: Any, **kwargs: Any) -> Any:
            for name in kwargs:
                if name not in keywords:
                    raise TypeError(f"{fn.__qualname__}() got an unexpected keyword argument {name!r}")
            return fn(*args, **kwargs)

        fit.__signature__ = signature  # type: ignore[attr-defined]
        fit.__doc__ = doc
        return fit  # type: ignore[return-value]

    return decorate
