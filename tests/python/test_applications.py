"""Replays that behave like applications (issue 21, item 4): an open loop bounded by
max_in_flight (one bound, or one per step), its latency at the device apart from its wait in the
application, a replay that runs on after its trace until the trace's work is done (finish_s,
overrun_s, slowdown), from_pandas(max_in_flight=), the CloudWatch concurrency
(max_in_flight="measured") and measured against simulated latency. Numbers worked out by hand
(the arithmetic is in the comments)."""

from __future__ import annotations

from pathlib import Path

import ebssim
import ebssim.aws as aws
import numpy as np
import pandas as pd
import pytest
from ebssim import OpenLoop, Simulation, gp2, gp3, simulate

DATA = Path(__file__).resolve().parent.parent / "data" / "aws"
T0 = pd.Timestamp("2024-05-01T00:00:00Z")
DATA_VOL = "vol-609409ddb74484deb"  # gp2 100 GiB: 1,500 IOPS for an hour, then 200 (the fixtures' README)
LOGS_VOL = "vol-8bff23db4601cc0da"  # gp3 200 GiB: 2,000 IOPS for two hours, minutes 90 and 91 missing


# --------------------------------------------------------------------------------------------
# Device latency and the wait in the application
# --------------------------------------------------------------------------------------------


def test_device_latency_above_the_cap_is_the_bound_over_the_cap():
    # gp3 100 GiB serves 3,000 IOPS; 5,000 arrive a second for 60 s, 64 at most in flight. The
    # device holds 64 (64 / 0.515 ms = 124,000 IOPS: the volume's cap binds first), so its
    # latency is 64 / 3,000 s = 21.33 ms in every step; the backlog grows by 2,000 a second.
    r = simulate(gp3(100), OpenLoop.constant(5000, "4k", 60, max_in_flight=64))
    np.testing.assert_allclose(r.device_latency_s, 64 / 3000, rtol=1e-12)
    np.testing.assert_allclose(r.device_queue_length, 64.0, rtol=1e-12)
    assert r.backlog_ops[0] == 2000 and r.backlog_ops[59] == 120_000
    # Step 0: 1,000 wait on average (0 before, 2,000 after): (3,000 x st + 1,000) / 3,000 from
    # arrival, of which 64 / 3,000 at the device.
    st = 0.0005 + 4096 / 2**30
    assert r.latency_s[0] == pytest.approx(st + 1 / 3, rel=1e-12)
    assert r.application_wait_ms[0] == pytest.approx((st + 1 / 3 - 64 / 3000) * 1e3, rel=1e-12)
    assert r.mean_device_latency_ms == pytest.approx(64 / 3000 * 1e3, rel=1e-12)
    assert r.mean_application_wait_ms == pytest.approx(r.mean_latency_ms - 64 / 3 * 1, rel=1e-12)
    df = r.to_pandas()
    assert df["device_latency_ms"].iloc[5] == pytest.approx(64 / 3, rel=1e-12)
    assert "application_wait_ms" in df


def test_device_latency_percentiles_follow_the_device_latency():
    # The run above: 64 / 3,000 s at the device in all 60 steps (volume-held, 64 in flight), so
    # its percentiles at the device are the latency model's of that one mean; from arrival they
    # count the backlog's wait (step k's I/Os wait about 2,000 k / 3,000 s more: a median near 15 s).
    r = simulate(gp3(100), OpenLoop.constant(5000, "4k", 60, max_in_flight=64))
    model = ebssim.LatencyModel.of(gp3(100), 4096, 1.0, in_flight=64)
    want = ebssim.latency_quantiles([64 / 3000], [1.0], [0.5, 0.99], model) * 1e3
    got = r.latency_percentiles((50, 99), at="device")
    assert list(got.values()) == pytest.approx(list(want), rel=1e-9)
    assert r.latency_percentiles((50,))[50.0] > 500 * got[50.0]  # seconds from arrival (14.5 s)
    with pytest.raises(ValueError, match="at='clat' must be 'arrival'"):
        r.latency_percentiles((50,), at="clat")
    # Without a bound the two are one.
    u = simulate(gp3(100), OpenLoop.constant(2000, "4k", 10))
    assert u.latency_percentiles((50, 99), at="device") == u.latency_percentiles((50, 99))


