"""Traces from pandas (ebssim.trace, OpenLoop.from_pandas): the step from the index, wall-clock
results, reads and writes apart, coarse traces spread evenly, gaps, and bad input.

Numbers are worked out by hand from the rules: a 100 GiB gp2 volume has 5.4e6 credits, earns its
300 IOPS baseline and bursts to 3,000 IOPS; gp3 defaults to 3,000 IOPS and 125 MiB/s.
"""

from __future__ import annotations

import ebssim
import numpy as np
import pandas as pd
import pytest
from ebssim.trace import from_pandas

MiB = 2**20


def minutes(n: int, start: str = "2024-05-01 00:00") -> pd.DatetimeIndex:
    return pd.date_range(start, periods=n, freq="1min", tz="UTC")


def reads_4k(n: int, per_minute: float) -> pd.DataFrame:
    return pd.DataFrame({"read_ops": per_minute, "read_bytes": per_minute * 4096}, index=minutes(n))


# --- the step comes from the index ------------------------------------------------------------


def test_minute_sums_replay_at_one_step_per_minute():
    # 72,000 I/Os per minute = 1,200 IOPS; the bucket drains at 1,200 - 300 = 900 credits/s:
    # 5.4e6 / 900 = 6,000 s.
    trace = from_pandas(reads_4k(200, 72_000.0))
    assert trace.dt == 60.0 and trace.resolution_s == 60.0
    r = ebssim.simulate(ebssim.gp2(100), trace)
    assert r.dt_s == 60.0 and r.n_steps == 200
    assert r.cliff_time_s == pytest.approx(6000.0)
    assert r.iops[0] == pytest.approx(1200.0)
    assert r.iops[150] == pytest.approx(300.0)


def test_the_issue_one_minute_sums_as_one_second_demand():
    # What the issue measured: the same sums without the step are 72,000 I/Os per second,
    # capped at 3,000: the bucket drains at 2,700/s, 5.4e6 / 2,700 = 2,000 s. from_pandas
    # carries dt=60, so the mistake is now an error instead. (3,000 rows: 3,000 s at 1 s steps.)
    df = reads_4k(3000, 72_000.0)
    plain = ebssim.OpenLoop(df["read_ops"].to_numpy(), df["read_bytes"].to_numpy())
    assert ebssim.simulate(ebssim.gp2(100), plain).cliff_time_s == pytest.approx(2000.0)
    with pytest.raises(ValueError, match=r"trace in steps of 60 s but dt is 1 s"):
        ebssim.simulate(ebssim.gp2(100), from_pandas(df), dt=1)
    with pytest.raises(ValueError, match=r"workloads\[0\] is a trace in steps of 60 s but Simulation"):
        ebssim.Simulation([ebssim.gp2(100)]).run([from_pandas(df)])
    # The same dt is fine.
    assert ebssim.simulate(ebssim.gp2(100), from_pandas(df), dt=60).cliff_time_s == pytest.approx(6000.0)


def test_a_coarse_trace_spread_evenly_over_a_finer_step():
    # dt=1: each minute's 72,000 I/Os become 1,200 per one-second step; the cliff is the same
    # 6,000 s, now resolved to the second, and the first throttled second queues 900 I/Os.
    trace = from_pandas(reads_4k(200, 72_000.0), dt=1)
    assert trace.n_steps == 12_000 and trace.dt == 1.0 and trace.resolution_s == 60.0
    assert np.all(trace.ops == 1200.0)
    assert "measured per 60 s, spread evenly" in str(trace)
    r = ebssim.simulate(ebssim.gp2(100), trace)
    assert r.cliff_time_s == pytest.approx(6000.0)
    assert r.iops[5999] == pytest.approx(1200.0) and r.iops[6000] == pytest.approx(300.0)
    # dt=20 divides the minute: 24,000 I/Os per step.
    assert np.all(from_pandas(reads_4k(2, 72_000.0), dt=20).ops == 24_000.0)


