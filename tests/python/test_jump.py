"""Jumps over constant stretches (``jump=``) and the piecewise-constant open loop.

A jumped run must equal the stepped one: bit for bit at fixed points, otherwise within the
rounding of ``c + m * d`` against ``m`` additions (docs/model.md, "Jumps over constant
stretches": relative 1e-9 on totals and series, credits to 1e-9 of the bucket). Expected
numbers are worked out from the rules (gp2: 3 IOPS/GiB baseline, 3,000 burst, 5.4e6 credits).
"""

from __future__ import annotations

import math

import ebssim
import ebssim.analysis
import ebssim.testing
import numpy as np
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop, Simulation, simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROFILE = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REL = 1e-9


def _close(a: np.ndarray, b: np.ndarray, rel: float, abs_tol: float) -> bool:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    ok = np.abs(a - b) <= rel * np.maximum(np.abs(a), np.abs(b)) + abs_tol
    return bool(np.all(both_nan | ok))


def assert_same_run(j: ebssim.VolumeResult, s: ebssim.VolumeResult) -> None:
    """A jumped result against the stepped one, within the documented tolerance."""
    cap = max(1.0, j.volume.credit_capacity)
    tj, ts = j.totals, s.totals
    for name in ("demanded_ops", "served_ops", "served_counted", "latency_ops_s"):
        assert _close(getattr(tj, name), getattr(ts, name), REL, 1e-6), name
    for name in ("demanded_bytes", "served_bytes"):
        assert _close(getattr(tj, name), getattr(ts, name), REL, 1e-3), name
    # A draining backlog carries the absolute rounding of its largest value, as credits carry the
    # bucket's: 1e-9 of the most it can have held (the demand of the run, or its series' peak).
    peak = max(tj.demanded_ops, ts.demanded_ops, float(np.max(s.backlog_ops, initial=0.0)))
    peak_bytes = max(tj.demanded_bytes, ts.demanded_bytes)
    abs_b = 1e-9 * peak + 1e-6
    assert _close(tj.backlog_ops, ts.backlog_ops, REL, abs_b)
    assert _close(tj.backlog_bytes, ts.backlog_bytes, REL, 1e-9 * peak_bytes + 1e-3)
    assert _close(tj.credits_end, ts.credits_end, REL, 1e-9 * cap)
    assert list(tj.steps_bound) == list(ts.steps_bound)
    assert len(tj.cliffs) == len(ts.cliffs)
    for a, b in zip(tj.cliffs, ts.cliffs):
        assert _close(a.start_s, b.start_s, 1e-12, 1e-6 * j.dt_s)
        assert _close(a.end_s, b.end_s, 1e-12, 1e-6 * j.dt_s)
    if j.iops.shape[0]:
        # The step in which a bucket runs dry serves the credits left, which carry the credits'
        # absolute error; latency (outstanding / rate) then relatively 1e-6.
        # The same for the step in which a backlog empties, with the backlog's error.
        per_s = (1e-9 * cap + abs_b) / j.dt_s
        assert _close(j.iops, s.iops, REL, per_s)
        assert _close(j.ebs_iops, s.ebs_iops, REL, per_s)
        assert _close(j.credits, s.credits, REL, 1e-9 * cap)
        assert _close(j.backlog_ops, s.backlog_ops, REL, 1e-9 * cap + abs_b)
        assert _close(j.latency_ms, s.latency_ms, 1e-6, 1e-12)
        assert np.array_equal(j.series.bound, s.series.bound)


# --------------------------------------------------------------------------------------------
# Hand-worked cases
# --------------------------------------------------------------------------------------------


def test_reference_drain_is_bit_identical_to_stepping() -> None:
    # 100 GiB gp2, 32 x 4 KiB: 3,000 IOPS and -2,700 credits a second from 5.4e6: empty at
    # exactly 2,000 s, then the baseline, 300 IOPS. Whole numbers: c + m*d is exact.
    j = simulate(ebssim.gp2(100), ClosedLoop(32, "4k"), 2700)
    s = simulate(ebssim.gp2(100), ClosedLoop(32, "4k"), 2700, jump=False)
    for name in ("iops", "ebs_iops", "credits", "latency_ms", "backlog_ops"):
        assert np.array_equal(getattr(j, name), getattr(s, name), equal_nan=True), name
    assert j.cliff_time_s == s.cliff_time_s == 2000.0
    assert j.totals.served_ops == s.totals.served_ops == 2000 * 3000 + 700 * 300
    assert j.credits[1998] == 2700 and j.credits[1999] == 0


