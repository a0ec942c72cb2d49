"""Reference scenarios from product.md, worked out by hand from the AWS rules (ebs-model.md §1, §2, §5).

Constants used in the hand arithmetic below:

* gp2 bucket: 5.4e6 credits, starts full, burst 3,000 IOPS, baseline clamp(3 x GiB, 100, 16,000).
* gp2 throughput: min(128 if size <= 170 GiB else 250, IOPS cap x 0.25 MiB).
* gp3 defaults: 3,000 IOPS, 125 MiB/s.
* Default service time: 0.5 ms + io_bytes / (1,024 MiB/s).
  4 KiB: 0.5 ms + 4096 / 2**30 s = 0.503814697265625 ms.
  A 4 KiB closed loop at QD 32 would complete 32 / 0.000503815 = 63,515 I/O/s unthrottled,
  far above 3,000, so the IOPS limit binds.
* Counting: one I/O <= 256 KiB counts 1 when random; any I/O under 32 KiB counts 1, sequential
  or not; sequential I/Os from 32 KiB count bytes / 256 KiB (8 contiguous 32 KiB = 1).
"""

from __future__ import annotations

import math

import ebssim
import numpy as np
import pandas as pd
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, Simulation, gp2, gp3, simulate

CAP = 5.4e6
MiB = 1024**2
ST_4K = 0.5e-3 + 4096 / (1024 * MiB)  # 0.503814697265625 ms, default service time of a 4 KiB I/O


# --------------------------------------------------------------------------------------------
# AWS's gp2 burst table via the closed forms
# --------------------------------------------------------------------------------------------

# size GiB -> (baseline, burst seconds from full at 3,000 IOPS, refill seconds from empty at rest)
# burst = 5.4e6 / (3000 - baseline); refill = 5.4e6 / baseline.
GP2_TABLE = [
    (1, 100, 1862, 54000),  # 5.4e6/2,900 = 1,862.07 ; 5.4e6/100 = 54,000
    (33, 100, 1862, 54000),  # 3 x 33 = 99 -> clamped to 100
    (100, 300, 2000, 18000),  # 5.4e6/2,700 = 2,000 ; 5.4e6/300 = 18,000
    (250, 750, 2400, 7200),  # 5.4e6/2,250 = 2,400 ; 5.4e6/750 = 7,200
    (334, 1002, 2703, 5389),  # 5.4e6/1,998 = 2,702.7 ; 5.4e6/1,002 = 5,389.2
    (500, 1500, 3600, 3600),  # 5.4e6/1,500 = 3,600 both ways
    (750, 2250, 7200, 2400),  # 5.4e6/750 = 7,200 ; 5.4e6/2,250 = 2,400
]


@pytest.mark.parametrize("size, baseline, burst_s, refill_s", GP2_TABLE)
def test_gp2_burst_table_closed_forms(size, baseline, burst_s, refill_s):
    v = gp2(size)
    assert v.baseline_iops == baseline
    assert round(ebssim.burst_duration_s(v)) == burst_s
    assert ebssim.burst_duration_s(v) == pytest.approx(CAP / (3000 - baseline), rel=1e-12)
    assert round(ebssim.refill_time_s(v)) == refill_s
    assert ebssim.refill_time_s(v) == pytest.approx(CAP / baseline, rel=1e-12)


@pytest.mark.parametrize("size", [1000, 2000, 5334, 16384])
def test_gp2_1000_gib_and_above_never_run_out(size):
    # baseline = min(3 x size, 16,000) >= 3,000 = burst: the bucket never drains.
    v = gp2(size)
    assert v.baseline_iops >= 3000
    assert math.isinf(ebssim.burst_duration_s(v))
    assert math.isinf(ebssim.burst_duration_s(v, iops=1e9))


def test_burst_closed_forms_other_rates_and_balances():
    v = gp2(100)
    # Half a bucket: 2.7e6 / 2,700 = 1,000 s of burst; 2.7e6 / 300 = 9,000 s to refill the other half.
    assert ebssim.burst_duration_s(v, burst_balance_pct=50) == pytest.approx(1000.0)
    assert ebssim.refill_time_s(v, burst_balance_pct=50) == pytest.approx(9000.0)
    # 1,000 IOPS drains at 1,000 - 300 = 700/s: 5.4e6 / 700 = 7,714.29 s.
    assert ebssim.burst_duration_s(v, 1000) == pytest.approx(5.4e6 / 700)
    # Demand above the 3,000 burst is served at 3,000 only: same 2,000 s as the table.
    assert ebssim.burst_duration_s(v, 5000) == pytest.approx(2000.0)
    # At or below baseline the bucket never drains.
    assert math.isinf(ebssim.burst_duration_s(v, 300))
    assert math.isinf(ebssim.burst_duration_s(v, 200))
    # Refilling while serving 100 IOPS gains 300 - 100 = 200/s: 5.4e6 / 200 = 27,000 s.
    assert ebssim.refill_time_s(v, 100) == pytest.approx(27000.0)
    # gp3 has no bucket: never runs out, never refills.
    assert math.isinf(ebssim.burst_duration_s(gp3(100)))
    assert math.isinf(ebssim.refill_time_s(gp3(100)))


