"""Extremes per interval (Recording(series=("iops_max", "latency_max_s", "credits_min",
"backlog_max"), instance_series=("iops_max", "io_balance_min_pct", "byte_balance_min_pct"))):
hand-worked values, the per-step run of the same workload aggregated here with numpy, a jumped
run against a stepped one, caller buffers, and what a result says about a series it did not
record.
"""

from __future__ import annotations

import numpy as np
import pytest
from ebssim import ClosedLoop, OpenLoop, Recording, Simulation, gp2, gp3, simulate
from ebssim.recording import DEFAULT_INSTANCE_SERIES, DEFAULT_VOLUME_SERIES

EXTREMES = ("iops_max", "latency_max_s", "credits_min", "backlog_max")
INSTANCE_EXTREMES = ("iops_max", "io_balance_min_pct", "byte_balance_min_pct")
# Unloaded service time of a 4 KiB I/O on an SSD: 0.5 ms + 4,096 B / 1,024 MiB/s.
ST_4K = 0.0005 + 4096 / 2**30


def aggregate(per_step, every):
    """The extremes per interval of ``every`` steps of a per-step result (the last interval
    possibly partial), taken here with numpy: the reference the engine's values must match."""
    starts = np.arange(0, per_step.n_steps, every)
    iops = np.asarray(per_step.iops, dtype=np.float64)
    # Latency counts only where I/O completed; a NaN elsewhere, so that fmax skips it.
    latency = np.where(iops > 0, per_step.latency_s, np.nan)
    with np.errstate(invalid="ignore"):
        lat_max = np.array([np.nan if np.isnan(c).all() else np.nanmax(c) for c in np.split(latency, starts[1:])])
    return {
        "iops_max": np.maximum.reduceat(iops, starts),
        "latency_max_s": lat_max,
        "credits_min": np.minimum.reduceat(np.asarray(per_step.credits), starts),
        "backlog_max": np.maximum.reduceat(np.asarray(per_step.backlog_ops), starts),
    }