def test_fixed_points_are_bit_identical() -> None:
    # gp3 has no bucket; a full gp2 at rest stays full: every step is the first one.
    for vol, w in ((ebssim.gp3(500), ClosedLoop(7, "16k")), (ebssim.gp2(100), Idle())):
        j = simulate(vol, w, 5000)
        s = simulate(vol, w, 5000, jump=False)
        for name in ("iops", "ebs_iops", "credits", "latency_ms", "backlog_ops"):
            assert np.array_equal(getattr(j, name), getattr(s, name), equal_nan=True), name
        assert list(j.totals.steps_bound) == list(s.totals.steps_bound)


def test_piecewise_cliff_at_the_hand_worked_time() -> None:
    # 1,000 IOPS for an hour drains 700/s: 5.4e6 - 2.52e6 = 2.88e6 left. Then 2,000 IOPS drains
    # 1,700/s: empty 2.88e6 / 1,700 = 1,694.1176 s into the second hour.
    w = OpenLoop.piecewise([0, 3600], [1000, 2000], "4k")
    r = simulate(ebssim.gp2(100), w, duration_s=7200)
    assert r.cliff_time_s == pytest.approx(3600 + 2.88e6 / 1700, rel=1e-12)
    assert r.credits[3599] == 2.88e6
    # Everything arrives; what was served is everything before the cliff step, then the 300
    # baseline: 3,600 x 1,000 + 1,694 x 2,000 + (the 200 credits left + 300) + 1,905 x 300.
    assert r.totals.demanded_ops == 3600 * 1000 + 3600 * 2000
    assert r.totals.served_ops == pytest.approx(3600 * 1000 + 1694 * 2000 + 500 + 1905 * 300, rel=1e-12)
    assert r.offered_iops[0] == 1000 and r.offered_iops[-1] == 2000
    assert r.offered_iops.shape == (7200,)
    assert r.service_time_s == pytest.approx(ebssim.gp2(100).service_time_s(4096))
    # Stepped, it is the same per-step trace stepped: bit for bit.
    ops, nbytes = w.per_step(1.0, 7200)
    t = simulate(ebssim.gp2(100), OpenLoop(ops, nbytes), jump=False)
    p = simulate(ebssim.gp2(100), w, duration_s=7200, jump=False)
    for name in ("iops", "ebs_iops", "credits", "latency_ms", "backlog_ops"):
        assert np.array_equal(getattr(t, name), getattr(p, name), equal_nan=True), name
    assert_same_run(r, t)


def test_backlog_grows_and_drains_at_the_cap_hand_worked() -> None:
    # gp3 500 GiB (3,000 IOPS, 125 MiB/s): 4,000 IOPS of 4 KiB for 600 s leaves 1,000 a second
    # waiting, 600,000 after 600 s; then 2,000 IOPS drain it by 1,000 a second, empty 600 s later.
    vol = ebssim.gp3(500)
    w = OpenLoop.piecewise([0, 600], [4000, 2000], "4k")
    j = simulate(vol, w, 1400, dt=1.0)
    s = simulate(vol, w, 1400, dt=1.0, jump=False)
    assert_same_run(j, s)
    assert j.backlog_ops[599] == 600_000
    assert j.backlog_ops[1198] == 1000
    assert j.backlog_ops[1199] == 0
    assert j.totals.served_ops == 1200 * 3000 + 200 * 2000
    assert j.totals.served_ops == j.totals.demanded_ops
    # Little's law: 3.6e8 I/O-seconds waited (the triangle under the backlog, 1,200 s x 600,000
    # / 2) over 4e6 I/Os: 90 s on top of the service time.
    st_s = vol.service_time_s(4096)
    assert j.totals.latency_ops_s == pytest.approx(4e6 * st_s + 3.6e8, rel=1e-12)
    assert j.totals.latency_ops_s / j.totals.served_ops == pytest.approx(st_s + 90, rel=1e-12)


