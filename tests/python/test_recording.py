"""Recording (ebssim.recording): chosen series, a coarser interval, float32, caller buffers, runs
in chunks into one buffer, and what each reader of the series does with a partial recording.

The reference run: a 100 GiB gp2 volume under 32 x 4 KiB reads bursts at 3,000 IOPS for
5.4e6 / 2,700 = 2,000 s, then holds its 300 IOPS baseline; latency 32 / 3,000 s, then 32 / 300 s.
"""

from __future__ import annotations

import dataclasses
import math

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, OpenLoop, Recording, Simulation, gp2, gp3, simulate
from ebssim.recording import DEFAULT_VOLUME_SERIES

W = ClosedLoop(32, "4k")
N = 2700


@pytest.fixture(scope="module")
def steps():
    return simulate(gp2(100), W, duration_s=N)


@pytest.fixture(scope="module")
def minutes():
    return simulate(gp2(100), W, duration_s=N, record=Recording(every_s=60))


def per_interval_mean(x, m):
    return x.reshape(-1, m).mean(axis=1)


def test_interval_means_and_levels_match_the_per_step_run(steps, minutes):
    assert (minutes.record_every, minutes.record_every_s, minutes.n_values) == (60, 60.0, 45)
    np.testing.assert_array_equal(minutes.time_s, 60.0 * np.arange(45))  # interval starts
    for name in ("iops", "ebs_iops", "throughput_mib_s"):
        np.testing.assert_allclose(getattr(minutes, name), per_interval_mean(getattr(steps, name), 60), rtol=1e-12)
    # Levels at the end of each interval: steps 59, 119, ...
    np.testing.assert_array_equal(minutes.credits, steps.credits[59::60])
    np.testing.assert_array_equal(minutes.backlog_ops, steps.backlog_ops[59::60])
    assert minutes.credits[32] == 5.4e6 - 1980 * 2700  # end of step 1,979
    # Interval 33 (1,980-2,040 s): 20 s at 3,000 and 40 s at 300 IOPS.
    assert minutes.iops[33] == pytest.approx(1200.0, rel=1e-14)
    # I/O-weighted latency: (20 x 3,000 x 32/3,000 + 40 x 300 x 32/300) / 72,000 = 32 / 1,200 s,
    # so Little's law holds per interval: 32 outstanding in every interval.
    assert minutes.latency_s[33] == pytest.approx(32 / 1200, rel=1e-12)
    np.testing.assert_allclose(minutes.queue_length, 32.0, rtol=1e-12)
    assert set(minutes.bound) == {1}  # volume_iops throughout
    # The totals do not depend on the recording.
    for f in dataclasses.fields(ebssim.VolumeSummary):
        assert getattr(minutes.summary(), f.name) == getattr(steps.summary(), f.name), f.name


def test_a_last_partial_interval_has_the_remaining_steps(steps):
    r = simulate(gp2(100), W, duration_s=N, record=Recording(every_s=1000))
    assert r.n_values == 3
    np.testing.assert_array_equal(r.time_s, [0.0, 1000.0, 2000.0])
    # The last interval: 700 s at 300 IOPS. The second: 1,000 s at 3,000 IOPS.
    assert r.iops.tolist() == [3000.0, 3000.0, 300.0]
    assert r.credits[1] == 5.4e6 - 2000 * 2700 == 0.0
    assert r.window(2000, 2700).iops == 300.0
    assert r.window(0, 1e9).iops == pytest.approx(steps.mean_iops, rel=1e-12)


def test_the_bound_of_an_interval_is_the_one_that_held_most_of_its_steps():
    # gp3 (3,000 IOPS), 4 KiB: 3,001 I/Os a step queue one more (volume_iops), 500 drain it
    # (demand). 6 of 10, then 5 of 10 (a tie goes to demand, the first of BOUND_NAMES).
    ops = np.array([3001.0] * 6 + [500.0] * 4 + [3001.0] * 5 + [500.0] * 5)
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096), record=Recording(every_s=10))
    per_step = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    assert np.count_nonzero(per_step.bound[:10] == 1) == 6 and np.count_nonzero(per_step.bound[10:] == 1) == 5
    assert [ebssim.BOUND_NAMES[b] for b in r.bound] == ["volume_iops", "demand"]
    np.testing.assert_allclose(r.offered_iops, [(6 * 3001 + 4 * 500) / 10, (5 * 3001 + 5 * 500) / 10])


