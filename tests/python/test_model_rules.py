"""One home for each model rule: the public Python functions and a simulated run agree.

Counting, the closed-loop rate (think time included), the cliff, the closed-loop latency and the
latency model's shape live in the C++ core; the public API (``ebssim.cliff_time_s``,
``closed_loop_rate``, ``Volume.counted_ops_per_io``, ``closed_loop_latency_s``,
``latency_quantiles``, ``latency_moments``) calls them. These tests fail if a Python answer ever
drifts from what the engine does in a run.
"""

from __future__ import annotations

import dataclasses
import inspect
import math

import ebssim
import ebssim.fio.prediction
import numpy as np
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, Volume, gp2, gp3, io1, io2, sc1, simulate, st1, standard

KiB = 1024
MiB = 1024**2
ST_4K = 0.5e-3 + 4096 / 2**30

# Bucket volumes, from a small balance so that the runs stay short.
BUCKETS = {
    "gp2-1": lambda: gp2(1, burst_balance_pct=5),
    "gp2-100": lambda: gp2(100, burst_balance_pct=5),
    "gp2-250": lambda: gp2(250, burst_balance_pct=5),
    "gp2-500": lambda: gp2(500, burst_balance_pct=20),
    "st1-1024": lambda: st1(1024, burst_balance_pct=2),
    "st1-500": lambda: st1(500, burst_balance_pct=2),
    "sc1-2048": lambda: sc1(2048, burst_balance_pct=2),
    "standard-100": lambda: standard(100, burst_balance_pct=5),
}
PROVISIONED = {
    "gp3-100": lambda: gp3(100),
    "gp3-16000": lambda: gp3(100, iops=16000, throughput_mib_s=1000),
    "io1-48000": lambda: io1(960, 48000),
    "io2-4000": lambda: io2(4, 4000),
}
CLOSED_LOOPS = {
    "4k-think1": ClosedLoop(4, "4k", think_time_ms=1),
    "4k-seq-qd32": ClosedLoop(32, "4k", pattern="sequential"),
    "32k-seq-think": ClosedLoop(16, "32k", pattern="sequential", think_time_ms=0.5),
    "1m-seq-think2": ClosedLoop(8, "1MiB", pattern="sequential", think_time_ms=2),
    "64k-think": ClosedLoop(16, "64k", think_time_ms=0.5),
    "16k-st-think": ClosedLoop(2, "16k", service_time_ms=0.3, think_time_ms=0.2),
    "384k-rand-think": ClosedLoop(8, "384k", read_fraction=0.3, think_time_ms=5),
    "mix-counted": ClosedLoop(12, 40 * KiB, think_time_ms=0.1, counted_per_io=1.25),
}


def test_think_time_counts_in_the_cliff():
    # The finding: think time was ignored (2,000 s); 4 / (0.504 + 1) ms = 2,659.9 IOPS drain
    # 5.4e6 / 2,359.9 = 2,288.2 s, as a simulated run reports.
    w = ClosedLoop(4, "4k", think_time_ms=1)
    expected = 5.4e6 / (4 / (ST_4K + 1e-3) - 300)
    assert ebssim.cliff_time_s(gp2(100), w) == pytest.approx(expected, rel=1e-12)
    r = simulate(gp2(100), w, duration_s=2300, record=False)
    assert r.cliff_time_s == pytest.approx(expected, rel=1e-9)
    assert round(expected, 1) == 2288.2


@pytest.mark.parametrize("w", list(CLOSED_LOOPS))
@pytest.mark.parametrize("v", list(BUCKETS))
def test_cliff_time_s_matches_a_simulated_run(v, w):
    volume, workload = BUCKETS[v](), CLOSED_LOOPS[w]
    predicted = ebssim.cliff_time_s(volume, workload)
    if predicted is None:
        r = simulate(volume, workload, duration_s=600, record=False)
        assert r.cliff_time_s is None
        assert r.totals["credits_end"] >= volume.initial_credits * (1 - 1e-12)
    else:
        r = simulate(volume, workload, duration_s=math.ceil(predicted) + 2, record=False)
        assert r.cliff_time_s == pytest.approx(predicted, rel=1e-9)


