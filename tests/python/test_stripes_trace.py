"""Traces (open loops) on a striped set (issue 23 item 1): each member receives, per step, the set's
I/Os times member_share at the step's mean I/O size and an N-th of its bytes (the C++ core's
``stripe_member_trace``), and the set's figures are the slowest member's over that share. Every
expected figure is worked out by hand in the comment beside it (docs/model.md, "Striped sets")."""

from __future__ import annotations

import ebssim
import numpy as np
import pytest

GP3 = ebssim.gp3(100)  # 3,000 IOPS, 125 MiB/s
MIB = 2**20
KIB = 1024


def md0() -> ebssim.StripedSet:
    """Two gp3 100 GiB with 256 KiB chunks: 1 MiB is 4 pieces of 256 KiB, 2 on each member
    (member_share 2); 16 KiB lands whole on one member (member_share 1 / 2)."""
    return ebssim.striped([GP3] * 2, chunk_kib=256)


def test_a_constant_1_mib_trace_puts_two_pieces_per_set_io_on_each_member() -> None:
    # 100 reads of 1 MiB a second: each member 100 x 2 = 200 I/Os of 256 KiB, 50 MiB a second.
    trace = ebssim.OpenLoop.constant(100, "1m", 5)
    one = md0().member_workload(trace)
    assert isinstance(one, ebssim.OpenLoop)
    assert one.ops.tolist() == [200.0] * 5 and one.bytes.tolist() == [50.0 * MIB] * 5
    r = md0().simulate(trace)
    assert [float(m.iops[0]) for m in r.members] == [200.0, 200.0]  # under 3,000 IOPS and 125 MiB/s
    assert r.iops.tolist() == [100.0] * 5  # 200 / member_share 2
    assert r.throughput_mib_s.tolist() == [100.0] * 5  # 2 members x 50 MiB/s
    assert r.mean_iops == 100.0  # the members' 200 a second / 2
    # 400 a second: each member is asked 800 x 256 KiB = 200 MiB/s, above its 125: it serves
    # 125 MiB/s = 500 pieces, so the set 500 / 2 = 250 I/Os and 2 x 125 = 250 MiB a second.
    big = md0().simulate(ebssim.OpenLoop.constant(400, "1m", 3))
    assert big.iops.tolist() == [250.0] * 3
    assert big.throughput_mib_s.tolist() == [250.0] * 3
    # the backlog of each member: 300 pieces a second more than it serves, 900 after 3 s
    assert big.members[0].totals.backlog_ops == pytest.approx(900.0, rel=1e-12)


def test_a_16_kib_trace_has_half_a_set_io_on_each_member() -> None:
    # 4,000 reads of 16 KiB a second: 2,000 on each member, 31.25 MiB/s; the set 2,000 / 0.5.
    r = md0().simulate(ebssim.OpenLoop.constant(4000, "16k", 3))
    assert r.members[0].workload.ops.tolist() == [2000.0] * 3
    assert r.iops.tolist() == [4000.0] * 3
    assert r.throughput_mib_s.tolist() == [62.5] * 3  # 2 x 2,000 x 16 KiB
    # 8,000 a second: 4,000 on each, capped at 3,000: the set 3,000 / 0.5 = 6,000.
    assert md0().simulate(ebssim.OpenLoop.constant(8000, "16k", 2)).iops.tolist() == [6000.0, 6000.0]


def test_a_varying_trace_is_split_step_by_step() -> None:
    # Step 0: 100 x 1 MiB (200 pieces a member); step 1: 4,000 x 16 KiB (2,000); step 2: nothing;
    # step 3: 8,000 x 16 KiB (4,000, 3,000 served, 1,000 left); step 4: nothing, the backlog of
    # 1,000 served: the set's I/Os of step 4 are step 3's, 1,000 / 0.5 = 2,000.
    ops = np.array([100.0, 4000.0, 0.0, 8000.0, 0.0])
    nbytes = np.array([100.0 * MIB, 4000.0 * 16 * KIB, 0.0, 8000.0 * 16 * KIB, 0.0])
    r = md0().simulate(ebssim.OpenLoop(ops, nbytes))
    assert r.members[0].workload.ops.tolist() == [200.0, 2000.0, 0.0, 4000.0, 0.0]
    assert [float(x) for x in r.members[0].iops] == pytest.approx([200.0, 2000.0, 0.0, 3000.0, 1000.0], rel=1e-12)
    assert r.iops.tolist() == pytest.approx([100.0, 4000.0, 0.0, 6000.0, 2000.0], rel=1e-12)
    # over the run: 200 + 2,000 + 4,000 = 6,200 member I/Os for 12,100 set I/Os; all served, so
    # the set's mean is 12,100 / 5 s = 2,420
    assert r.mean_iops == pytest.approx(2420.0, rel=1e-12)
    # every step's bytes are served: 2 x the member's, 100 MiB, 62.5, 0, 2 x 3,000 x 16 KiB = 93.75, 31.25
    assert r.throughput_mib_s.tolist() == pytest.approx([100.0, 62.5, 0.0, 93.75, 31.25], rel=1e-12)


