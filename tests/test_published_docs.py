"""docs/published-releases.md runs as written, in order, in one namespace, and says what it claims."""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "published-releases.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.mark.slow  # four short MCMC runs, each compiled: about 15 s idle (the fast suite is over its budget)
def test_published_releases_page_runs_and_says_what_it_claims(monkeypatch) -> None:
    from opendp.mod import GLOBAL_FEATURES

    assert len(SNIPPETS) == 5
    monkeypatch.setenv("CI", os.environ.get("CI", "1"))  # no progress bars
    before = set(GLOBAL_FEATURES)
    ns: dict = {"__name__": "__published_releases__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        # one short chain per PPL: PyMC warns that one chain cannot give R-hat; that is the page's choice
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        for i, code in enumerate(SNIPPETS):
            exec(compile(code, f"published-releases.md[snippet {i}]", "exec"), ns)
    text = out.getvalue()
    assert set(GLOBAL_FEATURES) == before  # the page turns OpenDP's contrib features off again
    # the OpenDP measurement's law and guarantee, as printed
    assert "DiscreteGaussianMechanism(sigma=3.0, sensitivity=1.0)" in text
    rel = ns["release"]
    assert rel.guarantee.rho == float(ns["meas"].map(1.0)) and rel.provenance.startswith("OpenDP ")
    # both PPLs find the rate: the noise moves the posterior mean by about 3 sqrt(8) / 8 = 1.1 (sd),
    # so 6 is over 5 sd away; the two chains agree within their Monte Carlo error (sd about 0.15)
    truth = float(np.mean(ns["true_counts"]))
    for draws in (ns["rate_numpyro"], ns["rate_pymc"]):
        assert abs(draws.mean() - truth) < 6.0, (draws.mean(), truth)
    assert abs(ns["rate_numpyro"].mean() - ns["rate_pymc"].mean()) < 1.0
    # the published table: per-level variance, the tract release read in both PPLs
    tracts = ns["tracts"]
    assert tracts.values.tolist() == [41, 3, 0] and tracts.mechanism.sigma == 2.5
    assert ns["by_level"]["county"].mechanism.sigma == 1.5
    assert "[41  3  0] 2.5 US Census Bureau 2020 NMF" in text
    assert abs(ns["tract_rate_numpyro"].mean() - ns["tract_rate_pymc"].mean()) < 1.2
    assert 8.0 < ns["tract_rate_pymc"].mean() < 22.0  # (41 + 3 + 0 + 1) / (3 + 0.05) = 14.8 under no noise