def test_a_gp2_trace_worked_by_hand_every_3_steps():
    # 100 GiB gp2 (300 IOPS baseline, 3,000 burst) from 0.1 % of 5.4e6 credits = 5,400, under
    # 4 KiB arrivals [2,000, 3,000, 0 | 2,000, 0, 0 | 0, 0]. Each 1 s step has a pool of
    # credits + 300, serves at most min(3,000, pool), keeps pool - served; latency is
    # st + (backlog before + after) / 2 / served (Little's law), none when nothing completes:
    #   steps 0-2: serve 2,000, 3,000, 0 -> credits 3,700, 1,000, 1,300; latency st, st, none
    #   step 3: pool 1,600 of 2,000 -> credits 0, 400 wait; latency st + 200 / 1,600
    #   step 4: pool 300 of the 400 -> 0, 100 wait; latency st + 250 / 300
    #   step 5: serves the last 100 -> 200; latency st + 50 / 100
    #   steps 6-7: nothing -> 500, 800 credits; no latency
    ops = np.array([2000.0, 3000, 0, 2000, 0, 0, 0, 0])
    for jump in (True, False):
        r = simulate(
            gp2(100, burst_balance_pct=0.1),
            OpenLoop(ops, ops * 4096),
            record=Recording(series=("credits",) + EXTREMES, every_s=3),
            jump=jump,
        )
        assert r.n_values == 3  # the last interval has 2 steps
        np.testing.assert_allclose(r.iops_max, [3000, 1600, 0], rtol=1e-12)
        # The refill inside interval 0 hides its low (1,000) from the level at its end (1,300).
        assert r.credits_min.tolist() == [1000.0, 0.0, 500.0]
        assert r.credits.tolist() == [1300.0, 200.0, 800.0]
        np.testing.assert_allclose(r.backlog_max, [0, 400, 0], rtol=1e-12)
        assert r.latency_max_s[0] == ST_4K
        assert r.latency_max_s[1] == pytest.approx(ST_4K + 250 / 300, rel=1e-12)
        assert np.isnan(r.latency_max_s[2])  # no I/O completed in steps 6-7


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_recorded_every_step_each_extreme_is_its_series(dtype):
    ops = np.where(np.arange(3000) // 500 % 2 == 1, 0.0, (np.arange(3000) * 7919 % 1200).astype(np.float64))
    w = OpenLoop(ops, ops * 4096)
    r = simulate(
        gp2(100, burst_balance_pct=1), w, record=Recording(series=DEFAULT_VOLUME_SERIES + EXTREMES, dtype=dtype)
    )
    plain = simulate(gp2(100, burst_balance_pct=1), w, record=Recording(dtype=dtype))
    assert r.iops_max.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(r.iops_max, r.iops)
    np.testing.assert_array_equal(r.latency_max_s, r.latency_s)  # NaN where nothing completed
    np.testing.assert_array_equal(r.credits_min, r.credits)
    np.testing.assert_array_equal(r.backlog_max, r.backlog_ops)
    assert np.isnan(r.latency_s).any() and (r.backlog_ops > 0).any()  # both cases occur
    # Recording the extremes changes no other series.
    for name in DEFAULT_VOLUME_SERIES:
        np.testing.assert_array_equal(getattr(r, name), getattr(plain, name), err_msg=name)


def test_random_runs_equal_the_per_step_run_aggregated_with_numpy():
    # gp2 with little credit, gp3 and st1 under open loops of runs of equal values (jumped where
    # constant, queued above the caps, idle) and closed loops; intervals of 2 s to 1,000 s. Both
    # runs record the same per-step values, so the engine's extremes equal numpy's exactly.
    rng = np.random.default_rng(12)
    for _ in range(30):
        vol = [gp2(int(rng.integers(20, 1000)), burst_balance_pct=float(rng.uniform(0, 5))), gp3(500)][
            int(rng.integers(2))
        ]
        n = int(rng.integers(50, 4000))
        every = int(rng.choice([2, 3, 7, 60, 1000]))
        if rng.integers(4) == 0:
            w = ClosedLoop(int(rng.integers(1, 64)), "16k")
        else:
            runs = rng.integers(1, 200, size=n)
            levels = np.where(rng.integers(5, size=n) == 0, 0.0, np.round(3000 * rng.uniform(0.1, 1.5, size=n)))
            ops = np.repeat(levels, runs)[:n]
            w = OpenLoop(ops, ops * 16384)
        jump = bool(rng.integers(2))
        per_step = simulate(vol, w, duration_s=n, jump=jump, record=Recording(series=DEFAULT_VOLUME_SERIES))
        r = simulate(vol, w, duration_s=n, jump=jump, record=Recording(series=EXTREMES, every_s=every))
        want = aggregate(per_step, every)
        for name in EXTREMES:
            np.testing.assert_array_equal(getattr(r, name), want[name], err_msg=f"{name}, {vol}, every {every}")


def test_a_jumped_run_equals_a_stepped_one_within_the_jump_tolerance():
    # (a) 100 GiB gp2 under 32 x 4 KiB: 3,000 IOPS for 5.4e6 / 2,700 = 2,000 s, then 300. Jumped,
    # credits fall linearly: credits_min of minute j is 5.4e6 - 2,700 x 60 (j + 1) until minute
    # 33 (1,980-2,039 s) runs dry; its worst latency is the baseline's, 32 / 300 s.
    w = ClosedLoop(32, "4k")
    rec = Recording(series=EXTREMES, every_s=60)
    jumped = simulate(gp2(100), w, duration_s=2700, record=rec)
    stepped = simulate(gp2(100), w, duration_s=2700, jump=False)
    want = aggregate(stepped, 60)
    # Tolerances of a jump (docs/model.md): relative 1e-9; credits 1e-9 of the 5.4e6 bucket;
    # latency relatively 1e-6 in the step in which the bucket runs dry.
    np.testing.assert_allclose(jumped.iops_max, want["iops_max"], rtol=1e-9)
    np.testing.assert_allclose(jumped.credits_min, want["credits_min"], rtol=1e-9, atol=5.4e-3)
    np.testing.assert_allclose(jumped.latency_max_s, want["latency_max_s"], rtol=1e-6)
    np.testing.assert_array_equal(jumped.backlog_max, 0.0)
    assert jumped.credits_min[32] == pytest.approx(5.4e6 - 2700 * 1980, rel=1e-12)  # 54,000
    assert jumped.credits_min[33] == 0.0
    assert jumped.latency_max_s[33] == pytest.approx(32 / 300, rel=1e-9)
    # (b) gp3 500 GiB (3,000 IOPS): 4,000 IOPS of 4 KiB for 600 s, then 2,000 for 800 s. The
    # backlog grows by 1,000 a step to 600,000 after step 599, then drains by 1,000 a step;
    # step j < 600 waits 1,000 (j + 0.5) on average (latency st + (j + 0.5) / 3), and step 600
    # (600,000 + 599,000) / 2: minutes 9 and 10 both peak at st + 599,500 / 3,000 s.
    ops = np.r_[np.full(600, 4000.0), np.full(800, 2000.0)]
    w2 = OpenLoop(ops, ops * 4096)
    jumped = simulate(gp3(500), w2, record=rec)
    stepped = simulate(gp3(500), w2, jump=False)
    want = aggregate(stepped, 60)
    np.testing.assert_allclose(jumped.iops_max, want["iops_max"], rtol=1e-9)
    np.testing.assert_allclose(jumped.backlog_max, want["backlog_max"], rtol=1e-9, atol=1e-9 * 4e6)
    np.testing.assert_allclose(jumped.latency_max_s, want["latency_max_s"], rtol=1e-6)
    assert jumped.backlog_max[9] == pytest.approx(600_000, rel=1e-12)
    assert jumped.backlog_max[10] == pytest.approx(599_000, rel=1e-12)
    assert jumped.latency_max_s[9] == pytest.approx(ST_4K + 599_500 / 3000, rel=1e-9)
    assert jumped.latency_max_s[10] == pytest.approx(ST_4K + 599_500 / 3000, rel=1e-9)


def test_the_instance_extremes_equal_its_per_step_run_aggregated():
    # Two gp3 volumes on an m5.large under 100 s bursts of 64 KiB above its 593.75 MB/s, then
    # 900 s below its 81.25 MB/s baseline: the buckets drain, then refill once the queue is served.
    k = np.arange(6000)
    ops = np.where(k % 1000 < 100, 9000.0 + k * 37 % 500, 500.0)
    w = OpenLoop(ops, ops * 65536)
    vols = [gp3(500, iops=16000, throughput_mib_s=1000)] * 2
    per_step = Simulation(vols, instance="m5.large").run([w, w])
    iops_max = np.zeros(120)
    rec = Recording(
        series=("backlog_max",),
        every_s=50,
        instance_series=("io_balance_pct", "byte_balance_pct") + INSTANCE_EXTREMES,
        instance_out={"iops_max": iops_max},
    )
    res = Simulation(vols, instance="m5.large").run([w, w], record=rec)
    inst, ref = res.instance, per_step.instance
    assert inst is not None and ref is not None
    starts = np.arange(0, 6000, 50)
    assert inst.iops_max.base is iops_max  # a read-only view of the caller's buffer, written in place
    np.testing.assert_array_equal(iops_max, np.maximum.reduceat(ref.iops, starts))
    np.testing.assert_array_equal(inst.io_balance_min_pct, np.minimum.reduceat(ref.io_balance_pct, starts))
    np.testing.assert_array_equal(inst.byte_balance_min_pct, np.minimum.reduceat(ref.byte_balance_pct, starts))
    # Some interval refills: its lowest balance is below the one at its end.
    assert (inst.byte_balance_min_pct < inst.byte_balance_pct).any()
    np.testing.assert_array_equal(res[0].backlog_max, aggregate(per_step[0], 50)["backlog_max"])
    assert list(inst.to_pandas().columns) == ["io_balance_pct", "byte_balance_pct"] + list(INSTANCE_EXTREMES)
    # Recorded every step, each is its series.
    each = Simulation(vols, instance="m5.large").run(
        [w, w], record=Recording(instance_series=DEFAULT_INSTANCE_SERIES + INSTANCE_EXTREMES)
    )
    assert each.instance is not None
    np.testing.assert_array_equal(each.instance.iops_max, each.instance.iops)
    np.testing.assert_array_equal(each.instance.io_balance_min_pct, each.instance.io_balance_pct)
    np.testing.assert_array_equal(each.instance.byte_balance_min_pct, each.instance.byte_balance_pct)


def test_not_in_the_default_recording_and_named_when_missing():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=100)
    assert r.recorded == DEFAULT_VOLUME_SERIES
    assert r.series.iops_max.shape == (0,)
    with pytest.raises(ValueError, match=r"^latency_max_s was not recorded: this result records iops, ebs_iops, "):
        _ = r.latency_max_s
    assert not set(EXTREMES) & set(r.to_pandas().columns)
    sim = Simulation([gp3(100)], instance="m5.large")
    inst = sim.run([ClosedLoop(4, "4k")], duration_s=10).instance
    assert inst is not None and inst.recorded == DEFAULT_INSTANCE_SERIES
    with pytest.raises(ValueError, match=r"^io_balance_min_pct was not recorded"):
        _ = inst.io_balance_min_pct
    # record=False: no series at all, and the frame has the columns of before, empty.
    off = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=100, record=False)
    assert off.iops_max.shape == (0,)
    assert not set(EXTREMES) & set(off.to_pandas().columns)


