r"""Docstring text that the NumPyro and PyMC classes of one likelihood share, written once.

A docstring line that holds only ``{name}`` is replaced by the block ``name`` of :data:`BLOCKS`,
indented as that line (:func:`shared_doc`). The twins then state the law, its references and its
errors in the same words, and each keeps what is its own: parameter types, idioms, examples.

Examples
--------
>>> @shared_doc
... def f():
...     '''Summary.
...
...     Raises
...     ------
...     {covariance_entries_raises}
...     '''
>>> import inspect
>>> doc = inspect.cleandoc(f.__doc__).splitlines()  # Python >= 3.13 dedents docstrings when compiling
>>> doc[doc.index("------") + 1 :]
['NoiseawareValueError, NoiseawareTypeError', '    Bad ``n``, ``pairs`` or ``precision``.']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["BLOCKS", "shared_doc"]

_T = TypeVar("_T", bound=Callable[..., Any])

#: The shared blocks, by name (each without indentation; the newlines at either end are dropped).
BLOCKS: dict[str, str] = {
    "noisy_law": r"""
``D`` is independent two-sided geometric (``alpha``) or discrete Gaussian (``sigma``) noise,
one draw per cell, as added by the geometric / discrete Gaussian mechanisms to released
counts. The log-pmf is the exact convolution

.. math:: \log P(Y = y) = \operatorname{logsumexp}_k\,[\log P(X = k) + \log g(y - k)]

