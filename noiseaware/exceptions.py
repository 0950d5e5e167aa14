"""Exceptions and warnings raised by noiseaware.

All errors raised deliberately by noiseaware derive from :class:`NoiseawareError`
*and* from the matching built-in exception (``ValueError`` or ``TypeError``), so
callers can catch either.
"""

from __future__ import annotations

__all__ = [
    "NoiseawareError",
    "NoiseawareTypeError",
    "NoiseawareValueError",
    "MixingWarning",
    "NoiseawareWarning",
    "OutputExistsError",
    "PrivacyBudgetError",
    "PrivacyWarning",
    "ReleaseFormatError",
    "UtilityWarning",
]


class NoiseawareError(Exception):
    """Base class of every error raised deliberately by noiseaware."""


class NoiseawareValueError(NoiseawareError, ValueError):
    """An argument has the right type but an invalid value."""


class NoiseawareTypeError(NoiseawareError, TypeError):
    """An argument has the wrong type."""


class ReleaseFormatError(NoiseawareValueError):
    """A serialized :class:`~noiseaware.Release` is malformed or inconsistent.

    The message names the offending field, e.g. ``mechanism.scale``.
    """


class PrivacyBudgetError(NoiseawareValueError):
    """A request would spend more privacy budget than remains.

    Attributes
    ----------
    requested : float
        The budget the caller asked to spend.
    remaining : float
        The budget that was left before the request.
    unit : str
        ``"epsilon"`` or ``"rho"``.
    """

    def __init__(self, requested: float, remaining: float, unit: str) -> None:
        self.requested = float(requested)
        self.remaining = float(remaining)
        self.unit = unit
        super().__init__(
            f"PrivacyBudget: requested {unit}={self.requested!r} exceeds the remaining "
            f"{unit}={self.remaining!r}; spend at most the remaining budget or start a new one."
        )


class NoiseawareWarning(UserWarning):
    """Base class of warnings issued by noiseaware."""


class PrivacyWarning(NoiseawareWarning):
    """A privacy parameter is legal but unusually weak (e.g. ``epsilon > 5``)."""


class UtilityWarning(NoiseawareWarning):
    """The noise of a release is so large that its values carry almost no information.

    Issued by :func:`noiseaware.privatize` when, e.g., the noise standard deviation of every
    count exceeds the largest value the count can take. The release is still valid and private.
    """


class MixingWarning(NoiseawareWarning):
    """An MCMC run mixed poorly: its draws are too few or too autocorrelated to trust.

    Issued by :func:`noiseaware.augment.sample` when a parameter's bulk effective sample size is
    below 100 per chain or its rank-normalized R-hat exceeds 1.01 (Vehtari et al. 2021). Data
    augmentation is sticky when the privacy noise is large (Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
    Augmentation for Private Posterior Estimation in R*, §6).
    """


class OutputExistsError(NoiseawareError, FileExistsError):
    """An output file already exists and overwriting it was not asked for.

    Raised instead of silently replacing a file when a release or a command-line output is
    written; the message names the path and the fix: pass ``overwrite=True`` (CLI: ``--force``).
    Also a ``FileExistsError``, so ``except OSError`` catches it too.
    """
