"""Coverage of tract-count intervals (noise-aware posterior beside GLS) and the cost of both at scale.

Two studies of :mod:`noiseaware.hierarchy` on synthetic NMF-shaped files
(:func:`~noiseaware.hierarchy.synthetic_nmf`: states > counties > tracts, a total and three cells
per unit, discrete Gaussian noise of variance 4 (states' cells, counties) and 9 (tracts), state
totals exact):

* ``coverage`` -- ``--reps`` files of each of two designs (:data:`DESIGNS`: a moderate tree of 24 tracts with
  populations of tens, and a sparse tree of 12 tracts with about 2 people a tract), a new truth and new
  noise each time. Ours: the package's default route, :func:`hierarchy.fit` (the integer posterior under the
  hierarchical prior; one compiled program per tree shape, reused by every replication), central 90%
  intervals of its integer draws. GLS: the normal intervals of :func:`hierarchy.gls`. Coverage and width for
  tract totals, tract cells, and cells whose true count is at most 5 (near zero, where the discrete noise
  and non-negativity matter); the sampler's divergences, move rates, tract-total ESS and failed fits.
* ``scale`` -- for about 10^3 ... 10^6 noisy measurements: the time and peak traced memory
  (``tracemalloc``) of the tree GLS, the time of one gradient of the posterior's log density
  (jitted), and a short NUTS run where it fits; and the GLS of the largest file by state on Dask
  (the states are independent given their exact totals).

Run::

    nice .venv/bin/python benchmarks/hierarchy_calibration.py coverage --reps 100 --deadline 1900 --write
    .venv/bin/python benchmarks/hierarchy_calibration.py scale --write
"""

from __future__ import annotations

import os
import warnings

import _study
from _hierarchy_coverage import DESIGNS, coverage
from _hierarchy_scale import SIZES, scale


def main() -> None:
    ap = _study.parser(__doc__, write="flag", reps=100)
    ap.add_argument("study", choices=["coverage", "scale"])
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS), choices=list(DESIGNS))
    ap.add_argument("--deadline", type=float, default=3600.0, help="stop starting replications after this many s")
    ap.add_argument("--sizes", nargs="*", default=list(SIZES))
    ap.add_argument("--nuts-sizes", nargs="*", default=["1e3", "1e4"])
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.study == "coverage":
        coverage(args.designs, args.reps, _study.Run(args), args.deadline)
    else:
        scale(args.sizes, args.nuts_sizes, _study.Run(args))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    _study.main(main)
