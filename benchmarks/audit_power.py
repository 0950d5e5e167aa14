"""Power of noiseaware.audit.audit_epsilon against a geometric mechanism whose scale is 10% too small.

Run: .venv/bin/python benchmarks/audit_power.py   (figures recorded in docs/security.md)
"""

import _study
import numpy as np

from noiseaware import mechanisms as M
from noiseaware.audit import audit_epsilon


def main() -> int:
    """Print, per number of draws, how often the audit flags the bad and the good mechanism (of 20)."""
    _study.parser(__doc__, write=None).parse_args()
    good = M.GeometricMechanism.from_epsilon(1.0)
    bad = M.GeometricMechanism(scale=0.9, sensitivity=1)
    for draws in (10_000, 100_000, 400_000):
        flags = sum(
            audit_epsilon(bad, 1, 0, lambda y: y >= 1, draws=draws, beta=1e-6, rng=np.random.default_rng(s))
            .epsilon_lower > 1.0
            for s in range(20)
        )
        fp = sum(
            audit_epsilon(good, 1, 0, lambda y: y >= 1, draws=draws, beta=1e-6, rng=np.random.default_rng(100 + s))
            .epsilon_lower > 1.0
            for s in range(20)
        )
        print(draws, "bad flagged", flags, "/20; good flagged", fp, "/20")
    return 0


if __name__ == "__main__":
    _study.main(main, configure_jax=False)