@pytest.mark.parametrize("size, baseline, burst_s, refill_s", GP2_TABLE[::2] + [GP2_TABLE[-1]])
def test_gp2_burst_table_simulated(size, baseline, burst_s, refill_s):
    """The engine reproduces the table: QD 32 x 4 KiB asks far more than 3,000 IOPS."""
    r = simulate(gp2(size), ClosedLoop(32, "4k"), duration_s=burst_s + 100)
    assert r.cliff_time_s == pytest.approx(CAP / (3000 - baseline), abs=1.0)
    t = r.time_s
    assert np.all(r.iops[t < burst_s - 1] == pytest.approx(3000.0))
    assert np.all(r.iops[t >= burst_s + 1] == pytest.approx(baseline))


@pytest.mark.parametrize("size, baseline, refill_s", [(100, 300, 18000), (500, 1500, 3600), (1, 100, 54000)])
def test_gp2_refill_simulated(size, baseline, refill_s):
    """An empty bucket at rest earns baseline credits per second: full after 5.4e6 / baseline s."""
    r = simulate(gp2(size, burst_balance_pct=0), Idle(), duration_s=refill_s + 10, record=True)
    k = np.arange(r.n_steps)
    # credits at the end of step k = min(baseline x (k + 1), 5.4e6)
    np.testing.assert_allclose(r.credits, np.minimum(baseline * (k + 1.0), CAP), rtol=1e-12)
    assert r.credits[refill_s - 2] < CAP
    assert r.credits[refill_s - 1] == CAP
    assert r.burst_balance_pct[-1] == 100.0
    assert r.cliff_time_s is None


# --------------------------------------------------------------------------------------------
# 100 GiB gp2 vs gp3, 4 KiB random reads at QD 32
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gp2_qd32():
    return simulate(gp2(100), ClosedLoop(in_flight=32, io_size="4k"), duration_s=2700)


def test_gp2_100gib_qd32_cliff_at_2000s(gp2_qd32):
    r = gp2_qd32
    # 5.4e6 / (3,000 - 300) = 2,000 s
    assert r.cliff_time_s == pytest.approx(2000.0, abs=1.0)
    t = r.time_s
    assert r.n_steps == 2700 and r.iops.shape == (2700,)
    # 3,000 IOPS until t = 2,000 s, 300 IOPS within one step after it.
    np.testing.assert_allclose(r.iops[t < 1999], 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops[t >= 2001], 300.0, rtol=1e-12)
    # 4 KiB random: one counted op per I/O.
    np.testing.assert_allclose(r.ebs_iops, r.iops, rtol=1e-12)
    # 3,000 x 4 KiB = 11.71875 MiB/s before; 300 x 4 KiB = 1.171875 MiB/s after.
    np.testing.assert_allclose(r.throughput_mib_s[t < 1999], 3000 * 4096 / MiB, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s[t >= 2001], 300 * 4096 / MiB, rtol=1e-12)


def test_gp2_100gib_qd32_credits_and_burst_balance(gp2_qd32):
    r = gp2_qd32
    # Net drain 3,000 - 300 = 2,700 credits/s: after step k (k < 2,000) 5.4e6 - 2,700 (k + 1).
    k = np.arange(1999)
    np.testing.assert_allclose(r.credits[:1999], CAP - 2700.0 * (k + 1), rtol=1e-12)
    # Half way (end of step 999, t = 1,000 s): 2.7e6 credits = 50 %.
    assert r.burst_balance_pct[999] == pytest.approx(50.0)
    assert np.all(r.credits[2000:] == 0.0)
    assert np.all(r.burst_balance_pct[2000:] == 0.0)
    assert r.burst_balance_end_pct == 0.0
    assert np.all((r.credits >= 0) & (r.credits <= CAP))


def test_gp2_100gib_qd32_latency(gp2_qd32):
    r = gp2_qd32
    t = r.time_s
    # Little's law: 32 in flight / 3,000 per s = 10.667 ms; / 300 per s = 106.67 ms.
    np.testing.assert_allclose(r.latency_ms[t < 1999], 32 / 3000 * 1e3, rtol=1e-9)
    np.testing.assert_allclose(r.latency_ms[t >= 2001], 32 / 300 * 1e3, rtol=1e-9)
    np.testing.assert_allclose(r.latency_s, r.latency_ms / 1e3, rtol=1e-15)
    # Closed loop: 32 outstanding at all times.
    np.testing.assert_allclose(r.queue_length, 32.0, rtol=1e-12)
    # Before and after, the IOPS limit binds (burst 3,000, then baseline 300).
    assert np.all(r.bound == ebssim.BOUND_NAMES.index("volume_iops"))


