"""Invariants of the step model under random open-loop traces (product.md "Quality bars").

For every step k (rules of ebs-model.md §1, §2, §5 as the engine states them):

* 0 <= credits <= 5.4e6;
* counted ops served <= min(burst x dt, credits_before + baseline x dt);
* bytes served <= (credits_before > 0 ? burst throughput : baseline throughput) x dt;
* gp2 credits' = clamp(credits_before + baseline x dt - counted served, 0, 5.4e6); gp3 has none;
* demanded = served + backlog (ops and bytes), and a backlog only remains when a limit bound;
* latency >= unloaded service time, and >= queue length / completion rate (Little's law);
* counted ops follow AWS's rule (ebs-model.md §5) at each step's mean I/O size.
"""

from __future__ import annotations

import math

import ebssim
import numpy as np
import pytest
from ebssim import OpenLoop, Simulation, Volume, VolumeTotals, gp2, gp3, simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MiB = 2**20
CAP = 5.4e6
REL = 1e-9

PROFILE = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


@st.composite
def gp2_volumes(draw) -> Volume:
    size = draw(st.one_of(st.integers(1, 1200), st.sampled_from([1, 33, 170, 171, 333, 334, 999, 1000, 16384])))
    # Small balances make the bucket run dry inside a short trace.
    pct = draw(st.one_of(st.sampled_from([0.0, 1e-4, 0.01, 0.1, 100.0]), st.floats(0, 100)))
    # Without overshoot: the invariants below are the limit rule's (served <= the cap in every
    # step); overshoot has its own property (test_overshoot_is_a_token_bucket_of_its_depth).
    return gp2(size, burst_balance_pct=pct, overshoot_s=0)


@st.composite
def gp3_volumes(draw) -> Volume:
    size = draw(st.integers(1, 65536))
    max_iops = int(min(80000, max(3000, 500 * size)))
    iops = draw(st.integers(3000, max_iops))
    max_tput = int(min(2000, max(125, 0.25 * iops)))
    tput = draw(st.integers(125, max_tput))
    return gp3(size, iops=iops, throughput_mib_s=tput, overshoot_s=0)


volumes = st.one_of(gp2_volumes(), gp3_volumes())

IO_SIZES = [512, 4096, 16384, 65536, 262144, 262145, 1048576, 4 * 1048576]


@st.composite
def traces(draw, volume: Volume, dt: float):
    """Per-step (ops, bytes) with demand from idle to several times the volume's limits."""
    n = draw(st.integers(1, 120))
    # Scale so that a "load" of 1 is the IOPS cap for one step.
    per_step = volume.max_iops * dt
    loads = draw(
        st.lists(
            # Tiny but not denormal loads: below ~1e-300 rate x service time underflows.
            st.one_of(st.just(0.0), st.floats(1e-9, 4), st.floats(1e-9, 1e-3)),
            min_size=n,
            max_size=n,
        )
    )
    sizes = draw(
        st.lists(st.one_of(st.sampled_from(IO_SIZES), st.floats(1, MiB, allow_nan=False)), min_size=n, max_size=n)
    )
    ops = np.array(loads) * per_step
    nbytes = ops * np.array(sizes)
    # Now and then an I/O count with no bytes (allowed: bytes unknown).
    if draw(st.booleans()) and n > 1:
        k = draw(st.integers(0, n - 1))
        nbytes[k] = 0.0
    return ops, nbytes


@st.composite
def scenarios(draw):
    v = draw(volumes)
    dt = draw(st.sampled_from([1.0, 0.5, 0.001]))
    ops, nbytes = draw(traces(v, dt))
    pattern = draw(st.sampled_from(["random", "sequential"]))
    service_time_ms = draw(st.one_of(st.none(), st.floats(0.05, 20)))
    return v, dt, ops, nbytes, pattern, service_time_ms


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def limits(v: Volume, dt: float, credits_before: np.ndarray):
    """Counted-ops and byte caps of each step, from the rules (not from the engine)."""
    cnt_cap = np.minimum(v.max_iops * dt, credits_before + v.baseline_iops * dt)
    tput = np.where(credits_before > 0, v.max_throughput_mib_s, v.baseline_throughput_mib_s)
    return cnt_cap, tput * MiB * dt


