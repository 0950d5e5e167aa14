"""One naming scheme for what fits and estimators return (README, "Results"; docs/architecture.md).

Posterior samplers return ``<Method>Fit``, a :class:`noiseaware.FitResult` (an ArviZ
``InferenceData``); every other estimator returns a ``<Method>Result`` record. Former names stay
importable for a while, with a ``FutureWarning`` naming the new one.
"""

from __future__ import annotations

import importlib
import inspect

import arviz as az
import pytest

import noiseaware as na

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
    assert len(found) >= 12
    for qual, cls in found:
        if issubclass(cls, na.FitResult):
            assert qual.endswith("Fit") and issubclass(cls, az.InferenceData), qual
        else:
            assert qual.endswith("Result"), f"{qual}: a non-sampler result is named <Method>Result"


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("noiseaware.dirichlet", "DirichletMLE", "DirichletMLEResult"),
        ("noiseaware.distributed", "FitOutcome", "FitManyResult"),
        ("noiseaware.copula", "SyntheticInference", "SyntheticInferenceResult"),
    ],
)
def test_former_names_warn_and_give_the_new_class(module: str, old: str, new: str) -> None:
    mod = importlib.import_module(module)
    with pytest.warns(FutureWarning, match=f"{module}.{old} is now {module}.{new}"):
        assert getattr(mod, old) is getattr(mod, new)
    with pytest.raises(AttributeError):
        getattr(mod, "NoSuchName")


def test_mean_composition_is_composition_everywhere() -> None:
    from noiseaware.dirichlet import ABCResult, DirichletFit, DPBootsResult, DPMCMCFit

    for cls in (ABCResult, DirichletFit, DPBootsResult, DPMCMCFit):
        assert isinstance(inspect.getattr_static(cls, "composition"), property), cls


def test_mean_composition_still_answers_with_a_warning() -> None:
    from noiseaware.dirichlet import ABCResult, DirichletFit, DPBootsResult

    class Stub:
        composition = "the draws"

    for cls in (ABCResult, DirichletFit, DPBootsResult):
        with pytest.warns(FutureWarning, match=f"{cls.__name__}.mean_composition is deprecated"):
            assert inspect.getattr_static(cls, "mean_composition").fget(Stub()) == "the draws"


def test_the_dapper_table_has_a_name_a_user_can_look_up() -> None:
    from noiseaware.datasets import ucb_admissions

    assert int(ucb_admissions("dapper").to_numpy().sum()) == 400
    with pytest.warns(FutureWarning, match="which='seed001' is now which='dapper'"):
        old = ucb_admissions("seed001")
    assert old.equals(ucb_admissions("dapper"))