def test_gp3_100gib_qd32_flat():
    r = simulate(gp3(100), ClosedLoop(in_flight=32, io_size="4k"), duration_s=2700)
    np.testing.assert_allclose(r.iops, 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r.latency_ms, 32 / 3000 * 1e3, rtol=1e-9)  # 10.667 ms
    assert r.cliff_time_s is None
    assert np.all(r.credits == 0.0)  # no bucket
    assert np.all(np.isnan(r.burst_balance_pct))
    assert r.burst_balance_end_pct is None
    assert np.all(r.bound == ebssim.BOUND_NAMES.index("volume_iops"))


def test_gp2_1000gib_never_cliffs_simulated():
    # baseline 3,000 = burst: the bucket stays full, BurstBalance reads 100 %.
    r = simulate(gp2(1000), ClosedLoop(64, "4k"), duration_s=3000)
    assert r.cliff_time_s is None
    np.testing.assert_allclose(r.iops, 3000.0, rtol=1e-12)
    assert np.all(r.credits == CAP)
    assert np.all(r.burst_balance_pct == 100.0)


# --------------------------------------------------------------------------------------------
# 1 MiB sequential reads at QD 8: throughput caps and 256 KiB counting
# --------------------------------------------------------------------------------------------

# Service time of a 1 MiB I/O: 0.5 ms + 1 MiB / 1,024 MiB/s = 1.4765625 ms; 8 in flight ask
# 8 / 1.4765625 ms = 5,418 MiB/s unthrottled, so the throughput cap binds everywhere below.


@pytest.mark.parametrize(
    "volume, mib_s",
    [
        (gp3(100), 125.0),  # gp3 default 125 MiB/s
        (gp2(100), 128.0),  # gp2 <= 170 GiB: 128 MiB/s (IOPS cap 3,000 x 0.25 = 750 is higher)
        (gp2(170), 128.0),
        (gp2(171), 250.0),  # > 170 GiB with credits: 250 MiB/s
        (gp2(1000), 250.0),
    ],
    ids=["gp3-100", "gp2-100", "gp2-170", "gp2-171", "gp2-1000"],
)
def test_1mib_sequential_qd8_throughput_caps(volume, mib_s):
    r = simulate(volume, ClosedLoop(8, "1MiB", pattern="sequential"), duration_s=20)
    np.testing.assert_allclose(r.throughput_mib_s, mib_s, rtol=1e-12)
    # 1 MiB = four 256 KiB units: counted IOPS = 4 x MiB/s; application IOPS = MiB/s.
    np.testing.assert_allclose(r.ebs_iops, 4 * mib_s, rtol=1e-12)  # 128 MiB/s = 512 counted IOPS
    np.testing.assert_allclose(r.iops, mib_s, rtol=1e-12)
    # Little's law: 8 in flight / (mib_s I/Os per second).
    np.testing.assert_allclose(r.latency_ms, 8 / mib_s * 1e3, rtol=1e-9)  # gp3: 64 ms, gp2: 62.5 ms
    assert np.all(r.bound == ebssim.BOUND_NAMES.index("volume_throughput"))


def test_1mib_random_counts_four_ops_too():
    # A random 1 MiB I/O also counts ceil(1 MiB / 256 KiB) = 4.
    r = simulate(gp3(100), ClosedLoop(8, "1m"), duration_s=5)
    np.testing.assert_allclose(r.ebs_iops, 500.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops, 125.0, rtol=1e-12)


def test_4k_sequential_counts_one_operation_each():
    # AWS: any I/O under 32 KiB is one operation, sequential or not. 4 KiB sequential at QD 32
    # asks 63,515 I/Os: the 3,000 IOPS burst cap binds (11.7 MiB/s), as for random 4 KiB, and
    # the bucket drains at 3,000 - 300 = 2,700 credits/s: the cliff at 5.4e6 / 2,700 = 2,000 s.
    w = ClosedLoop(32, "4k", pattern="sequential")
    r = simulate(gp2(100), w, duration_s=10)
    np.testing.assert_allclose(r.iops, 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r.credits, CAP - 2700.0 * np.arange(1, 11), rtol=1e-12)
    assert ebssim.cliff_time_s(gp2(100), w) == pytest.approx(2000.0, rel=1e-12)
    assert simulate(gp2(100), w, duration_s=2100, record=False).cliff_time_s == pytest.approx(2000.0, rel=1e-9)
    # gp3 100 GiB: 3,000 application IOPS.
    np.testing.assert_allclose(simulate(gp3(100), w, duration_s=5).iops, 3000.0, rtol=1e-12)


def test_32k_sequential_merges_into_256k_operations():
    # From 32 KiB, sequential I/Os merge: 8 contiguous 32 KiB I/Os = 1 operation. At QD 32 the
    # loop asks 60,318 x 32 KiB = 1,885 MiB/s > 128: throughput binds at 128 MiB/s = 4,096
    # application IOPS, but only 4,096 / 8 = 512 counted operations.
    r = simulate(gp2(100), ClosedLoop(32, "32k", pattern="sequential"), duration_s=10)
    np.testing.assert_allclose(r.iops, 4096.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 512.0, rtol=1e-12)
    # The bucket drains at 512 - 300 = 212 credits/s.
    np.testing.assert_allclose(r.credits, CAP - 212.0 * np.arange(1, 11), rtol=1e-12)


