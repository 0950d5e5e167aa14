"""Sampling settings shown in the docs run without a warning, and MixingWarning names the block and the entries."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware import copula
from noiseaware._engine import NUTS_ADVICE, MixingBlock, check_mixing
from noiseaware.exceptions import MixingWarning
from noiseaware.results import from_groups

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _doc_call_kwargs(page: str, call: str) -> dict:
    """The keyword arguments of the first ``call(...)`` written on a docs page (literal values only)."""
    text = (DOCS / page).read_text()
    line = re.search(rf"{re.escape(call)}\((.*?)\)", text)
    assert line is not None, f"{page} shows no {call}(...)"
    node = ast.parse(f"f({line.group(1)})").body[0].value  # type: ignore[attr-defined]
    return {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}


def _median_release(seed: int = 0) -> na.Release:
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0, 0], [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]], size=2000)
    df = pd.DataFrame(
        {
            "age": np.clip(np.round(50 + 15 * z[:, 0]), 0, 99).astype(np.int64),
            "income": (6e4 + 3e4 * z[:, 1]).clip(0, 2e5),
            "sex": np.where(z[:, 2] > 0, "m", "f"),
        }
    )
    doms = {"age": range(0, 100), "income": {"lower": 0.0, "upper": 2e5, "bins": 400}, "sex": ["f", "m"]}
    return na.privatize(
        df, statistic="dpcopula", epsilon=1.0, domains=doms, correlation="median", rng=np.random.default_rng(1)
    )


@pytest.mark.slow  # make test-full: the page's 4 x 1000 fit (6 s)
def test_dpcopula_doc_settings_run_without_a_warning() -> None:
    """docs/dpcopula.md's fit_dpcopula settings on a three-column release like the page's (warnings are errors).

    The settings the page showed before, chains=2, draws=50, cannot pass the check (2 x 50 draws give a
    bulk ESS of about 100, and 200 are needed); with draws=500 R-hat's own noise at 2 chains crossed 1.01
    for 2 of 3 seeds. 4 x 1000 draws passed for seeds 1-8.
    """
    kw = _doc_call_kwargs("dpcopula.md", "copula.fit_dpcopula")
    assert kw["draws"] >= 500 and kw["chains"] >= 4, kw
    fit = copula.fit_dpcopula(_median_release(), **kw)
    assert na.results.draws(fit, "R").shape[0] == kw["chains"] * kw["draws"]


@pytest.mark.slow  # compiles a second set of programs (other chains and draws)
def test_former_dpcopula_doc_settings_warn_naming_the_block_and_the_pair() -> None:
    with pytest.warns(MixingWarning, match=r"in NUTS on the correlation matrix R .*R\[\d\] \(pair \w+ x \w+\)"):
        copula.fit_dpcopula(_median_release(), chains=2, draws=50, warmup=500, seed=1)


def test_mixing_warning_names_the_block_and_the_entries() -> None:
    rng = np.random.default_rng(0)
    walk = np.cumsum(rng.normal(size=(2, 300, 3)), axis=1)
    idata = from_groups({"posterior": {"R": walk}}, coords={"pair": ["a x b", "a x c", "b x c"]}, dims={"R": ["pair"]})
    block = MixingBlock("NUTS on the correlation matrix R", NUTS_ADVICE, "R[j] is the j-th free correlation.")
    with pytest.warns(MixingWarning) as rec:
        problems = check_mixing(idata, ["R"], owner="copula.fit", block=block)
    text = str(rec[0].message)
    assert problems[1].startswith("R[1] (pair a x c): bulk ESS")
    assert text.startswith("copula.fit: poor mixing in NUTS on the correlation matrix R; need bulk ESS >= 100")
    assert "R[j] is the j-th free correlation." in text and "no data augmentation" in text
    assert "data augmentation is sticky" not in text
    # unlabelled dimensions keep the flat index; too few draws are named as the cause
    short = from_groups({"posterior": {"theta": rng.normal(size=(2, 40, 2))}})
    with pytest.warns(MixingWarning, match=r"theta\[0\]: .*With draws=40 per chain the check cannot pass"):
        check_mixing(short)


def test_no_block_keeps_the_generic_advice() -> None:
    walk = np.cumsum(np.random.default_rng(1).normal(size=(2, 300)), axis=1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        check_mixing(from_groups({"posterior": {"theta": walk}}))
    assert "data augmentation is sticky" in str(rec[0].message)


@pytest.mark.slow  # two Dirichlet fits with the page's settings (compiles NUTS and the DPMCMC program)
def test_dirichlet_doc_settings_run_without_a_warning() -> None:
    """docs/dirichlet.md: ``nd.fit(rel, prior="p4", ...)`` (default settings) and ``nd.dpmcmc(rel, ...)`` as written."""
    from noiseaware import dirichlet as nd

    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=5000)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    fit_kw = _doc_call_kwargs("dirichlet.md", "nd.fit")
    fit_kw.update(seed=1)
    nd.fit(rel, **fit_kw)
    kw = _doc_call_kwargs("dirichlet.md", "nd.dpmcmc")
    nd.dpmcmc(rel, **kw, seed=1)


@pytest.mark.slow  # NUTS on a covariance matrix, 4 chains x 2000 iterations
def test_covariance_doc_settings_run_without_a_warning() -> None:
    from noiseaware import covariance

    x = np.random.default_rng(0).uniform(-1, 1, size=(2000, 4))
    rel = na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    covariance.fit(rel, **_doc_call_kwargs("covariance.md", "covariance.fit"))