def test_float32_holds_the_float64_values_rounded(steps):
    for every_s in (None, 60):
        r64 = simulate(gp2(100), W, duration_s=N, record=Recording(every_s=every_s))
        r32 = simulate(gp2(100), W, duration_s=N, record=Recording(every_s=every_s, dtype="float32"))
        for name in ("iops", "ebs_iops", "throughput_mib_s", "credits", "latency_s", "backlog_ops"):
            a = getattr(r32, name)
            assert a.dtype == np.float32, name
            np.testing.assert_array_equal(a, getattr(r64, name).astype(np.float32), err_msg=name)
        np.testing.assert_array_equal(r32.bound, r64.bound)
        # Means read from float32 are summed in float64: within float32's rounding of each value.
        assert r32.window(0, N).iops == pytest.approx(r64.window(0, N).iops, rel=1e-7)
        assert r32.window(0, N).latency_ms == pytest.approx(r64.window(0, N).latency_ms, rel=1e-6)
        assert r32.to_pandas()["credits"].dtype == np.float32
    assert Recording(dtype=np.float32).dtype == "float32"


def test_only_the_chosen_series_are_kept_and_counted_by_the_memory_limit():
    rec = Recording(series=("credits", "iops"), every_s=60)
    assert rec.series == ("iops", "credits")  # the engine's order
    r = simulate(gp2(100), W, duration_s=N, record=rec)
    assert r.recorded == ("iops", "credits")
    assert r.series.latency_s.shape == r.series.bound.shape == (0,)
    with pytest.raises(ValueError, match=r"^latency_s was not recorded: this result records iops, credits"):
        _ = r.latency_s
    with pytest.raises(ValueError, match=r"bound was not recorded"):
        _ = r.bound
    assert list(r.to_pandas().columns) == ["iops", "read_iops", "write_iops", "credits", "burst_balance_pct"]
    # 45 values x 2 float64 = 720 bytes; float32: 360.
    assert simulate(gp2(100), W, duration_s=N, record=rec, max_memory_bytes=720).n_values == 45
    with pytest.raises(ebssim.LimitError, match=r"takes 720 bytes \(16 per value, one value every 60 steps\)"):
        simulate(gp2(100), W, duration_s=N, record=rec, max_memory_bytes=719)
    r32 = Recording(series=("iops", "credits"), every_s=60, dtype="float32")
    assert simulate(gp2(100), W, duration_s=N, record=r32, max_memory_bytes=360).n_values == 45
    with pytest.raises(ebssim.LimitError):
        simulate(gp2(100), W, duration_s=N, record=r32, max_memory_bytes=359)


def test_caller_buffers_are_filled_in_place_and_not_counted(steps):
    iops = np.full(45, -1.0)
    bound = np.zeros(45, dtype=np.uint8)
    rec = Recording(series=("iops", "credits", "bound"), every_s=60, out={"iops": iops, "bound": bound})
    r = simulate(gp2(100), W, duration_s=N, record=rec, max_memory_bytes=45 * 8)  # credits only
    # Read-only views of the caller's buffers (which stay writeable: test_results).
    assert r.iops.base is iops and r.bound.base is bound
    np.testing.assert_allclose(iops, per_interval_mean(steps.iops, 60), rtol=1e-12)
    assert (bound == 1).all()
    np.testing.assert_array_equal(r.credits, steps.credits[59::60])


def test_several_volumes_write_rows_of_2d_buffers():
    sim = Simulation([gp2(100), gp2(200)])
    iops = np.zeros((2, 27))
    res = sim.run([W, W], N, record=Recording(series=("iops",), every_s=100, out={"iops": iops}))
    # gp2 200 GiB: 600 IOPS baseline, 5.4e6 / 2,400 = 2,250 s of burst.
    assert iops[0, 0] == iops[1, 0] == 3000.0
    assert iops[0, -1] == 300.0 and iops[1, -1] == 600.0
    assert res[1].iops.base is iops or res[1].iops.base is iops.base
    np.testing.assert_array_equal(res[1].iops, iops[1])


