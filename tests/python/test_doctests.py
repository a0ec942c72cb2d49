"""The examples in the package's docstrings run and print what they say (fio/ has its own tests)."""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import ebssim
import ebssim.aws as aws
import pytest

MODULES = [
    "ebssim",
    "ebssim._limits",
    "ebssim._units",
    "ebssim.aws",
    "ebssim.aws._cloudwatch",
    "ebssim.aws._ec2",
    "ebssim.aws._replay",
    "ebssim.burst",
    "ebssim.cli",
    "ebssim.instances",
    "ebssim.latency",
    "ebssim.plot",
    "ebssim.simulation",
    "ebssim.trace",
    "ebssim.volumes",
    "ebssim.workloads",
]

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(name: str) -> doctest.TestResults:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = io.StringIO()
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=out.write)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, out.getvalue()
    return results


def test_every_module_but_fio_is_covered():
    found = {f"ebssim.{m.name}" for m in pkgutil.iter_modules(ebssim.__path__) if m.name not in ("fio", "_core")}
    found |= {f"ebssim.aws.{m.name}" for m in pkgutil.iter_modules(aws.__path__)}
    assert found | {"ebssim"} == set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    _run(name)


def test_the_documented_modules_have_examples():
    # The package docstring, Simulation and simulate, real(), Limits, OpenLoop.constant and
    # instance() each show at least one.
    attempted = {name: _run(name).attempted for name in MODULES}
    for name in ("ebssim", "ebssim.simulation", "ebssim._units", "ebssim._limits", "ebssim.workloads"):
        assert attempted[name] > 0, name
    assert attempted["ebssim.instances"] > 0