@pytest.mark.parametrize("w", list(CLOSED_LOOPS))
@pytest.mark.parametrize("v", list(BUCKETS) + list(PROVISIONED))
def test_closed_loop_rate_matches_a_simulated_step(v, w):
    volume = {**BUCKETS, **PROVISIONED}[v]()
    workload = CLOSED_LOOPS[w]
    rate = ebssim.closed_loop_rate(volume, workload)
    r = simulate(volume, workload, duration_s=1)
    assert r.iops[0] == pytest.approx(rate.iops, rel=1e-12)
    assert r.ebs_iops[0] == pytest.approx(rate.ebs_iops, rel=1e-12)
    assert r.throughput_mib_s[0] == pytest.approx(rate.throughput_mib_s, rel=1e-12)
    assert r.latency_ms[0] == pytest.approx(rate.latency_ms, rel=1e-12)
    assert ebssim.BOUND_NAMES[r.bound[0]] == rate.bound
    assert ebssim.counted_iops(volume, workload) == rate.ebs_iops
    # The closed loop's latency at the rate it reaches is the engine's.
    lat = ebssim.closed_loop_latency_s(volume, workload, [rate.iops, r.iops[0]])
    np.testing.assert_allclose(lat, r.latency_s[0], rtol=1e-12)
    # Offered: in_flight / (service time + think time).
    st = (
        workload.service_time_ms / 1e3
        if workload.service_time_ms is not None
        else volume.service_time_s(workload.io_bytes, workload.read_fraction)
    )
    assert rate.offered_iops == pytest.approx(workload.in_flight / (st + workload.think_time_ms / 1e3), rel=1e-12)
    if volume.has_bucket:
        # From an empty bucket: the baseline caps.
        empty = Volume(volume.type, volume.size_gib, burst_balance_pct=0)
        base = ebssim.closed_loop_rate(empty, workload, with_credits=False)
        r0 = simulate(empty, workload, duration_s=1)
        assert r0.iops[0] == pytest.approx(base.iops, rel=1e-12)
        assert r0.ebs_iops[0] == pytest.approx(base.ebs_iops, rel=1e-12)
        assert r0.latency_ms[0] == pytest.approx(base.latency_ms, rel=1e-12)


SIZES = [512, 4 * KiB, 16 * KiB, 31 * KiB, 32 * KiB, 48 * KiB, 256 * KiB, 257 * KiB, 384 * KiB, MiB, 3 * MiB]


@pytest.mark.parametrize("pattern", ["random", "sequential"])
@pytest.mark.parametrize("make", [lambda: gp3(100, iops=16000, throughput_mib_s=1000), lambda: st1(12800)])
def test_counted_ops_per_io_is_what_the_engine_counts(make, pattern):
    v = make()
    for size in SIZES:
        per = v.counted_ops_per_io(size, pattern)
        # A closed loop (throttled or not, every served I/O counts `per`).
        r = simulate(v, ClosedLoop(4, size, pattern=pattern), duration_s=2, record=False)
        assert r.totals["served_counted"] / r.totals["served_ops"] == pytest.approx(per, rel=1e-12), size
        # An open loop well under the limits: counted = ops x per, by the step's mean size.
        ops = np.full(3, 10.0)
        r = simulate(v, OpenLoop(ops, ops * size, pattern=pattern))
        np.testing.assert_allclose(r.ebs_iops, 10.0 * per, rtol=1e-12)


def test_counted_ops_per_io_follows_the_user_guide():
    v = gp3(100)
    assert v.io_unit_bytes == 256 * KiB and v.merge_min_bytes == 32 * KiB
    assert 8 * v.counted_ops_per_io("32k", "sequential") == 1  # 8 contiguous 32 KiB: 1 op
    assert 8 * v.counted_ops_per_io("32k", "random") == 8  # 8 random 32 KiB: 8
    assert v.counted_ops_per_io("1024k") == 4  # one 1,024 KiB I/O: 4
    assert v.counted_ops_per_io("1024k", "sequential") == 4
    assert v.counted_ops_per_io("4k", "sequential") == 1  # under 32 KiB: 1 each
    assert st1(1024).counted_ops_per_io("128k", "sequential") == 0.125  # 8 x 128 KiB on HDD: 1
    assert st1(1024).counted_ops_per_io("4k", "sequential") == 1  # a whole 1 MiB operation
    with pytest.raises(ValueError, match="pattern='zigzag'"):
        v.counted_ops_per_io("4k", "zigzag")
    with pytest.raises(ValueError, match="io_size"):
        v.counted_ops_per_io(0)