def test_gp2_throughput_after_cliff_follows_baseline():
    # 250 GiB gp2, 1 MiB random QD 8: 250 MiB/s = 1,000 counted/s with credits; the bucket
    # drains at 1,000 - 750 = 250/s -> 21,600 s (start from 1 % = 54,000 credits: 216 s).
    # Without credits: min(250, 750 x 0.25) = 187.5 MiB/s, 750 counted IOPS.
    r = simulate(gp2(250, burst_balance_pct=1), ClosedLoop(8, "1m"), duration_s=300)
    assert r.cliff_time_s == pytest.approx(216.0, abs=1.0)
    t = r.time_s
    np.testing.assert_allclose(r.throughput_mib_s[t < 215], 250.0, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s[t >= 217], 187.5, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops[t >= 217], 750.0, rtol=1e-12)


def test_gp2_100gib_empty_bucket_aws_example():
    # AWS (ebs-model.md §1): an empty 100 GiB gp2 gives 300 IOPS and 300 x 256 KiB = 75 MiB/s.
    # 1 MiB I/Os: 75 MiB/s = 75 application IOPS = 300 counted; the bucket never refills
    # because every earned credit is spent.
    r = simulate(gp2(100, burst_balance_pct=0), ClosedLoop(8, "1m"), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 75.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 300.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops, 75.0, rtol=1e-12)
    np.testing.assert_allclose(r.credits, 0.0, atol=1e-9)
    # 4 KiB random from empty: 300 IOPS x 4 KiB; the IOPS limit binds, not the bytes.
    r = simulate(gp2(100, burst_balance_pct=0), ClosedLoop(32, "4k"), duration_s=10)
    np.testing.assert_allclose(r.iops, 300.0, rtol=1e-12)
    assert np.all(r.bound == ebssim.BOUND_NAMES.index("volume_iops"))


def test_light_load_is_not_throttled():
    # QD 1 x 4 KiB on gp3: 1 / 0.503815 ms = 1,984.86 IOPS < 3,000; latency = service time.
    r = simulate(gp3(100), ClosedLoop(1, "4k"), duration_s=10)
    np.testing.assert_allclose(r.iops, 1 / ST_4K, rtol=1e-12)
    np.testing.assert_allclose(r.latency_s, ST_4K, rtol=1e-12)
    assert np.all(r.bound == ebssim.BOUND_NAMES.index("demand"))


def test_custom_latency_and_service_time():
    # latency_ms=2 on the volume: 4 KiB service time 2 ms + 3.815 us; QD 1 -> 1 / 2.003815 ms.
    st = 2e-3 + 4096 / (1024 * MiB)
    r = simulate(gp3(100, latency_ms=2), ClosedLoop(1, "4k"), duration_s=3)
    np.testing.assert_allclose(r.iops, 1 / st, rtol=1e-12)
    # service_time_ms on the workload overrides the volume's model: QD 2 / 1 ms = 2,000 IOPS.
    r = simulate(gp3(100), ClosedLoop(2, "4k", service_time_ms=1.0), duration_s=3)
    np.testing.assert_allclose(r.iops, 2000.0, rtol=1e-12)
    np.testing.assert_allclose(r.latency_ms, 1.0, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Fine steps: dt = 0.001
# --------------------------------------------------------------------------------------------


def test_dt_ms_cliff_within_one_step():
    # 0.06 % of 5.4e6 = 3,240 credits; drain 2,700/s -> cliff at 3,240 / 2,700 = 1.2 s.
    dt = 0.001
    r = simulate(gp2(100, burst_balance_pct=0.06), ClosedLoop(32, "4k"), duration_s=2.0, dt=dt)
    assert r.n_steps == 2000
    assert r.dt_s == dt
    np.testing.assert_allclose(r.time_s[:3], [0.0, 0.001, 0.002])
    assert r.cliff_time_s == pytest.approx(1.2, abs=dt)
    t = r.time_s
    np.testing.assert_allclose(r.iops[t < 1.2 - 2 * dt], 3000.0, rtol=1e-9)
    np.testing.assert_allclose(r.iops[t > 1.2 + 2 * dt], 300.0, rtol=1e-9)
    np.testing.assert_allclose(r.latency_ms[t < 1.2 - 2 * dt], 32 / 3000 * 1e3, rtol=1e-9)
    np.testing.assert_allclose(r.latency_ms[t > 1.2 + 2 * dt], 32 / 300 * 1e3, rtol=1e-9)
    # Credits fall 2.7 per ms step: 3,240 - 2.7 (k + 1).
    np.testing.assert_allclose(r.credits[:100], 3240 - 2.7 * np.arange(1, 101), rtol=1e-9)


def test_dt_one_second_interpolates_the_cliff():
    # Same 3,240 credits with 1 s steps: step 0 serves 3,000 (credits 3,240 + 300 - 3,000 = 540),
    # step 1 can serve only 540 + 300 = 840, the bucket empties 540 / 2,700 = 0.2 s into it.
    r = simulate(gp2(100, burst_balance_pct=0.06), ClosedLoop(32, "4k"), duration_s=3)
    np.testing.assert_allclose(r.iops, [3000.0, 840.0, 300.0], rtol=1e-12)
    np.testing.assert_allclose(r.credits, [540.0, 0.0, 0.0], atol=1e-9)
    assert r.cliff_time_s == pytest.approx(1.2, abs=1.0)


def test_dt_ms_sub_second_burst_is_spread():
    # gp3 3,000 IOPS = 3 I/Os per 1 ms step. 10 I/Os arriving in the first ms are served
    # 3, 3, 3, 1 over four steps (3,000, 3,000, 3,000, 1,000 IOPS), nothing after.
    ops = np.zeros(10)
    ops[0] = 10
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096), dt=0.001)
    np.testing.assert_allclose(r.iops[:4], [3000, 3000, 3000, 1000], rtol=1e-9)
    assert np.all(r.iops[4:] == 0)
    assert r.totals["served_ops"] == pytest.approx(10.0)
    assert r.totals["backlog_ops"] == pytest.approx(0.0, abs=1e-9)