def test_results_keep_the_wall_clock():
    trace = from_pandas(reads_4k(3, 6000.0))
    df = ebssim.simulate(ebssim.gp2(100), trace).to_pandas()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "time"
    assert list(df.index) == list(minutes(3))
    # After a rest the clock of the simulation moves on, the wall clock of the trace does not.
    sim = ebssim.Simulation([ebssim.gp2(100)], dt=60)
    sim.rest(600)
    run = sim.run([trace])
    assert run[0].t0_s == 600.0
    assert run[0].to_pandas().index[0] == pd.Timestamp("2024-05-01 00:00", tz="UTC")
    # A finer step: one row per second from the trace's start.
    fine = ebssim.simulate(ebssim.gp2(100), from_pandas(reads_4k(3, 6000.0), dt=1)).to_pandas()
    assert fine.index[61] == pd.Timestamp("2024-05-01 00:01:01", tz="UTC")
    # Without wall-clock time, float seconds as before.
    plain = ebssim.simulate(ebssim.gp2(100), ebssim.OpenLoop.constant(10, "4k", 3)).to_pandas()
    assert plain.index.name == "time_s" and list(plain.index) == [0.0, 1.0, 2.0]


# --- reads and writes, apart ------------------------------------------------------------------


def test_reads_and_writes_vary_independently():
    # Minute 0: 60,000 reads of 4 KiB and 12,000 writes of 16 KiB: 1,000 + 200 IOPS,
    # 1,000 x 4 KiB = 3.90625 MiB/s read, 200 x 16 KiB = 3.125 MiB/s written. Minute 1: reads
    # only (500 IOPS); minute 2: writes only (100 IOPS). Nothing is throttled.
    df = pd.DataFrame(
        {
            "read_ops": [60_000, 30_000, 0],
            "write_ops": [12_000, 0, 6_000],
            "read_bytes": [60_000 * 4096, 30_000 * 4096, 0],
            "write_bytes": [12_000 * 16384, 0, 6_000 * 16384],
        },
        index=minutes(3),
    )
    trace = from_pandas(df)
    assert trace.read_fraction == pytest.approx(90_000 / 108_000)
    out = ebssim.simulate(ebssim.gp2(100), trace).to_pandas()
    assert list(out["read_iops"]) == pytest.approx([1000, 500, 0])
    assert list(out["write_iops"]) == pytest.approx([200, 0, 100])
    assert list(out["read_mib_s"]) == pytest.approx([3.90625, 1.953125, 0])
    assert list(out["write_mib_s"]) == pytest.approx([3.125, 0, 1.5625])


def test_split_of_what_is_served_when_throttled():
    # gp3 100 GiB: 3,000 IOPS. 4 KiB I/Os, one-second steps.
    # step 0: 4,000 reads + 2,000 writes arrive; half is served (3,000 / 6,000):
    #         2,000 reads, 1,000 writes; 2,000 reads and 1,000 writes wait.
    # step 1: 3,000 writes arrive; 6,000 are available, half is served:
    #         reads 0.5 x 2,000 = 1,000, writes 0.5 x (1,000 + 3,000) = 2,000.
    # step 2: nothing arrives; the 3,000 waiting (1,000 reads, 2,000 writes) are served.
    idx = pd.date_range("2024-05-01", periods=3, freq="1s")
    df = pd.DataFrame({"read_iops": [4000.0, 0, 0], "write_iops": [2000.0, 3000.0, 0]}, index=idx)
    r = ebssim.simulate(ebssim.gp3(100), from_pandas(df, io_size="4k"))
    assert list(r.iops) == pytest.approx([3000, 3000, 3000])
    assert list(r.read_iops) == pytest.approx([2000, 1000, 1000])
    assert list(r.write_iops) == pytest.approx([1000, 2000, 2000])
    assert list(r.read_mib_s) == pytest.approx([2000 * 4096 / MiB, 1000 * 4096 / MiB, 1000 * 4096 / MiB])