def test_piecewise_month_at_one_millisecond_without_per_step_values() -> None:
    # 100 GiB gp2 at dt = 1 ms. Each day: 8 h at 100 IOPS (+0.2 credits a step), 10 h at 400
    # (-0.1 a step: -3.6e6 a day), 6 h at 200 (+0.1 a step: +2.16e6). From full: the night keeps
    # it full, the day leaves 1.8e6, the evening 3.96e6; the next night fills it again.
    day = [100.0] * 8 + [400.0] * 10 + [200.0] * 6
    w = OpenLoop.piecewise(np.arange(720) * 3600.0, day * 30, "4k", duration_s=30 * 86400)
    r = simulate(ebssim.gp2(100), w, dt=0.001, record=False)
    assert r.n_steps == 2_592_000_000
    assert r.totals.credits_end == pytest.approx(3.96e6, rel=1e-9)
    served = 30 * 3600 * (8 * 100 + 10 * 400 + 6 * 200)
    assert r.totals.served_ops == pytest.approx(served, rel=1e-12)
    assert r.totals.demanded_ops == pytest.approx(served, rel=1e-12)
    assert r.cliff_time_s is None
    assert r.totals.steps_bound[0] == r.n_steps


def test_a_month_of_backlogs_of_another_mix_at_one_millisecond() -> None:
    # gp3 1,000 GiB at 3,000 IOPS and 750 MiB/s: the IOPS cap binds whatever the size (at most
    # 256 KiB per counted I/O). 4,000 counted I/Os a second arrive all month, alternating hourly
    # between 1,000 I/Os of 1 MiB (4 counted each) and 4,000 of 16 KiB, so the backlog grows by
    # 1,000 counted a second and every hour starts with a backlog of the other hour's mix: the
    # jump over a backlog of another mix (docs/model.md), 2.6e9 steps at dt = 1 ms.
    hours = 720
    iops = [1000.0, 4000.0] * (hours // 2)
    bytes_per_s = [1000.0 * 2**20, 4000.0 * 16384] * (hours // 2)
    w = OpenLoop.piecewise(np.arange(hours) * 3600.0, iops, bytes_per_s=bytes_per_s, duration_s=hours * 3600.0)
    r = simulate(ebssim.gp3(1000, iops=3000, throughput_mib_s=750), w, dt=0.001, record=False)
    t = r.totals
    seconds = hours * 3600
    assert r.n_steps == 2_592_000_000
    assert t.steps_bound[1] == r.n_steps  # IOPS-bound throughout
    assert t.served_counted == pytest.approx(3000 * seconds, rel=1e-12)
    # Nothing is lost: what arrived was served or is still waiting.
    assert t.demanded_ops == pytest.approx(seconds / 2 * (1000 + 4000), rel=1e-12)
    assert t.served_ops + t.backlog_ops == pytest.approx(t.demanded_ops, rel=1e-9)
    assert t.served_bytes + t.backlog_bytes == pytest.approx(t.demanded_bytes, rel=1e-9)
    # The backlog holds 1,000 counted I/Os for every second of the month, 2.592e9: between a
    # quarter as many I/Os (all 1 MiB) and as many (all 16 KiB).
    assert 2.592e9 / 4 < t.backlog_ops < 2.592e9


def test_volumes_on_an_instance_are_jumped_a_month_at_one_millisecond() -> None:
    # m5.large: 3,600 IOPS baseline, 18,750 for 1,800 s from a full bucket of
    # (18,750 - 3,600) x 1,800 = 27.27e6 I/Os. Two gp3 volumes, each with 2 users of 16 KiB I/Os
    # and 0.3 ms think time, ask more than the baseline together: the bucket drains at their
    # rate minus 3,600 and runs dry at 27.27e6 / (rate - 3,600) s; then the instance holds them
    # at 3,600 (closed loops wait: no backlog). Both stretches are steady: the coupled loop
    # jumps them, so 2.6e9 steps at dt = 1 ms take a few probes.
    inst = ebssim.instance("m5.large")
    vols = [ebssim.gp3(100), ebssim.gp3(100)]
    w = ClosedLoop(2, "16k", think_time_ms=0.3)
    month = 30 * 86400.0
    fine = Simulation(vols, instance=inst, dt=0.001).run([w, w], month, record=False)
    coarse = Simulation(vols, instance=inst, dt=1.0).run([w, w], month, record=False, jump=False)
    # The rate before the cliff, from the rule: 2 users / (service time + think time) per volume.
    rate = 2 * 2 / (vols[0].service_time_s(16384) + 0.0003)
    capacity = (18750 - 3600) * 1800.0
    cliff = capacity / (rate - 3600)
    assert fine.instance.cliff_time_s == pytest.approx(cliff, rel=1e-9)
    assert coarse.instance.cliff_time_s == pytest.approx(cliff, rel=1e-9)
    # Served: the rate until the cliff, 3,600 a second after it.
    served = rate * cliff + 3600 * (month - cliff)
    assert fine.instance.totals.served_counted == pytest.approx(served, rel=1e-9)
    assert coarse.instance.totals.served_counted == pytest.approx(served, rel=1e-6)  # the cliff's step at 1 s


def test_piecewise_with_bytes_per_s_and_a_simulation_of_two() -> None:
    # Two volumes, one piecewise and one closed loop, in one Simulation: the piecewise one as
    # its per-step trace. 300 IOPS of 64 KiB (the first 1,000 s) then 600 IOPS of 16 KiB.
    w = OpenLoop.piecewise([0, 1000], [300, 600], bytes_per_s=[300 * 65536, 600 * 16384])
    sim = Simulation([ebssim.gp2(50), ebssim.gp3(100)])
    rr = sim.run([w, ClosedLoop(4, "4k")], 2000)
    ops, nbytes = w.per_step(1.0, 2000)
    alone = simulate(ebssim.gp2(50), OpenLoop(ops, nbytes))
    assert_same_run(rr[0], alone)
    assert rr[0].totals.demanded_bytes == 1000 * 300 * 65536 + 1000 * 600 * 16384


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(change_s=[0, 10], iops=[1, 2]), "give the bytes as io_size"),
        (dict(change_s=[0, 10], iops=[1, 2], io_size="4k", bytes_per_s=[1, 2]), "not both"),
        (dict(change_s=[1, 10], iops=[1, 2], io_size="4k"), r"change_s\[0\]=1.0 must be 0"),
        (dict(change_s=[0, 10, 10], iops=[1, 2, 3], io_size="4k"), r"change_s\[2\]=10.0 must be > change_s\[1\]"),
        (dict(change_s=[0, 10], iops=[1, -2], io_size="4k"), r"iops\[1\]=-2.0 must be a finite number"),
        (dict(change_s=[0, 10], iops=[1, 2, 3], io_size="4k"), "iops has 3 values but change_s has 2"),
        (dict(change_s=[0, 10], iops=[1, 0], bytes_per_s=[4096, 4096]), r"bytes_per_s\[1\]=4096.0 with iops\[1\]=0"),
        (dict(change_s=[0, 10], iops=[1, 2], io_size="4k", duration_s=10), "after the last change"),
        (dict(change_s=[0, 10], iops=[1, 2], io_size="4k", pattern="zigzag"), "pattern='zigzag'"),
    ],
)
def test_piecewise_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OpenLoop.piecewise(**kwargs)