# --------------------------------------------------------------------------------------------
# cliff_time_s() closed form vs the simulated cliff
# --------------------------------------------------------------------------------------------

WORKLOADS = {
    "qd1-4k": ClosedLoop(1, "4k"),
    "qd4-16k": ClosedLoop(4, "16k"),
    "qd32-4k": ClosedLoop(32, "4k"),
    "qd16-64k": ClosedLoop(16, "64k"),
    "qd8-1m-seq": ClosedLoop(8, "1MiB", pattern="sequential"),
}


@pytest.mark.parametrize("size", [1, 100, 250, 500, 750])
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_cliff_closed_form_matches_simulation(size, name):
    # Start from 5 % of the bucket (270,000 credits) to keep the runs short.
    v = gp2(size, burst_balance_pct=5)
    w = WORKLOADS[name]
    predicted = ebssim.cliff_time_s(v, w)
    if predicted is None:
        r = simulate(v, w, duration_s=3000, record=False)
        assert r.cliff_time_s is None
        assert r.totals["credits_end"] > 0
    else:
        r = simulate(v, w, duration_s=math.ceil(predicted) + 20, record=False)
        assert r.cliff_time_s is not None
        assert r.cliff_time_s == pytest.approx(predicted, abs=1.0)  # within one step


@pytest.mark.parametrize(
    "size, w, expected",
    [
        # QD 1 x 4 KiB: 1 / 0.503815 ms = 1,984.857 counted/s; drain 1,684.857 on 100 GiB.
        (100, ClosedLoop(1, "4k"), CAP / (1 / ST_4K - 300)),  # 3,205.02 s
        # QD 16 x 64 KiB: 3,000 IOPS x 64 KiB = 187.5 MiB/s > 128 -> 128 MiB/s / 64 KiB
        # = 2,048 counted/s; drain 1,748 -> 3,089.24 s.
        (100, ClosedLoop(16, "64k"), CAP / (2048 - 300)),
        # 4 KiB sequential: under 32 KiB, one op each: 3,000 counted/s; drain 2,700 -> 2,000 s.
        (100, ClosedLoop(32, "4k", pattern="sequential"), CAP / 2700),
        # 32 KiB sequential merges 8 to an op, throughput-bound: 512 counted/s; drain 212 -> 25,471.7 s.
        (100, ClosedLoop(32, "32k", pattern="sequential"), CAP / 212),
        # 1 ms think time: 4 / (0.503815 + 1) ms = 2,659.9 counted/s; drain 2,359.9 -> 2,288.2 s.
        (100, ClosedLoop(4, "4k", think_time_ms=1), CAP / (4 / (ST_4K + 1e-3) - 300)),
        # 1 MiB random on 250 GiB: 250 MiB/s = 1,000 counted/s; drain 250 -> 21,600 s.
        (250, ClosedLoop(8, "1m"), CAP / 250),
        # 1 MiB on 750 GiB: 1,000 counted/s < 2,250 baseline: never.
        (750, ClosedLoop(8, "1m"), None),
        # QD 1 x 4 KiB on 750 GiB: 1,984.86 < 2,250: never.
        (750, ClosedLoop(1, "4k"), None),
    ],
)
def test_cliff_closed_form_by_hand(size, w, expected):
    got = ebssim.cliff_time_s(gp2(size), w)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, rel=1e-9)


def test_cliff_closed_form_gp3_never():
    assert ebssim.cliff_time_s(gp3(100), ClosedLoop(32, "4k")) is None
    assert ebssim.cliff_time_s(gp2(1000), ClosedLoop(32, "4k")) is None


def test_cliff_at_dt_ms_matches_closed_form():
    # QD 1 x 4 KiB from 3,240 credits: 3,240 / (1,984.857 - 300) = 1.92302 s.
    v = gp2(100, burst_balance_pct=0.06)
    w = ClosedLoop(1, "4k")
    expected = 3240 / (1 / ST_4K - 300)
    assert ebssim.cliff_time_s(v, w) == pytest.approx(expected, rel=1e-9)
    r = simulate(v, w, duration_s=3, dt=0.001)
    assert r.cliff_time_s == pytest.approx(expected, abs=0.001)