def test_device_latency_of_a_step_whose_backlog_runs_out():
    # gp3 100 GiB, 3,000 IOPS, 32 16-KiB I/Os in flight at most, one-minute steps: 4,000 a second
    # arrive in minute 0 (60,000 carried), 500 a second in minutes 1 and 2. Minute 0 is held:
    # 32 / 3,000 s at the device. In minute 1 the 60,000 drain at 3,000 - 500 a second, gone after
    # 24 s; until then 3,000 x 24 = 72,000 I/Os are served with 32 at the device (32 / 3,000 s),
    # the other 18,000 of the minute's 90,000 arrive at a device that keeps up and take the
    # service time s: (72,000 x 32 / 3,000 + 18,000 x s) / 90,000 = 8.64 ms. (The steady rule,
    # 32 over the minute's 1,500 IOPS, would say 21.3 ms.) Minute 2 keeps up: s.
    ops = np.array([240_000.0, 30_000.0, 30_000.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 16384, dt=60.0, max_in_flight=32), dt=60)
    s = 0.0005 + 16384 / 2**30
    assert list(r.backlog_ops) == [60_000, 0, 0] and list(r.iops) == [3000, 1500, 500]
    want = [32 / 3000, (72_000 * 32 / 3000 + 18_000 * s) / 90_000, s]
    np.testing.assert_allclose(r.device_latency_s, want, rtol=1e-12)
    assert ebssim._core.drain_time_s(60_000, 30_000, 3000, 60) == pytest.approx(24.0, rel=1e-15)


def test_without_a_bound_the_device_holds_everything():
    # No max_in_flight: every arrival queues at the device, whose latency is the latency.
    r = simulate(gp3(100), OpenLoop.constant(5000, "4k", 10))
    np.testing.assert_array_equal(r.device_latency_s, r.latency_s)
    assert not r.bounded and r.mean_device_latency_ms == r.mean_latency_ms
    assert r.mean_application_wait_ms == 0.0
    assert "device_latency_ms" not in r.to_pandas()  # the columns of a bounded open loop only


def test_bound_that_binds_gives_the_service_time_at_the_device():
    # 1 in flight at 1 ms service time: 1,000 IOPS at most; 1,500 arrive a second. The device
    # holds 1 for 1 ms each: device latency 1 ms; the rest waits in the application.
    r = simulate(gp3(100), OpenLoop.constant(1500, "4k", 10, max_in_flight=1, service_time_ms=1))
    assert set(r.bound) == {ebssim.BOUND_NAMES.index("max_in_flight")}
    np.testing.assert_allclose(r.device_latency_s, 0.001, rtol=1e-12)
    assert r.backlog_ops[-1] == 5000  # 500 a second


def test_a_bounded_loop_needs_per_step_series_for_its_device_latency():
    w = OpenLoop.constant(5000, "4k", 60, max_in_flight=64)
    with pytest.raises(ValueError, match="device latency .* per-step series"):
        _ = simulate(gp3(100), w, record=ebssim.Recording(every_s=10)).device_latency_s
    s = simulate(gp3(100), w, record=False).summary()
    assert s.mean_device_latency_ms is None and s.bounded


# --------------------------------------------------------------------------------------------
# A bound per step
# --------------------------------------------------------------------------------------------


def _per_step() -> OpenLoop:
    ops = np.full(10, 1500.0)
    return OpenLoop(ops, ops * 4096, service_time_ms=1, max_in_flight=np.array([1.0] * 5 + [2.0] * 5))


def test_a_bound_per_step_by_hand():
    # 1,500 arrive a second at 1 ms each. Steps 0-4: 1 in flight, 1,000 served, 500 queue a
    # second (2,500 at 5 s). Steps 5-9: 2 in flight, 2,000 a second: the backlog drains by 500 a
    # second, to 0 at the end of step 9 (1,500 + 500 available: exactly the bound, not over it).
    r = simulate(gp3(100), _per_step())
    assert r.backlog_ops.tolist() == [500, 1000, 1500, 2000, 2500, 2000, 1500, 1000, 500, 0]
    assert r.iops.tolist() == [1000.0] * 5 + [2000.0] * 5
    mif = ebssim.BOUND_NAMES.index("max_in_flight")
    assert r.bound.tolist() == [mif] * 9 + [0]
    # Device: 1 / 1,000 = 1 ms, then 2 / 2,000 = 1 ms.
    np.testing.assert_allclose(r.device_latency_s, 0.001, rtol=1e-12)
    assert str(r.workload).endswith("at most 1 to 2 in flight per step)")


