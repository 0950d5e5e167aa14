"""docs/gallery.md runs as written, in order, in one namespace (issue 12 item 7)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[1] / "docs" / "gallery.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_gallery_runs_and_says_what_it_claims(monkeypatch) -> None:
    assert len(SNIPPETS) == 9
    monkeypatch.setenv("CI", os.environ.get("CI", "1"))  # no progress bars
    ns: dict = {"__name__": "__gallery__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        # small demo chains: PyMC may warn about the number of draws; that is the page's stated choice
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        for i, code in enumerate(SNIPPETS):
            exec(compile(code, f"gallery.md[snippet {i}]", "exec"), ns)
    text = out.getvalue()
    # 1-2: the hierarchy recovers the county correlations and both PPLs agree on mu
    r_hat = np.tanh(np.asarray(ns["z_draws"])).mean(axis=0)
    assert np.mean(np.abs(r_hat - ns["true_r"])) < 0.2, (r_hat, ns["true_r"])
    mu_numpyro = float(np.asarray(ns["mcmc"].get_samples()["mu"]).mean())
    mu_pymc = float(ns["county_idata"].posterior["mu"].mean())
    assert abs(mu_numpyro - mu_pymc) < 0.15, (mu_numpyro, mu_pymc)
    # 3: the slope is covered and the PPLs agree
    b1 = np.asarray(ns["b1_draws"])
    assert np.quantile(b1, 0.01) < 0.8 < np.quantile(b1, 0.99)
    assert abs(float(ns["pois_idata"].posterior["b1"].mean()) - b1.mean()) < 0.1
    # 4: the slope on the public covariate is positive (truth 0.6)
    assert float(ns["mixed_idata"].posterior["b"].mean()) > 0
    # 5: predictive draws vary and have the release's shape
    pred = np.asarray(ns["post_pred"])
    assert pred.shape == (300, 12) and len({tuple(r) for r in pred}) > 250
    assert "PyMC posterior predictive y: (2, 300, 12)" in text
    # 6: LOO ran in both
    assert np.isfinite(ns["loo_pymc"].elpd_loo) and np.isfinite(ns["loo_numpyro"].elpd_loo)
    assert abs(ns["loo_pymc"].elpd_loo - ns["loo_numpyro"].elpd_loo) < 5
    # 7: the random walk in scan recovers the latent log-rates; predictive and pointwise shapes per cell
    assert np.abs(np.asarray(ns["walk_z"]).mean(axis=0) - ns["walk_truth"]).max() < 0.5
    assert np.asarray(ns["walk_pred"]).shape == (300, 12, 3)
    assert np.asarray(ns["walk_loglik"]).shape == (300, 12, 3)
    # 8: predictions for the 4 new units, near n p (p about 0.3)
    new_y = ns["new_y"].values
    assert new_y.shape == (2, 300, 4)
    p_mean = float(ns["area_idata"].posterior["p"].mean())
    np.testing.assert_allclose(new_y.mean(axis=(0, 1)), p_mean * np.array([50, 60, 70, 80]), atol=3.0)
    # 9: each clinic's slope is recovered from its release (posterior sd about 0.03-0.1)
    slopes = np.asarray(ns["clinic_slopes"])
    assert np.all(np.abs(slopes.mean(axis=0) - ns["slopes_true"]) < 0.25), slopes.mean(axis=0)