@pytest.mark.parametrize(
    "w, expected",
    [
        # One segment of 1,200 x 4 KiB a second on 100 GiB gp2: 5.4e6 / (1,200 - 300) = 6,000 s.
        (OpenLoop.piecewise([0], [1200], "4k"), CAP / 900),
        # Three segments of that rate are the same constant demand.
        (OpenLoop.piecewise([0, 600, 1200], [1200] * 3, "4k"), CAP / 900),
        # 5,000 arrive, the burst cap serves 3,000 and the rest queues: 5.4e6 / 2,700 = 2,000 s.
        (OpenLoop.piecewise([0], [5000], "4k"), CAP / 2700),
        # 3,000 x 64 KiB = 187.5 MiB/s > 128: 128 MiB/s / 64 KiB = 2,048 counted a second.
        (OpenLoop.piecewise([0], [3000], "64k"), CAP / (2048 - 300)),
        # At most one I/O outstanding: 1 / 0.503815 ms = 1,984.857 a second.
        (OpenLoop.piecewise([0], [2500], "4k", max_in_flight=1), CAP / (1 / ST_4K - 300)),
        # At the baseline: never; a trace of 5,000 s ends before its cliff at 6,000 s.
        (OpenLoop.piecewise([0], [300], "4k"), None),
        (OpenLoop.piecewise([0], [1200], "4k", duration_s=5000), None),
    ],
)
def test_cliff_closed_form_of_a_constant_open_loop(w, expected):
    v = gp2(100)
    got = ebssim.cliff_time_s(v, w)
    if expected is None:
        assert got is None
        r = simulate(v, w, duration_s=None if w.duration_s else 7000, record=False)
        assert r.cliff_time_s is None
        return
    assert got == pytest.approx(expected, rel=1e-9)
    r = simulate(v, w, duration_s=math.ceil(expected) + 20, record=False)
    assert r.cliff_time_s == pytest.approx(expected, abs=1.0)  # within one step


def test_cliff_time_s_refuses_a_varying_open_loop():
    message = r"this PiecewiseOpenLoop's rate changes \(1,000 to 2,000 IOPS over 2 segments\)"
    with pytest.raises(ValueError, match=message):
        ebssim.cliff_time_s(gp2(100), OpenLoop.piecewise([0, 60], [1000, 2000], "4k"))
    ops = np.full(10, 1000.0)
    with pytest.raises(ValueError, match="; an OpenLoop trace varies: simulate it"):
        ebssim.cliff_time_s(gp2(100), OpenLoop(ops, ops * 4096))


# --------------------------------------------------------------------------------------------
# State across Simulation.run / rest
# --------------------------------------------------------------------------------------------


def test_state_carries_across_runs_and_rests():
    sim = Simulation([gp2(100)])
    a = sim.run([ClosedLoop(32, "4k")], duration_s=2100)[0]
    assert a.t0_s == 0.0
    assert a.cliff_time_s == pytest.approx(2000.0, abs=1.0)
    assert sim.credits() == 0.0
    assert sim.time_s == 2100.0

    # Resting 600 s at idle earns 300 x 600 = 180,000 credits.
    b = sim.rest(600)[0]
    assert b.t0_s == 2100.0
    np.testing.assert_allclose(b.time_s[[0, -1]], [2100.0, 2699.0])
    np.testing.assert_allclose(b.credits, 300.0 * np.arange(1, 601), rtol=1e-12)
    assert sim.credits() == pytest.approx(180000.0)
    assert np.all(b.iops == 0)

    # Bursting again: 180,000 / 2,700 = 66.67 s of 3,000 IOPS, cliff at 2,700 + 66.67 s.
    c = sim.run([ClosedLoop(32, "4k")], duration_s=100)[0]
    assert c.t0_s == 2700.0
    assert c.cliff_time_s == pytest.approx(2700 + 180000 / 2700, abs=1.0)
    np.testing.assert_allclose(c.iops[:66], 3000.0, rtol=1e-12)
    np.testing.assert_allclose(c.iops[68:], 300.0, rtol=1e-12)
    assert sim.time_s == 2800.0


def test_rest_credits_are_capped():
    # 90 % = 4.86e6 credits; 2,000 s of rest would add 600,000 -> capped at 5.4e6 after
    # (5.4e6 - 4.86e6) / 300 = 1,800 s.
    sim = Simulation([gp2(100, burst_balance_pct=90)])
    r = sim.rest(2000)[0]
    k = np.arange(1, 2001)
    np.testing.assert_allclose(r.credits, np.minimum(4.86e6 + 300.0 * k, CAP), rtol=1e-12)
    assert r.credits[1798] < CAP
    assert r.credits[1799] == CAP
    assert sim.credits() == CAP
    # Resting from full changes nothing.
    sim.rest(100, record=False)
    assert sim.credits() == CAP