def test_piecewise_change_not_on_a_step_and_after_the_end() -> None:
    w = OpenLoop.piecewise([0, 1.5], [1, 2], "4k")
    with pytest.raises(ValueError, match=r"change_s\[1\]=1.5 is not a whole number of steps of dt=1"):
        simulate(ebssim.gp2(100), w, 10)
    assert simulate(ebssim.gp2(100), w, 10, dt=0.5).n_steps == 20
    with pytest.raises(ValueError, match=r"change_s\[1\]=1.5 is at or after the end of the run"):
        simulate(ebssim.gp2(100), w, 1.5, dt=0.5)
    with pytest.raises(ValueError, match="duration_s is required"):
        simulate(ebssim.gp2(100), w)


@pytest.mark.parametrize("record", [False, True], ids=["totals", "recorded"])
def test_both_limits_met_at_once_bind_the_iops_limit_jumped_or_stepped(record: bool) -> None:
    # io1 at 295 IOPS caps throughput at 295 x 256 KiB = 73.75 MiB/s: 256 KiB I/Os at 442.5 a
    # second ask both limits for 1.5x what they allow, so both bind at f = 2/3 and the backlog
    # grows by 147.5 I/Os a second. The tie goes to the IOPS limit in every step, however the
    # backlog's bytes per I/O round (before the rounding margin, one stepped step of 117 went to
    # the throughput limit, and the jump, which predicts the stretch, said none).
    vol = ebssim.Volume("io1", 10, iops=295)
    dt, n = 0.001, 117
    w = OpenLoop.piecewise([0.0], [442.5], "256k")
    runs = [simulate(vol, w, n * dt, dt=dt, record=record, jump=j) for j in (True, False)]
    for r in runs:
        assert list(r.totals.steps_bound) == [0, n, 0, 0, 0, 0]
        assert r.totals.served_ops == pytest.approx(295 * n * dt, rel=1e-12)
        assert r.totals.backlog_ops == pytest.approx(147.5 * n * dt, rel=1e-12)
    assert_same_run(*runs)