def check_run(v: Volume, dt: float, ops: np.ndarray, nbytes: np.ndarray, r: ebssim.VolumeResult, c0: float) -> None:
    n = ops.shape[0]
    assert r.n_steps == n
    for a in (r.iops, r.ebs_iops, r.throughput_mib_s, r.credits, r.queue_length, r.latency_s, r.bound):
        assert a.shape == (n,)
    assert np.all(np.isfinite(r.iops)) and np.all(r.iops >= 0)
    assert np.all(np.isfinite(r.ebs_iops)) and np.all(r.ebs_iops >= 0)
    assert np.all(np.isfinite(r.throughput_mib_s)) and np.all(r.throughput_mib_s >= 0)

    # Credits stay in the bucket.
    assert np.all(r.credits >= 0)
    assert np.all(r.credits <= CAP)

    credits_before = np.concatenate([[c0], r.credits[:-1]])
    cnt_cap, byte_cap = limits(v, dt, credits_before)
    served_cnt = r.ebs_iops * dt
    served_bytes = r.throughput_mib_s * MiB * dt
    served_ops = r.iops * dt

    # Served <= every limit, every step.
    assert np.all(served_cnt <= cnt_cap * (1 + REL) + 1e-9)
    assert np.all(served_bytes <= byte_cap * (1 + REL) + 1e-6)

    # The bucket moves by earned minus spent, clamped.
    if v.type == "gp2":
        expected = np.clip(credits_before + v.baseline_iops * dt - served_cnt, 0, CAP)
        np.testing.assert_allclose(r.credits, expected, rtol=1e-9, atol=1e-6)
        # The cliff is the first step that starts with credits and ends with none; it lies in
        # that step, (t_k, t_k + dt]. A bucket that starts the run dry may instead have its
        # cliff at the start (when the first step asks for more than the baseline).
        dry = np.flatnonzero((credits_before > 0) & (r.credits == 0))
        starts_dry = credits_before[0] == 0 and r.credits[0] == 0
        if starts_dry and r.cliff_time_s == r.t0_s:
            pass
        elif dry.size == 0:
            assert r.cliff_time_s is None
        else:
            t_k = r.t0_s + dry[0] * dt
            assert r.cliff_time_s is not None
            assert t_k - 1e-9 <= r.cliff_time_s <= t_k + dt * (1 + 1e-9)
        np.testing.assert_allclose(r.burst_balance_pct, r.credits / CAP * 100, rtol=1e-12)
    else:
        assert np.all(r.credits == 0)
        assert np.all(np.isnan(r.burst_balance_pct))
        assert r.cliff_time_s is None

    # Conservation over the run: demanded = served + backlog.
    t = r.totals
    assert t["demanded_ops"] == pytest.approx(float(ops.sum()), rel=REL, abs=1e-9)
    assert t["demanded_bytes"] == pytest.approx(float(nbytes.sum()), rel=REL, abs=1e-6)
    assert t["demanded_ops"] == pytest.approx(t["served_ops"] + t["backlog_ops"], rel=REL, abs=1e-9)
    assert t["demanded_bytes"] == pytest.approx(t["served_bytes"] + t["backlog_bytes"], rel=REL, abs=1e-6)
    assert t["backlog_ops"] >= -1e-9 and t["backlog_bytes"] >= -1e-6
    # The per-step series add up to the totals.
    assert t["served_ops"] == pytest.approx(float(served_ops.sum()), rel=REL, abs=1e-9)
    assert t["served_bytes"] == pytest.approx(float(served_bytes.sum()), rel=REL, abs=1e-6)
    assert t["served_counted"] == pytest.approx(float(served_cnt.sum()), rel=REL, abs=1e-9)
    assert t["credits_end"] == r.credits[-1]
    assert sum(t["steps_bound"]) == n

    # Work-conserving: whenever I/O is left queued after a step, a limit held that step.
    backlog = np.cumsum(ops) - np.cumsum(served_ops)
    scale = max(1.0, float(ops.sum()))
    queued = backlog > 1e-7 * scale
    at_cnt = served_cnt >= cnt_cap * (1 - 1e-7)
    at_bytes = served_bytes >= byte_cap * (1 - 1e-7)
    assert np.all(at_cnt[queued] | at_bytes[queued])
    assert np.all(r.bound[queued] != 0)
    # "demand" means everything available was served.
    assert np.all(backlog[r.bound == 0] <= 1e-7 * scale)
    # The bound code names a limit that is actually reached.
    assert np.all(at_cnt[r.bound == 1])
    assert np.all(at_bytes[r.bound == 2])

    # Latency where I/O completed; NaN where none did.
    done = r.iops > 0
    assert np.all(np.isnan(r.latency_s[~done]))
    assert np.all(np.isfinite(r.latency_s[done]))
    assert np.all(r.queue_length >= 0)
    lat = r.latency_s[done]
    # Unloaded service time of the smallest I/O this trace can present (mean sizes lie between
    # the smallest and largest per-step sizes; bytes = 0 gives size 0).
    with np.errstate(invalid="ignore", divide="ignore"):
        step_sizes = np.where(ops > 0, nbytes / ops, np.inf)
    min_size = float(step_sizes.min()) if np.isfinite(step_sizes.min()) else 0.0
    wl_st = r.workload.service_time_ms
    floor = wl_st / 1e3 if wl_st is not None else v.service_time_s(min_size)
    assert np.all(lat >= floor * (1 - 1e-12))
    # queue_length is Little's law read backwards: outstanding = latency x completion rate.
    np.testing.assert_allclose(r.queue_length[done], lat * r.iops[done], rtol=1e-12)

    # Counting (AWS's rule, docs/model.md): every I/O counts at least size / 256 KiB, a random
    # one at least one. A step with no backlog in or out (bound "demand" now and before) serves
    # exactly its own I/Os, counted at the step's mean size: under 32 KiB one each, sequential or
    # not; sequential from 32 KiB bytes / 256 KiB; random above 256 KiB ceil(size / 256 KiB).
    assert np.all(r.ebs_iops >= r.throughput_mib_s * 4 * (1 - 1e-9) - 1e-9)
    if r.workload.pattern == "random":
        assert np.all(r.ebs_iops >= r.iops * (1 - 1e-9) - 1e-9)
    unit, floor = 256 * 1024, 32 * 1024
    with np.errstate(invalid="ignore", divide="ignore"):
        if r.workload.pattern == "sequential":
            own_counted = np.where(nbytes >= ops * floor, nbytes / unit, ops)
        else:
            own_counted = np.where(nbytes <= ops * unit, ops, ops * np.ceil(nbytes / ops / unit - 1e-9))
    own = (r.bound == 0) & np.concatenate([[True], r.bound[:-1] == 0])
    np.testing.assert_allclose(served_cnt[own], own_counted[own], rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@PROFILE
@given(scenarios())
def test_open_loop_invariants(scenario):
    v, dt, ops, nbytes, pattern, st_ms = scenario
    w = OpenLoop(ops, nbytes, pattern=pattern, service_time_ms=st_ms)
    r = simulate(v, w, dt=dt)
    check_run(v, dt, ops, nbytes, r, v.initial_credits)


@settings(PROFILE, max_examples=60)
@given(scenarios(), st.data())
def test_splitting_a_trace_into_runs_changes_nothing(scenario, data):
    """State (credits, backlog) carries across Simulation.run: two runs = one run."""
    v, dt, ops, nbytes, pattern, st_ms = scenario
    n = ops.shape[0]
    k = data.draw(st.integers(0, n))
    whole = simulate(v, OpenLoop(ops, nbytes, pattern=pattern, service_time_ms=st_ms), dt=dt)

    sim = Simulation([v], dt=dt)
    parts = []
    for a, b in ((0, k), (k, n)):
        if b > a:
            parts.append(sim.run([OpenLoop(ops[a:b], nbytes[a:b], pattern=pattern, service_time_ms=st_ms)])[0])
    assert sim.time_s == pytest.approx(n * dt, rel=1e-12)
    for name in ("iops", "ebs_iops", "throughput_mib_s", "credits", "latency_s", "bound"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        np.testing.assert_allclose(joined, getattr(whole, name), rtol=1e-12, atol=1e-12, equal_nan=True)
    assert parts[-1].totals["backlog_ops"] == pytest.approx(whole.totals["backlog_ops"], rel=1e-9, abs=1e-9)
    assert sim.credits() == pytest.approx(whole.totals["credits_end"], rel=1e-12, abs=1e-9)
    # Each part checks out on its own, from the credits it inherited.
    c0 = v.initial_credits
    for p, (a, b) in zip(parts, [(a, b) for a, b in ((0, k), (k, n)) if b > a]):
        if a == 0:
            check_run(v, dt, ops[a:b], nbytes[a:b], p, c0)
        else:
            # The inherited backlog is served in this part: conservation holds over both runs.
            assert p.totals["demanded_ops"] + parts[0].totals["backlog_ops"] == pytest.approx(
                p.totals["served_ops"] + p.totals["backlog_ops"], rel=REL, abs=1e-9
            )
        c0 = p.totals["credits_end"]


@settings(PROFILE, max_examples=60)
@given(volumes, st.sampled_from([1.0, 0.5, 0.001]), st.data())
def test_single_io_size_latency_is_littles_law(v, dt, data):
    """One I/O size throughout: latency = max(queue / rate, service time of that size)."""
    size = data.draw(st.sampled_from(IO_SIZES))
    ops, _ = data.draw(traces(v, dt))
    nbytes = ops * size
    r = simulate(v, OpenLoop(ops, nbytes), dt=dt)
    check_run(v, dt, ops, nbytes, r, v.initial_credits)
    done = r.iops > 0
    st_s = v.service_time_s(size)
    # The backlog after each step, from the arrivals and completions alone.
    backlog_end = np.maximum(np.cumsum(ops) - np.cumsum(r.iops * dt), 0.0)
    backlog_start = np.concatenate([[0.0], backlog_end[:-1]])
    waiting = 0.5 * (backlog_start + backlog_end)
    # Little's law: outstanding = in service (rate x service time) + waiting, latency = outstanding / rate.
    outstanding = r.iops[done] * st_s + waiting[done]
    expected = np.maximum(outstanding / r.iops[done], st_s)
    scale = max(1.0, float(ops.sum()))
    np.testing.assert_allclose(r.latency_s[done] * r.iops[done], expected * r.iops[done], rtol=1e-6, atol=1e-9 * scale)


@settings(PROFILE, max_examples=40)
@given(volumes, st.data())
def test_totals_without_recording_match(v, data):
    """record=False gives the same totals as a recorded run."""
    dt = data.draw(st.sampled_from([1.0, 0.001]))
    ops, nbytes = data.draw(traces(v, dt))
    rec = simulate(v, OpenLoop(ops, nbytes), dt=dt)
    bare = simulate(v, OpenLoop(ops, nbytes), dt=dt, record=False)
    assert bare.iops.shape == (0,)
    # Typed totals (were a dict): compare every field the binding declares.
    for key in [name for name, attr in vars(VolumeTotals).items() if isinstance(attr, property)]:
        value = getattr(rec.totals, key)
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(getattr(bare.totals, key))
        else:
            assert getattr(bare.totals, key) == value


@st.composite
def overshooting(draw):
    """A gp3 volume with overshoot (0.05 to 3 s, from empty, full or between), a step, a trace."""
    v = draw(gp3_volumes())
    depth = draw(st.floats(0.05, 3))
    balance = draw(st.sampled_from([0.0, 1.0, 0.37])) * depth
    v = gp3(
        v.size_gib, iops=v.iops, throughput_mib_s=v.throughput_mib_s, overshoot_s=depth, overshoot_balance_s=balance
    )
    dt = draw(st.sampled_from([1.0, 0.5, 0.001]))
    ops, nbytes = draw(traces(v, dt))
    pattern = draw(st.sampled_from(["random", "sequential"]))
    return v, dt, ops, nbytes, pattern


@PROFILE
@given(overshooting(), st.data())
def test_overshoot_is_a_token_bucket_of_its_depth(scenario, data):
    """Over any stretch of steps, a limit lets through at most its rate for the stretch plus its
    depth (overshoot_s): the defining property of a token bucket. Runs split anywhere give the
    same series (the seconds saved carry over), and every I/O is served or still queued."""
    v, dt, ops, nbytes, pattern = scenario
    depth = v.overshoot
    r = simulate(v, OpenLoop(ops, nbytes, pattern=pattern), dt=dt)
    cnt = np.concatenate([[0.0], np.cumsum(r.ebs_iops * dt)])
    by = np.concatenate([[0.0], np.cumsum(r.throughput_mib_s * MiB * dt)])
    n = ops.shape[0]
    span = np.arange(n + 1) * dt
    # Every stretch [a, b): sums by prefix differences, all pairs at once.
    window = span[None, :] - span[:, None]
    upper = np.triu(np.ones((n + 1, n + 1), dtype=bool), 1)
    allowed_cnt = v.max_iops * (window + depth)
    allowed_by = v.max_throughput_mib_s * MiB * (window + depth)
    assert np.all((cnt[None, :] - cnt[:, None])[upper] <= allowed_cnt[upper] * (1 + 1e-9) + 1e-6)
    assert np.all((by[None, :] - by[:, None])[upper] <= allowed_by[upper] * (1 + 1e-9) + 1e-3)
    t = r.totals
    assert t["demanded_ops"] == pytest.approx(t["served_ops"] + t["backlog_ops"], rel=REL, abs=1e-9)
    # Two runs = one run.
    k = data.draw(st.integers(0, n))
    sim = Simulation([v], dt=dt)
    parts = [sim.run([OpenLoop(ops[a:b], nbytes[a:b], pattern=pattern)])[0] for a, b in ((0, k), (k, n)) if b > a]
    for name in ("iops", "ebs_iops", "throughput_mib_s", "latency_s", "bound"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        np.testing.assert_allclose(joined, getattr(r, name), rtol=1e-12, atol=1e-12, equal_nan=True)