def test_rest_without_record_still_earns():
    sim = Simulation([gp2(500, burst_balance_pct=0)])
    r = sim.rest(1000, record=False)[0]
    # 1,500 x 1,000 = 1.5e6 credits
    assert sim.credits() == pytest.approx(1.5e6)
    assert r.totals["credits_end"] == pytest.approx(1.5e6)
    assert r.burst_balance_end_pct == pytest.approx(1.5e6 / CAP * 100)


def test_backlog_carries_and_drains_while_resting():
    # gp3 100 GiB: 6,000 x 4 KiB arrive in one second; 3,000 served, 3,000 queued.
    sim = Simulation([gp3(100)])
    a = sim.run([OpenLoop([6000.0], [6000.0 * 4096])])[0]
    assert a.totals["served_ops"] == pytest.approx(3000.0)
    assert a.totals["backlog_ops"] == pytest.approx(3000.0)
    assert a.totals["backlog_bytes"] == pytest.approx(3000.0 * 4096)
    assert a.summary()["backlog_ops_end"] == pytest.approx(3000.0)
    # The queued 3,000 drain in the first second of the rest, nothing after.
    b = sim.rest(3)[0]
    np.testing.assert_allclose(b.iops, [3000.0, 0.0, 0.0], atol=1e-9)
    assert b.totals["served_ops"] == pytest.approx(3000.0)
    assert b.totals["demanded_ops"] == 0.0
    assert b.totals["backlog_ops"] == pytest.approx(0.0, abs=1e-9)


def test_volumes_in_one_simulation_are_independent():
    sim = Simulation([gp2(100), gp3(100), gp2(250)])
    rr = sim.run([ClosedLoop(32, "4k"), ClosedLoop(32, "4k"), Idle()], duration_s=2100)
    assert len(rr) == 3
    assert rr[0].cliff_time_s == pytest.approx(2000.0, abs=1.0)
    assert rr[1].cliff_time_s is None
    assert rr[2].cliff_time_s is None
    assert sim.credits(0) == 0.0
    assert sim.credits(2) == CAP
    # Same answer as a volume simulated alone.
    alone = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2100)
    np.testing.assert_array_equal(rr[0].iops, alone.iops)
    np.testing.assert_array_equal(rr[0].credits, alone.credits)


# --------------------------------------------------------------------------------------------
# summary(), window(), to_pandas()
# --------------------------------------------------------------------------------------------


def test_summary(gp2_qd32):
    s = gp2_qd32.summary()
    # 2,000 s at 3,000 + 700 s at 300 = 6,210,000 I/Os over 2,700 s = 2,300 IOPS.
    assert s["mean_iops"] == pytest.approx(2300.0)
    # I/O-weighted latency: (6e6 x 32/3,000 + 210,000 x 32/300) / 6.21e6
    #   = (64,000 + 22,400) / 6.21e6 s = 13.913 ms
    assert s["mean_latency_ms"] == pytest.approx(86400 / 6.21e6 * 1e3, rel=1e-9)
    assert s["cliff_time_s"] == pytest.approx(2000.0, abs=1.0)
    assert s["burst_balance_end_pct"] == 0.0
    assert s["throttled_fraction"] == {
        "demand": 0.0,
        "volume_iops": 1.0,
        "volume_throughput": 0.0,
        "instance_iops": 0.0,
        "instance_throughput": 0.0,
        "max_in_flight": 0.0,
    }
    assert s["backlog_ops_end"] == 0.0
    assert "gp2" in s["volume"] and "100" in s["volume"]
    assert "4 KiB" in s["workload"] and "32" in s["workload"]
    assert gp2_qd32.mean_iops == pytest.approx(2300.0)
    assert gp2_qd32.totals["served_ops"] == pytest.approx(6.21e6)
    assert gp2_qd32.totals["served_bytes"] == pytest.approx(6.21e6 * 4096)


def test_summary_gp3_and_throttled_fraction_mix():
    # QD 1 x 4 KiB on gp3 for 10 s is never throttled; 1 MiB QD 8 always throughput-bound.
    s = simulate(gp3(100), ClosedLoop(1, "4k"), duration_s=10).summary()
    assert s["throttled_fraction"] == {
        "demand": 1.0,
        "volume_iops": 0.0,
        "volume_throughput": 0.0,
        "instance_iops": 0.0,
        "instance_throughput": 0.0,
        "max_in_flight": 0.0,
    }
    assert s["cliff_time_s"] is None
    assert s["burst_balance_end_pct"] is None
    assert s["mean_latency_ms"] == pytest.approx(ST_4K * 1e3, rel=1e-12)
    # Open loop: 2 s at 1,000 IOPS (demand), 2 s at 5,000 (IOPS cap 3,000) -> 50 % / 50 %.
    ops = np.array([1000.0, 1000.0, 5000.0, 5000.0])
    s = simulate(gp3(100), OpenLoop(ops, ops * 4096)).summary()
    assert s["throttled_fraction"]["demand"] == pytest.approx(0.5)
    assert s["throttled_fraction"]["volume_iops"] == pytest.approx(0.5)
    # 12,000 demanded, 1,000 + 1,000 + 3,000 + 3,000 = 8,000 served -> 4,000 queued.
    assert s["backlog_ops_end"] == pytest.approx(4000.0)
    assert s["mean_iops"] == pytest.approx(2000.0)


