"""Typed results: the bound totals, per-step series and runs, and the records window() and
summary() return. Field names, types, read-only fields, numbers worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, Simulation, gp2, gp3, recording, simulate

VOLUME_TOTALS = (
    "demanded_ops",
    "demanded_bytes",
    "served_ops",
    "served_bytes",
    "served_counted",
    "latency_ops_s",
    "backlog_ops",
    "backlog_bytes",
    "credits_end",
    "cliff_time_s",
    "steps_bound",
    "cliffs",
)
INSTANCE_TOTALS = (
    "served_counted",
    "served_bytes",
    "io_credits_end",
    "bytes_credits_end",
    "io_cliff_time_s",
    "bytes_cliff_time_s",
    "steps_bound",
    "io_cliffs",
    "bytes_cliffs",
)
# The series, from the engine's one table of them (series_table.hpp; test_series_table.py checks
# the bound classes, the stub, the results and the docs against it): the default recording's,
# then the extremes per interval, recorded only when named.
VOLUME_SERIES = tuple(name for name, _, _, _ in ebssim._core.VOLUME_SERIES_TABLE)
DEFAULT_VOLUME_SERIES = tuple(n for n, agg, _, _ in ebssim._core.VOLUME_SERIES_TABLE if agg not in ("max", "min"))
INSTANCE_SERIES = tuple(name for name, _, _, _ in ebssim._core.INSTANCE_SERIES_TABLE)
DEFAULT_INSTANCE_SERIES = tuple(n for n, agg, _, _ in ebssim._core.INSTANCE_SERIES_TABLE if agg not in ("max", "min"))


def fields(cls: type) -> tuple[str, ...]:
    """The read-only fields a bound class declares, in the order bound."""
    return tuple(name for name, attr in vars(cls).items() if isinstance(attr, property))


@pytest.fixture(scope="module")
def gp2_run() -> ebssim.VolumeResult:
    # 100 GiB gp2, 4 KiB random reads at queue depth 32, 2,100 s: 3,000 IOPS until the 5.4 M
    # credits run out at 5.4e6 / (3,000 - 300) = 2,000 s, then the 300 IOPS baseline.
    return simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2100)


@pytest.fixture(scope="module")
def shared_run() -> ebssim.RunResult:
    # Two gp3 volumes of 16,000 IOPS each on an m5.large (18,750 IOPS for 1,800 s, then the
    # 3,600 baseline): the instance binds throughout; each volume gets half.
    vol = gp3(1000, iops=16000, throughput_mib_s=1000)
    sim = Simulation([vol, vol], instance="m5.large")
    return sim.run([ClosedLoop(64, "16k")] * 2, duration_s=2400)


# --------------------------------------------------------------------------------------------
# The bound classes: names, types, read-only
# --------------------------------------------------------------------------------------------


def test_field_names():
    assert fields(ebssim.VolumeTotals) == VOLUME_TOTALS
    assert fields(ebssim.InstanceTotals) == INSTANCE_TOTALS
    assert fields(ebssim.VolumeSeries) == VOLUME_SERIES
    assert fields(ebssim.InstanceSeries) == INSTANCE_SERIES
    assert ebssim.VOLUME_SERIES == VOLUME_SERIES and ebssim.INSTANCE_SERIES == INSTANCE_SERIES
    assert recording.DEFAULT_VOLUME_SERIES == DEFAULT_VOLUME_SERIES
    assert recording.DEFAULT_INSTANCE_SERIES == DEFAULT_INSTANCE_SERIES
    assert fields(ebssim._core.RunResult) == (
        "t0_s",
        "dt_s",
        "n_steps",
        "record_every",
        "series",
        "totals",
        "instance_series",
        "instance_totals",
    )


@pytest.mark.parametrize(
    "cls", [ebssim.VolumeTotals, ebssim.InstanceTotals, ebssim.VolumeSeries, ebssim.InstanceSeries]
)
def test_fields_are_documented(cls):
    assert cls.__doc__
    for name in fields(cls):
        assert getattr(cls, name).__doc__, f"{cls.__name__}.{name} has no docstring"


def test_only_the_core_makes_results():
    for cls in (ebssim.VolumeTotals, ebssim.InstanceTotals, ebssim.VolumeSeries, ebssim._core.RunResult):
        with pytest.raises(TypeError):
            cls()


def test_fields_are_read_only(gp2_run, shared_run):
    objects = [gp2_run.totals, gp2_run.series, shared_run.instance.totals, shared_run.instance.series]
    for obj in objects:
        for name in fields(type(obj)):
            with pytest.raises(AttributeError):
                setattr(obj, name, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        gp2_run.totals = gp2_run.totals  # type: ignore[misc]


def test_field_types(gp2_run, shared_run):
    t = gp2_run.totals
    assert isinstance(t, ebssim.VolumeTotals)
    for name in VOLUME_TOTALS[:-2]:
        assert type(getattr(t, name)) is float, name
    assert type(t.steps_bound) is tuple and all(type(n) is int for n in t.steps_bound)
    assert len(t.steps_bound) == len(ebssim.BOUND_NAMES)
    s = gp2_run.series
    assert isinstance(s, ebssim.VolumeSeries)
    for name in VOLUME_SERIES:
        a = getattr(s, name)
        # The extremes are not in the default recording: empty.
        n = 2100 if name in DEFAULT_VOLUME_SERIES else 0
        assert isinstance(a, np.ndarray) and a.shape == (n,), name
        assert a.dtype == (np.uint8 if name == "bound" else np.float64), name
    it = shared_run.instance.totals
    assert isinstance(it, ebssim.InstanceTotals)
    assert all(type(getattr(it, n)) is float for n in INSTANCE_TOTALS[:-3])
    for episodes in (t.cliffs, it.io_cliffs, it.bytes_cliffs):
        assert type(episodes) is tuple and all(isinstance(c, ebssim.CliffEpisode) for c in episodes)
    assert [type(x) for x in (t.cliffs[0].start_s, t.cliffs[0].end_s)] == [float, float]
    for name in INSTANCE_SERIES:
        a = getattr(shared_run.instance.series, name)
        n = 2400 if name in DEFAULT_INSTANCE_SERIES else 0
        assert a.shape == (n,) and a.dtype == (np.uint8 if name == "bound" else np.float64), name


# --------------------------------------------------------------------------------------------
# Values, worked out by hand
# --------------------------------------------------------------------------------------------


def test_volume_totals_by_hand(gp2_run):
    t = gp2_run.totals
    # 2,000 s at 3,000 IOPS + 100 s at 300 = 6,030,000 I/Os of 4 KiB, each one counted operation.
    assert t.served_ops == pytest.approx(6.03e6)
    assert t.served_bytes == pytest.approx(6.03e6 * 4096)
    assert t.served_counted == pytest.approx(6.03e6)
    # A closed loop issues what completes: nothing is left queued.
    assert t.demanded_ops == pytest.approx(6.03e6)
    assert t.demanded_bytes == pytest.approx(6.03e6 * 4096)
    assert t.backlog_ops == 0.0 and t.backlog_bytes == 0.0
    # Little's law: 6e6 I/Os at 32 / 3,000 s + 30,000 at 32 / 300 s = 64,000 + 3,200 I/O-seconds.
    assert t.latency_ops_s == pytest.approx(67200.0, rel=1e-9)
    assert t.cliff_time_s == 2000.0
    assert t.credits_end == 0.0
    # Every step is held by the volume's IOPS cap (3,000 with credits, then 300).
    assert t.steps_bound == (0, 2100, 0, 0, 0, 0)
    # One episode with an empty bucket: from 2,000 s, still empty at the end.
    assert [(c.start_s, math.isnan(c.end_s)) for c in t.cliffs] == [(2000.0, True)]


def test_volume_series_by_hand(gp2_run):
    s = gp2_run.series
    assert s.iops[0] == 3000.0 and s.iops[1999] == 3000.0 and s.iops[2000] == 300.0
    assert s.ebs_iops[0] == 3000.0
    assert s.throughput_mib_s[0] == pytest.approx(3000 * 4096 / 2**20)  # 11.72 MiB/s
    assert s.credits[0] == pytest.approx(5.4e6 - 2700)  # earns 300, spends 3,000
    assert s.latency_s[0] == pytest.approx(32 / 3000)
    assert ebssim.BOUND_NAMES[s.bound[0]] == "volume_iops"


def test_instance_totals_by_hand(shared_run):
    it = shared_run.instance.totals
    # 18,750 IOPS for 1,800 s, then the 3,600 baseline for 600 s; 16 KiB I/Os count once each.
    served = 18750 * 1800 + 3600 * 600
    assert it.served_counted == pytest.approx(served)
    assert it.served_bytes == pytest.approx(served * 16384)
    assert it.io_cliff_time_s == 1800.0
    assert it.io_credits_end == 0.0
    assert it.steps_bound == (0, 0, 0, 2400, 0, 0)
    # EBSIOBalance% empty from 1,800 s to the end; the byte bucket never empties.
    assert [(c.start_s, math.isnan(c.end_s)) for c in it.io_cliffs] == [(1800.0, True)]
    assert it.bytes_cliffs == ()
    # The volumes share it half and half.
    for v in shared_run:
        assert v.totals.served_ops == pytest.approx(served / 2)
        assert v.totals.steps_bound == (0, 0, 0, 2400, 0, 0)
        assert math.isnan(v.totals.cliff_time_s)  # gp3: no bucket


def test_dict_style_reads_still_work(gp2_run, shared_run):
    # Results were dicts: t["served_ops"] still reads t.served_ops.
    assert gp2_run.totals["served_ops"] == gp2_run.totals.served_ops
    assert gp2_run.totals["steps_bound"] == (0, 2100, 0, 0, 0, 0)
    assert shared_run.instance.totals["io_cliff_time_s"] == 1800.0
    with pytest.raises(KeyError, match="'served' is not a field of VolumeTotals; fields: demanded_ops, "):
        gp2_run.totals["served"]


def test_reprs_name_the_fields(gp2_run):
    # Each field by name, in its unit (ebssim._repr.core_record_repr): 3,000 x 2,000 + 300 x 100
    # = 6,030,000 I/Os of 4 KiB = 23 GiB; the bucket empty from 2,000 s, volume_iops bound 2,100 s.
    r = repr(gp2_run.totals)
    assert r.startswith("VolumeTotals(demanded_ops=6,030,000 I/Os, demanded_bytes=23 GiB, ")
    assert "cliff_time_s=2,000 s (33.3 min), steps_bound={volume_iops: 2,100}, " in r
    assert r.endswith("cliffs=1 episode, the first from 2,000 s (33.3 min))")
    # Series show their length and type, not 2,100 numbers.
    assert repr(gp2_run.series) == (
        "VolumeSeries(iops=<2,100 float64>, ebs_iops=<2,100 float64>, throughput_mib_s=<2,100 float64>, "
        "credits=<2,100 float64>, latency_s=<2,100 float64>, backlog_ops=<2,100 float64>, bound=<2,100 uint8>, "
        "iops_max=<0 float64>, latency_max_s=<0 float64>, credits_min=<0 float64>, backlog_max=<0 float64>)"
    )


# --------------------------------------------------------------------------------------------
# No copies; not recorded; no instance
# --------------------------------------------------------------------------------------------


def test_series_reach_numpy_without_a_copy(gp2_run):
    s = gp2_run.series
    # The array owns the engine's buffer through a capsule, and every read is the same array.
    assert type(s.iops.base).__name__ == "PyCapsule"
    assert s.iops is s.iops
    assert gp2_run.iops is s.iops
    assert gp2_run.bound is s.bound


def test_unrecorded_run_has_empty_series_from_the_core():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2100, record=False)
    for name in VOLUME_SERIES:
        a = getattr(r.series, name)
        assert a.shape == (0,), name
        assert a.dtype == (np.uint8 if name == "bound" else np.float64), name
    assert r.totals.served_ops == pytest.approx(6.03e6)  # totals as recorded (test_api)
    sim = Simulation([gp3(100)], instance="m5.large")
    inst = sim.run([ClosedLoop(4, "4k")], duration_s=10, record=False).instance
    assert inst is not None
    assert all(getattr(inst.series, n).shape == (0,) for n in INSTANCE_SERIES)
    assert inst.totals.served_counted == pytest.approx(30000.0)  # gp3's 3,000 IOPS for 10 s


def test_core_run_result_without_an_instance():
    raw = Simulation([gp3(100)])._sim.run([ClosedLoop(4, "4k")._native], 3)
    assert raw.instance_series is None and raw.instance_totals is None
    assert (raw.t0_s, raw.dt_s, raw.n_steps) == (0.0, 1.0, 3)
    assert len(raw.series) == len(raw.totals) == 1
    assert raw.series is raw.series  # made once


# --------------------------------------------------------------------------------------------
# window() and summary(): frozen dataclasses that also read like the dicts they were
# --------------------------------------------------------------------------------------------


def test_window_is_a_typed_record(gp2_run):
    w = gp2_run.window(2000, 2100)
    assert isinstance(w, ebssim.WindowStats)
    # After the cliff: 300 IOPS of 4 KiB = 1.171875 MiB/s; 32 in flight / 300 IOPS = 106.7 ms.
    assert w == ebssim.WindowStats(iops=300.0, throughput_mib_s=1.171875, latency_ms=pytest.approx(32 / 0.3))
    assert w.iops == w["iops"] == 300.0
    assert dataclasses.asdict(w) == {"iops": 300.0, "throughput_mib_s": 1.171875, "latency_ms": w.latency_ms}
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.iops = 1.0  # type: ignore[misc]
    with pytest.raises(KeyError, match="'mean_iops' is not a field of WindowStats"):
        w["mean_iops"]
    # A record, not a mapping: iterating it is an error rather than a walk over w[0], w[1], ...
    with pytest.raises(TypeError, match="not iterable"):
        list(w)


def test_summary_is_a_typed_record(gp2_run):
    s = gp2_run.summary()
    assert isinstance(s, ebssim.VolumeSummary)
    assert [f.name for f in dataclasses.fields(s)] == [
        "volume",
        "workload",
        "mean_iops",
        "mean_latency_ms",
        "cliff_time_s",
        "burst_balance_end_pct",
        "throttled_fraction",
        "backlog_ops_end",
        "cliff_count",
        "bucket_empty_s",
        "bound_s",
        "instance_bound_s",
        "instance_cliff_time_s",
        "mean_device_latency_ms",
        "bounded",
        "finish_s",
        "overrun_s",
        "slowdown",
        "replay",
        "episode_count",
    ]
    assert s.volume == "gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s)"
    assert s.mean_iops == pytest.approx(6.03e6 / 2100)
    assert s.mean_latency_ms == pytest.approx(67200 / 6.03e6 * 1e3)
    assert s.cliff_time_s == 2000.0 and s["cliff_time_s"] == 2000.0
    assert s.burst_balance_end_pct == 0.0
    assert s.throttled_fraction == {
        "demand": 0.0,
        "volume_iops": 1.0,
        "volume_throughput": 0.0,
        "instance_iops": 0.0,
        "instance_throughput": 0.0,
        "max_in_flight": 0.0,
    }
    assert s.backlog_ops_end == 0.0
    # One cliff at 2,000 s; the bucket is empty from then to the end, 2,100 s: 100 s.
    assert (s.cliff_count, s.bucket_empty_s) == (1, 100.0)
    assert s.bound_s["volume_iops"] == 2100.0 and s.instance_bound_s == 0.0
    assert s.instance_cliff_time_s is None


def test_records_make_pandas_rows(gp2_run):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([gp2_run.window(0, 2000), gp2_run.window(2000, 2100)], index=["before", "after"])
    assert list(df.columns) == ["iops", "throughput_mib_s", "latency_ms"]
    assert list(df["iops"]) == [3000.0, 300.0]


# --------------------------------------------------------------------------------------------
# Results are read-only: every array they hand out refuses writes
# --------------------------------------------------------------------------------------------

# The arrays a VolumeResult hands out besides its series: derived (fresh each read) or cached.
DERIVED = ("time_s", "queue_length", "latency_ms", "offered_iops", "burst_balance_pct")
DERIVED += ("read_iops", "write_iops", "read_mib_s", "write_mib_s")


def _assert_read_only(a: np.ndarray, what: str) -> None:
    assert not a.flags.writeable, what
    if a.size:
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 5


def test_every_array_of_a_result_is_read_only(gp2_run, shared_run):
    for name in VOLUME_SERIES:
        _assert_read_only(getattr(gp2_run.series, name), f"series.{name}")
    for name in DEFAULT_VOLUME_SERIES + DERIVED:
        _assert_read_only(getattr(gp2_run, name), name)
    inst = shared_run.instance
    for name in INSTANCE_SERIES:
        _assert_read_only(getattr(inst.series, name), f"instance series.{name}")
    for name in DEFAULT_INSTANCE_SERIES + ("time_s",):
        _assert_read_only(getattr(inst, name), f"instance {name}")
    # The numbers are as the run left them: 3,000 IOPS at first (a write would have made it 5).
    assert gp2_run.iops[0] == 3000.0 and gp2_run.series.iops[0] == 3000.0


def test_read_write_split_of_a_trace_is_read_only():
    # Cached on the result: a write into read_iops would change every later read.
    ops = np.full(60, 600.0)
    trace = ebssim.OpenLoop(ops, ops * 4096, read_ops=ops / 3, read_bytes=ops * 4096 / 3)
    r = simulate(gp2(100), trace)
    for name in ("read_iops", "read_mib_s", "write_iops", "write_mib_s"):
        _assert_read_only(getattr(r, name), name)
    assert r.read_iops[0] == 200.0 and r.write_iops[0] == 400.0  # 600 IOPS served in full, a third reads


def test_unrecorded_and_per_interval_results_are_read_only():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=120, record=False)
    for name in VOLUME_SERIES:
        _assert_read_only(getattr(r.series, name), name)
    r = simulate(gp2(100), ClosedLoop(32, "4k"), 120, record=ebssim.Recording(every_s=60, dtype="float32"))
    _assert_read_only(r.iops, "iops")
    _assert_read_only(r.credits, "credits")


def test_caller_buffers_stay_writeable_and_the_result_reads_them(gp2_run):
    iops, credits = np.zeros(100), np.zeros(100)
    rec = ebssim.Recording(series=("iops", "credits"), out={"iops": iops, "credits": credits})
    r = simulate(gp2(100), ClosedLoop(32, "4k"), 100, record=rec)
    _assert_read_only(r.iops, "iops")
    assert np.shares_memory(r.iops, iops) and r.iops.base is iops
    assert iops.flags.writeable and credits.flags.writeable
    iops[1] = 7.0  # the caller's buffer is the caller's: the result is a view of it
    assert r.iops[1] == 7.0 and r.iops[0] == 3000.0
    # 2-D buffers of several volumes: each volume's row is a read-only view.
    both = np.zeros((2, 100))
    sim = Simulation([gp2(100), gp2(200)])
    run = sim.run([ClosedLoop(32, "4k")] * 2, 100, record=ebssim.Recording(series=("iops",), out={"iops": both}))
    for v in run:
        _assert_read_only(v.iops, "row")
    assert both.flags.writeable and run[1].iops.base is both
    # The buffers take the next run (streaming in chunks), and again hand out read-only views.
    run2 = sim.run([ClosedLoop(32, "4k")] * 2, 100, record=ebssim.Recording(series=("iops",), out={"iops": both}))
    _assert_read_only(run2[0].iops, "second run")


def test_to_pandas_does_not_write_into_the_result(gp2_run):
    df = gp2_run.to_pandas()
    df.loc[df.index[0], "iops"] = 5.0
    assert gp2_run.iops[0] == 3000.0