def test_the_core_split_hand_worked():
    # A cap of 100 I/Os a step. Step 0: 150 arrive, 60 of them reads: f = 100 / 150, 40 reads
    # served, 20 wait among the 50 left. Step 1: nothing arrives, the 50 are served (f = 1): 20 reads.
    ops, reads = np.array([150.0, 0.0]), np.array([60.0, 0.0])
    r_ops, r_bytes = ebssim._core.split_served(
        ops, ops * 4096, reads, reads * 4096, [100.0, 50.0], [100.0 * 4096, 50.0 * 4096], [50.0, 0.0], 0.0, 0.4
    )
    assert list(r_ops) == pytest.approx([40.0, 20.0], rel=1e-15)
    assert list(r_bytes) == pytest.approx([40.0 * 4096, 20.0 * 4096], rel=1e-15)


@pytest.mark.parametrize(
    ("position", "name"),
    [(1, "bytes"), (2, "read_ops"), (3, "read_bytes"), (4, "served_ops"), (5, "served_bytes"), (6, "backlog_ops")],
)
def test_the_core_split_refuses_arrays_of_another_length(position: int, name: str):
    arrays = [np.ones(3) for _ in range(7)]
    arrays[position] = np.ones(2)
    with pytest.raises(ValueError, match=rf"^{name} has 2 steps but ops has 3: the arrays must have the same length$"):
        ebssim._core.split_served(*arrays, 0.0, 1.0)


def test_the_split_needs_the_backlog_series():
    idx = pd.date_range("2024-05-01", periods=3, freq="1s")
    df = pd.DataFrame({"read_iops": [4000.0, 0, 0], "write_iops": [2000.0, 3000.0, 0]}, index=idx)
    rec = ebssim.Recording(series=["iops", "throughput_mib_s", "bound"])
    r = ebssim.simulate(ebssim.gp3(100), from_pandas(df, io_size="4k"), record=rec)
    with pytest.raises(ValueError, match=r"read/write split of a trace needs the series backlog_ops"):
        _ = r.read_iops


def test_a_result_reads_back_as_a_trace():
    df = pd.DataFrame({"read_iops": [1000.0, 0.0], "write_iops": [0.0, 500.0]}, index=minutes(2))
    r = ebssim.simulate(ebssim.gp3(100), from_pandas(df, io_size="16k"))
    back = from_pandas(r.to_pandas()[["read_iops", "write_iops", "read_mib_s", "write_mib_s"]])
    assert list(back.ops) == pytest.approx([60_000, 30_000])  # 1,000 x 60, 500 x 60
    assert list(back.read_bytes) == pytest.approx([60_000 * 16384, 0])


def test_totals_with_a_read_fraction_or_an_io_size():
    df = pd.DataFrame({"ops": [600.0, 1200.0]}, index=minutes(2))
    t = from_pandas(df, io_size="8k", read_fraction=0.25)
    assert list(t.bytes) == [600 * 8192, 1200 * 8192]
    assert t.read_ops is None and t.read_fraction == 0.25
    r = ebssim.simulate(ebssim.gp3(100), t)
    assert list(r.read_iops) == pytest.approx([2.5, 5.0])  # 10 and 20 IOPS, a quarter reads


# --- index kinds ------------------------------------------------------------------------------


def test_period_index_timedelta_index_seconds_and_positions():
    per = pd.period_range("2024-05-01 00:00", periods=2, freq="min")
    t = from_pandas(pd.Series([60.0, 120.0], index=per, name="ops"), io_size="4k")
    assert t.dt == 60.0 and t.start == pd.Timestamp("2024-05-01 00:00")
    td = pd.timedelta_range("0s", periods=3, freq="10s")
    t = from_pandas(pd.Series([1.0, 2.0, 3.0], index=td, name="ops"), io_size="4k")
    assert t.dt == 10.0 and t.start is None
    secs = pd.Index([0.0, 5.0, 10.0], name="time_s")
    assert from_pandas(pd.Series([1.0, 2.0, 3.0], index=secs, name="ops"), io_size="4k").dt == 5.0
    rows = pd.Series([1.0, 2.0], name="ops")  # a RangeIndex: rows of period= seconds
    assert from_pandas(rows, io_size="4k", period=30).dt == 30.0
    assert from_pandas(rows, io_size="4k", period="30s").dt == 30.0