def test_bad_buffers_and_specs_are_value_errors():
    def run(**kw):
        return simulate(gp2(100), W, duration_s=N, record=Recording(every_s=60, **kw))

    with pytest.raises(ValueError, match=r"out\['iops'\] has dtype float32, the recording needs float64"):
        run(out={"iops": np.zeros(45, np.float32)})
    with pytest.raises(ValueError, match=r"out\['iops'\] holds 44 values per volume, the run records 45"):
        run(out={"iops": np.zeros(44)})
    with pytest.raises(ValueError, match=r"out\['iops'\] must be C-contiguous"):
        run(out={"iops": np.zeros(90)[::2]})
    ro = np.zeros(45)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match=r"out\['iops'\] is read-only"):
        run(out={"iops": ro})
    with pytest.raises(ValueError, match=r"out\['bound'\] has dtype float64, the recording needs uint8"):
        run(out={"bound": np.zeros(45)})
    with pytest.raises(ValueError, match=r"out\['latency_s'\] is given but the series 'latency_s' is not recorded"):
        run(series=("iops",), out={"latency_s": np.zeros(45)})
    with pytest.raises(ValueError, match=r"out: 'latency' is not a series"):
        run(out={"latency": np.zeros(45)})
    with pytest.raises(ValueError, match=r"out\['iops'\] must be a numpy array, got list"):
        run(out={"iops": [0.0] * 45})
    with pytest.raises(ValueError, match=r"instance_out is given but the simulation has no instance"):
        run(instance_out={"iops": np.zeros(45)})
    with pytest.raises(ValueError, match=r"every_s=90 must be a whole multiple of dt=60 s"):
        simulate(gp2(100), W, duration_s=600, dt=60, record=Recording(every_s=90))
    with pytest.raises(ValueError, match=r"every_s=1.5 must be a whole multiple of dt=1 s"):
        simulate(gp2(100), W, duration_s=10, record=Recording(every_s=1.5))
    with pytest.raises(ValueError, match=r"every_s=-1 must be a positive"):
        Recording(every_s=-1)
    with pytest.raises(ValueError, match=r"dtype='float16' must be 'float64' or 'float32'"):
        Recording(dtype="float16")
    with pytest.raises(ValueError, match=r"series='iops' must be a sequence of series names"):
        Recording(series="iops")
    with pytest.raises(ValueError, match=r"instance_series\[0\]='credits' is not a series"):
        Recording(instance_series=("credits",))
    with pytest.raises(ValueError, match=r"record='yes' must be True, False or an ebssim.Recording"):
        simulate(gp2(100), W, duration_s=10, record="yes")  # type: ignore[arg-type]


def test_a_long_run_in_chunks_into_one_buffer_equals_one_run(steps):
    # Three consecutive runs of 900 s, each into its slice of one buffer: the state carries over,
    # so the buffer holds what one run of 2,700 s records.
    iops = np.empty(N)
    sim = Simulation([gp2(100)])
    for k0 in range(0, N, 900):
        sim.run([W], 900, record=Recording(series=("iops",), out={"iops": iops[k0 : k0 + 900]}))
    np.testing.assert_array_equal(iops, steps.iops)
    # Per interval of 60 s, in float32: 15 values a chunk.
    sim = Simulation([gp2(100)])
    credits = np.empty(45, dtype=np.float32)
    for j0 in range(0, 45, 15):
        rec = Recording(series=("credits",), every_s=60, dtype="float32", out={"credits": credits[j0 : j0 + 15]})
        sim.run([W], 900, record=rec)
    np.testing.assert_array_equal(credits, steps.credits[59::60].astype(np.float32))


