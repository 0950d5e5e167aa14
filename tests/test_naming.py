"""One naming scheme for what fits and estimators return (README, "Results"; docs/architecture.md).

Posterior samplers return the host stack's own container (``xarray.DataTree`` under ArviZ 1,
``InferenceData`` under ArviZ 0.x), never a class of the package: no ``<Method>Fit`` class is
exported. Every other estimator returns a ``<Method>Result`` record. Former names of the records
stay importable for a while, with a ``FutureWarning`` naming the new one.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

import noiseaware as na
from noiseaware.exceptions import NoiseawareValueError

MODULES = ("noiseaware.copula", "noiseaware.dirichlet", "noiseaware.covariance", "noiseaware.hierarchy",
           "noiseaware.augment", "noiseaware.distributed", "noiseaware.audit")


def _result_types() -> list[tuple[str, type]]:
    out = []
    for name in MODULES:
        mod = importlib.import_module(name)
        for attr in mod.__all__:
            obj = getattr(mod, attr)
            if inspect.isclass(obj) and (attr.endswith(("Fit", "Result", "MLE", "Outcome", "Inference"))):
                out.append((f"{name}.{attr}", obj))
    return out


def test_result_types_follow_the_scheme() -> None:
    found = _result_types()
    assert len(found) >= 10
    for qual, _ in found:
        assert qual.endswith("Result"), f"{qual}: a fit returns the host's container, any other result <Method>Result"
    # the former result classes of the samplers are gone, not kept as a second container type
    for gone in ("FitResult", "PooledDraws"):
        with pytest.raises(AttributeError):
            getattr(na, gone)


@pytest.mark.parametrize(
    ("module", "old"),
    [
        ("noiseaware.dirichlet", "DirichletMLE"),
        ("noiseaware.distributed", "FitOutcome"),
        ("noiseaware.copula", "SyntheticInference"),
        ("noiseaware.config", "configure_jax"),
    ],
)
def test_former_names_are_gone(module: str, old: str) -> None:
    """Renamed before 1.0 without aliases (CHANGELOG.md lists each rename)."""
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError):
        getattr(mod, old)


def test_mean_composition_is_composition_everywhere() -> None:
    """The records' property and the samplers' posterior variable have one name, ``composition``."""
    from noiseaware import dirichlet
    from noiseaware.dirichlet import ABCResult, DPBootsResult

    for cls in (ABCResult, DPBootsResult):
        assert isinstance(inspect.getattr_static(cls, "composition"), property), cls
    for fit in (dirichlet.fit, dirichlet.dpmcmc):
        assert "``composition``" in inspect.getdoc(fit), fit.__name__


def test_mean_composition_is_gone() -> None:
    from noiseaware.dirichlet import ABCResult, DPBootsResult

    for cls in (ABCResult, DPBootsResult):
        assert not hasattr(cls, "mean_composition"), cls


def test_the_dapper_table_has_a_name_a_user_can_look_up() -> None:
    from noiseaware.datasets import ucb_admissions

    assert int(ucb_admissions("dapper").to_numpy().sum()) == 400
    with pytest.raises(NoiseawareValueError, match="which"):
        ucb_admissions("seed001")  # the former name, gone before 1.0 (CHANGELOG.md)
