"""docs/gallery.md runs as written, in order, in one namespace; each example's claims are checked by its own test.

The examples share data (one seeded generator ``rng`` runs through the page), so they run in
page order in one module-scoped namespace: a test runs the examples up to its own (those before
it have usually run already) and checks what its example says.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

#: make test-full: the gallery page runs ten examples with PyMC's and NumPyro's NUTS (48 s for nine; the tenth,
#: a hierarchy in both PPLs, 16-50 s on its own, 129 s inside the page at load 9 on 2 cores)
pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[1] / "docs" / "gallery.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


class _Page:
    """The page's examples run in order in one namespace, each at most once; stdout kept per example."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"__name__": "__gallery__"}
        self.out: list[str] = []
        self.failed: str | None = None

    def through(self, example: int) -> dict[str, Any]:
        """Run examples 1..example (1-based, as numbered on the page) that have not run yet."""
        while len(self.out) < example:
            if self.failed is not None:
                pytest.fail(f"an earlier example of docs/gallery.md failed: {self.failed}")
            i = len(self.out)
            buf = io.StringIO()
            with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(buf), warnings.catch_warnings():
                mp.setenv("CI", os.environ.get("CI", "1"))  # no progress bars
                # small demo chains: PyMC may warn about the number of draws; that is the page's stated choice
                warnings.filterwarnings("ignore", category=UserWarning)
                warnings.filterwarnings("ignore", category=RuntimeWarning)
                warnings.filterwarnings("ignore", category=FutureWarning)
                try:
                    exec(compile(SNIPPETS[i], f"gallery.md[snippet {i}]", "exec"), self.ns)
                except BaseException as exc:
                    self.failed = f"example {i + 1}: {type(exc).__name__}: {exc}"
                    raise
            self.out.append(buf.getvalue())
        return self.ns


@pytest.fixture(scope="module")
def page() -> _Page:
    return _Page()


def test_the_page_has_ten_examples() -> None:
    assert len(SNIPPETS) == 10


def test_1_the_numpyro_hierarchy_recovers_the_county_correlations(page: _Page) -> None:
    ns = page.through(1)
    r_hat = np.tanh(np.asarray(ns["z_draws"])).mean(axis=0)
    assert np.mean(np.abs(r_hat - ns["true_r"])) < 0.2, (r_hat, ns["true_r"])


def test_2_pymc_and_numpyro_agree_on_mu(page: _Page) -> None:
    ns = page.through(2)
    mu_numpyro = float(np.asarray(ns["mcmc"].get_samples()["mu"]).mean())
    mu_pymc = float(ns["county_idata"].posterior["mu"].mean())
    assert abs(mu_numpyro - mu_pymc) < 0.15, (mu_numpyro, mu_pymc)


def test_3_the_poisson_slope_is_covered_and_the_ppls_agree(page: _Page) -> None:
    ns = page.through(3)
    b1 = np.asarray(ns["b1_draws"])
    assert np.quantile(b1, 0.01) < 0.8 < np.quantile(b1, 0.99)
    assert abs(float(ns["pois_idata"].posterior["b1"].mean()) - b1.mean()) < 0.1


def test_4_the_slope_on_the_public_covariate_is_positive(page: _Page) -> None:
    ns = page.through(4)
    assert float(ns["mixed_idata"].posterior["b"].mean()) > 0  # truth 0.6


def test_5_predictive_draws_vary_and_have_the_releases_shape(page: _Page) -> None:
    ns = page.through(5)
    pred = np.asarray(ns["post_pred"])
    assert pred.shape == (300, 12) and len({tuple(r) for r in pred}) > 250
    assert "PyMC posterior predictive y: (2, 300, 12)" in page.out[4]


def test_6_loo_runs_in_both_ppls_and_they_agree(page: _Page) -> None:
    ns = page.through(6)
    pymc, numpyro = (ns["elpd"](ns[k]) for k in ("loo_pymc", "loo_numpyro"))
    assert np.isfinite(pymc) and np.isfinite(numpyro)
    assert abs(pymc - numpyro) < 5


def test_7_the_random_walk_in_scan_recovers_the_log_rates(page: _Page) -> None:
    ns = page.through(7)
    assert np.abs(np.asarray(ns["walk_z"]).mean(axis=0) - ns["walk_truth"]).max() < 0.5
    # predictive and pointwise shapes per cell
    assert np.asarray(ns["walk_pred"]).shape == (300, 12, 3)
    assert np.asarray(ns["walk_loglik"]).shape == (300, 12, 3)


def test_8_predictions_for_new_units_after_set_data(page: _Page) -> None:
    ns = page.through(8)
    new_y = ns["new_y"].values
    assert new_y.shape == (2, 300, 4)
    p_mean = float(ns["area_idata"].posterior["p"].mean())  # about 0.3
    np.testing.assert_allclose(new_y.mean(axis=(0, 1)), p_mean * np.array([50, 60, 70, 80]), atol=3.0)


def test_9_each_clinics_slope_is_recovered_from_its_release(page: _Page) -> None:
    ns = page.through(9)
    slopes = np.asarray(ns["clinic_slopes"])  # posterior sd about 0.03-0.1
    assert np.all(np.abs(slopes.mean(axis=0) - ns["slopes_true"]) < 0.25), slopes.mean(axis=0)


def test_10_the_hierarchy_in_a_users_model_recovers_the_slope_in_both_ppls(page: _Page) -> None:
    ns = page.through(10)
    b_pymc, b_numpyro = np.asarray(ns["b_pymc"]), np.asarray(ns["b_numpyro"])
    # the covariate is the log tract population (plus noise of sd 0.1 against a spread of about 0.9): slope about 1
    lo, hi = np.quantile(b_pymc, [0.005, 0.995])
    assert lo < 1.0 < hi and lo > 0.3, (lo, hi)
    assert abs(b_pymc.mean() - b_numpyro.mean()) < 0.1, (b_pymc.mean(), b_numpyro.mean())
    counts = np.asarray(ns["tract_counts"])
    assert np.abs(counts.sum(axis=(1, 2)) - ns["nmf"].release.values[0][0, 0]).max() < 1e-8
    assert ns["tract_idata"].log_likelihood["measurements"].shape == (2, 300, ns["nmf"].release.n_measurements)

