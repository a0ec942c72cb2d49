"""The examples in the package's docstrings run and print what they say, in every module."""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import ebssim
import ebssim.advise
import ebssim.aws
import ebssim.check
import ebssim.fio
import ebssim.fit
import pytest

MODULES = [
    "ebssim",
    "ebssim._files",
    "ebssim._frames",
    "ebssim._lazy",
    "ebssim._limits",
    "ebssim._outputs",
    "ebssim._pickle",
    "ebssim._rds",
    "ebssim._repr",
    "ebssim._targets",
    "ebssim._units",
    "ebssim.advise",
    "ebssim.advise._advisor",
    "ebssim.advise._alarms",
    "ebssim.advise._cli",
    "ebssim.advise._plan",
    "ebssim.advise._words",
    "ebssim.aws",
    "ebssim.aws._cloudwatch",
    "ebssim.aws._ec2",
    "ebssim.aws._replay",
    "ebssim.analysis",
    "ebssim.burst",
    "ebssim.check",
    "ebssim.check._cli",
    "ebssim.check._junit",
    "ebssim.check._plan",
    "ebssim.check._schema",
    "ebssim.cli",
    "ebssim.cost",
    "ebssim.fleet",
    "ebssim.instances",
    "ebssim.k8s",
    "ebssim.latency",
    "ebssim.plot",
    "ebssim.prometheus",
    "ebssim.recording",
    "ebssim.results",
    "ebssim.simulation",
    "ebssim.stripes",
    "ebssim.trace",
    "ebssim.testing",
    "ebssim.volumes",
    "ebssim.workloads",
    "ebssim.fio",
    "ebssim.fio._files",
    "ebssim.fio._types",
    "ebssim.fio.cmdline",
    "ebssim.fio.cost",
    "ebssim.fio.histograms",
    "ebssim.fio.job",
    "ebssim.fio.jobfile",
    "ebssim.fio.logs",
    "ebssim.fio.normal",
    "ebssim.fio.options",
    "ebssim.fio.prediction",
    "ebssim.fio.report",
    "ebssim.fio.substitution",
    "ebssim.fio.values",
    "ebssim.fit",
    "ebssim.fit._cli",
    "ebssim.fit._fit",
    "ebssim.fit._inputs",
    "ebssim.fit._latency",
    "ebssim.fit._levels",
    "ebssim.fit._native",
    "ebssim.fit._predict",
    "ebssim.fit._range",
    "ebssim.fit._result",
    "ebssim.fit._rules",
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


def test_every_module_is_covered():
    found = {f"ebssim.{m.name}" for m in pkgutil.iter_modules(ebssim.__path__) if m.name != "_core"}
    found |= {f"ebssim.fio.{m.name}" for m in pkgutil.iter_modules(ebssim.fio.__path__)}
    found |= {f"ebssim.fit.{m.name}" for m in pkgutil.iter_modules(ebssim.fit.__path__)}
    found |= {f"ebssim.aws.{m.name}" for m in pkgutil.iter_modules(ebssim.aws.__path__)}
    found |= {f"ebssim.advise.{m.name}" for m in pkgutil.iter_modules(ebssim.advise.__path__)}
    found |= {f"ebssim.check.{m.name}" for m in pkgutil.iter_modules(ebssim.check.__path__)}
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
    for name in ("cost", "k8s", "advise", "advise._advisor", "advise._alarms", "advise._plan"):
        assert attempted[f"ebssim.{name}"] > 0, name
    # fio: the package docstring (predict), values, job files, command lines, logs and histograms.
    for name in ("fio", "fio.values", "fio.jobfile", "fio.cmdline", "fio.job", "fio.logs", "fio.histograms"):
        assert attempted[f"ebssim.{name}"] > 0, name