def test_readers_of_per_step_series_say_what_they_need(minutes):
    with pytest.raises(
        ValueError,
        match=r"latency_percentiles needs per-step series, and this result was recorded "
        r"every 60 steps \(60 s\)",
    ):
        minutes.latency_percentiles()
    with pytest.raises(ValueError, match=r"time_above_latency needs per-step series.*every 60 steps"):
        minutes.time_above_latency(20)
    from ebssim.analysis import bound_spans, spans_above_latency

    with pytest.raises(ValueError, match=r"bound_spans needs per-step series"):
        bound_spans(minutes, "volume_iops")
    with pytest.raises(ValueError, match=r"spans_above_latency needs per-step series"):
        spans_above_latency(minutes, 20)
    only = simulate(gp2(100), W, duration_s=N, record=Recording(series=("iops",)))
    with pytest.raises(
        ValueError,
        match=r"time_above_latency needs the series latency_s, which this result did not "
        r"record \(it records iops\)",
    ):
        only.time_above_latency(20)
    # A plan checking latency needs it per step.
    from ebssim.testing import Plan

    with pytest.raises(ValueError, match=r"latency_s"):
        Plan(p99_ms=20).check(only)


def test_window_on_intervals_needs_whole_intervals(steps, minutes):
    for a, b in ((0, 2700), (1980, 2040), (1800, 2400), (0, 60)):
        got, want = minutes.window(a, b), steps.window(a, b)
        assert got.iops == pytest.approx(want.iops, rel=1e-12)
        assert got.throughput_mib_s == pytest.approx(want.throughput_mib_s, rel=1e-12)
        assert got.latency_ms == pytest.approx(want.latency_ms, rel=1e-12)
    with pytest.raises(ValueError, match=r"window\(1990, 2040\) cuts an interval: this result was recorded every 60"):
        minutes.window(1990, 2040)


def test_cliffs_and_bound_time_come_from_the_totals(steps, minutes):
    assert minutes.bound_s == steps.bound_s
    (c,) = minutes.cliffs
    assert c.start_s == 2000.0 and c.end_s is None
    assert c.limit == "volume_iops" and math.isnan(c.iops)  # no per-step series: the bucket's limit
    assert minutes.cliff_time_s == 2000.0


def test_instance_series_per_interval():
    vols = [gp3(100, iops=16000, throughput_mib_s=1000)] * 2
    w = ClosedLoop(256, "16k")
    per_step = Simulation(vols, instance="m5.xlarge").run([w, w], 2400)
    rec = Recording(series=("iops",), every_s=100, instance_series=("iops", "io_balance_pct"))
    res = Simulation(vols, instance="m5.xlarge").run([w, w], 2400, record=rec)
    inst = res.instance
    assert inst is not None and per_step.instance is not None
    assert inst.recorded == ("iops", "io_balance_pct") and inst.n_values == 24
    # m5.xlarge: 18,750 IOPS until its IO bucket empties at 1,800 s, then 6,000.
    assert inst.iops[0] == pytest.approx(18750.0, rel=1e-12) and inst.iops[-1] == pytest.approx(6000.0, rel=1e-12)
    np.testing.assert_allclose(inst.iops, per_interval_mean(per_step.instance.iops, 100), rtol=1e-12)
    np.testing.assert_array_equal(inst.io_balance_pct, per_step.instance.io_balance_pct[99::100])
    with pytest.raises(ValueError, match=r"byte_balance_pct was not recorded"):
        _ = inst.byte_balance_pct
    assert list(inst.to_pandas().columns) == ["iops", "io_balance_pct"]
    np.testing.assert_array_equal(inst.time_s, 100.0 * np.arange(24))
    assert inst.totals.served_counted == per_step.instance.totals.served_counted


def test_plot_and_reprs_with_a_coarse_recording(minutes):
    import matplotlib

    matplotlib.use("Agg")
    fig = ebssim.plot(minutes)
    assert fig is not None
    assert "one value every 60 steps" in minutes._repr_html_()
    df = ebssim.RunResult([minutes]).to_pandas()
    assert df.shape[0] == 45 and df["time_s"].iloc[-1] == 2640.0