def test_to_pandas_has_the_extremes_that_were_recorded():
    rec = Recording(series=("iops", "iops_max", "latency_max_s", "credits_min"), every_s=60)
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2700, record=rec)
    df = r.to_pandas()
    assert list(df.columns) == ["iops", "read_iops", "write_iops", "iops_max", "latency_max_ms", "credits_min"]
    # Minute 33 (1,980-2,039 s): 20 s at 3,000 IOPS, then 40 s at the 300 baseline, 32 / 300 s each.
    assert df["iops_max"].iloc[33] == 3000.0
    assert df["latency_max_ms"].iloc[33] == pytest.approx(32 / 300 * 1e3, rel=1e-9)
    assert df["credits_min"].iloc[33] == 0.0


def test_caller_buffers_and_chunks_into_one_buffer():
    # Three runs of 900 s, each into its slice of one buffer, per minute: the same as one run of
    # 2,700 s (each chunk is whole minutes, so no interval spans two runs).
    w = ClosedLoop(32, "4k")
    whole = simulate(gp2(100), w, duration_s=2700, record=Recording(series=EXTREMES, every_s=60))
    low = np.empty(45, dtype=np.float32)
    worst = np.empty(45, dtype=np.float32)
    sim = Simulation([gp2(100)])
    for j0 in range(0, 45, 15):
        rec = Recording(
            series=("credits_min", "latency_max_s"),
            every_s=60,
            dtype="float32",
            out={"credits_min": low[j0 : j0 + 15], "latency_max_s": worst[j0 : j0 + 15]},
        )
        sim.run([w], 900, record=rec)
    np.testing.assert_array_equal(low, whole.credits_min.astype(np.float32))
    np.testing.assert_array_equal(worst, whole.latency_max_s.astype(np.float32))
    # A buffer of the wrong type, or for a series not chosen, is refused by name.
    with pytest.raises(ValueError, match=r"out\['credits_min'\] has dtype float32, the recording needs float64"):
        simulate(
            gp2(100),
            w,
            duration_s=2700,
            record=Recording(series=("credits_min",), every_s=60, out={"credits_min": low}),
        )
    with pytest.raises(ValueError, match=r"out\['backlog_max'\] is given but the series 'backlog_max' is not recorded"):
        simulate(gp2(100), w, duration_s=2700, record=Recording(every_s=60, out={"backlog_max": np.zeros(45)}))


def test_the_memory_limit_counts_the_extremes():
    # 45 minutes x 2 extremes x 8 bytes = 720.
    rec = Recording(series=("iops_max", "credits_min"), every_s=60)
    w = ClosedLoop(32, "4k")
    assert simulate(gp2(100), w, duration_s=2700, record=rec, max_memory_bytes=720).n_values == 45
    with pytest.raises(ValueError, match=r"takes 720 bytes \(16 per value, one value every 60 steps\)"):
        simulate(gp2(100), w, duration_s=2700, record=rec, max_memory_bytes=719)
