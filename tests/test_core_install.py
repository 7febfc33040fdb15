"""The core install (``pip install nolo``, no extras) gives the learners, estimators and data loaders, and a feature
that needs an extra says so in one line naming the pip command.

Without a network: each check runs in a fresh interpreter in which the extras' packages are blocked
(``sys.modules[name] = None`` makes ``import name`` raise ImportError, as if it were not installed).
"""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from nolo._extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

#: what the core install must not pull in (the platform's, the cluster's, plotting's, HDF5's, the CLI's packages)
BLOCKED = ("dask", "distributed", "pydantic", "matplotlib", "h5py", "yaml", "jinja2", "docutils", "pyarrow", "tqdm",
           "click", "rich", "pooch")
#: the distributions the core install may name: the numerical stack and what the learners' tables need
CORE = {"numpy", "scipy", "numba", "scikit-learn", "joblib", "pandas"}
#: extra -> the import names of its distributions (pyproject names distributions, nolo._extras import names)
IMPORT_NAME = {"pyyaml": "yaml", "dask[distributed]": "dask", "tomli-w": "tomli_w"}


def _run(code: str, blocked=BLOCKED) -> subprocess.CompletedProcess:
    prelude = f"import sys\nfor _m in {tuple(blocked)!r}:\n    sys.modules[_m] = None\nsys.path.insert(0, {str(SRC)!r})\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def _names(requirements) -> set[str]:
    return {r.split(">")[0].split("=")[0].split("<")[0].split(";")[0].strip().lower() for r in requirements}


def test_core_dependencies_are_the_numerical_stack_only():
    assert _names(PYPROJECT["project"]["dependencies"]) <= CORE


def test_every_extra_of_nolo_extras_is_a_pyproject_extra_with_its_packages():
    extras = PYPROJECT["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert extra in extras, extra
        provided = {IMPORT_NAME.get(n, n) for n in _names(extras[extra])}
        assert set(modules) - {"distributed"} <= provided, (extra, modules, provided)
    (everything,) = extras["all"]
    assert everything.startswith("nolo[") and set(everything[5:-1].split(",")) == set(EXTRAS)
    assert "nolo[all]" in extras["test"]  # .ci/run's `pip install -e '.[test]'` installs every extra


def test_core_imports_work_without_the_extras():
    r = _run("""
        import nolo.learners.bandit
        from nolo.learners.bandit import default_learner, run_stream
        from nolo.sklearn_api import EIVRegressor
        from nolo.estimators import zeta
        from nolo.datasets import load_dataset, load_csv, load_usps_h5
        from nolo.offpolicy import read_log, evaluate
        import nolo.noise_rates
        X, y = load_dataset("iris")
        assert X.shape == (150, 4)
        for m in ("dask", "distributed", "pydantic", "matplotlib", "h5py", "click"):
            assert sys.modules[m] is None, m  # still blocked: nothing tried to import them
        print("core ok")
    """)
    assert r.returncode == 0, r.stderr
    assert "core ok" in r.stdout


@pytest.mark.parametrize("code, extra", [
    ("import nolo.experiments", "experiments"),
    ("from nolo.experiments.spec import load_spec", "experiments"),
    ("from nolo.datasets import load_usps_h5; load_usps_h5('usps.h5')", "hdf5"),
    ("from nolo.datasets.fetch import fetch; fetch('mnist')", "fetch"),
    ("from nolo._extras import require; require('dask.distributed', 'dask', 'backend dask')", "dask"),
    ("import pandas as pd; from nolo.offpolicy.logs import write_log; "
     "write_log('never-written.parquet', pd.DataFrame({'played': [0], 'propensity': [1.0], 'bit': [1]}))", "parquet"),
])
def test_a_missing_extra_is_one_line_naming_the_pip_command(code, extra):
    r = _run(f"""
        from nolo.exceptions import MissingExtraError
        try:
            {code}
        except MissingExtraError as exc:
            assert isinstance(exc, ImportError)
            print(exc)
        else:
            raise SystemExit("no error")
    """)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert "\n" not in line and line.endswith(f"pip install 'nolo[{extra}]'"), line


def test_the_nolo_command_without_the_cli_extra_is_one_line():
    r = _run("from nolo.cli import main; main()")
    assert r.returncode == 1
    assert r.stderr.strip() == ("the nolo command line needs click, rich, tqdm, which the core install leaves out: "
                                "pip install 'nolo[cli]'")


def test_a_platform_command_without_the_experiments_extra_is_one_line():
    """With the cli extra but not the platform's: ``nolo --help`` still lists every command, and a platform command
    fails in one line naming the pip command."""
    blocked = tuple(m for m in BLOCKED if m not in EXTRAS["cli"])
    r = _run("from nolo.cli import main; main(['--help'])", blocked)
    assert r.returncode == 0, r.stderr
    assert "reproduce" in r.stdout and "nolo[experiments]" in r.stdout
    for argv in (["reproduce", "all", "--quick", "--out", "nolo-out"], ["demo"], ["plot", "."]):
        r = _run(f"from nolo.cli import main; main({argv!r})", blocked)
        assert r.returncode == 1, (argv, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith("pip install 'nolo[experiments]'"), (argv, r.stderr)


def test_the_check_sees_a_missing_package():
    """Negative control: a blocked package of the core is reported by the same helper."""
    r = _run("""
        from nolo._extras import EXTRAS, missing
        EXTRAS["probe"] = ("dask", "numpy")
        print(missing("probe"))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['dask']"


def test_every_data_file_of_the_package_is_in_the_wheel():
    """Each non-Python file under src/nolo (templates, the papers' texts and specs) matches a package-data pattern:
    a file left out works from a checkout and is missing from ``pip install .``."""
    import fnmatch

    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["nolo"]
    src = ROOT / "src" / "nolo"
    files = [p.relative_to(src).as_posix() for p in src.rglob("*")
             if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert "papers/papers.yaml" in files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
