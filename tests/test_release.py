"""The Release record: consistency checks, exact JSON round trip, errors that name the field."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import noiseaware as na
from noiseaware.exceptions import NoiseawareValueError, PrivacyWarning, ReleaseFormatError

X = np.random.default_rng(0).normal(size=(41, 4))


def _releases() -> list[na.Release]:
    """One simulation release per statistic/mechanism (seeded)."""
    rng = np.random.default_rng(1)
    out = [
        na.privatize(X, statistic="median_pairs", epsilon=0.7, mechanism=m, rng=rng)
        for m in ("geometric", "tgm", "btgm", "rgm")
    ]
    out.append(
        na.privatize(
            np.array([[46, 118], [109, 127]]), statistic="counts", sigma=6.25, sensitivity=2**0.5, n=400, rng=rng
        )
    )
    out.append(na.privatize(np.array([3, 1, 4]), statistic="counts", epsilon=1.0, sensitivity=2, rng=rng))
    out.append(na.privatize(np.array([0.1, -2.5]), statistic="vector", epsilon=0.3, sensitivity=1.0, rng=rng))
    out.append(na.privatize(np.array([0.1, -2.5]), statistic="vector", rho=0.3, sensitivity=1.0, rng=rng))
    out.append(na.privatize(np.array([[0, 1], [1, 1]]), statistic="randomized_response", p=0.75, categories=2, rng=rng))
    return out


def _releases_secure() -> list[na.Release]:
    """The same releases drawn securely (OpenDP)."""
    out = [
        na.privatize(X, statistic="median_pairs", epsilon=0.7, mechanism=m) for m in ("geometric", "tgm", "btgm", "rgm")
    ]
    out.append(
        na.privatize(np.array([[46, 118], [109, 127]]), statistic="counts", sigma=6.25, sensitivity=2**0.5, n=400)
    )
    out.append(na.privatize(np.array([3, 1, 4]), statistic="counts", epsilon=1.0, sensitivity=2))
    out.append(na.privatize(np.array([0.1, -2.5]), statistic="vector", epsilon=0.3, sensitivity=1.0))
    out.append(na.privatize(np.array([0.1, -2.5]), statistic="vector", rho=0.3, sensitivity=1.0))
    out.append(na.privatize(np.array([[0, 1], [1, 1]]), statistic="randomized_response", p=0.75, categories=2))
    return out


@pytest.mark.parametrize("rel", _releases_secure(), ids=lambda r: f"{r.statistic}-{r.mechanism.family}")
def test_json_round_trip_is_exact(rel: na.Release, tmp_path) -> None:
    path = tmp_path / "r.json"
    rel.to_json(path)
    back = na.Release.from_json(path)
    assert back == rel
    assert back.values.dtype == rel.values.dtype
    assert np.array_equal(back.values, rel.values)
    assert back.mechanism == rel.mechanism
    assert back.guarantee == rel.guarantee
    assert back.to_json() == rel.to_json()


def test_release_is_frozen() -> None:
    rel = _releases()[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.n = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        rel.values[0] = 1
    with pytest.raises(TypeError):
        rel.metadata["p"] = 3  # type: ignore[index]


def _dict() -> dict:
    return _releases()[0].to_dict()  # a simulation release: the loader warns, _load silences it


def _load(d: dict) -> na.Release:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # the record is a simulation release
        return na.Release.from_json(json.dumps(d))


@pytest.mark.parametrize("rel", _releases(), ids=lambda r: f"{r.statistic}-{r.mechanism.family}")
def test_simulation_round_trip_needs_opt_in_and_warns(rel: na.Release, tmp_path) -> None:
    path = tmp_path / "r.json"
    with pytest.raises(NoiseawareValueError, match="SIMULATION"):
        rel.to_json(path)
    with pytest.raises(NoiseawareValueError, match="allow_simulation"):
        rel.to_json()
    assert not path.exists()
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        rel.to_json(path, allow_simulation=True)
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        back = na.Release.from_json(path)
    assert back == rel and not back.secure


@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda d: d.pop("mechanism"), "mechanism"),
        (lambda d: d.pop("values"), "values"),
        (lambda d: d.update(values="abc"), "values"),
        (lambda d: d.update(values=[1.5] * 6), "values"),
        (lambda d: d.update(shape=[7]), "values"),
        (lambda d: d.update(dtype="complex"), "dtype"),
        (lambda d: d.update(labels=[["a", "b"]]), "labels"),
        (lambda d: d.update(labels=[[1, 2]] * 6), "labels"),
        (lambda d: d.update(n=-3), "n"),
        (lambda d: d.update(secure="yes"), "secure"),
        (lambda d: d.update(schema="other"), "schema"),
        (lambda d: d.update(schema_version=99), "schema_version"),
        (lambda d: d.update(composition="magic"), "composition"),
        (lambda d: d["mechanism"].update(family="nope"), "mechanism.family"),
        (lambda d: d["mechanism"].update(scale=-1.0), "mechanism"),
        (lambda d: d["mechanism"].pop("scale"), "mechanism.scale"),
        (lambda d: d["mechanism"].update(bogus=1), "mechanism"),
        (lambda d: d["guarantee"].update(epsilon=2.0), "guarantee"),
        (lambda d: d["guarantee"].update(epsilon="x"), "guarantee"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.update(metadata=[1]), "metadata"),
    ],
)
def test_malformed_or_inconsistent_file_names_the_field(edit, field) -> None:
    d = _dict()
    edit(d)
    with pytest.raises(ReleaseFormatError, match=field.replace(".", r"\.")):
        _load(d)


def test_inconsistent_scale_and_guarantee_is_rejected() -> None:
    d = _dict()
    d["mechanism"]["scale"] = d["mechanism"]["scale"] * 1.01  # noise no longer matches the claim
    with pytest.raises(ReleaseFormatError, match=r"guarantee.*inconsistent"):
        _load(d)


def test_not_json() -> None:
    with pytest.raises(ReleaseFormatError, match="not valid JSON"):
        na.Release.from_json("{not json")


def test_components_compose_sequentially() -> None:
    x = np.random.default_rng(3).dirichlet([2.0, 3.0, 4.0], size=300)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0)
    assert len(rel.components) == 1
    assert rel.guarantee.isclose(rel.components[0].guarantee.compose(rel.mechanism.guarantee()))
    assert na.Release.from_json(rel.to_json()) == rel
    # the same parts claiming only the main mechanism's epsilon: the component was not counted
    with pytest.raises(ReleaseFormatError, match="guarantee"):
        dataclasses.replace(rel, guarantee=rel.mechanism.guarantee())


def test_unknown_statistic_is_refused() -> None:
    rel = _releases_secure()[5]
    with pytest.raises(ReleaseFormatError, match="statistic"):
        dataclasses.replace(rel, statistic="custom")


def test_summary_mentions_guarantee_and_simulation() -> None:
    rel = _releases()[0]
    text = rel.summary()
    assert "0.7-DP" in text and "SIMULATION" in text and "x0 x x1" in text
