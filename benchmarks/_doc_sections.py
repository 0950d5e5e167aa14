"""What ``docs/benchmarks.md`` and ``docs/reproduction.md`` show: their sections, each section's records and tables.

``render_docs.py`` renders these sections from the JSON records in ``benchmarks/results``; a record
that no section names is an error there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DOCS", "PAPERS", "QUESTIONS", "Section", "Table"]


@dataclass(frozen=True)
class Table:
    """A table of a record shown in the documents: record name, part heading (``None``: the first part), index."""

    record: str
    part: str | None
    index: int
    caption: str


@dataclass(frozen=True)
class Section:
    """One section of a rendered document."""

    title: str
    about: str
    records: tuple[str, ...]
    tables: tuple[Table, ...] = field(default=())


PAPERS = (
    Section(
        "Wang, Feldman & Reiter (2026), “Differentially Private Bayesian Inference for Gaussian Copula Correlations”",
        "The paper's simulation study (§5): Table 1, coverage and mean length of 95% intervals for the copula "
        "correlations of Bayes-NA (`copula.fit` on a `median_pairs` release), and Figure 1, the MAE of R_12 by "
        "method (Bayes-NA, MLE-NN, Li-Kendall, Asghar-dpc). Figure 1 is a plot without printed numbers: its "
        "claims are compared in the record.",
        ("reproduce_copula",),
        (Table("reproduce_copula", "Table 1: coverage (%) and mean length of 95% intervals for R_jj'", 0,
               "Table 1, ours beside the paper's"),),
    ),
    Section(
        "Eng, Awan, Gong, Ju & Rao (2024), “dapper: Data Augmentation for Private Posterior Estimation in R”",
        "The paper's examples (§5) with `noiseaware.augment`: (a) randomized response on the UC Berkeley "
        "admissions table, (b) discrete Gaussian noise on its cells, (c) a linear regression released through "
        "Laplace noise on clamped sufficient statistics. The paper shows densities (Figures 2-7) without printed "
        "numbers; its claims are set beside our posteriors (details: `docs/augment.md`). The speed of the same "
        "sampler is in `docs/benchmarks.md` (\"Data augmentation: record updates per second\").",
        ("dapper_examples",),
        (Table("dapper_examples", None, 0, "The three examples, default runs"),),
    ),
    Section(
        "Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), “Private Adaptive Covariance Estimation via Gaussian "
        "Graphical Models” (PACE-GGM)",
        "Tables 3-5 of the paper (BCW data: summary, number of measured entries, seconds per trial), the error "
        "comparison against SSP, AdaptiveCov, the diagonal baseline and CoinPress on six more data sets, the "
        "App. F ablation, and the calibration of the noise-aware covariance posterior on PACE-GGM releases. "
        "Table 5's times are in `docs/benchmarks.md` (\"PACE-GGM speed\").",
        ("reproduce_pace_ggm", "pace_ggm_table4_investigation", "pace_ggm_errors", "pace_ggm_errors_bcw",
         "pace_ggm_errors_diabetes", "pace_ggm_errors_wine", "pace_ggm_errors_diamonds", "pace_ggm_errors_cells",
         "pace_ggm_errors_digits", "pace_ggm_errors_caravan", "pace_ggm_ablation", "covariance_calibration_8reps",
         "covariance_calibration_wishart", "covariance_calibration"),
        (Table("reproduce_pace_ggm", None, 0, "Table 4 (BCW, mean distinct measured off-diagonal entries), ours "
                                              "beside the paper's"),),
    ),
    Section(
        "Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), App. G: regression (Figure 5)",
        "Figure 5 of the paper: test MSE of linear regression with AdaSSP (Wang 2018) and with PACE-GGM's "
        "covariance as the sufficient statistics, one third of rho for AdaSSP's private minimum eigenvalue in "
        "both (`privatize(..., statistic='regression', method='adassp' | 'pace_ggm')`, `regression.adassp`, "
        "`regression.pace_ggm_regression`), 80/20 split, rho from 1e-4 to 10, 10 trials, on eight stand-in data "
        "sets (the paper names none); the paper's claim (\"competitive with AdaSSP, in most cases slightly "
        "outperforming it\") checked cell by cell. One table per data set in the record.",
        ("regression_figure5",),
    ),
    Section(
        "Bernstein & Sheldon (2019), “Differentially Private Bayesian Linear Regression”: a noise-aware posterior",
        "Not a reproduction of the paper's figures: the calibration of `regression.fit`'s model (the paper's "
        "normal approximation of the sufficient statistics, with exact moments, and the release's noise) on "
        "`ssp` releases: coverage of 90% and 95% intervals of every coefficient, noise-aware beside noise-blind "
        "(the statistics taken as exact) and AdaSSP with a plug-in interval, parameters drawn from the prior "
        "(`docs/regression.md`); then where its small shortfall comes from (`regression_diagnostics`).",
        ("regression_calibration", "regression_diagnostics"),
        (Table("regression_calibration", None, 0, "Coverage per cell (worst coefficient in brackets); cells "
                                                  "with fewer than 200 replications are marked by their count"),),
    ),
    Section(
        "Li, Xiong & Jiang (2014), “Differentially Private Synthesization of Multi-Dimensional Data using Copula "
        "Functions” (DPCopula)",
        "Figures 5, 6, 7/10 and 9 of the paper (relative error of range-count queries on synthetic data) with "
        "`privatize(..., statistic='dpcopula')` and `copula.synthesize`; then what the paper does not measure: "
        "the coverage of an analysis of the synthetic data, noise-aware (`fit_dpcopula`, M copies) against "
        "DPCopula's single copy, the margins' prior, and DPCopula against AIM, MST and PrivBayes. The release and "
        "synthesis times at n = 10^6 are in `docs/benchmarks.md` (\"DPCopula release and synthesis\").",
        ("reproduce_dpcopula", "dpcopula_coverage", "dpcopula_priors", "compare_synthesizers"),
        (Table("reproduce_dpcopula", None, 2, "Figs. 7/10, relative error (the paper plots these; its text claims "
                                              "the error falls with epsilon and rises with the dimension)"),),
    ),
    Section(
        "Guo, Barrientos & Peña (2023), “Differentially Private Inference for Compositional Data”",
        "§5.1, Figures 1-2 of the paper: MSE of alpha and of E[x | alpha], predictive coverage and run time of "
        "DPBoots, DPMCMC, DPreMCMC, DPABC and DPapprox on DP mean-log releases (50 data sets per cell); and a "
        "§5.2-style analysis of the BudgetUK shares with its two-group test. The figures are bar charts without "
        "printed numbers: the paper's statements are set beside our medians in the record.",
        ("reproduce_dirichlet", "budget_uk"),
    ),
)

QUESTIONS = (
    Section(
        "Is the exact noise-aware likelihood cheap? (windowed log-density and gradient)",
        "Value and gradient of `NoisyTwoWayTable` / `CompositeCopulaLikelihood` (JAX, jitted) for n = 10^3 ... "
        "10^6, against the full sum over the support in the same run.",
        ("distributions",),
    ),
    Section(
        "Data augmentation: record updates per second",
        "`noiseaware.augment.sample` on example (a) of Eng et al. (2024) (N = 4526, randomized response), against "
        "plain-Python loops of the same chain in the same process.",
        ("augment",),
    ),
    Section(
        "Randomized response: NUTS on the exact marginal against data augmentation",
        "A logistic regression of a binary answer released by randomized response (n = 1,000, epsilon = 1): "
        "NumPyro's NUTS on `RandomizedResponse` (the true answers summed out) against `augment.sample` (a sweep "
        "over the latent true answers) on the same model, same chains, warmup and draws, in one run: ESS per "
        "second and per draw.",
        ("rr_vs_augment",),
    ),
    Section(
        "Copula fits against the paper's Stan program (the NHANES-size speed race)",
        "`copula.fit` (NumPyro; and the PyMC route) against the Stan program of Wang, Feldman & Reiter (2026) on "
        "the same `median_pairs` release, n = 5,820, p = 7 (NHANES size) and n = 10^6, p = 10, 4 chains x "
        "(1000 + 1000): ESS per second including compilation, ESS per CPU second, first-process fit time. Then "
        "the ESS per draw of each sampler over seeds (the mass matrix and step-size target of `copula.fit`, and "
        "Stan's).",
        ("speed_race_stacks", "speed_race_before_after", "speed_race", "speed_race_dense", "speed_race_equal",
         "copula_mass", "stan_seeds"),
    ),
    Section(
        "PyMC backend at NumPyro's speed",
        "`copula.fit` and `covariance.fit` with `backend=\"pymc\"` and each installed NUTS implementation "
        "(`nuts_sampler`: nutpie, NumPyro, PyMC's own) against `backend=\"numpyro\"` on the same releases, in one "
        "run: effective draws per second including compilation, and the agreement of the posterior means.",
        ("pymc_backend_speed",),
        (Table("pymc_backend_speed", None, 0, "One run, same releases, chains, warmup, draws and seed"),),
    ),
    Section(
        "PyMC route on regression at NumPyro's speed",
        "`regression.fit` with `backend=\"pymc\"` (its default NUTS implementation) and plain `pm.sample()` on a "
        "user's model with `noiseaware.pymc.NoisySufficientStatistics` against `regression.fit(backend=\"numpyro\")` "
        "on the same releases (4 covariates, Gaussian and Laplace noise), in one run: effective draws of the slopes "
        "per second with compilation and on a second call in the same process, and the agreement of the means.",
        ("pymc_regression_speed",),
        (Table("pymc_regression_speed", None, 0, "One run, same releases, chains, warmup, draws and seed"),),
    ),
    Section(
        "Compilation: a second process, a second release",
        "What JAX's persistent compilation cache and the engine's program cache save: a second process fitting "
        "the same shape, a new release of the same shape in the same process and in another. The "
        "`copula_second_release` record counted cache entries and traces through the package's private modules; "
        "the script now counts XLA compilations and traces with a `jax.monitoring` listener.",
        ("compile_cache", "copula_second_release"),
    ),
    Section(
        "dpmcmc: effective draws per second",
        "`dirichlet.dpmcmc` (exact data augmentation for compositional data) against the kernels it started "
        "from, on simulated releases (n of 1,500 and 5,000, d of 3 and 6, epsilon of 0.5 and 1) and BudgetUK, "
        "in one run; and the exact route against the moments route (`dirichlet.fit`). The baseline and "
        "one-device columns of the `dpmcmc_speed` record were timed through the sampler's private functions by an "
        "earlier `dpmcmc_speed.py` (git history); that part is retired, as are the kernel variants "
        "(`dpmcmc_variants.py`) and the per-iteration ablation (`dpmcmc_iteration_cost.py`). The script now times "
        "the public `dpmcmc` only; `dpmcmc_before_after.py` compares two revisions.",
        ("dpmcmc_before_after", "dpmcmc_speed"),
    ),
    Section(
        "dirichlet.fit at the one NUTS target",
        "`dirichlet.fit` at the package's target_accept 0.8 against its former 0.9, same releases and seeds.",
        ("target_accept_dirichlet",),
    ),
    Section(
        "Many releases: fit_many throughput on Dask",
        "Releases per minute of `fit_many` on a `LocalCluster`, one and two workers, for `dirichlet.fit` and "
        "`dirichlet.dpmcmc`; what 10,000 county tables would take.",
        ("fit_many", "fit_many_dpmcmc"),
    ),
    Section(
        "privatize on Dask and on Parquet larger than memory",
        "`privatize` on a Dask array against the same call in memory (same release), and on 10^8 rows read from "
        "Parquet.",
        ("privatize_dask",),
    ),
    Section(
        "DPCopula release and synthesis",
        "`privatize(..., statistic='dpcopula')` and `copula.synthesize` at n = 10^6, m = 8, plain and hybrid "
        "(Algorithm 6 of Li, Xiong & Jiang, 2014).",
        ("dpcopula", "dpcopula_hybrid"),
    ),
    Section(
        "PACE-GGM speed",
        "Seconds per PACE-GGM release on BCW (d = 32) and Caravan (d = 85), beside Table 5 of Ferrando et al. "
        "(2026), on a quiet machine and under load.",
        ("pace_ggm_speed",),
        (Table("pace_ggm_speed", None, 0, "Quiet machine"),),
    ),
    Section(
        "The fast test suite: make test from a fresh clone",
        "Wall time of the README's `make test` on a fresh clone with empty caches, on the 2-core machine.",
        ("make_test_time",),
    ),
    Section(
        "Power of the empirical privacy audit",
        "How often `noiseaware.audit.audit_epsilon` (beta = 1e-6) flags a geometric mechanism at epsilon = 1 whose "
        "scale is 10% too small, against the correct one (20 seeds per row); `docs/security.md` says which tests "
        "use which number of draws.",
        ("audit_power",),
        (Table("audit_power", None, 0, "Flagged runs"),),
    ),
    Section(
        "Census-style hierarchy: interval coverage and scale",
        "`noiseaware.hierarchy` on synthetic NMF-shaped files (states > counties > tracts, discrete Gaussian noise "
        "of published variance, exact state totals): coverage of 90% intervals for tract totals and cells, the "
        "noise-aware posterior beside GLS's normal intervals, including cells near zero; then the time and memory "
        "of GLS and of the posterior's gradient from 10^3 to 10^6 measurements, and GLS by state on Dask "
        "(`docs/published-hierarchy.md` has the plan for a state and the nation).",
        ("hierarchy_calibration", "hierarchy_scale", "hierarchy_state_scale", "hierarchy_dask"),
    ),
)

DOCS = {
    "benchmarks.md": (
        "# Benchmarks",
        "What each benchmark measures, its headline figure, the machine and load it ran under, and the command "
        "that reruns it. The machine is a 2-core development machine shared with other jobs unless a record says "
        "otherwise: compare ratios measured in one run, not absolute times across runs. Each record "
        "(`benchmarks/results/<name>.json`) keeps the whole run report; this page is rendered from them by "
        "`benchmarks/render_docs.py` (do not edit it by hand). `make bench` reruns the benchmarks, "
        "`make bench-quick` a quick subset into a scratch directory.",
        QUESTIONS,
    ),
    "reproduction.md": (
        "# Reproduction of the papers' studies",
        "One section per paper: what of the paper is reproduced, the paper's values beside ours where it prints "
        "them, the headline findings (including what is not reproduced), and for each run its command and record "
        "(`benchmarks/results/<name>.json`, with every table of the run). Rendered by `benchmarks/render_docs.py` "
        "from the records; do not edit it by hand.",
        PAPERS,
    ),
}