def test_counted_per_io_describes_a_mix():
    # 1.5 counted ops per I/O on gp3's 3,000 IOPS: 2,000 I/Os per second.
    w = ClosedLoop(64, "64k", counted_per_io=1.5)
    r = simulate(gp3(100, iops=3000, throughput_mib_s=750), w, duration_s=2)
    np.testing.assert_allclose(r.iops, 2000.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 3000.0, rtol=1e-12)
    for bad in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="counted_per_io="):
            ClosedLoop(1, "4k", counted_per_io=bad)


def test_cliff_time_s_of_idle_and_open_loop():
    # Idle never drains a bucket: None, a defined answer (not an AttributeError).
    assert ebssim.cliff_time_s(gp2(100), Idle()) is None
    assert ebssim.cliff_time_s(gp3(100), Idle()) is None
    trace = OpenLoop.constant(3000, "4k", 10)
    with pytest.raises(ValueError, match="OpenLoop trace varies: simulate it"):
        ebssim.cliff_time_s(gp2(100), trace)
    with pytest.raises(ValueError, match="ClosedLoop workload, got str"):
        ebssim.cliff_time_s(gp2(100), "4k")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="volume must be an ebssim.Volume"):
        ebssim.cliff_time_s("gp2", ClosedLoop())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ClosedLoop workload, got Idle"):
        ebssim.closed_loop_rate(gp2(100), Idle())  # type: ignore[arg-type]


def test_latency_model_comes_from_the_core():
    # The run's model takes the volume's parameters (the core's defaults per family and platform)
    # and the percentiles are the public latency_quantiles of the recorded series, bound included.
    r = simulate(gp2(100, burst_balance_pct=1), ClosedLoop(32, "4k"), duration_s=60)
    m = r.latency_model
    p = gp2(100)._params
    assert (m.read_service_s, m.write_service_s) == (p.service_time_s(4096, 1.0), p.service_time_s(4096, 0.0))
    assert (m.service_cv, m.wait_cv) == (p.latency_cv, p.wait_cv)
    # The default spreads at the run's 32 in flight (Little's law of its held steps).
    assert ebssim.held_in_flight(r.latency_s, r.iops, r.service_time_s) == pytest.approx(32, rel=1e-5)
    assert (m.wait_cv, m.instance_wait_cv) == pytest.approx(ebssim.default_wait_spread(True, 32))
    got = r.latency_percentiles([50, 99])
    q = ebssim.latency_quantiles(r.latency_s, r.iops * r.dt_s, [0.5, 0.99], m, bound=r.bound)
    assert got == {50.0: pytest.approx(q[0] * 1e3, rel=1e-15), 99.0: pytest.approx(q[1] * 1e3, rel=1e-15)}


def test_latency_moments_by_hand():
    # Per step, I/Os take W + Gamma(k, s / k) with W of mean max(0, m - s) and cv cw: mean
    # max(m, s), variance (cw w)^2 + s^2 / k; the run is the mixture weighted by completions.
    s = 1e-3
    m = np.array([s, 3 * s, 2 * s, 5 * s])
    n = np.array([10.0, 5.0, 0.0, 1.0])
    mean = float((m * n).sum() / n.sum())
    var = float((n * (m - mean) ** 2).sum() / n.sum()) + s**2 / 4
    fifo = ebssim.LatencyModel(s, s, 1.0, 0.5, 0.0, 0.0)
    got = ebssim.latency_moments(m, n, fifo)
    assert got[0] == pytest.approx(mean, rel=1e-12)
    assert got[1] == pytest.approx(math.sqrt(var), rel=1e-12)
    exp_service = dataclasses.replace(fifo, service_cv=1.0)
    assert ebssim.latency_moments(m, n, exp_service)[1] == pytest.approx(math.sqrt(var - s**2 / 4 + s**2), rel=1e-12)
    # A wait spread of cv 0.5 adds (0.5 w)^2 per step: waits 2 s and 4 s for 5 and 1 I/Os of 16.
    spread = dataclasses.replace(fifo, wait_cv=0.5)
    extra = (5 * (0.5 * 2 * s) ** 2 + 1 * (0.5 * 4 * s) ** 2) / 16
    assert ebssim.latency_moments(m, n, spread)[1] == pytest.approx(math.sqrt(var + extra), rel=1e-12)
    assert all(math.isnan(x) for x in ebssim.latency_moments([], [], fifo))
    with pytest.raises(ValueError, match="completions has 1"):
        ebssim.latency_moments([s, s], [1.0], fifo)


def test_fio_front_end_uses_only_the_public_api():
    src = inspect.getsource(ebssim.fio.prediction)
    assert "_core" not in src
    assert "Gamma(" not in src and "/ 4.0" not in src  # no restated latency model
