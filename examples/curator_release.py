"""A data curator privatizes a table three ways and hands the analyst JSON records.

Run: .venv/bin/python examples/curator_release.py
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pandas as pd

import noiseaware as na
from noiseaware import accounting
from noiseaware.datasets import demo_copula_data

x, _R, cols = demo_copula_data(n=500)
df = pd.DataFrame(x, columns=cols)

budget = accounting.PrivacyBudget(epsilon=2.0)

# 1. Median two-way tables for Bayes-NA (Wang et al. (2026)): geometric noise, epsilon split over 10 pairs.
#    budget=... charges the release's guarantee to the ledger before any noise is drawn.
pairs = na.privatize(df, statistic="median_pairs", epsilon=1.0, budget=budget)

# 2. The same statistic with the bounded BTGM mechanism, for MLE-NN (Wang et al. (2026) §4.2).
bounded = na.privatize(df, statistic="median_pairs", epsilon=1.0, mechanism="btgm", budget=budget)

# 3. A 2x2 admissions table under discrete Gaussian noise (Eng et al. (2024), Example 2).
table = pd.DataFrame([[46, 118], [109, 127]], index=["Female", "Male"], columns=["Admitted", "Rejected"])
counts = na.privatize(table, statistic="counts", sigma=6.25, sensitivity=math.sqrt(2), n=400)
eps_equiv = accounting.zcdp_to_approx_dp(counts.guarantee.rho, 1e-10)

print(pairs.summary(), "\n")
print(bounded.summary(max_rows=3), "\n")
print(counts.summary())
print(f"  equivalent to ({eps_equiv:.3f}, 1e-10)-DP by the CKS20 conversion\n")
print("budget ledger:", budget.ledger, "remaining:", budget.remaining)

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "pairs.json"
    pairs.to_json(path)
    assert na.Release.from_json(path) == pairs
    print(f"round-tripped {path.name}: {path.stat().st_size} bytes")