# --- gaps ---------------------------------------------------------------------------------------


def gapped() -> pd.DataFrame:
    # five one-minute rows, the second and third missing
    ops = [60.0, 0, 0, 120.0, 120.0]
    df = pd.DataFrame({"ops": ops, "bytes": [x * 4096 for x in ops]}, index=minutes(5))
    return df.drop(minutes(5)[1:3])


def test_gaps_error_zero_interpolate():
    # Rows 3 minutes and then 1 minute apart: irregular, until the period is given.
    with pytest.raises(ValueError, match=r"the index is irregular: its rows are 60 s \(1x\), 180 s \(1x\) apart"):
        from_pandas(gapped())
    with pytest.raises(ValueError, match=r"ops has no value for 2 of 5 periods of 60 s, the first at 2024-05-01 00:01"):
        from_pandas(gapped(), period="60s")
    assert list(from_pandas(gapped(), period="60s", gaps="zero").ops) == [60, 0, 0, 120, 120]
    # a straight line from 60 to 120 over three periods: 80, 100
    assert list(from_pandas(gapped(), period="60s", gaps="interpolate").ops) == pytest.approx([60, 80, 100, 120, 120])
    # NaN is a gap too; at the start there is nothing to interpolate from.
    df = pd.DataFrame({"ops": [np.nan, 60.0], "bytes": [np.nan, 60 * 4096.0]}, index=minutes(2))
    with pytest.raises(ValueError, match=r"ops has no value for 1 of 2 periods"):
        from_pandas(df)
    with pytest.raises(ValueError, match=r"at the start of the trace, where gaps='interpolate'"):
        from_pandas(df, gaps="interpolate")
    with pytest.raises(ValueError, match=r"gaps='nope' must be one of"):
        from_pandas(df, gaps="nope")


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, kwargs, message",
    [
        (lambda: reads_4k(3, 1.0).iloc[[0, 2, 1]], {}, r"out of order: row 2 .* sort it: df.sort_index\(\)"),
        (
            lambda: reads_4k(3, 1.0).iloc[[0, 1, 1]],
            {},
            r"the time 2024-05-01 00:01:00\+00:00 twice .*df.groupby\(level=0\).sum\(\)",
        ),
        (
            lambda: (
                reads_4k(3, 1.0)
                .iloc[[0, 1]]
                .set_axis(minutes(2)[:1].append(pd.DatetimeIndex(["2024-05-01 00:01:30"], tz="UTC")))
            ),
            {"period": 60},
            r"row 1 .* is not a whole number of periods of 60 s",
        ),
        (
            lambda: reads_4k(2, -1.0),
            {},
            r"read_ops at 2024-05-01 00:00:00\+00:00 is -1.0: demand must be a finite number >= 0",
        ),
        (lambda: reads_4k(2, np.inf), {}, r"read_ops at .* is inf"),
        (lambda: reads_4k(2, 1.0).astype(str), {}, r"read_ops must hold numbers"),
        (lambda: reads_4k(2, 1.0).assign(latency_ms=1.0), {}, r"\['latency_ms'\] are not demand"),
        (lambda: reads_4k(2, 1.0).assign(write_iops=1.0), {}, r"mixes counts per row .* and rates"),
        (lambda: reads_4k(2, 1.0).assign(ops=1.0), {}, r"both a total \['ops'\] and its parts"),
        (
            lambda: reads_4k(2, 1.0).assign(bytes=1.0).drop(columns="read_bytes"),
            {},
            r"the I/Os are split .* but the bytes are a total",
        ),
        (lambda: reads_4k(2, 1.0).drop(columns="read_bytes"), {}, r"read_ops is given without read_bytes"),
        (lambda: reads_4k(2, 1.0), {"io_size": "4k"}, r"io_size='4k' is given but so are byte columns"),
        (lambda: reads_4k(2, 1.0), {"read_fraction": 0.5}, r"read_fraction=0.5 is given but the data splits"),
        (
            lambda: reads_4k(2, 0.0).assign(read_bytes=4096.0),
            {},
            r"read_ops is 0 at 2024-05-01 00:00:00\+00:00 but its bytes are 4096",
        ),
        (lambda: reads_4k(2, 1.0), {"period": "30s"}, r"period='30s' \(30 s\) disagrees with the index's freq of 60 s"),
        (lambda: reads_4k(2, 1.0), {"dt": 120}, r"dt=120 is coarser than the trace's period of 60 s: .*resample"),
        (lambda: reads_4k(2, 1.0), {"dt": 7}, r"dt=7 does not divide the trace's period of 60 s"),
        (
            lambda: reads_4k(1, 1.0).set_axis(pd.DatetimeIndex(["2024-05-01"], tz="UTC")),
            {},
            r"one row cannot tell the period",
        ),
        (lambda: reads_4k(2, 1.0).reset_index(drop=True), {}, r"holds no time: pass period="),
        (lambda: reads_4k(2, 1.0).iloc[:0], {}, r"no rows"),
        (lambda: pd.Series([1.0, 2.0], index=minutes(2)), {"io_size": "4k"}, r"the Series has no name"),
        (lambda: np.ones(3), {}, r"must be a pandas Series or DataFrame"),
        (lambda: pd.DataFrame({"bytes": [1.0]}, index=minutes(1)), {"period": 60}, r"no I/O column"),
        (lambda: pd.DataFrame({"ops": [1.0]}, index=minutes(1)), {"period": 60}, r"no byte column"),
    ],
)
def test_bad_input_is_a_clear_error(make, kwargs, message):
    with pytest.raises(ValueError, match=message):
        from_pandas(make(), **kwargs)


