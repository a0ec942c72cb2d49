"""Every public result type reads in Jupyter: ``_repr_html_`` gives an HTML table and ``repr``
at most 400 characters that say what it is in human units, on a real instance of each.

Which types are results, by rule rather than by a hand list that can miss one:

1. the *public types* are the classes of the package named in the ``__all__`` of a public module
   (``ebssim`` and every module of the package whose dotted name has no part starting with
   ``_``: ``ebssim.fio.report``, ``ebssim.fit``, ...);
2. a public type is *returned* when the return annotation of a public function of a public
   module, or of a public method, property or ``__getitem__`` of a public type, names it (a
   compiled property's signature, from its docstring, counts), or when a field of a returned
   type that is not configuration names it (``VolumeResult.totals``, ``FleetAdvice.volumes``,
   ``FioPrediction.jobs``);
3. the results are the returned public types less :data:`CONFIGURATION` (what a user builds
   and passes in, each with its reason) and exceptions and warnings.

Each result needs a factory in :data:`FACTORIES` that makes a real one: a new result type fails
``test_every_result_type_has_a_factory`` until it has one, and then the checks below.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Set, Tuple

import ebssim
import ebssim.advise
import ebssim.aws
import ebssim.check
import ebssim.fio
import ebssim.fit
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"

#: Types a user builds and passes in, described by their reprs elsewhere (tests/python/test_api.py,
#: test_volume_types.py): not results. Each with why.
CONFIGURATION: Dict[str, str] = {
    "Volume": "a volume's configuration (gp2(100), volume_from_spec)",
    "VolumeTypeInfo": "the core's table of volume types, what a configuration may be",
    "ServiceTime": "a volume's configured service time (Volume.service)",
    "ClosedLoop": "a workload",
    "OpenLoop": "a workload",
    "PiecewiseOpenLoop": "a workload",
    "PhasedClosedLoop": "a workload",
    "SharedClosedLoops": "a workload",
    "Idle": "a workload",
    "Workload": "the union of the workloads",
    "Instance": "an instance type's configuration (instance('m5.large'))",
    "Catalog": "the catalog the instance types are read from",
    "Recording": "what a run records",
    "Limits": "the bounds on one call (ebssim.limits)",
    "Simulation": "the simulator that runs (its repr is in test_api.py)",
    "LatencyModel": "the latency model's parameters, passed to latency_percentiles(model=)",
    "FioJob": "a parsed fio job, the input of predict",
    "FioJobSet": "parsed fio jobs, the input of predict",
    "FioLoad": "a fio job as load, the input of the simulation",
    "BatchJob": "the stated load advise() replays",
    "Attachment": "where a volume is attached, the input of simulate_fleet and replay",
    "FleetVolume": "one volume of a fleet as input (a Dask bag item)",
    "Claim": "a Kubernetes volume read from manifests, the input of advice_manifests",
    "Plan": "a capacity plan's criteria",
    "CapacityPlan": "a capacity plan read from YAML, the input of its run (ebssim check)",
}


def _public_modules() -> List[types.ModuleType]:
    mods = [ebssim]
    for info in pkgutil.walk_packages(ebssim.__path__, "ebssim."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        mods.append(importlib.import_module(info.name))
    return mods


def _exported(mod: types.ModuleType) -> Iterator[Tuple[str, Any]]:
    for name in getattr(mod, "__all__", ()):
        yield name, getattr(mod, name)


def _public_types() -> Dict[str, type]:
    out: Dict[str, type] = {}
    for mod in _public_modules():
        for _, obj in _exported(mod):
            if isinstance(obj, type) and obj.__module__.startswith("ebssim"):
                out[obj.__name__] = obj
    return out


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_PYBIND_RETURN = re.compile(r"\)\s*->\s*(.+)$")


def _annotation_text(fn: Any) -> str:
    """The return annotation of ``fn`` as text (a compiled function's from its signature line)."""
    ann = getattr(fn, "__annotations__", {}).get("return")
    if ann is not None:
        return ann if isinstance(ann, str) else repr(ann)
    doc = (getattr(fn, "__doc__", None) or "").strip().split("\n", 1)[0]
    m = _PYBIND_RETURN.search(doc)
    return m.group(1) if m else ""


def _named(text: str, public: Dict[str, type]) -> Set[str]:
    return {tok.rsplit(".", 1)[-1] for tok in _TOKEN.findall(text)} & set(public)


def _returns_of_type(cls: type, public: Dict[str, type]) -> Set[str]:
    found: Set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("ebssim"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") and name != "__getitem__":
                continue
            fn = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
            if callable(fn):
                found |= _named(_annotation_text(fn), public)
    return found


def _fields_of(cls: type, public: Dict[str, type]) -> Set[str]:
    """The public types the annotated attributes of ``cls`` hold (a dataclass's fields, or a
    class's annotated attributes)."""
    found: Set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("ebssim"):
            for name, ann in vars(klass).get("__annotations__", {}).items():
                if not name.startswith("_"):
                    found |= _named(ann if isinstance(ann, str) else repr(ann), public)
    return found


def result_types() -> Dict[str, type]:
    """The public result types, by the rule in the module's docstring."""
    public = _public_types()
    returned: Set[str] = set()
    for mod in _public_modules():
        for _, obj in _exported(mod):
            if inspect.isfunction(obj):
                returned |= _named(_annotation_text(obj), public)
    for cls in public.values():
        returned |= _returns_of_type(cls, public)
    todo = [n for n in returned if n not in CONFIGURATION]
    while todo:
        for n in _fields_of(public[todo.pop()], public) - returned:
            returned.add(n)
            if n not in CONFIGURATION:
                todo.append(n)
    return {
        n: public[n]
        for n in sorted(returned)
        if n not in CONFIGURATION and not issubclass(public[n], (BaseException, Warning))
    }


# --------------------------------------------------------------------------------------------
# A real instance of each result type
# --------------------------------------------------------------------------------------------


def _gp2_cliff() -> ebssim.VolumeResult:
    # 100 GiB gp2 under 32 x 4 KiB: 5.4e6 / (3,000 - 300) = 2,000 s of burst, then 300 IOPS.
    return ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)


def _on_m5_large() -> ebssim.RunResult:
    sim = ebssim.Simulation([ebssim.gp3(1000, iops=16000, throughput_mib_s=1000)] * 2, instance="m5.large")
    return sim.run([ebssim.ClosedLoop(64, "16k")] * 2, duration_s=3600)


def _fleet_advice() -> Any:
    from ebssim.advise import advise

    return advise({"vol-1": ebssim.gp2(100), "vol-2": ebssim.gp2(1000)}, "us-east-1")


def _comparison() -> Any:
    import ebssim.aws as aws

    d = DATA / "aws"
    metrics = aws.read_metric_data(
        d / "cloudwatch-get-metric-data.pages.moto.json", queries=d / "cloudwatch-get-metric-data.queries.json"
    )
    vols = aws.read_volumes(d / "ec2-describe-volumes.moto.json")
    att = aws.read_instances(d / "ec2-describe-instances.moto.json")
    res = aws.replay(metrics, vols, att, gaps="zero")
    vid = next(v for v in res if vols[v].type == "gp2")
    return aws.compare(res[vid], metrics, vid)


def _prediction() -> Any:
    from ebssim.fio import predict

    run = "fio --name=rr --filename=/dev/x --rw=randrw --bs=4k --ioengine=libaio --iodepth=32 --runtime=2700"
    return predict([run], {"/dev/x": ebssim.gp2(100)}, log_dir=None)


def _fit() -> Any:
    from ebssim import fit

    return fit.fit([DATA / "fit" / "02_gp2_perio"], type="gp2", rate_limits="volume")


def _cliff_prediction() -> Any:
    from ebssim import fio, fit

    head = fio.read_log(DATA / "fit" / "02_gp2_perio" / "perio_iops.1.log")
    return fit.predict_cliff([head], type="gp2", size_gib=100, burst_balance_pct=0.5)


def _loop_result() -> Any:
    w = ebssim.SharedClosedLoops([ebssim.ClosedLoop(8, "16k"), ebssim.ClosedLoop(24, "16k")])
    return w.split(ebssim.simulate(ebssim.gp2(100), w, duration_s=2700))[0]


def _fleet() -> Any:
    from ebssim.fleet import simulate_fleet

    demand = np.full(7200, 1200.0)
    loads = {v: ebssim.OpenLoop(demand, demand * 4096) for v in ("db", "logs")}
    return simulate_fleet({"db": ebssim.gp2(100), "logs": ebssim.gp3(100)}, loads)


def _plan() -> Any:
    from ebssim.testing import check_plan

    return check_plan(_gp2_cliff(), p99_ms=20, no_cliff=True)


FACTORIES: Dict[str, Callable[[], Any]] = {
    "VolumeResult": _gp2_cliff,
    "RunResult": _on_m5_large,
    "InstanceResult": lambda: _on_m5_large().instance,
    "WindowStats": lambda: _gp2_cliff().window(2000, 2700),
    "VolumeSummary": lambda: _gp2_cliff().summary(),
    "LatencyPercentiles": lambda: _gp2_cliff().latency_percentiles(),
    "Cliff": lambda: _gp2_cliff().cliffs[0],
    "Span": lambda: ebssim.analysis.spans_above_latency(_gp2_cliff(), 20)[0],
    "VolumeTotals": lambda: _gp2_cliff().totals,
    "VolumeSeries": lambda: _gp2_cliff().series,
    "CliffEpisode": lambda: _gp2_cliff().totals.cliffs[0],
    "InstanceTotals": lambda: _on_m5_large().instance.totals,
    "InstanceSeries": lambda: _on_m5_large().instance.series,
    "ClosedLoopRate": lambda: ebssim.closed_loop_rate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k")),
    "LoopResult": _loop_result,
    "FleetResult": _fleet,
    "FleetAdvice": _fleet_advice,
    "VolumeAdvice": lambda: _fleet_advice()["vol-1"],
    "Scenario": lambda: _fleet_advice()["vol-1"].advice,
    "BurstBalanceAlarm": lambda: ebssim.advise.burst_balance_alarm(ebssim.gp2(100)),
    "ModifyPlan": lambda: ebssim.advise.modify_volume_plan(_fleet_advice()),
    "Comparison": _comparison,
    "FioResult": lambda: ebssim.fio.read_json(
        DATA / "fio" / "02a_randread16k_psync_nj4" / "02a_randread16k_psync_nj4.json"
    ),
    "FioPrediction": _prediction,
    "JobPrediction": lambda: _prediction().jobs[0],
    "LatencyStats": lambda: _prediction().jobs[0].by_direction["read"],
    "Fit": _fit,
    "Parameter": lambda: _fit().parameters[0],
    "Phase": lambda: _fit().phases[0],
    "CliffPrediction": _cliff_prediction,
    "Cost": lambda: ebssim.cost.monthly_cost(ebssim.io2(1000, 70000), "us-east-1"),
    "RegionPrices": lambda: ebssim.cost.prices("us-east-1"),
    "PlanReport": _plan,
    "Check": lambda: _plan().checks[0],
    "PlanOutcome": lambda: ebssim.check.read_plan(REPO / "examples" / "plans" / "nightly-gp3-fails.yaml").run(),
}


def test_the_rule_finds_the_results_the_issue_names() -> None:
    # The rule is not vacuous: the types issue 22 names, and the records inside results.
    found = result_types()
    for name in (
        "FleetResult",
        "FleetAdvice",
        "Comparison",
        "FioResult",
        "FioPrediction",
        "WindowStats",
        "Cliff",
        "VolumeResult",
        "Fit",
        "CliffPrediction",
        "ClosedLoopRate",
        "PlanReport",
        "LatencyPercentiles",
        "VolumeTotals",
        "Scenario",
        "JobPrediction",
    ):
        assert name in found, name
    assert not set(found) & set(CONFIGURATION)


def test_every_result_type_has_a_factory() -> None:
    missing = sorted(set(result_types()) - set(FACTORIES))
    assert not missing, f"result types without a factory in FACTORIES (or a reason in CONFIGURATION): {missing}"


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_result_reads_in_jupyter(name: str) -> None:
    obj = FACTORIES[name]()
    assert type(obj).__name__ == name
    text = repr(obj)
    assert len(text) <= 400, (len(text), text)
    assert " object at 0x" not in text and "array(" not in text, text
    assert "\n" not in text, text
    html = obj._repr_html_()
    assert isinstance(html, str) and html.lstrip().startswith(("<table", "<div")) and "</table>" in html, html
    assert "array(" not in html and " object at 0x" not in html


def test_latency_reads_in_human_units() -> None:
    # A replay whose demand outruns the volume: a 100 GiB gp2 at 300 IOPS with 1,200 arriving
    # each second for an hour after its bucket is gone queues 900 a second; its I/Os wait
    # minutes, and the reprs say minutes, not millions of ms.
    demand = np.full(3600, 1200.0)
    r = ebssim.simulate(ebssim.gp2(100, burst_balance_pct=0), ebssim.OpenLoop(demand, demand * 4096))
    assert r.mean_latency_ms > 60_000
    assert re.search(r"[\d.]+ min mean latency", repr(r)), repr(r)
    assert re.search(r"\d{5,}(\.\d+)? ms", repr(r)) is None, repr(r)
    assert " min mean latency" in repr(r.summary())
    assert " min mean latency" in repr(r.window(0, 3600))
    p = r.latency_percentiles([50, 99])
    assert re.fullmatch(r"LatencyPercentiles\(p50 [\d.]+ (min|h), p99 [\d.]+ (min|h)\)", repr(p)), repr(p)


def test_latency_percentiles_are_still_a_dict_of_ms() -> None:
    # Old callers: a dict of plain floats in ms by percentile, equal to the dict it was.
    r = _gp2_cliff()
    p = r.latency_percentiles([50, 99])
    assert isinstance(p, dict) and list(p) == [50.0, 99.0]
    assert all(type(v) is float for v in p.values())
    assert p == dict(p) and {k: round(v, 6) for k, v in p.items()} == {k: round(p[k], 6) for k in (50.0, 99.0)}
    # p99 after the cliff: past 32 / 300 IOPS = 106.7 ms (the mean there) in ms, not seconds.
    assert 100 < p[99.0] < 1000
    assert repr(p).startswith("LatencyPercentiles(p50 ") and repr(p).endswith(" ms)")


def test_open_loop_repr_has_its_step_start_and_iops() -> None:
    import pandas as pd

    # 67,170 I/Os per minute are 67,170 / 60 = 1,119.5 IOPS.
    ops = np.array([67170.0, 67170.0, 134340.0])
    w = ebssim.OpenLoop(ops, ops * 16384, dt=60, start=pd.Timestamp("2025-06-02 08:00"))
    text = repr(w)
    assert text.startswith("OpenLoop(3 steps of 60 s (3 min) from 2025-06-02T08:00:00, 268,680 I/Os, ")
    # mean (67,170 + 67,170 + 134,340) / 3 / 60 = 1,492.7; peak 134,340 / 60 = 2,239
    assert "1,493 IOPS mean, 2,239 peak" in text and "per step" not in text


def test_the_run_repr_stays_short_for_many_volumes() -> None:
    sim = ebssim.Simulation([ebssim.gp2(100)] * 40)
    run = sim.run([ebssim.ClosedLoop(4, "4k")] * 40, duration_s=10)
    assert len(repr(run)) <= 400 and repr(run).startswith("RunResult(40 volumes, 10 steps of 1 s (10 s); [0] gp2 100")
    assert repr(run).endswith("; ...)")


# --------------------------------------------------------------------------------------------
# The progress bar: imported only when asked, quiet without ipywidgets
# --------------------------------------------------------------------------------------------


def _jupyter_without_ipywidgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """What tqdm.auto sees in a Jupyter kernel where ipywidgets is not installed."""
    kernel = types.ModuleType("ipykernel.zmqshell")
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", kernel)
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets: ImportError
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    for key in [k for k in __import__("os").environ if k == "QT_API" or k.startswith("SPYDER")]:
        monkeypatch.delenv(key)


@pytest.mark.parametrize("progress", [False, True])
def test_fleet_progress_is_quiet_without_ipywidgets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], progress: bool
) -> None:
    from ebssim.fleet import simulate_fleet

    _jupyter_without_ipywidgets(monkeypatch)
    ops = np.full(60, 100.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fleet = simulate_fleet({"a": ebssim.gp2(100)}, {"a": ebssim.OpenLoop(ops, ops * 4096)}, progress=progress)
    assert fleet.summary.loc["a", "served_iops"] == 100.0
    # tqdm.auto warns "IProgress not found" (a TqdmWarning) when imported in such a kernel.
    assert [str(w.message) for w in caught] == []
    # Not asked for, the bar is not even imported; asked for, it is the text bar, on stderr.
    assert ("tqdm.autonotebook" in sys.modules) is False
    assert ("ebssim fleet" in capsys.readouterr().err) is progress
    # And with every warning an error (as pytest runs here and as users may), nothing is raised.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate_fleet({"a": ebssim.gp2(100)}, {"a": ebssim.OpenLoop(ops, ops * 4096)}, progress=progress)


def test_reprs_of_the_compiled_records_keep_the_field_names() -> None:
    r = _gp2_cliff()
    text = repr(r.totals)
    # 2,000 s of 3,000 IOPS and 700 s of 300: 6,000,000 + 210,000 served I/Os.
    assert text.startswith("VolumeTotals(demanded_ops=")
    assert "served_ops=6,210,000 I/Os" in text and "cliff_time_s=2,000 s (33.3 min)" in text
    assert repr(r.totals.cliffs[0]) == "CliffEpisode(start_s=2,000 s (33.3 min), end_s=none)"
    assert repr(r.series).startswith("VolumeSeries(iops=<2,700 float64>, ")
    assert math.isnan(r.totals.cliffs[0].end_s)  # the values are the engine's, unchanged