@pytest.mark.parametrize("record", [False, True], ids=["totals", "recorded"])
def test_a_backlog_that_drains_to_exactly_the_cap_is_served_in_full_jumped_or_stepped(record: bool) -> None:
    # io1 at 144 IOPS serves 0.144 I/Os per 1 ms step. 288 IOPS arrive in steps 2-9: the
    # backlog grows by 0.144 a step to 1.152, then drains by 0.144 a step with no arrivals, and
    # in step 17 what is queued is exactly one step's cap: it is served in full (demand-bound),
    # whether the backlog got there by 15 subtractions (stepped) or by one multiplication
    # (jumped), which round differently. Steps 0, 1 (nothing arrives) and 17 are demand-bound,
    # 2-16 IOPS-bound; nothing is left at the end.
    vol = ebssim.Volume("io1", 10, iops=144)
    dt, n = 0.001, 18
    w = OpenLoop.piecewise([0, 0.002, 0.010], [0, 288, 0], "4k")
    runs = [simulate(vol, w, n * dt, dt=dt, record=record, jump=j) for j in (True, False)]
    for r in runs:
        assert list(r.totals.steps_bound) == [3, 15, 0, 0, 0, 0]
        assert r.totals.served_ops == pytest.approx(288 * 0.008, rel=1e-12)
        assert r.totals.backlog_ops == pytest.approx(0.0, abs=1e-12)
    assert_same_run(*runs)


def test_jump_flag_is_checked() -> None:
    with pytest.raises(ValueError, match="jump"):
        simulate(ebssim.gp2(100), Idle(), 10, jump="yes")  # type: ignore[arg-type]


def test_the_work_limit_counts_every_step_jumped_or_not() -> None:
    # A month at 1 ms is 2.6e9 steps: above a limit of 1e9 even though jumps make it cheap.
    w = OpenLoop.piecewise([0], [100], "4k")
    with pytest.raises(ebssim.LimitError, match="max_volume_steps"):
        simulate(ebssim.gp2(100), w, 30 * 86400, dt=0.001, record=False, max_volume_steps=1e9)


# --------------------------------------------------------------------------------------------
# Random configurations: jumped == stepped
# --------------------------------------------------------------------------------------------


@st.composite
def volumes(draw) -> ebssim.Volume:
    kind = draw(st.sampled_from(["gp2", "gp3", "io1", "st1", "sc1", "standard"]))
    pct = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.01, 100.0]), st.floats(0, 100)))
    if kind == "gp2":
        return ebssim.gp2(draw(st.integers(1, 3000)), burst_balance_pct=pct)
    if kind == "gp3":
        return ebssim.gp3(draw(st.integers(1, 2000)))
    if kind == "io1":
        size = draw(st.integers(10, 1000))
        return ebssim.io1(size, iops=draw(st.integers(100, 50 * size)))
    if kind == "standard":
        return ebssim.standard(draw(st.integers(1, 1024)), burst_balance_pct=pct)
    make = ebssim.st1 if kind == "st1" else ebssim.sc1
    return make(draw(st.integers(125, 16384)), burst_balance_pct=pct)


@st.composite
def cases(draw):
    vol = draw(volumes())
    dt = draw(st.sampled_from([0.001, 0.01, 0.1, 1.0, 10.0, 60.0]))
    n = draw(st.integers(1, 6000))
    base = vol.baseline_iops
    burst = max(base, vol.max_iops)
    # Up to 3x the burst: backlogs that grow at the cap and drain below it.
    levels = st.one_of(
        st.just(0.0),
        st.floats(0.2, 1.5).map(lambda x: x * base),
        st.floats(0.2, 1.5).map(lambda x: x * burst),
        st.floats(1.05, 3.0).map(lambda x: x * burst),
    )
    sizes = {"4k": 4096, "16k": 16384, "64k": 65536, "256k": 262144, "1m": 1048576}
    size = draw(st.sampled_from(list(sizes)))
    # A size per segment: a backlog carried into the next one has another mix than its arrivals.
    per_segment = draw(st.booleans())
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=5)))) if n > 1 else []
    change = [0, *cuts]
    rates = [draw(levels) for _ in change]
    kind = draw(st.sampled_from(["closed", "idle", "trace", "piecewise", "phased"]))
    if kind == "closed":
        w = ClosedLoop(draw(st.floats(0.2, 64)), size, think_time_ms=draw(st.sampled_from([0.0, 1.0, 5.0])))
    elif kind == "idle":
        w = Idle()
    else:
        change_s = np.asarray(change, dtype=float) * dt
        iops = [round(x, 3) for x in rates]
        if per_segment:
            seg = [sizes[draw(st.sampled_from(list(sizes)))] for _ in change]
            pw = OpenLoop.piecewise(change_s, iops, bytes_per_s=[r * b for r, b in zip(iops, seg)])
        else:
            pw = OpenLoop.piecewise(change_s, iops, size)
        if kind == "piecewise":
            w = pw
        elif kind == "trace":
            w = OpenLoop(*pw.per_step(dt, n), pattern=draw(st.sampled_from(["random", "sequential"])))
        else:
            users = np.repeat([draw(st.sampled_from([0.0, 1.0, 4.0, 32.0])) for _ in change], np.diff([*change, n]))
            w = PhasedClosedLoop(users, io_size=size)
    return vol, dt, n, w