def cloudwatch_sums() -> pd.DataFrame:
    """Three minutes of CloudWatch's own columns (statistic Sum: I/Os and bytes per minute)."""
    return pd.DataFrame(
        {
            "VolumeReadOps": [60_000.0, 30_000.0, 0.0],
            "VolumeWriteOps": [6_000.0, 0.0, 6_000.0],
            "VolumeReadBytes": [60_000 * 4096.0, 30_000 * 4096.0, 0.0],
            "VolumeWriteBytes": [6_000 * 16384.0, 0.0, 6_000 * 16384.0],
        },
        index=minutes(3),
    )


def test_cloudwatch_column_names_are_the_sums_they_hold():
    trace = ebssim.OpenLoop.from_pandas(cloudwatch_sums())
    # Each Sum is the I/Os or bytes of its minute: 60,000 + 6,000 I/Os in the first, at 60 s a step.
    assert trace.dt == 60.0 and trace.start == pd.Timestamp("2024-05-01", tz="UTC")
    assert trace.ops.tolist() == [66_000.0, 30_000.0, 6_000.0]
    assert trace.read_ops.tolist() == [60_000.0, 30_000.0, 0.0]
    assert trace.bytes.tolist() == [60_000 * 4096 + 6_000 * 16384, 30_000 * 4096, 6_000 * 16384]
    r = ebssim.simulate(ebssim.gp3(100), trace)
    assert r.iops.tolist() == [1100.0, 500.0, 100.0]  # 66,000 / 60 s, 30,000 / 60, 6,000 / 60
    # The path of ebssim.aws (the same Sums as CloudWatch datapoints) reads them the same way.
    import ebssim.aws as aws

    via_aws = aws.traces(aws.metrics_from_wide(cloudwatch_sums(), "vol-0abc"))["vol-0abc"]
    for name in ("ops", "bytes", "read_ops", "read_bytes"):
        assert getattr(via_aws, name).tolist() == getattr(trace, name).tolist()


