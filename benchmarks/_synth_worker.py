"""Run one third-party DP synthesizer on a CSV of cell codes (called by compare_synthesizers.py).

Runs inside the synthesizer's own virtual environment (``.bench-envs/<tool>``), so it imports only
that tool, pandas and NumPy — never noiseaware. Usage::

    .bench-envs/smartnoise/bin/python benchmarks/_synth_worker.py mst  --eps 1 --seed 0 --n 2000 in.csv out.csv
    .bench-envs/smartnoise/bin/python benchmarks/_synth_worker.py aim  --eps 1 --seed 0 --n 2000 in.csv out.csv
    .bench-envs/datasynth/bin/python  benchmarks/_synth_worker.py privbayes --eps 1 --seed 0 --n 2000 in.csv out.csv

Prints one JSON line: the tool's version and the seconds it took.
"""

from __future__ import annotations

import json
import tempfile
import time
import warnings
from importlib import metadata
from pathlib import Path

import _study
import numpy as np
import pandas as pd


def run_snsynth(name: str, df: pd.DataFrame, eps: float, n: int, seed: int) -> pd.DataFrame:
    from snsynth import Synthesizer

    np.random.seed(seed)
    synth = Synthesizer.create(name, epsilon=eps, verbose=False)
    # categorical columns of integer codes; preprocessor_eps=0: the tool infers the categories present in the
    # data (a small advantage over DPCopula, whose domains are stated and whose empty cells get noise too)
    synth.fit(df, preprocessor_eps=0.0, categorical_columns=list(df.columns))
    return synth.sample(n)


def run_privbayes(df: pd.DataFrame, eps: float, n: int, seed: int) -> pd.DataFrame:
    from DataSynthesizer.DataDescriber import DataDescriber
    from DataSynthesizer.DataGenerator import DataGenerator

    with tempfile.TemporaryDirectory() as tmp:
        src, desc, out = (str(Path(tmp) / f) for f in ("in.csv", "desc.json", "out.csv"))
        df.to_csv(src, index=False)
        d = DataDescriber(category_threshold=int(df.nunique().max()) + 1)
        d.describe_dataset_in_correlated_attribute_mode(
            dataset_file=src,
            epsilon=eps,
            k=1,
            attribute_to_is_categorical={c: True for c in df.columns},
            seed=seed,
        )
        d.save_dataset_description_to_file(desc)
        g = DataGenerator()
        g.generate_dataset_in_correlated_attribute_mode(n, desc, seed=seed)
        g.save_synthetic_data(out)
        return pd.read_csv(out)


def main() -> None:
    ap = _study.parser(__doc__, write=None, seed="required")
    ap.add_argument("tool", choices=["mst", "aim", "privbayes"])
    ap.add_argument("--eps", type=float, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    a = ap.parse_args()
    df = pd.read_csv(a.src)
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if a.tool == "privbayes":
            out = run_privbayes(df, a.eps, a.n, a.seed)
            version = metadata.version("DataSynthesizer")
        else:
            out = run_snsynth(a.tool, df, a.eps, a.n, a.seed)
            version = metadata.version("smartnoise-synth")
    out[list(df.columns)].to_csv(a.dst, index=False)
    print(json.dumps({"tool": a.tool, "version": version, "seconds": time.time() - t0}))


if __name__ == "__main__":
    _study.main(main, configure_jax=False)  # never noiseaware: this runs in the synthesizer's environment