def noisy_trace(n, seed=7):
    """A noisy second-by-second trace: 40..160 IOPS of 4..64 KiB with bursts of 2,100 s at 3,200
    IOPS that empty a 100 GiB gp2 bucket (5.4e6 credits at 3,000 - 300 a second: 2,000 s), queue
    a backlog that drains at the 300 IOPS baseline, and let the bucket refill."""
    rng = np.random.default_rng(seed)
    ops = np.floor(40.0 + 120.0 * rng.random(n))
    for start in range(5_000, n, 30_000):
        ops[start : start + 2_100] = 3200.0
    ops[::997] = 0.0  # some steps without I/O (no latency)
    size = 4096.0 * np.exp2(4.0 * rng.random(n))
    return ops, ops * size


def test_interval_sums_are_four_partial_sums_in_step_order():
    # docs/model.md: step i of an interval adds to partial sum i mod 4; the mean is
    # ((s0 + s1) + (s2 + s3)) / m. Worked here in Python floats from the per-step run, which
    # must give the coarse recording's values to the last bit (served steps take the engine's
    # vector path, the others one at a time; the run is long enough for the helper thread).
    n, m = 100_003, 60
    ops, nbytes = noisy_trace(n)
    vol = gp2(100)
    fine = simulate(vol, OpenLoop(ops, nbytes))
    coarse = simulate(vol, OpenLoop(ops, nbytes), record=Recording(every_s=m))
    assert fine.totals.steps_bound[1] > 1000 and fine.totals.steps_bound[0] > 50_000  # throttled and served

    def total(parts):
        return (parts[0] + parts[1]) + (parts[2] + parts[3])

    for name in ("iops", "ebs_iops", "throughput_mib_s"):
        x = getattr(fine, name).tolist()
        want = []
        for j0 in range(0, n, m):
            parts = [0.0] * 4
            for i in range(j0, min(n, j0 + m)):
                parts[(i - j0) % 4] += x[i]
            want.append(total(parts) / (min(n, j0 + m) - j0))
        np.testing.assert_array_equal(getattr(coarse, name), want, err_msg=name)
    rate, lat = fine.iops.tolist(), fine.latency_s.tolist()
    want_lat = []
    for j0 in range(0, n, m):
        lw, rw = [0.0] * 4, [0.0] * 4
        for i in range(j0, min(n, j0 + m)):
            if rate[i] > 0:
                lw[(i - j0) % 4] += lat[i] * rate[i]
                rw[(i - j0) % 4] += rate[i]
        want_lat.append(total(lw) / total(rw) if total(rw) > 0 else math.nan)
    np.testing.assert_array_equal(coarse.latency_s, want_lat)
    np.testing.assert_array_equal(coarse.credits, fine.credits[m - 1 :: m].tolist() + [fine.credits[-1]])


@pytest.mark.parametrize(
    "rec",
    [
        Recording(every_s=60),
        Recording(every_s=7, series=ebssim.VOLUME_SERIES),  # every series and the extremes
        Recording(dtype="float32"),
        Recording(series=("latency_s", "credits", "bound")),
    ],
    ids=["per-minute", "every-7-with-extremes", "float32", "some-series"],
)
def test_a_recording_is_the_same_on_one_thread_and_with_the_helper(rec):
    # With a core to spare a volume's recording is written by a helper thread (windows of 32,768
    # steps for these recordings); one thread writes it alone. The same bits either way.
    ops, nbytes = noisy_trace(100_003)
    one = Simulation([gp2(100)]).run([OpenLoop(ops, nbytes)], record=rec, threads=1)[0]
    two = Simulation([gp2(100)]).run([OpenLoop(ops, nbytes)], record=rec, threads=2)[0]
    for name in rec.series or DEFAULT_VOLUME_SERIES:
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=name)
    # Every total, to the bit (assert_equal takes NaN, where a cliff still open ends, as equal).
    np.testing.assert_equal(_totals(one.totals), _totals(two.totals))


def _totals(t):
    """A VolumeTotals' fields by name, its cliff episodes as (start, end)."""
    names = [k for k, v in vars(type(t)).items() if isinstance(v, property)]
    return {k: [(c.start_s, c.end_s) for c in t.cliffs] if k == "cliffs" else getattr(t, k) for k in names}