def test_cloudwatch_column_names_in_messages_and_hints():
    bad = cloudwatch_sums()
    bad.iloc[1, 0] = -1.0
    with pytest.raises(ValueError, match=r"^VolumeReadOps at 2024-05-01 00:01:00\+00:00 is -1.0"):
        from_pandas(bad)
    with pytest.raises(ValueError, match=r"both VolumeReadOps and read_ops, which hold the same quantity"):
        from_pandas(cloudwatch_sums().assign(read_ops=1.0))
    with pytest.raises(ValueError, match=r"VolumeReadOps is given without VolumeReadBytes"):
        from_pandas(cloudwatch_sums()[["VolumeReadOps"]])
    with pytest.raises(ValueError, match=r"\['BurstBalance'\] are not demand: .*CloudWatch's Sums VolumeReadOps"):
        from_pandas(cloudwatch_sums().assign(BurstBalance=100.0))


def test_irregular_index_says_how_to_resample():
    idx = pd.DatetimeIndex(
        ["2024-05-01 00:00", "2024-05-01 00:01", "2024-05-01 00:02", "2024-05-01 00:03:30"], tz="UTC"
    )
    with pytest.raises(ValueError, match=r"irregular: .*df.resample\('60s'\).sum\(\) for counts"):
        from_pandas(pd.DataFrame({"ops": 1.0, "bytes": 4096.0}, index=idx))


def test_memory_bound():
    with pytest.raises(ebssim.LimitError, match=r"above max_memory_bytes=1000"):
        from_pandas(reads_4k(10, 60.0), dt=1, max_memory_bytes=1000)


def test_open_loop_checks_its_new_fields():
    ops, nbytes = np.array([10.0, 10.0]), np.array([40960.0, 40960.0])
    with pytest.raises(ValueError, match=r"read_ops is given without read_bytes"):
        ebssim.OpenLoop(ops, nbytes, read_ops=ops)
    with pytest.raises(ValueError, match=r"read_ops\[1\]=11.0 must be a finite number between 0 and ops\[1\]=10.0"):
        ebssim.OpenLoop(ops, nbytes, read_ops=np.array([1.0, 11.0]), read_bytes=nbytes)
    with pytest.raises(ValueError, match=r"read_fraction=0.5 and read_ops are both given"):
        ebssim.OpenLoop(ops, nbytes, read_ops=ops, read_bytes=nbytes, read_fraction=0.5)
    with pytest.raises(ValueError, match=r"resolution_s=90 must be a whole number"):
        ebssim.OpenLoop(ops, nbytes, dt=60, resolution_s=90)
    with pytest.raises(ValueError, match=r"resolution_s=60 needs dt"):
        ebssim.OpenLoop(ops, nbytes, resolution_s=60)
    with pytest.raises(ValueError, match=r"start='2024-05-01' must be a pandas.Timestamp"):
        ebssim.OpenLoop(ops, nbytes, start="2024-05-01")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dt=0 must be a positive"):
        ebssim.OpenLoop(ops, nbytes, dt=0)


def test_a_time_indexed_series_is_not_an_array():
    # The issue: OpenLoop(series) dropped the DatetimeIndex, and with it the step.
    s = pd.Series([60.0, 60.0], index=minutes(2))
    with pytest.raises(
        ValueError, match=r"ops is a pandas object indexed by time \(DatetimeIndex\).*OpenLoop.from_pandas"
    ):
        ebssim.OpenLoop(s, s * 4096)
    plain = pd.Series([60.0, 60.0])  # a RangeIndex holds no time: an array, as before
    assert ebssim.OpenLoop(plain, plain * 4096).n_steps == 2


def test_simulate_without_dt_steps_one_second_for_other_workloads():
    assert ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(1, "4k"), duration_s=3, dt=None).dt_s == 1.0