def test_a_bound_per_step_steps_and_jumps_alike():
    # Runs of equal ops, bytes and bound are jumped; the bound's change ends a run.
    ops = np.full(4000, 1500.0)
    bound = np.repeat([1.0, 4.0, 1.0, 4.0], 1000)
    w = OpenLoop(ops, ops * 4096, service_time_ms=1, max_in_flight=bound)
    a = simulate(gp2(100), w)
    b = simulate(gp2(100), w, jump=False)
    np.testing.assert_allclose(a.backlog_ops, b.backlog_ops, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(a.credits, b.credits, rtol=1e-9)
    # Not in lockstep with other volumes: totals-only runs of several volumes give each one's own.
    alone = simulate(gp2(100), w, record=False).totals
    sim = Simulation([gp2(100)] * 3)
    together = sim.run([w, OpenLoop.constant(100, "4k", 4000), w], record=False)
    assert together[0].totals.served_ops == pytest.approx(alone.served_ops, rel=1e-12)
    assert together[2].totals.backlog_ops == pytest.approx(alone.backlog_ops, rel=1e-12, abs=1e-6)


@pytest.mark.parametrize(
    ("bound", "message"),
    [
        (np.ones(3), r"max_in_flight has 3 steps but the trace has 10"),
        (np.array([1.0] * 9 + [0.0]), r"max_in_flight\[9\]=0.0 must be a positive number of I/Os"),
        (np.array([1.0] * 9 + [np.nan]), r"max_in_flight\[9\]=nan must be a positive"),
    ],
)
def test_bound_per_step_errors(bound, message):
    ops = np.full(10, 1.0)
    with pytest.raises(ValueError, match=message):
        OpenLoop(ops, ops * 4096, max_in_flight=bound)


# --------------------------------------------------------------------------------------------
# Running on after the trace: when its work was done
# --------------------------------------------------------------------------------------------


def test_run_on_until_the_work_is_done():
    # 5,000 IOPS for 60 s on 3,000 IOPS: 300,000 I/Os, done at 300,000 / 3,000 = 100 s, 40 s
    # after the trace's last step with I/O; slowdown 100 / 60.
    r = simulate(gp3(100), OpenLoop.constant(5000, "4k", 60, max_in_flight=64), run_on=True)
    assert r.trace_steps == 60 and r.n_steps == 101  # 40 steps to drain, and one more
    assert (r.finish_s, r.overrun_s) == (100.0, 40.0)
    assert r.slowdown == pytest.approx(100 / 60, rel=1e-12)
    assert r.totals.backlog_ops == 0 and r.totals.served_ops == 300_000
    text = str(r.summary())
    assert "21.3 ms mean at the device" in text and "done 40 s after its last I/O arrived: 1.667 x" in text
    html = r._repr_html_()
    assert "21.3 ms mean; 20 s mean wait in the application" in html and "slowdown 1.667" in html


def test_run_on_inside_a_step_is_interpolated():
    # One-minute steps: 5,000 IOPS for 10 minutes on 3,000: 3e6 I/Os, done at 1,000 s. After
    # the trace 1.2e6 wait; 180,000 a minute drain them in 6 2/3 minutes: the last step serves
    # 120,000 of the 180,000 it could (the rate of the step before), 40 s.
    trace = OpenLoop.constant(5000, "4k", 600, dt=60, max_in_flight=64)
    r = simulate(gp3(100), trace, dt=60, run_on=True)
    assert r.finish_s == pytest.approx(1000.0, rel=1e-12)
    assert r.slowdown == pytest.approx(1000 / 600, rel=1e-12)


def test_a_replay_that_keeps_up_is_not_slowed():
    r = simulate(gp3(100), OpenLoop.constant(2000, "4k", 60, max_in_flight=64), run_on=True)
    assert (r.n_steps, r.finish_s, r.overrun_s, r.slowdown) == (60, 60.0, 0.0, 1.0)
    assert "done in the trace's time" in str(r.summary())


def test_run_on_stops_at_its_limit_and_says_so():
    # 1 in flight at 1 ms: 1,000 a second; 10 s at 2,000 leave 10,000, which take 10 s more.
    w = OpenLoop.constant(2000, "4k", 10, max_in_flight=1, service_time_ms=1)
    r = simulate(gp3(100), w, run_on=True, max_run_on_s=4)
    assert r.n_steps == 14 and r.totals.backlog_ops == 6000
    assert r.finish_s is None and r.overrun_s is None and r.slowdown is None
    assert "not done by the end of the run" in str(r.summary())
    full = simulate(gp3(100), w, run_on=True)
    assert full.finish_s == 20.0 and full.slowdown == 2.0


def test_replay_leaves_the_state_after_the_work():
    # The simulation's clock and state are those of the run it returns (the look ahead is undone).
    sim = Simulation([gp3(100)])
    r = sim.replay([OpenLoop.constant(5000, "4k", 60)])[0]
    assert sim.time_s == r.n_steps == 101
    with pytest.raises(ValueError, match=r"traces\[0\]=.* must be an OpenLoop"):
        sim.replay([ebssim.ClosedLoop(4, "4k")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="run_on=True goes on after an OpenLoop trace"):
        simulate(gp3(100), ebssim.ClosedLoop(4, "4k"), duration_s=10, run_on=True)


def test_a_week_on_a_smaller_volume_stays_at_device_scale_and_takes_longer():
    # A week of one-minute sums at 2,000 IOPS of 16 KiB on gp2 500 GiB (1,500 baseline, 3,000
    # burst, 5.4e6 credits): served in full until the bucket is dry at 5.4e6 / 500 = 10,800 s,
    # then 1,500 a second. 1.2096e9 I/Os are done at 10,800 + (1.2096e9 - 2,000 x 10,800) / 1,500
    # = 802,800 s: slowdown 802,800 / 604,800 = 1.3274. Unbounded, the backlog queues at the
    # device: its latency grows to days. With 8 in flight the device holds 8: at most
    # 8 / 1,500 s = 5.33 ms.
    idx = pd.date_range("2024-05-01", periods=7 * 1440, freq="1min", tz="UTC")
    df = pd.DataFrame({"read_ops": 2000.0 * 60, "read_bytes": 2000.0 * 60 * 16384}, index=idx)
    queued = simulate(gp2(500), OpenLoop.from_pandas(df))
    assert np.nanmax(queued.device_latency_s) > 86_400  # more than a day
    r = simulate(gp2(500), OpenLoop.from_pandas(df, max_in_flight=8), run_on=True)
    assert r.cliff_time_s == pytest.approx(10_800.0)
    assert np.nanmax(r.device_latency_ms) == pytest.approx(8 / 1500 * 1e3, rel=1e-9)
    assert r.finish_s == pytest.approx(802_800.0, rel=1e-9)
    assert r.slowdown == pytest.approx(802_800 / 604_800, rel=1e-9)
    assert r.to_pandas().index[-1] >= pd.Timestamp("2024-05-10 07:00", tz="UTC")  # 802,800 s: 9 d 7 h


# --------------------------------------------------------------------------------------------
# from_pandas(max_in_flight=)
# --------------------------------------------------------------------------------------------


def test_from_pandas_takes_max_in_flight():
    idx = pd.date_range("2024-05-01", periods=3, freq="1min", tz="UTC")
    df = pd.DataFrame({"read_ops": [60.0, 60.0, 60.0], "read_bytes": 60 * 4096.0}, index=idx)
    assert OpenLoop.from_pandas(df, max_in_flight=8).max_in_flight == 8
    # One per row, each minute's over its steps (dt = 20 s: three steps a minute).
    t = ebssim.trace.from_pandas(df, dt=20, max_in_flight=pd.Series([1.0, 2.0, 4.0], index=idx))
    assert t.max_in_flight.tolist() == [1.0] * 3 + [2.0] * 3 + [4.0] * 3
    # A row missing (a gap) keeps the bound of the period before it.
    holes = df.drop(idx[1])
    g = OpenLoop.from_pandas(holes, period="60s", gaps="zero", max_in_flight=[3.0, 5.0])
    assert g.max_in_flight.tolist() == [3.0, 3.0, 5.0]


@pytest.mark.parametrize(
    ("bound", "message"),
    [
        ([1.0, 2.0], r"max_in_flight has 2 values but data has 3 rows"),
        ([1.0, 0.0, 2.0], r"max_in_flight at 2024-05-01 00:01:00\+00:00 is 0.0: it must be a positive"),
        (pd.Series([1.0], index=[pd.Timestamp("2024-05-02", tz="UTC")]), r"it has no value for 2024-05-01 00:00"),
        (["a", "b", "c"], r"max_in_flight must be a number of I/Os, or one per row"),
        (-1, r"max_in_flight=-1.0 must be a positive number of I/Os"),
    ],
)
def test_from_pandas_max_in_flight_errors(bound, message):
    idx = pd.date_range("2024-05-01", periods=3, freq="1min", tz="UTC")
    df = pd.DataFrame({"read_ops": [60.0, 60.0, 60.0], "read_bytes": 60 * 4096.0}, index=idx)
    with pytest.raises(ValueError, match=message):
        OpenLoop.from_pandas(df, max_in_flight=bound)


# --------------------------------------------------------------------------------------------
# CloudWatch: the measured concurrency, the measured latency
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def metrics() -> pd.DataFrame:
    return aws.read_metric_data(DATA / "cloudwatch-get-metric-data.labels.moto.json")


def test_measured_concurrency_from_volume_queue_length(metrics):
    # VolumeQueueLength: data 0.8 then 0.1, logs 1.0 (the fixtures' README); at least
    # min_in_flight (1 by default); a minute without a datapoint takes min_in_flight.
    tr = aws.traces(metrics, gaps="zero", max_in_flight="measured")
    assert set(tr[DATA_VOL].max_in_flight) == {1.0}
    gone = (metrics["metric"] == "VolumeQueueLength") & (metrics["timestamp"] == T0 + pd.Timedelta(minutes=90))
    half = aws.traces(metrics[~gone], gaps="zero", max_in_flight="measured", min_in_flight=0.5)
    d, lg = half[DATA_VOL].max_in_flight, half[LOGS_VOL].max_in_flight
    assert d[0] == pytest.approx(0.8) and d[60] == 0.5 and lg[0] == pytest.approx(1.0)
    assert lg[89] == pytest.approx(1.0) and lg[90] == 0.5 and d[90] == 0.5
    with pytest.raises(ValueError, match="max_in_flight='x' must be 'measured'"):
        aws.traces(metrics, gaps="zero", max_in_flight="x")
    with pytest.raises(ValueError, match="min_in_flight=0 must be a positive"):
        aws.traces(metrics, gaps="zero", max_in_flight="measured", min_in_flight=0)
    demand = metrics[metrics["metric"] != "VolumeQueueLength"]
    with pytest.raises(ValueError, match="VolumeQueueLength, and the metrics hold none"):
        aws.traces(demand, gaps="zero", max_in_flight="measured")


def test_replay_with_measured_concurrency_takes_longer(metrics):
    # With 1 ms service time and 1 in flight (the measured queue lengths, at least 1) each volume
    # serves 1,000 IOPS at most. logs asks 2,000 for 118 minutes (two missing): 14.16e6 I/Os,
    # done at 14,160 s, 6,960 s after its trace's end: slowdown 14,160 / 7,200 = 1.9667.
    # data asks 1,500 for an hour (500 a second carried: 1.8e6 at 60 min) then 200, which drains
    # the backlog by 800 a second, by 3,600 + 2,250 s, inside its trace: no slowdown, but the
    # demand carried past each minute is in the comparison.
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.moto.json")
    att = aws.read_instances(DATA / "ec2-describe-instances.moto.json")
    res = aws.replay(metrics, vols, att, gaps="zero", max_in_flight="measured", service_time_ms=1)
    logs, data = res[LOGS_VOL], res[DATA_VOL]
    assert logs.trace_steps == data.trace_steps == 120
    assert logs.finish_s == pytest.approx(14_160.0) and logs.slowdown == pytest.approx(14_160 / 7_200)
    assert data.slowdown == 1.0
    assert data.backlog_ops[59] == 1_800_000 and data.backlog_ops[60] == 1_800_000 - 800 * 60
    c = aws.compare(data, metrics, DATA_VOL)
    assert c.frame.shape[0] == 120  # the trace's periods
    assert c.frame["simulated_carried_ops"].iloc[0] == 30_000 and c.frame["simulated_carried_ops"].iloc[99] == 0
    # At the device 1 I/O at most: the simulated VolumeQueueLength is 1 where the bound holds.
    assert c.frame["simulated_queue_length"].iloc[10] == pytest.approx(1.0)
    plain = aws.replay(metrics, vols, att, gaps="zero", run_on=False)
    assert plain[LOGS_VOL].trace_steps is None and plain[LOGS_VOL].n_steps == 120


def _latency_metrics(read_s_per_op: float) -> pd.DataFrame:
    # Three minutes of 5,000 reads a second of 4 KiB (300,000 a minute), and the time they took
    # at the device as CloudWatch sums it: read_s_per_op a read; no writes.
    vid = "vol-0123abcd"
    rows = []
    for m in range(3):
        t = T0 + pd.Timedelta(minutes=m)
        for metric, unit, stat, v in (
            ("VolumeReadOps", "Count", "Sum", 300_000.0),
            ("VolumeWriteOps", "Count", "Sum", 0.0),
            ("VolumeReadBytes", "Bytes", "Sum", 300_000 * 4096.0),
            ("VolumeWriteBytes", "Bytes", "Sum", 0.0),
            ("VolumeTotalReadTime", "Seconds", "Sum", 300_000 * read_s_per_op),
            ("VolumeTotalWriteTime", "Seconds", "Sum", 0.0),
            ("VolumeQueueLength", "Count", "Average", 64.0),
        ):
            rows.append((t, vid, metric, stat, 60.0, unit, v))
    return aws.check_metrics(pd.DataFrame(rows, columns=list(aws.COLUMNS)))


def test_compare_sets_measured_against_simulated_device_latency():
    # Replayed on gp3 100 GiB (3,000 IOPS) with the measured 64 in flight: the device latency is
    # 64 / 3,000 s = 21.333 ms in every minute; measured 20 ms a read: error 1.333 ms. Writes:
    # none measured (0 ops), so no write latency to compare.
    metrics = _latency_metrics(0.020)
    res = aws.replay(metrics, {"vol-0123abcd": gp3(100)}, max_in_flight="measured")
    c = aws.compare(res["vol-0123abcd"], metrics)
    assert list(c.frame["measured_read_latency_ms"]) == pytest.approx([20.0] * 3)
    assert list(c.frame["simulated_read_latency_ms"]) == pytest.approx([64 / 3] * 3, rel=1e-12)
    e = c.errors.loc["read_latency_ms"]
    assert e["rmse"] == pytest.approx(4 / 3, rel=1e-9) and e["bias"] == pytest.approx(4 / 3, rel=1e-9)
    assert "write_latency_ms" not in c.errors.index  # every minute's write latency is 0 / 0
    assert list(c.frame["simulated_queue_length"]) == pytest.approx([64.0] * 3, rel=1e-12)
    assert len(c.plot().axes) == 4  # IOPS, queue length, read and write latency
    # The slowdown: 900,000 I/Os at 3,000 a second take 300 s, the trace 180 s.
    assert res["vol-0123abcd"].slowdown == pytest.approx(300 / 180, rel=1e-12)


def test_a_bound_per_step_pickles_and_runs_in_a_fleet():
    # A fleet pools lone open loops for the lockstep kernel; one with a bound per step runs alone,
    # with its own results (those of test_a_bound_per_step_by_hand: all 15,000 I/Os served in the
    # 10 s, 1,500 IOPS, the backlog gone at the end).
    import pickle

    w = _per_step()
    back = pickle.loads(pickle.dumps(w))
    assert back.max_in_flight.tolist() == w.max_in_flight.tolist()
    plain = OpenLoop.constant(100, "4k", 10)
    fleet = ebssim.fleet.simulate_fleet({"a": gp3(100), "b": gp3(100), "c": gp3(100)}, {"a": w, "b": plain, "c": w})
    alone = simulate(gp3(100), w, record=False).summary()
    assert fleet.summary.loc["a", "served_iops"] == pytest.approx(alone.mean_iops) == pytest.approx(1500.0)
    assert fleet.summary.loc["c", "served_iops"] == pytest.approx(1500.0)
    assert fleet.summary.loc["c", "max_in_flight_s"] == 9.0 and fleet.summary.loc["c", "backlog_ops_end"] == 0