over a window of ``2w + 1`` latent counts around ``y`` (shifted into the base's support),
``w`` fixed by the concrete noise parameter and ``tol``: relative error at most ``tol`` for
every observation with ``log p(y) >= -40`` and for any base law, with a proven bound
(``docs/noisy.md``). A multinomial base (noise on each of its ``K`` cells) is summed exactly
over the simplex by a dynamic programme, ``O(K (N+1)^2)`` per observation, refused for
``N > 999``.
""",
    "noisy_noise_parameters": """
noise : mapping or Release, optional
    ``{"family": "geometric", "alpha": a}`` (or ``"epsilon"`` and ``"sensitivity"``),
    ``{"family": "discrete_gaussian", "sigma": s}``, or a ``"counts"``
    :class:`~noiseaware.Release` (its mechanism's ``alpha`` / ``sigma``).
alpha, sigma, epsilon : float, optional
    Shortcuts for ``noise``; give exactly one of ``noise``, ``alpha``, ``sigma``, ``epsilon``
    (``alpha = exp(-epsilon / sensitivity)``). Concrete numbers (they fix the window).
sensitivity : float, default 1
tol : float, default 1e-12
""",
    "two_sided_geometric_law": r"""
.. math:: P(K = k) = \frac{1-\alpha}{1+\alpha}\,\alpha^{|k-\mathrm{loc}|},\qquad k\in\mathbb{Z},

the output law of the geometric mechanism (Wang, Feldman & Reiter (2026), *Differentially Private
Bayesian Inference for Gaussian Copula Correlations*, Definition 2.3, eq. 3) with
``alpha = exp(-epsilon / sensitivity)``.
""",
    "discrete_gaussian_law": r"""
.. math:: P(K = k) = \frac{e^{-(k-\mathrm{loc})^2/(2\sigma^2)}}{Z(\sigma)},\qquad
          Z(\sigma) = \sum_{j\in\mathbb{Z}} e^{-j^2/(2\sigma^2)},

exactly normalized: Poisson summation for ``sigma >= 1`` and a direct sum for
``sigma < 1``, each with a proven bound below 1e-36 on the dropped terms (see
:func:`noiseaware.mechanisms.discrete_gaussian_log_normalizer`).
""",
    "hypergeom_law": r"""
``T`` is the number of marked balls among ``m`` drawn from an urn of ``N`` with ``K`` marked,
with odds ratio ``exp(log_odds)`` (Fisher's noncentral hypergeometric law), and ``D`` is
two-sided geometric noise (``alpha``) or discrete Gaussian noise (``sigma``):

.. math:: P(\tilde T = y) = \sum_t \frac{\binom{K}{t}\binom{N-K}{m-t} e^{t\psi}}{\sum_s
          \binom{K}{s}\binom{N-K}{m-s} e^{s\psi}}\; g(y - t),

the exact marginal of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference
for Gaussian Copula Correlations*, eq. (17) with exact margins (so odd ``N`` is exact). Both sums
run over static windows of ``O(sqrt N)`` terms at their modes, with a proven bound below 1e-13 on
the relative dropped mass.
""",
    "two_way_law": r"""
``NoisyHypergeom(N=n, K=ceil(n/2), m=ceil(n/2), log_odds=psi(r), alpha)`` with

.. math:: \psi(r) = 2\log\frac{\pi + 2\arcsin r}{\pi - 2\arcsin r},

Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
Correlations*, eqs. (7)-(10) and (17) (odd ``n``: ``(n+1)/2`` records above the median, §3.1).
""",
    "two_way_epsilon_per_pair": """
The budget of this pair's count: ``alpha = exp(-epsilon_per_pair)``. Not the total
``epsilon`` of ``privatize``, which is split over the ``p(p-1)/2`` pairs; ``epsilon=``
is refused for that reason.
""",
    "composite_law": r"""
.. math:: f_{CL}(\tilde{\mathcal T}\mid R) = \prod_{j<j'} P(\tilde T_{jj'} = \tilde t_{jj'}\mid R_{jj'}),

each factor the :class:`NoisyTwoWayTable` law, all pairs in one batched call; draws are
independent across pairs (the composite model). The value is the vector of the ``k`` noisy
counts in the order of ``pairs`` (default: the row-major upper triangle,
``numpy.triu_indices(p, 1)``, the order of a ``"median_pairs"`` release).
""",
    "composite_epsilon_per_pair": """
Each pair's budget, ``alpha = exp(-epsilon_per_pair)``; ``privatize``'s total
``epsilon`` is ``k`` times it (``epsilon=`` is refused so the two cannot be confused).
""",
    "dirichlet_stat_law": r"""
.. math:: S_L = S_0 + \varepsilon,\qquad S_0\sim N\!\bigl(\mu(\alpha),\ \Sigma(\alpha)/n\bigr),
          \qquad \varepsilon_j\overset{iid}{\sim}\mathrm{Laplace}(0,\ \text{scale}),

with ``scale = -d log(a) / (n epsilon_1)`` (Algorithm 1). ``moments="censored"`` (default)
uses the mean and covariance of :math:`\log\max(x_j, a)` under the Beta marginals
(Supplement S1), so a large threshold ``a`` does not bias ``alpha``; ``moments="asymptotic"``
is the paper's uncensored :math:`\mu=\psi(\alpha)-\psi(\alpha_0)`,
:math:`\Sigma=\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\alpha_0)`.
""",
    "randomized_response_law": r"""
.. math:: P(Y = y \mid \pi) = \sum_{i} \pi_i Q[i, y] = o + (p - o)\,\pi_y,\qquad o = \frac{1-p}{k-1},

with :math:`Q` the mechanism's transition matrix (truthful with probability ``p``, each other
category with probability ``o``; Warner 1965; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
Augmentation for Private Posterior Estimation in R*, Example 1). The true category is summed out
exactly, so NUTS samples the parameters behind ``probs`` directly (no data augmentation). Support
``0..k-1``; ``probs`` may come from a softmax (or, with ``k = 2``, logistic) regression.
""",
    "randomized_response_raises": """
NoiseawareValueError
    If ``probs`` has fewer than 2 categories (or not ``k``), or a concrete ``p`` lies outside ``[1/k, 1)``.
""",
    "covariance_entries_law": r"""
.. math:: y \sim N\bigl(\Sigma_{\mathcal S},\ \mathrm{diag}(1/\lambda) + C(\Sigma)/n\bigr),\quad
          C_{(jk),(lm)} = \Sigma_{jl}\Sigma_{km} + \Sigma_{jm}\Sigma_{kl}

(Isserlis; Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via
Gaussian Graphical Models*, the measurements after Prop. 4.2's combination). Support: real vectors of
length ``m`` (one per measured entry).
""",
    "covariance_entries_raises": """
NoiseawareValueError, NoiseawareTypeError
    Bad ``n``, ``pairs`` or ``precision``.
""",
}

_PLACE = re.compile(r"^(\s*)\{(\w+)\}\s*$")


def shared_doc(obj: _T) -> _T:
    """Fill the ``{name}`` lines of ``obj``'s docstring from :data:`BLOCKS`; an unknown name raises ``KeyError``."""
    out = []
    for line in (obj.__doc__ or "").splitlines():
        m = _PLACE.match(line)
        if m is None:
            out.append(line)
            continue
        indent, name = m.groups()
        out.extend(indent + b if b else "" for b in BLOCKS[name].strip("\n").splitlines())
    obj.__doc__ = "\n".join(out)
    return obj