def test_reads_and_writes_split_each_at_their_own_size() -> None:
    # 100 reads of 1 MiB (2 pieces on each member: 200) and 1,000 writes of 16 KiB (500 on each):
    # 700 member I/Os, 200 of them reads, for 1,100 set I/Os (member_share 7 / 11).
    trace = ebssim.OpenLoop([1100.0], [100.0 * MIB + 1000 * 16 * KIB], read_ops=[100.0], read_bytes=[100.0 * MIB])
    one = md0().member_workload(trace)
    assert isinstance(one, ebssim.OpenLoop) and one.read_ops is not None
    assert one.ops.tolist() == [700.0] and one.read_ops.tolist() == [200.0]
    assert one.read_fraction == pytest.approx(200 / 700, rel=1e-12)
    assert md0().simulate(trace).iops[0] == pytest.approx(1100.0, rel=1e-12)  # 700 / (7 / 11)


def test_a_bound_on_outstanding_ios_is_shared_like_in_flight() -> None:
    # max_in_flight 16 set I/Os of 1 MiB: a member holds 16 x 2 = 32 pieces; of 16 KiB: 16 x 0.5 = 8.
    assert md0().member_workload(ebssim.OpenLoop.constant(10, "1m", 2, max_in_flight=16)).max_in_flight == 32.0
    assert md0().member_workload(ebssim.OpenLoop.constant(10, "16k", 2, max_in_flight=16)).max_in_flight == 8.0
    # sizes that change: one bound per step, 32 then 8, the step without I/O keeping 8
    mixed = ebssim.OpenLoop([10.0, 10.0, 0.0], [10.0 * MIB, 160.0 * KIB, 0.0], max_in_flight=16)
    one = md0().member_workload(mixed)
    assert isinstance(one, ebssim.OpenLoop)
    assert np.asarray(one.max_in_flight).tolist() == [32.0, 8.0, 8.0]


def test_a_constant_trace_on_the_set_is_its_member_traces_run_directly() -> None:
    trace = ebssim.OpenLoop.constant(7000, "16k", 20)
    r = md0().simulate(trace, instance="m5.large")
    # the members' traces by hand: 3,500 I/Os of 16 KiB a second each, run as two volumes
    direct = ebssim.Simulation([GP3, GP3], instance="m5.large").run([ebssim.OpenLoop.constant(3500, "16k", 20)] * 2)
    for m, d in zip(r.members, direct):
        assert np.array_equal(m.iops, d.iops) and np.array_equal(m.latency_s, d.latency_s)
        assert m.totals.served_ops == d.totals.served_ops
    assert r.iops.tolist() == (np.asarray(direct[0].iops) / 0.5).tolist()


def test_a_trace_beside_a_plain_volume_shares_the_instance() -> None:
    # An instance of 6,000 IOPS. md0 asks 8,000 x 16 KiB: 4,000 on each member, which offers its
    # cap, 3,000; the log volume asks 3,000. 9,000 offered on 6,000: proportional sharing keeps 2/3
    # of each, 2,000; the set completes 2,000 / 0.5 = 4,000 a second.
    inst = ebssim.Instance("six-k", baseline_iops=6000, max_iops=6000, baseline_mb_s=1000, max_mb_s=1000)
    sim = ebssim.Simulation({"md0": md0(), "log": GP3}, instance=inst)
    run = sim.run({"md0": ebssim.OpenLoop.constant(8000, "16k", 3), "log": ebssim.OpenLoop.constant(3000, "16k", 3)})
    s, log = run["md0"], run["log"]
    assert isinstance(s, ebssim.StripedResult)
    assert [float(m.iops[0]) for m in s.members] == pytest.approx([2000.0, 2000.0], rel=1e-12)
    assert s.iops.tolist() == pytest.approx([4000.0] * 3, rel=1e-12)
    assert float(log.iops[0]) == pytest.approx(2000.0, rel=1e-12)
    assert float(run.instance.series.iops[0]) == pytest.approx(6000.0, rel=1e-12)


def test_a_replay_on_a_set_runs_until_its_work_is_done() -> None:
    # 8,000 x 16 KiB a second for 4 s beside an idle log: each member is asked 4,000 and serves
    # 3,000, 4,000 left after the trace, served in 4,000 / 3,000 = 1.33 s more: done at 5.33 s
    # (steps of 1 s: the last one in step 5). The set's I/Os: 6,000 a second, then 2,000 in step 5
    # (the backlog of 16 KiB I/Os, 1,000 / 0.5).
    sim = ebssim.Simulation({"md0": md0(), "log": GP3})
    trace = ebssim.OpenLoop.constant(8000, "16k", 4)
    rep = sim.replay({"md0": trace, "log": ebssim.OpenLoop.constant(0, "4k", 4)})
    s = rep["md0"]
    assert isinstance(s, ebssim.StripedResult)
    assert s.members[0].trace_steps == 4
    assert s.members[0].finish_s == pytest.approx(16000 / 3000, rel=1e-9)
    assert s.iops.tolist()[:6] == pytest.approx([6000.0] * 5 + [2000.0], rel=1e-12)
    assert s.mean_iops * s.members[0].n_steps == pytest.approx(32000.0, rel=1e-12)  # every set I/O served


