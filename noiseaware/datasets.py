"""Built-in simulated data sets (no download needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import _validation as v
from ._validation import owned
from .exceptions import NoiseawareValueError

__all__ = [
    "MIXED_MARGINALS_P5",
    "demo_copula_data",
    "random_correlation",
    "simulate_gaussian_copula",
    "ucb_admissions",
]

#: The p = 5 marginals of Wang et al. (2026) §5.2: N(0,1), Exp(1), Gamma(2,1), Beta(2,5), t_5.
MIXED_MARGINALS_P5 = (
    stats.norm(),
    stats.expon(),
    stats.gamma(2.0),
    stats.beta(2.0, 5.0),
    stats.t(5.0),
)


@owned("random_correlation")
def random_correlation(p: int, rng: np.random.Generator) -> np.ndarray:
    """A correlation matrix from a scaled Wishart with ``p + 1`` degrees of freedom (Wang et al. 2026, §5).

    ``W ~ Wishart(p + 1, I_p)`` and ``R = D^{-1/2} W D^{-1/2}`` with ``D = diag(W)``.
    """
    p = v.integer("p", p, minimum=2)
    g = rng.standard_normal((p + 1, p))
    w = g.T @ g
    d = 1.0 / np.sqrt(np.diag(w))
    r = w * d[:, None] * d[None, :]
    np.fill_diagonal(r, 1.0)
    return r


@owned("simulate_gaussian_copula")
def simulate_gaussian_copula(n: int, R: np.ndarray, marginals: tuple, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` rows ``X_j = F_j^{-1}(Phi(Z_j))`` with ``Z ~ N(0, R)`` (Wang et al. 2026, eq. 1).

    ``n`` must be in ``[1, 10**7]``.
    """
    n = v.integer("n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] != len(marginals):
        raise NoiseawareValueError(
            f"simulate_gaussian_copula: R must be p x p with p = len(marginals) = {len(marginals)}; got {R.shape}."
        )
    z = rng.multivariate_normal(np.zeros(R.shape[0]), R, size=n, method="cholesky")
    u = stats.norm.cdf(z)
    return np.column_stack([m.ppf(u[:, j]) for j, m in enumerate(marginals)])


@owned("demo_copula_data")
def demo_copula_data(seed: int = 2026, n: int = 1000) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The demo data set: Gaussian copula, Wang et al. (2026) §5.2 mixed marginals, p = 5.

    Parameters
    ----------
    seed : int or numpy.random.Generator
        An integer ``>= 0`` (or a generator) for the correlation and the rows.
    n : int
        Rows, in ``[1, 10**7]``.

    Returns
    -------
    x : ndarray, shape (n, 5)
    R : ndarray, shape (5, 5)
        The true copula correlation.
    columns : list of str
    """
    n = v.integer("n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    rng = v.generator("seed", seed)
    R = random_correlation(5, rng)
    x = simulate_gaussian_copula(n, R, MIXED_MARGINALS_P5, rng)
    return x, R, ["normal", "exponential", "gamma", "beta", "t5"]


#: UC Berkeley graduate admissions, fall 1973 (Bickel, Hammel & O'Connell 1975), summed over the six
#: departments of R's ``datasets::UCBAdmissions`` (N = 4526), and the N = 400 table of Eng et al. (2024) §5,
#: Example 1. Rows (Male, Female), columns (Admitted, Rejected).
_UCB_TABLES = {
    "full": ((1198, 1493), (557, 1278)),
    "dapper": ((109, 127), (46, 118)),
}


@owned("ucb_admissions")
def ucb_admissions(which: str = "full") -> pd.DataFrame:
    """UC Berkeley admissions as a 2x2 table of counts: rows Gender, columns Admit.

    Parameters
    ----------
    which : {"full", "dapper"}
        ``"full"``: R's ``datasets::UCBAdmissions`` summed over departments (N = 4526).
        ``"dapper"``: the 400-applicant table of Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for
        Private Posterior Estimation in R*, §5, Example 1.

    Returns
    -------
    pandas.DataFrame
        Index ``["Male", "Female"]``, columns ``["Admitted", "Rejected"]``, int64 counts; in C
        order the cells are (Male, Admitted), (Male, Rejected), (Female, Admitted), (Female, Rejected),
        dapper's ``pi_11, pi_10, pi_01, pi_00``.

    Examples
    --------
    >>> t = ucb_admissions()
    >>> int(t.to_numpy().sum()), int(t.loc["Female", "Admitted"])
    (4526, 557)
    >>> int(ucb_admissions("dapper").to_numpy().sum())
    400
    """
    v.choice("which", which, sorted(_UCB_TABLES))
    return pd.DataFrame(
        np.array(_UCB_TABLES[which], dtype=np.int64), index=["Male", "Female"], columns=["Admitted", "Rejected"]
    )