def test_window(gp2_qd32):
    before = gp2_qd32.window(0, 2000)
    after = gp2_qd32.window(2000, 2700)
    assert before["iops"] == pytest.approx(3000.0)
    assert before["throughput_mib_s"] == pytest.approx(3000 * 4096 / MiB)  # 11.71875
    assert before["latency_ms"] == pytest.approx(32 / 3000 * 1e3)  # 10.667
    assert after["iops"] == pytest.approx(300.0, rel=1e-3)
    assert after["latency_ms"] == pytest.approx(32 / 300 * 1e3, rel=1e-3)  # 106.7
    # The whole run's window equals the summary's I/O-weighted mean latency.
    whole = gp2_qd32.window(0, 2700)
    assert whole["iops"] == pytest.approx(2300.0)
    assert whole["latency_ms"] == pytest.approx(gp2_qd32.mean_latency_ms, rel=1e-9)
    # A window without a step of the run is refused, not NaN (test_errors_api).
    with pytest.raises(ValueError, match=r"holds no step: the run spans 0 to 2700 s"):
        gp2_qd32.window(5000, 6000)


def test_window_is_half_open_on_step_start_times():
    # Steps start at 0, 1, 2, 3 with IOPS 1,000, 2,000, 3,000 (cap), 0.
    ops = np.array([1000.0, 2000.0, 3000.0, 0.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    assert r.window(1, 3)["iops"] == pytest.approx(2500.0)  # steps 1 and 2
    assert r.window(0.5, 1.5)["iops"] == pytest.approx(2000.0)  # only step 1 starts inside


def test_to_pandas(gp2_qd32):
    df = gp2_qd32.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == [
        "iops",
        "ebs_iops",
        "throughput_mib_s",
        "read_iops",
        "write_iops",
        "read_mib_s",
        "write_mib_s",
        "credits",
        "burst_balance_pct",
        "queue_length",
        "backlog_ops",
        "latency_ms",
        "bound",
    ]
    assert df.index.name == "time_s"
    assert len(df) == 2700
    np.testing.assert_array_equal(df.index.to_numpy(), np.arange(2700.0))
    np.testing.assert_array_equal(df["iops"].to_numpy(), gp2_qd32.iops)
    np.testing.assert_array_equal(df["credits"].to_numpy(), gp2_qd32.credits)
    np.testing.assert_allclose(df["latency_ms"].to_numpy(), gp2_qd32.latency_s * 1e3)
    assert isinstance(df["bound"].dtype, pd.CategoricalDtype)
    assert list(df["bound"].cat.categories) == list(ebssim.BOUND_NAMES)
    assert (df["bound"] == "volume_iops").all()
    assert df.loc[1000.0, "iops"] == pytest.approx(3000.0)
    assert df.loc[2500.0, "iops"] == pytest.approx(300.0)
    assert df.loc[999.0, "burst_balance_pct"] == pytest.approx(50.0)


def test_to_pandas_bound_categories_and_time_offset():
    sim = Simulation([gp3(100), gp3(100), gp3(100)], dt=0.5)
    sim.rest(1.0)  # later runs start at t = 1 s
    rr = sim.run([ClosedLoop(1, "4k"), ClosedLoop(32, "4k"), ClosedLoop(8, "1m")], duration_s=2)
    expected = ["demand", "volume_iops", "volume_throughput"]
    for r, name in zip(rr, expected):
        df = r.to_pandas()
        np.testing.assert_allclose(df.index.to_numpy(), [1.0, 1.5, 2.0, 2.5])
        assert (df["bound"] == name).all()
    long = rr.to_pandas()
    assert len(long) == 12
    assert list(long["volume"].unique()) == [0, 1, 2]
    assert "time_s" in long.columns
    assert isinstance(long["bound"].dtype, pd.CategoricalDtype)
    np.testing.assert_allclose(long.loc[long["volume"] == 1, "iops"], 3000.0)


def test_bucket_that_starts_empty_has_its_cliff_at_the_start():
    # BurstBalance 0 %: credits 0, so the first step already serves only the 300 IOPS baseline;
    # closed form: 0 credits / (3,000 - 300) = 0 s.
    v = ebssim.gp2(100, burst_balance_pct=0)
    w = ebssim.ClosedLoop(32, "4k")
    r = ebssim.simulate(v, w, duration_s=10)
    assert ebssim.cliff_time_s(v, w) == 0.0
    assert r.cliff_time_s == 0.0
    assert r.iops[0] == pytest.approx(300.0)
    # Demand below baseline on an empty bucket is no cliff: 16 I/Os in flight at 100 ms each = 160 IOPS.
    idle_ish = ebssim.simulate(v, ebssim.ClosedLoop(16, "4k", service_time_ms=100), duration_s=10)
    assert idle_ish.cliff_time_s is None
