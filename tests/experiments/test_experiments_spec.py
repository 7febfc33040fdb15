"""Experiment specs: file -> objects -> file round trips, and a precise error for every invalid field."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from nolo.papers.demo import demo_spec
from nolo.experiments.spec import ExperimentSpec, SpecError, dumps_toml


@pytest.fixture
def base():
    return demo_spec(rounds=100, record_every=10).to_dict()


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_round_trip_file_objects_file(tmp_path, base, suffix):
    base["grid"] = {"environment.noise.params.std": [0.25, 0.5], "learners[0].params.radius": [0.5, 1.0]}
    base["metrics"] = ["clean_loss", "regret", "queries"]
    spec = ExperimentSpec.from_dict(base)
    first = spec.to_file(tmp_path / f"a{suffix}")
    loaded = ExperimentSpec.from_file(first)
    assert loaded == spec
    second = loaded.to_file(tmp_path / f"b{suffix}")
    assert first.read_text() == second.read_text()
    assert loaded.to_dict() == base


def test_yaml_and_toml_give_the_same_objects(tmp_path, base):
    spec = ExperimentSpec.from_dict(base)
    assert ExperimentSpec.from_file(spec.to_file(tmp_path / "s.yaml")) == \
        ExperimentSpec.from_file(spec.to_file(tmp_path / "s.toml"))


def test_toml_writer_quotes_dotted_keys_and_writes_special_floats():
    import tomllib

    data = {"a": 1.5, "grid": {"x.y": [1, 2]}, "f": float("inf"), "items": [{"p": {"q": "s"}}]}
    assert tomllib.loads(dumps_toml(data)) == data


def _errors(data):
    with pytest.raises(SpecError) as info:
        ExperimentSpec.from_dict(data)
    return dict(info.value.errors), str(info.value)


CASES = [
    # (mutation, expected path, words the message must contain)
    (lambda d: d.update(rounds=0), "rounds", ["greater than or equal to 1", "got 0"]),
    (lambda d: d.update(protocol="foo"), "protocol", ["'noisy_input'", "'bandit'", "got 'foo'"]),
    (lambda d: d.update(colour="red"), "colour", ["unknown field"]),
    (lambda d: d.update(record_every="often"), "record_every", ["integer"]),
    (lambda d: d.update(seeds=[1, 1]), "seeds", ["distinct"]),
    (lambda d: d.update(seeds=[-1]), "seeds", ["non-negative"]),
    (lambda d: d.update(metrics=["clean_loss", "accuracy"]), "metrics[1]", ["'clean_loss'", "'time'", "accuracy"]),
    (lambda d: d.update(loss="squaredd"), "loss", ["'squared'", "'logistic'", "squaredd"]),
    (lambda d: d["regret"].update(radius=-1), "regret.radius", ["greater than 0"]),
    (lambda d: d["learners"][0]["params"].update(radius=-1.0), "learners[0].params.radius", ["radius", "> 0"]),
    (lambda d: d["learners"][0]["params"].update(etaa=1.0), "learners[0].params.etaa",
     ["unknown parameter", "radius, step, x_bound, y_bound, horizon, seed"]),
    (lambda d: d["learners"][1].update({"class": "nolo.papers.demo.Nope"}), "learners[1].class",
     ["unknown class"]),
    (lambda d: d["learners"][1].update({"class": "nolo.learners.ogd.ProjectedOGD"}), "learners[1].class",
     ["'full_information'", "'noisy_input'"]),
    (lambda d: d["learners"][1].update(name="unbiased"), "learners", ["unique", "unbiased"]),
    (lambda d: d["learners"][0].pop("name"), "learners[0].name", ["required"]),
    (lambda d: d["environment"]["noise"]["params"].update(std=-1), "environment.noise.params.std", ["std", ">= 0"]),
    (lambda d: d["environment"]["params"].update(dd=3), "environment.params.dd",
     ["unknown parameter", "d, x_radius, w_radius, target_std"]),
    (lambda d: d["environment"]["params"].update(d=0), "environment.params.d", ["integer >= 1", "got 0"]),
    (lambda d: d["environment"].update(generator="nope"), "environment.generator", ["'linear_regression'", "nope"]),
    (lambda d: d["environment"].update(dataset="mnist"), "environment", ["exactly one of"]),
    (lambda d: d["environment"].pop("noise"), "environment.noise", ["needs a noise model"]),
    (lambda d: d["environment"].update(feedback={"class": "FlipChannel", "params": {}}), "environment.feedback",
     ["only the bandit protocol"]),
    (lambda d: d.update(grid={"environment.noise.params.std": [0.1, -2.0]}), "grid.environment.noise.params.std[1]",
     ["std", ">= 0", "-2"]),
    (lambda d: d.update(grid={"environment.nosie.params.std": [0.1]}), "grid.environment.nosie.params.std",
     ["no field 'nosie'", "noise"]),
    (lambda d: d.update(grid={"rounds": []}), "grid", ["at least one value"]),
]


@pytest.mark.parametrize("mutate,path,words", CASES, ids=[c[1] + str(i) for i, c in enumerate(CASES)])
def test_every_invalid_field_names_its_path_and_what_is_allowed(base, mutate, path, words):
    data = copy.deepcopy(base)
    mutate(data)
    errors, text = _errors(data)
    assert path in errors, f"expected an error at {path}, got {errors}"
    for w in words:
        assert w in errors[path], (w, errors[path])
    assert f"  {path}: " in text


def test_several_errors_are_reported_together(base):
    base["rounds"] = -5
    base["protocol"] = "x"
    errors, _ = _errors(base)
    assert {"rounds", "protocol"} <= set(errors)


def test_file_errors(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("{}")
    with pytest.raises(SpecError, match="must end in .yaml, .yml or .toml"):
        ExperimentSpec.from_file(p)
    q = tmp_path / "s.yaml"
    q.write_text("rounds: [1, 2\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        ExperimentSpec.from_file(q)
    r = tmp_path / "s.toml"
    r.write_text("- 1\n")
    with pytest.raises(SpecError, match=r"<spec>: a spec must be a mapping|not valid TOML"):
        ExperimentSpec.from_file(r)


def test_grid_expands_to_the_cross_product(base):
    base["grid"] = {"environment.noise.params.std": [0.1, 0.5], "learners[0].params.radius": [0.5, 1.0]}
    settings = ExperimentSpec.from_dict(base).settings()
    assert [label for label, _ in settings] == ["std=0.1,radius=0.5", "std=0.1,radius=1", "std=0.5,radius=0.5",
                                                "std=0.5,radius=1"]
    last = settings[-1][1]
    assert last.environment.noise.params["std"] == 0.5 and last.learners[0].params["radius"] == 1.0
    assert last.learners[1].params["radius"] == 1.0 and not last.grid


def test_the_cli_reports_spec_errors_before_running(tmp_path, base):
    from click.testing import CliRunner

    from nolo.cli.experiments import run

    base["learners"][0]["params"]["radius"] = 0
    p = tmp_path / "bad.yaml"
    import yaml

    p.write_text(yaml.safe_dump(base))
    out = tmp_path / "runs"
    res = CliRunner().invoke(run, [str(p), "--out", str(out)])
    assert res.exit_code == 2
    assert "learners[0].params.radius: radius must be a real number > 0" in res.output
    assert not out.exists()


def _ogd_spec(constraint):
    return {
        "name": "ogd", "protocol": "full_information", "rounds": 50, "record_every": 10, "loss": "logistic",
        "regret": {"radius": 2.0},
        "environment": {"generator": "linear_classification", "params": {"d": 3}},
        "learners": [{"name": "ogd", "class": "nolo.learners.ProjectedOGD",
                      "params": {"loss": "logistic", "step": 0.5, "constraint": constraint}}],
    }


def test_nested_components_are_built_and_round_trip(tmp_path):
    from nolo.experiments.runner import run_learner
    from nolo.oco.projections import L2Ball

    spec = ExperimentSpec.from_dict(_ogd_spec({"class": "nolo.oco.L2Ball", "params": {"radius": 2.0}}))
    assert ExperimentSpec.from_file(spec.to_file(tmp_path / "o.toml")) == spec
    model_params = spec.learners[0].params
    assert model_params["constraint"] == {"class": "nolo.oco.L2Ball", "params": {"radius": 2.0}}
    from nolo.experiments.spec import build_params

    built = build_params(model_params)
    assert isinstance(built["constraint"], L2Ball) and built["constraint"].radius == 2.0
    frame = run_learner(spec, "ogd", 0).frame
    assert frame["t"].tolist() == [10, 20, 30, 40, 50] and np.isfinite(frame["regret"]).all()


@pytest.mark.parametrize("constraint,path,words", [
    ({"class": "nolo.oco.L2Bal", "params": {"radius": 2.0}}, "learners[0].params.constraint.class", ["unknown class"]),
    ({"class": "L2Ball", "params": {"radius": -2.0}}, "learners[0].params.constraint.params.radius",
     ["radius must be a real number > 0"]),
    ({"class": "L2Ball", "params": {"radiuss": 2.0}}, "learners[0].params.constraint.params.radiuss",
     ["unknown parameter of L2Ball", "allowed: radius"]),
])
def test_nested_component_errors_name_the_nested_field(constraint, path, words):
    errors, _ = _errors(_ogd_spec(constraint))
    assert path in errors, errors
    for w in words:
        assert w in errors[path]


# -- the specs shipped with nolo, bandit specs, datasets given by path -----------------------------------
def _shipped():
    from pathlib import Path

    import nolo.papers

    return sorted((Path(nolo.papers.__file__).parent / "specs").glob("*.yaml"))


def test_one_shipped_spec_per_paper_at_least():
    names = [p.stem for p in _shipped()]
    for paper in ("css10", "css11", "am", "oco", "demo"):
        assert any(n.startswith(paper) for n in names), names


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.stem)
def test_shipped_specs_load_and_run_a_few_rounds(path):
    from nolo.experiments.runner import run_learner

    spec = ExperimentSpec.from_file(path)
    small = ExperimentSpec.from_dict({**spec.to_dict(), "rounds": 60, "record_every": 30})
    for lr in small.learners:
        frame = run_learner(small, lr.name, 0).frame
        assert frame["t"].tolist() == [30, 60]
        metric = "error_rate" if small.protocol == "bandit" else "avg_clean_loss"
        assert np.isfinite(frame[metric]).all()


def _bandit_spec(dataset, **learner_params):
    return {"name": "b", "protocol": "bandit", "rounds": 3000, "record_every": 1000,
            "environment": {"dataset": dataset, "params": {"draw": "replace"},
                            "feedback": {"class": "FlipChannel", "params": {"rho0": 0.1, "rho1": 0.1}}},
            "learners": [{"name": "bpa", "class": "BPA", "params": {"gamma": 0.05, **learner_params}}]}


def test_a_bandit_spec_with_too_few_classes_is_rejected():
    from nolo.exceptions import ParameterError
    from nolo.experiments.runner import run_learner

    spec = ExperimentSpec.from_dict(_bandit_spec("digits", n_classes=3))
    with pytest.raises(ParameterError, match=r"learners\[0\]\.params\.n_classes: 'bpa' has n_classes=3.*10 classes"):
        run_learner(spec, "bpa", 0)


def test_a_bandit_spec_runs_compiled_on_the_environment_stream():
    # the spec's run is run_stream on the dataset with the run's first spawned generator as environment seed
    from nolo.datasets import load_dataset
    from nolo.experiments.runner import _learner_seed, run_learner
    from nolo.learners.bandit import BPA, run_stream
    from nolo.random import spawn

    spec = ExperimentSpec.from_dict(_bandit_spec("digits", n_classes=10))
    frame = run_learner(spec, "bpa", 4).frame
    X, y = load_dataset("digits")
    r = run_stream(BPA(n_classes=10, gamma=0.05, seed=_learner_seed(4)), X, y, 3000, 0.1, 0.1,
                   seed=spawn(4, 4)[0], checkpoints=[1000, 2000, 3000])
    assert frame["mistakes"].tolist() == r.played_mistakes.tolist()


def test_a_dataset_may_be_a_csv_or_libsvm_path(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from nolo.datasets import load_dataset
    from nolo.experiments.runner import run_learner

    X, y = load_dataset("iris", normalize=None)
    csv = tmp_path / "iris.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", fmt="%.6g")
    svm = tmp_path / "iris.svm"
    dump_svmlight_file(X, y, str(svm))
    finals = []
    for path in (csv, svm):
        spec = ExperimentSpec.from_dict(_bandit_spec(str(path), n_classes=3))
        finals.append(run_learner(spec, "bpa", 0).frame["mistakes"].tolist())
    assert finals[0] == finals[1]  # the same examples, rows scaled to unit norm either way
    errors, _ = _errors(_bandit_spec(str(tmp_path / "missing.csv"), n_classes=3))
    assert "no such file" in errors["environment.dataset"]
    errors, _ = _errors(_bandit_spec("not-a-dataset", n_classes=3))
    assert "or the path of a .csv or LIBSVM file" in errors["environment.dataset"]
    errors, _ = _errors({**_bandit_spec("iris", n_classes=3),
                         "environment": {"dataset": "iris", "params": {"draw": "shuffle"}}})
    assert "'replace', 'permute', 'cycle'" in errors["environment.params.draw"]


def test_a_full_information_spec_on_a_dataset_visits_it_in_order_with_draw_cycle(tmp_path):
    from test_experiments_runner import _run_keeping_learner  # registers ConstantPredictor

    X = np.array([[1.0], [-1.0], [2.0], [-2.0]])
    y = np.array([1, 1, 0, 0])
    path = tmp_path / "four.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%g")
    spec = ExperimentSpec.from_dict({
        "name": "c", "protocol": "full_information", "rounds": 8, "record_every": 4,
        "environment": {"dataset": str(path), "params": {"draw": "cycle", "normalize": None}},
        "learners": [{"name": "p", "class": "test_experiments_runner.ConstantPredictor", "params": {"w": 1.0}}]})
    frame, model = _run_keeping_learner(spec, "p", 0)
    assert model.targets_ == [1.0, 1.0, 0.0, 0.0] * 2