@settings(PROFILE)
@given(cases(), st.booleans())
def test_jumped_equals_stepped(case, record: bool) -> None:
    vol, dt, n, w = case
    duration = n * dt
    j = simulate(vol, w, duration, dt=dt, record=record)
    s = simulate(vol, w, duration, dt=dt, record=record, jump=False)
    assert_same_run(j, s)


@settings(PROFILE, max_examples=40)
@given(cases(), cases())
def test_jumped_equals_stepped_over_consecutive_runs(first, second) -> None:
    # State (credits, backlog) carries from one run to the next, jumped or not.
    vol, dt, n, w = first
    _, _, n2, w2 = second
    if isinstance(w2, (OpenLoop, PhasedClosedLoop)) or isinstance(w2, PiecewiseOpenLoop):
        w2 = ClosedLoop(8, "16k")
    sims = [Simulation([vol], dt=dt), Simulation([vol], dt=dt)]
    for jump, sim in zip((True, False), sims):
        sim.run([w], n * dt, jump=jump)
    r = [sim.run([w2], n2 * dt, jump=jump)[0] for jump, sim in zip((True, False), sims)]
    assert_same_run(r[0], r[1])
    assert math.isclose(
        sims[0].credits(0), sims[1].credits(0), rel_tol=REL, abs_tol=1e-9 * max(1.0, vol.credit_capacity)
    )


def test_piecewise_results_feed_analysis_and_plans() -> None:
    # The cliff of test_piecewise_cliff_at_the_hand_worked_time: 2,000 IOPS offered, the 300
    # baseline served, from 5,294.1 s to the end of the run.
    w = OpenLoop.piecewise([0, 3600], [1000, 2000], "4k")
    r = simulate(ebssim.gp2(100), w, duration_s=7200)
    (cliff,) = ebssim.analysis.cliffs(r)
    assert cliff.start_s == pytest.approx(3600 + 2.88e6 / 1700, rel=1e-12)
    assert cliff.offered_iops == 2000.0
    assert cliff.limit == "volume_iops"
    report = str(ebssim.testing.check_plan(r, no_cliff=True))
    assert "2,000 arriving" in report
    assert r.to_pandas()["iops"].iloc[0] == 1000.0
    assert "piecewise open loop of 2 segments" in str(r.summary())


@pytest.mark.parametrize(
    "recording",
    [
        ebssim.Recording(every_s=60),
        ebssim.Recording(every_s=60, dtype="float32"),
        ebssim.Recording(series=("iops", "credits", "bound"), every_s=7),
    ],
    ids=["every60", "every60-float32", "subset-every7"],
)
def test_jumps_record_through_any_recording(recording: ebssim.Recording) -> None:
    # A jumped stretch is written by the recorder's record_constant: interval means, levels at
    # the end of each interval and the bound by most steps come out as when every step is stepped.
    v = ebssim.gp2(100)
    w = ebssim.OpenLoop.piecewise([0, 1800, 3600, 7200], [2500, 200, 3000, 100], io_size="16k", duration_s=4 * 3600)
    jumped = ebssim.simulate(v, w, record=recording, jump=True)
    stepped = ebssim.simulate(v, w, record=recording, jump=False)
    for name in ("iops", "credits"):
        np.testing.assert_allclose(getattr(jumped, name), getattr(stepped, name), rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(jumped.bound, stepped.bound)
    assert jumped.cliff_time_s == pytest.approx(stepped.cliff_time_s, abs=1e-6)