def test_a_piecewise_trace_on_a_set() -> None:
    # 100 a second of 1 MiB for 2 s, then 4,000 of 16 KiB: member 200 then 2,000; the set 100 then 4,000.
    w = ebssim.OpenLoop.piecewise([0, 2], [100, 4000], bytes_per_s=[100 * MIB, 4000 * 16 * KIB])
    one = md0().member_workload(w)
    assert isinstance(one, ebssim.PiecewiseOpenLoop) and one.iops.tolist() == [200.0, 2000.0]
    r = md0().simulate(w, duration_s=4)
    assert r.iops.tolist() == pytest.approx([100.0, 100.0, 4000.0, 4000.0], rel=1e-12)
    assert r.mean_iops == pytest.approx((200 + 8000) / 4, rel=1e-12)  # 8,200 set I/Os in 4 s
    # a bound with segments that split differently cannot be one bound per member
    bounded = ebssim.OpenLoop.piecewise([0, 2], [100, 4000], bytes_per_s=[100 * MIB, 4000 * 16 * KIB], max_in_flight=8)
    with pytest.raises(ValueError, match=r"max_in_flight=8 on a striped set with segments of I/O sizes"):
        md0().member_workload(bounded)


def test_a_recording_every_few_steps_takes_the_share_of_its_arrivals() -> None:
    # 2 s of 100 x 1 MiB (200 pieces a member a second), then 2 s of 4,000 x 16 KiB (2,000): one
    # value per 2 s is the mean, 200 then 2,000 member I/Os a second, so the set's 100 then 4,000.
    ops = np.array([100.0, 100.0, 4000.0, 4000.0])
    trace = ebssim.OpenLoop(ops, np.array([100.0 * MIB, 100.0 * MIB, 4000 * 16.0 * KIB, 4000 * 16.0 * KIB]))
    sim = ebssim.Simulation({"md0": md0()})
    s = sim.run({"md0": trace}, record=ebssim.Recording(every_s=2))["md0"]
    assert s.iops.tolist() == pytest.approx([100.0, 4000.0], rel=1e-12)


def test_what_a_set_still_refuses_is_named() -> None:
    phased = ebssim.PhasedClosedLoop(np.array([4.0, 8.0]))
    with pytest.raises(ValueError, match="workload=PhasedClosedLoop: a striped set runs a ClosedLoop, an OpenLoop"):
        md0().member_workload(phased)  # type: ignore[arg-type]
    # run by name beside a volume, the error names the target
    sim = ebssim.Simulation({"md0": md0(), "log": GP3})
    with pytest.raises(ValueError, match=r"workloads\['md0'\]: workload=PhasedClosedLoop"):
        sim.run({"md0": phased, "log": ebssim.Idle()})


def test_a_run_without_series_still_gives_the_sets_mean() -> None:
    # 100 x 1 MiB then 4,000 x 16 KiB: 200 + 2,000 member I/Os for 4,100 set I/Os in 2 s, all served.
    trace = ebssim.OpenLoop([100.0, 4000.0], [100.0 * MIB, 4000 * 16.0 * KIB])
    r = md0().simulate(trace, record=False)
    assert r.iops.shape == (0,)
    assert r.mean_iops == pytest.approx(2050.0, rel=1e-12)


def test_simulate_steps_at_the_traces_own_step() -> None:
    # one-minute sums: 6,000 reads of 16 KiB a minute, 100 a second, 50 a second on each member
    trace = ebssim.OpenLoop([6000.0], [6000 * 16.0 * KIB], dt=60)
    r = md0().simulate(trace)
    assert r.members[0].dt_s == 60.0
    assert r.iops.tolist() == pytest.approx([100.0], rel=1e-12)


def test_a_replays_figures_leave_out_the_steps_that_completed_nothing() -> None:
    # 8,000 x 16 KiB for 2 s: each member asked 4,000 a second, serves 3,000; 2,000 left, done in
    # 2,000 / 3,000 s of step 2; the replay runs a step more (its margin), which completes nothing:
    # its latency is NaN and must not make the set's mean latency n/a.
    sim = ebssim.Simulation({"md0": md0()})
    s = sim.replay({"md0": ebssim.OpenLoop.constant(8000, "16k", 2)})["md0"]
    assert isinstance(s, ebssim.StripedResult)
    assert s.iops.tolist()[-1] == 0.0 and np.isnan(s.latency_s[-1])
    w = s.window(0, float(s.time_s[-1]) + 1)
    assert np.isfinite(w.latency_ms) and w.latency_ms > 0
    assert "latency n/a" not in repr(s)
