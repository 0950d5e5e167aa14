"""margin_posterior: exact data augmentation over two-sided geometric noise, against a brute-force posterior."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from noiseaware.copula import margin_posterior
from noiseaware.exceptions import NoiseawareValueError

A0, ALPHA, N = 0.5, 0.7, 15
Y = np.array([12, 3])


def exact_cdf(t: np.ndarray, y: np.ndarray = Y) -> np.ndarray:
    """P(pi_1 <= t | y) by brute force: sum over the true counts of the Beta posterior, weights from the model.

    Poisson-Gamma form with beta = a0 K / n: each c_k is negative binomial a priori, the noise two-sided
    geometric, cells independent given y; pi_1 | c ~ Beta(a0 + c_1, a0 + c_2).
    """
    beta = A0 * 2 / N
    c = np.arange(0, 90)  # alpha**75 < 1e-11: the rest of the sum is negligible
    lognb = special.gammaln(A0 + c) - special.gammaln(A0) - special.gammaln(c + 1) + c * np.log(1 / (1 + beta))
    w = [np.exp(lognb + np.abs(yk - c) * np.log(ALPHA) - np.max(lognb + np.abs(yk - c) * np.log(ALPHA))) for yk in y]
    w = [wk / wk.sum() for wk in w]
    W = np.outer(w[0], w[1])
    tt = np.atleast_1d(t)[:, None, None]
    return np.sum(W * special.betainc(A0 + c[:, None], A0 + c[None, :], tt), axis=(1, 2))


def test_draws_follow_the_brute_force_posterior() -> None:
    draws = margin_posterior(Y, ALPHA, n=N, draws=400, prior=A0, seed=1)
    assert draws.shape == (400, 2) and np.allclose(draws.sum(axis=1), 1.0)
    pit = exact_cdf(draws[:, 0])
    assert stats.kstest(pit, "uniform").pvalue > 1e-4


def test_a_noise_blind_posterior_is_rejected() -> None:
    """Dirichlet(a0 + y), treating the noisy counts as true, fails the same check."""
    draws = np.random.default_rng(0).dirichlet(A0 + np.maximum(Y, 0), size=300)
    assert stats.kstest(exact_cdf(draws[:, 0]), "uniform").pvalue < 1e-4


def test_negative_and_large_counts_are_handled() -> None:
    pi = margin_posterior([-40, 5000, 0, 30], 0.9, n=5000, draws=50, seed=2)
    assert np.all(pi >= 0) and np.allclose(pi.sum(axis=1), 1)
    assert pi[:, 1].mean() > 0.95


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"alpha": 1.0}, "alpha"), ({"draws": 0}, "draws"), ({"prior": 0}, "prior"), ({"noisy": [1.5, 2]}, "noisy")],
)
def test_bad_settings(kw: dict, match: str) -> None:
    args = {"noisy": [1, 2], "alpha": 0.5, **kw}
    with pytest.raises(NoiseawareValueError, match=match):
        margin_posterior(args.pop("noisy"), args.pop("alpha"), **args)


def _cell_weights(a0: float, y: np.ndarray, n: int = N, alpha: float = ALPHA) -> tuple[np.ndarray, float]:
    """Per cell, normalised P(c | y, a0) on c = 0..89, and the log marginal likelihood of y given a0."""
    beta = a0 * y.size / n
    c = np.arange(0, 90)
    lognb = (
        special.gammaln(a0 + c)
        - special.gammaln(a0)
        - special.gammaln(c + 1)
        + a0 * np.log(beta / (1 + beta))
        - c * np.log1p(beta)
    )
    out, logml = [], 0.0
    for yk in y:
        lw = lognb + np.abs(yk - c) * np.log(alpha)
        mx = lw.max()
        out.append(np.exp(lw - mx) / np.exp(lw - mx).sum())
        logml += mx + np.log(np.exp(lw - mx).sum())
    return np.array(out), logml


def test_small_a0_draws_follow_the_brute_force_posterior() -> None:
    """a0 = 0.02: the former Gibbs chain stuck at c = 0 here; the independent draws do not."""
    a0, y = 0.02, np.array([1, 9])
    w, _ = _cell_weights(a0, y)
    c = np.arange(90)
    draws = margin_posterior(y, ALPHA, n=N, draws=600, prior=a0, seed=4)
    W = np.outer(w[0], w[1])
    # P(pi_1 <= t), computed from the smaller of pi_1 and pi_2 = 1 - pi_1 (pi_1 is often within 1e-30 of 1)
    f1 = np.sum(W * special.betainc(a0 + c[:, None], a0 + c[None, :], draws[:, :1, None]), axis=(1, 2))
    f2 = np.sum(W * special.betainc(a0 + c[None, :], a0 + c[:, None], draws[:, 1:2, None]), axis=(1, 2))
    pit = np.where(draws[:, 0] < 0.5, f1, 1.0 - f2)
    assert stats.kstest(pit, "uniform").pvalue > 1e-4
    gibbs_like = np.where(draws[:, 0] < 0.5, f1, 1.0)  # a draw that never leaves c_2 = 0 would look like this
    assert stats.kstest(gibbs_like, "uniform").pvalue < 1e-4


def test_hierarchical_prior_follows_the_brute_force_posterior() -> None:
    """a0 uniform on the 41-point log grid: the mixture over a0 of the fixed-a0 posteriors, by brute force."""
    from noiseaware.copula._margins import A0_GRID

    y = np.array([3, 11, 5])
    c = np.arange(90)
    parts = [_cell_weights(a0, y) for a0 in A0_GRID]
    lml = np.array([p[1] for p in parts])
    post = np.exp(lml - lml.max())
    post /= post.sum()
    t = margin_posterior(y, ALPHA, n=N, draws=300, prior="hierarchical", seed=5)[:, 0]

    def cdf(a0: float, w: np.ndarray) -> np.ndarray:
        """P(pi_1 <= t | a0): pi_1 ~ Beta(a0 + c_1, 2 a0 + c_2 + c_3), the (c_1, c_2 + c_3) law from w."""
        W = np.outer(w[0], np.convolve(w[1], w[2])[:90])
        i, j = np.nonzero(W > 1e-6)
        return special.betainc(a0 + c[i], 2 * a0 + c[j], t[:, None]) @ W[i, j]

    per_a0 = np.array([cdf(a0, w) for a0, (w, _) in zip(A0_GRID, parts, strict=True)])
    assert stats.kstest(post @ per_a0, "uniform").pvalue > 1e-4
    # a posterior of a0 that ignores the evidence (flat over the grid) is rejected
    assert stats.kstest(per_a0.mean(axis=0), "uniform").pvalue < 1e-4
