"""io1, io2 (Block Express), st1, sc1 and standard: limits, simulations and bad input.

Expected numbers are worked out by hand from AWS's rules (shared docs/ebs-model.md §3-§5 and
the brief's assumptions for standard); the arithmetic is in the comments.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ebssim import BOUND_NAMES, ClosedLoop, Simulation, Volume, io1, io2, sc1, simulate, st1, standard

MiB = 2**20
KiB = 1024


def deep(io_size, **kw):
    """A deep queue: 256 I/Os in flight, far more than any limit lets through.

    Slowest case: HDD 1 MiB, service time 5 ms + 1 MiB / 250 MiB/s = 9 ms -> 256 / 0.009 = 28,444
    I/Os per second offered, above every cap tested here (at most 256,000 on io2 4 KiB, whose
    service time is 0.25 ms + 4 KiB / 1,024 MiB/s = 0.2539 ms -> 1,008,000 offered).
    """
    return ClosedLoop(256, io_size, **kw)


def bound_names(r):
    return {BOUND_NAMES[b] for b in np.unique(r.bound)}


# ============================================================================================
# io1
# ============================================================================================


@pytest.mark.parametrize(
    "size, iops, mib_s",
    [
        (4, 100, 25.0),  # 100 x 0.25 MiB (256 KiB per IOPS)
        (20, 1000, 250.0),  # 1,000 x 0.25
        (40, 2000, 500.0),  # 2,000 x 0.25 = 500: the 500 MiB/s peak is reached at 2,000 IOPS
        (100, 5000, 500.0),  # 5,000 x 0.25 = 1,250 -> capped at 500
        (640, 32000, 500.0),  # <= 32,000: min(500, 8,000) = 500
        (641, 32001, 32001 / 64),  # > 32,000: min(1000, 32,001 / 64 = 500.015625)
        (960, 48000, 750.0),  # 48,000 / 64 = 750 (16 KiB per IOPS)
        (1280, 64000, 1000.0),  # 64,000 / 64 = 1,000
        (16384, 64000, 1000.0),
    ],
)
def test_io1_limits(size, iops, mib_s):
    v = io1(size, iops)
    assert v.type == "io1"
    assert v.max_iops == iops
    assert v.baseline_iops == iops  # provisioned: no burst
    assert v.max_throughput_mib_s == pytest.approx(mib_s, rel=1e-12)
    assert v.baseline_throughput_mib_s == pytest.approx(mib_s, rel=1e-12)
    assert not v.has_bucket
    assert v.io_unit_bytes == 256 * KiB


def test_io1_48000_iops_caps_at_750_mib_s():
    v = io1(960, 48000)  # 960 GiB x 50 = 48,000: the smallest size that allows it
    # 1 MiB sequential reads: 4 counted operations each (1,024 / 256). Counted cap 48,000 ->
    # 12,000 MiB/s, byte cap 48,000 / 64 = 750 MiB/s: throughput binds at 750 MiB/s = 750 I/Os.
    r = simulate(v, deep("1MiB", pattern="sequential"), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 750.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops, 750.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 3000.0, rtol=1e-12)  # 750 x 4
    assert bound_names(r) == {"volume_throughput"}
    # 4 KiB random reads: one counted op each, so the IOPS cap binds at 48,000 IOPS;
    # 48,000 x 4 KiB = 187.5 MiB/s, well below 750.
    r = simulate(v, deep("4k"), duration_s=10)
    np.testing.assert_allclose(r.iops, 48000.0, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s, 187.5, rtol=1e-12)
    assert bound_names(r) == {"volume_iops"}


def test_io1_2000_iops_256k_reaches_500_mib_s_at_2000_iops():
    # 256 KiB random: one counted op each; 2,000 x 256 KiB = 2,000 x 0.25 MiB = 500 MiB/s, so the
    # IOPS cap and the 500 MiB/s cap meet exactly at 2,000 IOPS.
    r = simulate(io1(40, 2000), deep("256k"), duration_s=10)
    np.testing.assert_allclose(r.iops, 2000.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 2000.0, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s, 500.0, rtol=1e-12)
    assert bound_names(r) <= {"volume_iops", "volume_throughput"}


def test_io1_holds_its_limits_indefinitely():
    # No bucket: the provisioned rate holds forever (one hour here).
    r = simulate(io1(200, 10000), deep("16k"), duration_s=3600, record=False)
    assert r.mean_iops == pytest.approx(10000.0, rel=1e-12)
    assert r.cliff_time_s is None
    assert r.burst_balance_end_pct is None


# ============================================================================================
# io2 Block Express
# ============================================================================================


@pytest.mark.parametrize(
    "size, iops, mib_s",
    [
        # 0.25 MiB/s per IOPS: one 256 KiB operation per IOPS (AWS quotes 0.256, which 256 KiB
        # counting cannot serve: docs/model.md).
        (4, 100, 25.0),  # 100 x 0.25
        (4, 4000, 1000.0),  # 4 GiB x 1,000 = 4,000 IOPS; 4,000 x 0.25 = 1,000
        (100, 1000, 250.0),  # 1,000 x 0.25
        (15, 15000, 3750.0),  # 15,000 x 0.25 = 3,750: below the cap
        (16, 16000, 4000.0),  # 16,000 x 0.25 = 4,000: the cap, "achieved at 16,000 IOPS"
        (64, 64000, 4000.0),
        (256, 256000, 4000.0),  # 256 GiB x 1,000 = 256,000: the maximum
        (65536, 256000, 4000.0),
    ],
)
def test_io2_limits(size, iops, mib_s):
    v = io2(size, iops)
    assert v.type == "io2"
    assert v.max_iops == iops
    assert v.baseline_iops == iops
    assert v.max_throughput_mib_s == pytest.approx(mib_s, rel=1e-12)
    assert v.baseline_throughput_mib_s == pytest.approx(mib_s, rel=1e-12)
    assert not v.has_bucket


def test_io2_16000_iops_caps_at_4000_mib_s():
    # 1 MiB sequential: counted cap 16,000 -> 16,000 / 4 = 4,000 I/Os = 4,000 MiB/s, and the byte
    # cap is min(4,000, 4,096) = 4,000 MiB/s: 4,000 MiB/s either way.
    r = simulate(io2(16, 16000), deep("1MiB", pattern="sequential"), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 4000.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops, 4000.0, rtol=1e-12)
    # 20,000 IOPS: counted cap allows 20,000 / 4 = 5,000 MiB/s, the byte cap 4,000 binds.
    r = simulate(io2(20, 20000), deep("1MiB", pattern="sequential"), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 4000.0, rtol=1e-12)
    assert bound_names(r) == {"volume_throughput"}
    # 15,000 IOPS: byte cap 15,000 x 0.25 = 3,750 MiB/s, and the counted cap allows 15,000 / 4 =
    # 3,750 I/Os of 1 MiB: both meet (a tie reads as the IOPS limit).
    r = simulate(io2(15, 15000), deep("1MiB", pattern="sequential"), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 3750.0, rtol=1e-12)
    assert bound_names(r) == {"volume_iops"}


def test_io2_256000_iops_small_io():
    # 4 KiB random: 256,000 counted ops per second = 256,000 x 4 KiB = 1,000 MiB/s (< 4,000).
    r = simulate(io2(256, 256000), deep("4k"), duration_s=5)
    np.testing.assert_allclose(r.iops, 256000.0, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s, 1000.0, rtol=1e-12)
    assert bound_names(r) == {"volume_iops"}


# ============================================================================================
# Reads and writes share one set of limits
# ============================================================================================


def test_read_write_split_shares_the_same_limits():
    v = io1(200, 10000)
    # 4 KiB random, 70 % reads: the 10,000 IOPS cap applies to reads and writes together:
    # read_iops = 0.7 x 10,000 = 7,000, write_iops = 0.3 x 10,000 = 3,000;
    # throughput 10,000 x 4 KiB = 39.0625 MiB/s -> 27.34375 read, 11.71875 write.
    r = simulate(v, deep("4k", read_fraction=0.7), duration_s=10)
    np.testing.assert_allclose(r.iops, 10000.0, rtol=1e-12)
    np.testing.assert_allclose(r.read_iops, 7000.0, rtol=1e-12)
    np.testing.assert_allclose(r.write_iops, 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r.read_iops + r.write_iops, r.iops, rtol=1e-12)
    np.testing.assert_allclose(r.read_mib_s, 27.34375, rtol=1e-12)
    np.testing.assert_allclose(r.write_mib_s, 11.71875, rtol=1e-12)
    df = r.to_pandas()
    np.testing.assert_allclose(df["read_iops"].to_numpy(), 7000.0, rtol=1e-12)
    np.testing.assert_allclose(df["write_iops"].to_numpy(), 3000.0, rtol=1e-12)
    # All reads or all writes: the same total.
    for rf in (0.0, 1.0):
        r2 = simulate(v, deep("4k", read_fraction=rf), duration_s=10)
        np.testing.assert_allclose(r2.iops, 10000.0, rtol=1e-12)
        np.testing.assert_allclose(r2.read_iops, 10000.0 * rf, rtol=1e-12)
        np.testing.assert_allclose(r2.write_iops, 10000.0 * (1 - rf), rtol=1e-12)


def test_read_write_split_on_hdd():
    # st1 1 TiB, 1 MiB sequential, 70 % reads: 250 MiB/s in all (burst) -> 175 read, 75 write.
    r = simulate(st1(1024), deep("1MiB", pattern="sequential", read_fraction=0.7), duration_s=10)
    np.testing.assert_allclose(r.throughput_mib_s, 250.0, rtol=1e-12)
    np.testing.assert_allclose(r.read_mib_s, 175.0, rtol=1e-12)
    np.testing.assert_allclose(r.write_mib_s, 75.0, rtol=1e-12)


# ============================================================================================
# st1 / sc1
# ============================================================================================


@pytest.mark.parametrize(
    "kind, size, base, burst",
    [
        # st1: 40 MiB/s per TiB (cap 500), burst 250 per TiB (cap 500)
        ("st1", 125, 125 / 1024 * 40, 125 / 1024 * 250),  # 4.8828125 / 30.517578125
        ("st1", 1024, 40.0, 250.0),
        ("st1", 2048, 80.0, 500.0),  # burst 2 x 250 = 500: the cap is reached at 2 TiB
        ("st1", 12800, 500.0, 500.0),  # 12.5 TiB x 40 = 500: baseline cap reached
        ("st1", 16384, 500.0, 500.0),  # 16 x 40 = 640 -> 500
        # sc1: 12 MiB/s per TiB (cap 192), burst 80 per TiB (cap 250)
        ("sc1", 125, 125 / 1024 * 12, 125 / 1024 * 80),  # 1.46484375 / 9.765625
        ("sc1", 1024, 12.0, 80.0),
        ("sc1", 4096, 48.0, 250.0),  # 4 x 80 = 320 -> 250
        ("sc1", 16384, 192.0, 250.0),  # 16 x 12 = 192
    ],
)
def test_hdd_limits(kind, size, base, burst):
    v = Volume(kind, size)
    assert v.baseline_throughput_mib_s == pytest.approx(base, rel=1e-12)
    assert v.max_throughput_mib_s == pytest.approx(burst, rel=1e-12)
    # Every I/O up to 1 MiB counts one 1 MiB credit: the bucket is the size in MiB and starts full.
    assert v.io_unit_bytes == MiB
    assert v.credit_capacity == size * 1024
    assert v.initial_credits == size * 1024
    assert v.has_bucket
    # Counted (1 MiB) operations per second: the MiB/s rates, at most 500 (st1) / 250 (sc1) IOPS.
    cap = 500.0 if kind == "st1" else 250.0
    assert v.max_iops == pytest.approx(min(burst, cap), rel=1e-12)
    assert v.baseline_iops == pytest.approx(min(base, cap), rel=1e-12)


def test_hdd_max_iops():
    assert st1(16384).max_iops == 500.0  # "max 500 IOPS"
    assert sc1(16384).max_iops == 250.0  # "max 250 IOPS"
    # 4 KiB random reads on the largest volumes: each counts a whole 1 MiB credit, so the IOPS
    # reach the MiB/s burst rate and no more: 500 (st1) and 250 (sc1).
    for v, expected in ((st1(16384), 500.0), (sc1(16384), 250.0)):
        r = simulate(v, deep("4k"), duration_s=5)
        np.testing.assert_allclose(r.iops, expected, rtol=1e-12)
        np.testing.assert_allclose(r.ebs_iops, expected, rtol=1e-12)


# 1 TiB st1: bucket 1,024 GiB x 1,024 = 1,048,576 MiB; burst 250, baseline 40: net spend 210 MiB/s
# -> 1,048,576 / 210 = 4,993.219 s; after 4,993 full steps 1,048,576 - 4,993 x 210 = 46 MiB are
# left, so step 4,993 serves 46 + 40 = 86, every later step 40.
ST1_BUCKET = 1024 * 1024
ST1_CLIFF = ST1_BUCKET / 210
ST1_RUN = 5100


@pytest.fixture(scope="module")
def st1_sequential():
    return simulate(st1(1024), deep("1MiB", pattern="sequential"), duration_s=ST1_RUN)


def test_st1_1tib_bursts_at_250_then_40(st1_sequential):
    r = st1_sequential
    np.testing.assert_allclose(r.throughput_mib_s[:4993], 250.0, rtol=1e-12)
    assert r.throughput_mib_s[4993] == pytest.approx(86.0, rel=1e-9)
    np.testing.assert_allclose(r.throughput_mib_s[4994:], 40.0, rtol=1e-12)
    # 1 MiB sequential: one I/O = one 1 MiB credit, so IOPS == counted == MiB/s
    np.testing.assert_allclose(r.iops, r.throughput_mib_s, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, r.throughput_mib_s, rtol=1e-12)
    assert r.cliff_time_s == pytest.approx(ST1_CLIFF, abs=1e-6)  # 4,993.219
    # credits at the end of step k: 1,048,576 - 210 (k + 1) while bursting
    np.testing.assert_allclose(r.credits[:4993], ST1_BUCKET - 210.0 * np.arange(1, 4994), rtol=1e-12)
    assert r.credits[-1] == 0.0
    assert r.burst_balance_end_pct == 0.0
    # BurstBalance: credits / 1,048,576 x 100; after 100 s: 100 - 21,000 / 10,485.76 = 97.997...
    assert r.burst_balance_pct[99] == pytest.approx(100 - 21000 / 10485.76, rel=1e-12)
    # Conservation: served = bucket + baseline x run = 1,048,576 + 40 x 5,100 = 1,252,576 MiB
    assert r.totals["served_bytes"] / MiB == pytest.approx(1252576.0, rel=1e-12)


def test_st1_1tib_small_random_reads_count_1_mib_each():
    # 4 KiB random reads cost a whole 1 MiB credit each: 250 IOPS while the bucket lasts, then 40;
    # the same 210 credits/s net spend, so the same cliff at 4,993.2 s.
    r = simulate(st1(1024), deep("4k"), duration_s=ST1_RUN)
    np.testing.assert_allclose(r.ebs_iops, r.iops, rtol=1e-12)
    np.testing.assert_allclose(r.iops[:4993], 250.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops[4994:], 40.0, rtol=1e-12)
    assert r.iops.max() <= 250.0 * (1 + 1e-12)
    # 250 x 4 KiB = 0.9765625 MiB/s: the throughput is tiny, the credits are not
    np.testing.assert_allclose(r.throughput_mib_s[:4993], 250 * 4 / 1024, rtol=1e-12)
    assert r.cliff_time_s == pytest.approx(ST1_CLIFF, abs=1e-6)
    assert set(BOUND_NAMES[b] for b in np.unique(r.bound)) == {"volume_iops"}


def test_hdd_sequential_small_io_merges_random_does_not():
    # st1 1 TiB, 60 s of 128 KiB reads.
    # sequential: 8 x 128 KiB merge into one 1 MiB operation -> 0.125 counted per I/O;
    #   250 counted/s -> 2,000 I/Os/s = 250 MiB/s
    # random: each 128 KiB I/O counts a full 1 MiB credit -> 250 I/Os/s = 31.25 MiB/s
    seq = simulate(st1(1024), deep("128k", pattern="sequential"), duration_s=60)
    rnd = simulate(st1(1024), deep("128k"), duration_s=60)
    np.testing.assert_allclose(seq.iops, 2000.0, rtol=1e-12)
    np.testing.assert_allclose(seq.ebs_iops, 250.0, rtol=1e-12)
    np.testing.assert_allclose(seq.ebs_iops * 8, seq.iops, rtol=1e-12)
    np.testing.assert_allclose(seq.throughput_mib_s, 250.0, rtol=1e-12)
    np.testing.assert_allclose(rnd.iops, 250.0, rtol=1e-12)
    np.testing.assert_allclose(rnd.ebs_iops, 250.0, rtol=1e-12)
    np.testing.assert_allclose(rnd.throughput_mib_s, 31.25, rtol=1e-12)
    # Both spend the same credits (net 210 per second): 1,048,576 - 60 x 210 = 1,035,976
    assert seq.credits[-1] == pytest.approx(1035976.0, rel=1e-12)
    assert rnd.credits[-1] == pytest.approx(1035976.0, rel=1e-12)


def test_sc1_bursts_at_80_then_12():
    # sc1 1 TiB at 10 %: 104,857.6 MiB of credits; net spend 80 - 12 = 68 MiB/s
    # -> 104,857.6 / 68 = 1,542.024 s; after 1,542 steps 104,857.6 - 104,856 = 1.6 MiB remain,
    # so step 1,542 serves 1.6 + 12 = 13.6 MiB.
    r = simulate(sc1(1024, burst_balance_pct=10), deep("1MiB", pattern="sequential"), duration_s=1600)
    np.testing.assert_allclose(r.throughput_mib_s[:1542], 80.0, rtol=1e-12)
    assert r.throughput_mib_s[1542] == pytest.approx(13.6, rel=1e-6)
    np.testing.assert_allclose(r.throughput_mib_s[1543:], 12.0, rtol=1e-12)
    assert r.cliff_time_s == pytest.approx(104857.6 / 68, abs=1e-6)


def test_hdd_bucket_refills_at_baseline():
    # st1 1 TiB from empty: earns 40 MiB/s at rest; 100 s -> 4,000 MiB = 0.3815 % of 1,048,576
    sim = Simulation([st1(1024, burst_balance_pct=0)])
    rest = sim.rest(100)
    np.testing.assert_allclose(rest[0].credits, 40.0 * np.arange(1, 101), rtol=1e-12)
    # then a burst of 4,000 / 210 = 19.05 s at 250 MiB/s before the baseline again
    r = sim.run([deep("1MiB", pattern="sequential")], 30)[0]
    np.testing.assert_allclose(r.throughput_mib_s[:19], 250.0, rtol=1e-12)
    np.testing.assert_allclose(r.throughput_mib_s[20:], 40.0, rtol=1e-12)
    assert r.cliff_time_s == pytest.approx(100 + 4000 / 210, abs=1e-6)


# ============================================================================================
# standard (magnetic): assumed model
# ============================================================================================


def test_standard_limits():
    v = standard(100)
    assert v.baseline_iops == 100.0
    assert v.max_iops == 200.0
    assert v.credit_capacity == 360000.0
    assert v.initial_credits == 360000.0
    assert v.baseline_throughput_mib_s == 40.0
    assert v.max_throughput_mib_s == 90.0
    assert v.io_unit_bytes == MiB
    for size in (1, 1024):
        assert standard(size).max_iops == 200.0  # the model does not depend on size


def test_standard_bursts_200_then_100():
    # 4 KiB random: 200 IOPS while credits last; net spend 200 - 100 = 100 per s
    # -> 360,000 / 100 = 3,600 s exactly, then 100 IOPS.
    r = simulate(standard(100), deep("4k"), duration_s=3700)
    np.testing.assert_allclose(r.iops[:3600], 200.0, rtol=1e-12)
    np.testing.assert_allclose(r.iops[3600:], 100.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, r.iops, rtol=1e-12)  # each 4 KiB I/O counts one 1 MiB unit
    assert r.cliff_time_s == pytest.approx(3600.0, abs=1e-9)


def test_standard_large_io_is_throughput_bound():
    # 1 MiB sequential with credits: counted cap 200/s would be 200 MiB/s, the byte cap 90 binds.
    # 90 counted/s is below the 100 baseline: the bucket never drains.
    r = simulate(standard(100), deep("1MiB", pattern="sequential"), duration_s=600)
    np.testing.assert_allclose(r.throughput_mib_s, 90.0, rtol=1e-12)
    assert r.cliff_time_s is None
    assert r.burst_balance_end_pct == 100.0
    # from an empty bucket and 4 KiB random: 100 IOPS (the baseline)
    r = simulate(standard(100, burst_balance_pct=0), deep("4k"), duration_s=60)
    np.testing.assert_allclose(r.iops, 100.0, rtol=1e-12)


# ============================================================================================
# Bad input: a ValueError that names the field and the value
# ============================================================================================


def _field_value(field, value):
    # "size_gib=3 ..." / "iops=64001 ..." (whole values printed without a fraction)
    return rf"{field}={re.escape(str(value))}\b"


BAD = [
    # io1: 4-16,384 GiB, 100-64,000 IOPS, 50 IOPS per GiB, whole numbers
    ("io1-size-low", lambda: io1(3, 100), "size_gib", 3),
    ("io1-size-high", lambda: io1(16385, 1000), "size_gib", 16385),
    ("io1-iops-low", lambda: io1(100, 99), "iops", 99),
    ("io1-iops-high", lambda: io1(16384, 64001), "iops", 64001),
    ("io1-ratio", lambda: io1(100, 5001), "iops", 5001),  # 100 GiB x 50 = 5,000
    ("io1-ratio-4gib", lambda: io1(4, 201), "iops", 201),  # 4 x 50 = 200
    ("io1-size-fraction", lambda: io1(100.5, 1000), "size_gib", 100.5),
    ("io1-iops-fraction", lambda: io1(100, 1000.5), "iops", 1000.5),
    ("io1-throughput", lambda: Volume("io1", 100, iops=1000, throughput_mib_s=250), "throughput_mib_s", 250),
    ("io1-burst-balance", lambda: Volume("io1", 100, iops=1000, burst_balance_pct=50), "burst_balance_pct", 50),
    # io2 Block Express: 4-65,536 GiB, 100-256,000 IOPS, 1,000 IOPS per GiB
    ("io2-size-low", lambda: io2(3, 100), "size_gib", 3),
    ("io2-size-high", lambda: io2(65537, 1000), "size_gib", 65537),
    ("io2-iops-low", lambda: io2(100, 99), "iops", 99),
    ("io2-iops-high", lambda: io2(65536, 256001), "iops", 256001),
    ("io2-ratio", lambda: io2(100, 100001), "iops", 100001),  # 100 x 1,000 = 100,000
    ("io2-ratio-4gib", lambda: io2(4, 4001), "iops", 4001),  # 4 x 1,000 = 4,000
    ("io2-size-fraction", lambda: io2(16.5, 1000), "size_gib", 16.5),
    ("io2-iops-fraction", lambda: io2(100, 2000.25), "iops", 2000.25),
    ("io2-throughput", lambda: Volume("io2", 100, iops=1000, throughput_mib_s=256), "throughput_mib_s", 256),
    # st1 / sc1: 125-16,384 GiB; IOPS and throughput follow the size
    ("st1-size-low", lambda: st1(124), "size_gib", 124),
    ("st1-size-high", lambda: st1(16385), "size_gib", 16385),
    ("st1-iops", lambda: Volume("st1", 1024, iops=500), "iops", 500),
    ("st1-throughput", lambda: Volume("st1", 1024, throughput_mib_s=250), "throughput_mib_s", 250),
    ("st1-size-fraction", lambda: st1(500.5), "size_gib", 500.5),
    ("st1-balance", lambda: st1(1024, burst_balance_pct=101), "burst_balance_pct", 101),
    ("sc1-size-low", lambda: sc1(124), "size_gib", 124),
    ("sc1-size-high", lambda: sc1(16385), "size_gib", 16385),
    ("sc1-iops", lambda: Volume("sc1", 1024, iops=250), "iops", 250),
    ("sc1-size-fraction", lambda: sc1(1000.5), "size_gib", 1000.5),
    ("sc1-balance", lambda: sc1(1024, burst_balance_pct=-1), "burst_balance_pct", -1),
    # standard: 1-1,024 GiB
    ("standard-size-low", lambda: standard(0), "size_gib", 0),
    ("standard-size-high", lambda: standard(1025), "size_gib", 1025),
    ("standard-iops", lambda: Volume("standard", 100, iops=200), "iops", 200),
    ("standard-size-fraction", lambda: standard(10.5), "size_gib", 10.5),
]


@pytest.mark.parametrize("make, field, value", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_names_field_and_value(make, field, value):
    with pytest.raises(ValueError, match=_field_value(field, value)):
        make()


@pytest.mark.parametrize("kind", ["io1", "io2"])
def test_provisioned_iops_required(kind):
    with pytest.raises(ValueError, match=rf"iops is required for {kind}"):
        Volume(kind, 100)


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: io1(3, 100), r"io1 volumes are 4 to 16384 GiB"),
        (lambda: io2(65537, 100), r"io2 volumes are 4 to 65536 GiB"),
        (lambda: io1(100, 64001), r"io1 IOPS are 100 to 64000"),
        (lambda: io2(1000, 256001), r"io2 IOPS are 100 to 256000"),
        (lambda: io1(100, 5001), r"50 IOPS per GiB.*at most 5000"),
        (lambda: io2(100, 100001), r"1000 IOPS per GiB.*at most 100000"),
        (lambda: st1(124), r"st1 volumes are 125 to 16384 GiB"),
        (lambda: sc1(16385), r"sc1 volumes are 125 to 16384 GiB"),
        (lambda: standard(1025), r"standard volumes are 1 to 1024 GiB"),
    ],
)
def test_bad_input_states_the_rule(make, expected):
    with pytest.raises(ValueError, match=expected):
        make()


def test_boundaries_are_accepted():
    # the ends of every documented range are valid
    io1(4, 100)
    io1(4, 200)  # 4 x 50
    io1(16384, 64000)
    io2(4, 100)
    io2(4, 4000)  # 4 x 1,000
    io2(65536, 256000)
    st1(125)
    st1(16384)
    sc1(125)
    sc1(16384)
    standard(1)
    standard(1024)
