"""Instance EBS budgets: burst buckets (EBSIOBalance% / EBSByteBalance%), sharing between
volumes, the Nitro rule, bound codes and overrides.

Instance limits come from the shipped catalog (EbsOptimizedInfo, decimal MB/s). The bucket is the
documented assumption: capacity = (max - baseline) x burst_s (1,800 s), cap per step =
min(max x dt, baseline x dt + credits), use above baseline spends the excess, use u below
baseline earns capacity / refill_s x dt x (1 - u / (baseline x dt)) (refill_s 84,600 s).
Expected numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import ebssim
import numpy as np
import pytest
from ebssim import BOUND_NAMES, ClosedLoop, Instance, Simulation, gp3, instance, io1, io2, load_catalog, simulate

MiB = 2**20
MB = 1e6
KiB = 1024


def deep(io_size, **kw):
    # gp3 16 KiB: service time 0.5 ms + 16 KiB / 1,024 MiB/s = 0.515625 ms -> 256 in flight offer
    # 496,000 I/Os per second, far above any limit here.
    return ClosedLoop(256, io_size, **kw)


def big_gp3():
    # 16,000 IOPS needs >= 32 GiB (500 IOPS per GiB); 1,000 MiB/s needs >= 4,000 IOPS (0.25 MiB/s
    # per IOPS). Alone, 16 KiB random reads reach 16,000 IOPS = 250 MiB/s (< 1,000).
    return gp3(100, iops=16000, throughput_mib_s=1000)


def names(bound):
    return {BOUND_NAMES[b] for b in np.unique(bound)}


# --------------------------------------------------------------------------------------------
# m5.xlarge, two gp3 at 16,000 IOPS each, 16 KiB random reads
# --------------------------------------------------------------------------------------------
# Catalog: m5.xlarge 6,000 / 18,750 IOPS, 143.75 / 593.75 MB/s.
# Demand 2 x 16,000 = 32,000 counted IOPS (16 KiB = one op each) > 18,750: the instance binds.
# IO bucket (18,750 - 6,000) x 1,800 = 22,950,000; spend 12,750 per s -> empty after 1,800 s.
# Bytes while bursting: 18,750 x 16,384 B = 307.2 MB/s; bucket (593.75 - 143.75) x 1,800 =
# 810,000 MB; spend 307.2 - 143.75 = 163.45 MB/s -> 294,210 MB in 1,800 s: 63.6778 % left.
# After the cliff: 6,000 IOPS x 16,384 B = 98.304 MB/s < 143.75: the byte bucket earns
# 810,000 / 84,600 x (1 - 98.304 / 143.75) MB/s, i.e. 100 / 84,600 x 0.316146 % per s.

XL_IO_CAP = (18750 - 6000) * 1800
XL_BYTES_CAP = (593.75 - 143.75) * MB * 1800
XL_RUN = 2400


@pytest.fixture(scope="module")
def xl_iops():
    sim = Simulation([big_gp3(), big_gp3()], instance="m5.xlarge")
    return sim.run([deep("16k"), deep("16k")], XL_RUN)


def test_m5_xlarge_iops_bursts_then_baseline(xl_iops):
    r = xl_iops
    inst = r.instance
    assert inst.instance.name == "m5.xlarge"
    np.testing.assert_allclose(inst.iops[:1800], 18750.0, rtol=1e-12)
    np.testing.assert_allclose(inst.iops[1800:], 6000.0, rtol=1e-12)
    # Decimal MB/s: 18,750 x 16,384 / 1e6 = 307.2 ; 6,000 x 16,384 / 1e6 = 98.304
    np.testing.assert_allclose(inst.throughput_mb_s[:1800], 307.2, rtol=1e-12)
    np.testing.assert_allclose(inst.throughput_mb_s[1800:], 98.304, rtol=1e-12)
    # Proportional share of identical volumes: half each, 9,375 then 3,000
    for v in r:
        np.testing.assert_allclose(v.iops[:1800], 9375.0, rtol=1e-12)
        np.testing.assert_allclose(v.iops[1800:], 3000.0, rtol=1e-12)
        assert names(v.bound) == {"instance_iops"}
    # Instance IOPS are the volumes' counted operations
    np.testing.assert_allclose(inst.iops, r[0].ebs_iops + r[1].ebs_iops, rtol=1e-12)
    assert names(inst.bound) == {"instance_iops"}


def test_m5_xlarge_io_balance_over_time(xl_iops):
    inst = xl_iops.instance
    k = np.arange(1800)
    # EBSIOBalance% after step k: 100 x (1 - 12,750 (k + 1) / 22,950,000) = 100 x (1 - (k + 1) / 1,800)
    np.testing.assert_allclose(inst.io_balance_pct[:1800], 100.0 * (1 - (k + 1) / 1800), rtol=1e-9, atol=1e-9)
    # At the baseline the use equals the baseline: no earning, the balance stays at 0.
    np.testing.assert_array_equal(inst.io_balance_pct[1800:], 0.0)
    assert inst.io_balance_end_pct == 0.0
    assert inst.cliff_time_s == pytest.approx(1800.0, abs=1e-9)
    assert inst.totals["io_cliff_time_s"] == pytest.approx(1800.0, abs=1e-9)


def test_m5_xlarge_byte_balance_over_time(xl_iops):
    inst = xl_iops.instance
    k = np.arange(1800)
    drop = 163.45 * MB / XL_BYTES_CAP * 100  # % per step while bursting (0.0201790...)
    np.testing.assert_allclose(inst.byte_balance_pct[:1800], 100.0 - drop * (k + 1), rtol=1e-9)
    at_cliff = 100.0 - drop * 1800  # 63.6778 %
    assert at_cliff == pytest.approx(63.67778, abs=1e-5)
    earn = 100.0 / 84600 * (1 - 98.304 / 143.75)  # % per step below baseline (3.7369e-4)
    j = np.arange(1, XL_RUN - 1800 + 1)
    np.testing.assert_allclose(inst.byte_balance_pct[1800:], at_cliff + earn * j, rtol=1e-9)
    assert inst.byte_balance_end_pct == pytest.approx(at_cliff + earn * 600, rel=1e-9)
    # The byte bucket never ran dry: the cliff is the IO bucket's
    assert np.isnan(inst.totals["bytes_cliff_time_s"])


def test_m5_xlarge_instance_to_pandas(xl_iops):
    df = xl_iops.instance.to_pandas()
    assert list(df.columns) == ["iops", "throughput_mb_s", "io_balance_pct", "byte_balance_pct", "bound"]
    assert df.index.name == "time_s"
    assert len(df) == XL_RUN
    assert list(df["bound"].cat.categories) == list(BOUND_NAMES)
    assert set(df["bound"].astype(str)) == {"instance_iops"}
    assert df["iops"].loc[0.0] == pytest.approx(18750.0)
    assert df["iops"].loc[2000.0] == pytest.approx(6000.0)
    vdf = xl_iops[0].to_pandas()
    assert set(vdf["bound"].astype(str)) == {"instance_iops"}
    long = xl_iops.to_pandas()
    assert set(long["bound"].astype(str)) == {"instance_iops"}


def test_m5_xlarge_with_dt_10():
    # The same budget with 10 s steps: per step min(187,500, 60,000 + credits), spend 127,500;
    # 22,950,000 / 127,500 = 180 steps = 1,800 s.
    sim = Simulation([big_gp3(), big_gp3()], dt=10, instance="m5.xlarge")
    inst = sim.run([deep("16k"), deep("16k")], 2400).instance
    np.testing.assert_allclose(inst.iops[:180], 18750.0, rtol=1e-12)
    np.testing.assert_allclose(inst.iops[180:], 6000.0, rtol=1e-12)
    assert inst.cliff_time_s == pytest.approx(1800.0, abs=1e-9)


# --------------------------------------------------------------------------------------------
# m5.large: 3,600 / 18,750 IOPS, 81.25 / 593.75 MB/s
# --------------------------------------------------------------------------------------------


def test_m5_large_iops_bursts_then_baseline():
    # IO bucket (18,750 - 3,600) x 1,800 = 27,270,000; spend 15,150 per s -> 1,800 s.
    sim = Simulation([big_gp3(), big_gp3()], instance="m5.large")
    r = sim.run([deep("16k"), deep("16k")], 2000)
    inst = r.instance
    np.testing.assert_allclose(inst.iops[:1800], 18750.0, rtol=1e-12)
    np.testing.assert_allclose(inst.iops[1800:], 3600.0, rtol=1e-12)
    np.testing.assert_allclose(r[0].iops[1800:], 1800.0, rtol=1e-12)
    np.testing.assert_allclose(r[1].iops[1800:], 1800.0, rtol=1e-12)
    assert inst.cliff_time_s == pytest.approx(1800.0, abs=1e-9)
    # 3,600 x 16,384 = 58.98 MB/s < 81.25: the byte bucket (922,500 MB) drained by
    # 1,800 x (307.2 - 81.25) = 406,710 MB -> 55.911 % at the cliff, then earns.
    assert inst.byte_balance_pct[1799] == pytest.approx(100 - 406710 / 922500 * 100, rel=1e-9)
    assert inst.byte_balance_pct[-1] > inst.byte_balance_pct[1799]


# --------------------------------------------------------------------------------------------
# Throughput-bound: 1 MiB sequential reads
# --------------------------------------------------------------------------------------------
# Each volume alone: 1,000 MiB/s (byte cap; 1 MiB sequential = 4 counted ops, 4,000 counted/s).
# Together 2,000 MiB/s = 2,097.152 MB/s > 593.75 MB/s: the instance's bytes bind.
# 593.75 MB/s = 593,750,000 / 1,048,576 = 566.2441 MiB/s in all (283.12 each), counted
# 4 x 566.24 = 2,264.97 per s < 6,000: the IO bucket is untouched.
# Byte bucket 810,000 MB, spend 593.75 - 143.75 = 450 MB/s -> 1,800 s, then 143.75 MB/s =
# 137.0907 MiB/s.


@pytest.fixture(scope="module")
def xl_bytes():
    sim = Simulation([big_gp3(), big_gp3()], instance="m5.xlarge")
    return sim.run([deep("1MiB", pattern="sequential")] * 2, 2000)


def test_m5_xlarge_throughput_bursts_then_baseline(xl_bytes):
    r = xl_bytes
    inst = r.instance
    np.testing.assert_allclose(inst.throughput_mb_s[:1800], 593.75, rtol=1e-9)
    np.testing.assert_allclose(inst.throughput_mb_s[1801:], 143.75, rtol=1e-9)
    total_mib = r[0].throughput_mib_s + r[1].throughput_mib_s
    np.testing.assert_allclose(total_mib[:1800], 593.75 * MB / MiB, rtol=1e-9)  # 566.2441
    assert 593.75 * MB / MiB == pytest.approx(566.2441, abs=1e-4)
    np.testing.assert_allclose(total_mib[1801:], 143.75 * MB / MiB, rtol=1e-9)  # 137.0907
    np.testing.assert_allclose(r[0].throughput_mib_s[:1800], 593.75 * MB / MiB / 2, rtol=1e-9)
    # counted: 4 per 1 MiB sequential I/O
    np.testing.assert_allclose(inst.iops, 4 * total_mib, rtol=1e-9)
    assert names(inst.bound) == {"instance_throughput"}
    assert names(r[0].bound) == {"instance_throughput"}
    assert set(inst.to_pandas()["bound"].astype(str)) == {"instance_throughput"}


def test_m5_xlarge_throughput_balances(xl_bytes):
    inst = xl_bytes.instance
    k = np.arange(1800)
    # EBSByteBalance% after step k: 100 x (1 - 450 (k + 1) / 810,000) = 100 x (1 - (k + 1) / 1,800)
    np.testing.assert_allclose(inst.byte_balance_pct[:1800], 100 * (1 - (k + 1) / 1800), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(inst.byte_balance_pct[1800:], 0.0, atol=1e-6)
    # IO use 2,265 < 6,000 baseline: the full IO bucket stays full
    np.testing.assert_array_equal(inst.io_balance_pct, 100.0)
    assert inst.cliff_time_s == pytest.approx(1800.0, abs=1e-3)
    assert np.isnan(inst.totals["io_cliff_time_s"])


# --------------------------------------------------------------------------------------------
# Refill after a rest
# --------------------------------------------------------------------------------------------


def test_refill_after_rest():
    sim = Simulation([big_gp3(), big_gp3()], instance="m5.xlarge")
    sim.run([deep("16k")] * 2, 1800)  # IO bucket empty at 1,800 s (above)
    # Idle: u = 0 earns capacity / 84,600 per s: 8,460 s -> 10 % (2,295,000 credits).
    rest = sim.rest(8460).instance
    j = np.arange(1, 8461)
    np.testing.assert_allclose(rest.io_balance_pct, 100 * j / 84600, rtol=1e-9)
    assert rest.io_balance_end_pct == pytest.approx(10.0, rel=1e-9)
    # Byte bucket: 63.6778 % at 1,800 s (see above) + 10 %
    assert rest.byte_balance_end_pct == pytest.approx(100 - 1800 * 163.45 / 8100 + 10, rel=1e-9)
    np.testing.assert_array_equal(rest.iops, 0.0)
    assert names(rest.bound) == {"demand"}
    # Burst again: 2,295,000 / 12,750 = 180 s at 18,750, then 6,000;
    # the cliff at 1,800 + 8,460 + 180 = 10,440 s of simulated time.
    again = sim.run([deep("16k")] * 2, 300).instance
    np.testing.assert_allclose(again.iops[:180], 18750.0, rtol=1e-9)
    np.testing.assert_allclose(again.iops[180:], 6000.0, rtol=1e-9)
    assert again.cliff_time_s == pytest.approx(10440.0, abs=1e-6)
    assert again.time_s[0] == 10260.0


def test_full_refill_takes_refill_s_and_caps_at_100():
    sim = Simulation([big_gp3()], instance=instance("m5.xlarge", io_balance_pct=0, byte_balance_pct=0))
    half = sim.rest(42300, record=False).instance  # half of 84,600 s
    assert half.io_balance_end_pct == pytest.approx(50.0, rel=1e-9)
    assert half.byte_balance_end_pct == pytest.approx(50.0, rel=1e-9)
    full = sim.rest(50000, record=False).instance  # 42,300 more would fill it; the rest is lost
    assert full.io_balance_end_pct == 100.0
    assert full.byte_balance_end_pct == 100.0


def test_light_use_earns_in_proportion_to_unused_baseline():
    # m5.xlarge from an empty IO bucket; one gp3 at its 3,000 IOPS (16 KiB random) = half the
    # 6,000 baseline: earns 22,950,000 / 84,600 x (1 - 3,000 / 6,000) per s = 0.5 / 846 % per s.
    sim = Simulation([gp3(100)], instance=instance("m5.xlarge", io_balance_pct=0))
    inst = sim.run([deep("16k")], 846).instance
    np.testing.assert_allclose(inst.iops, 3000.0, rtol=1e-12)
    assert names(inst.bound) == {"demand"}
    assert inst.io_balance_end_pct == pytest.approx(0.5, rel=1e-9)


# --------------------------------------------------------------------------------------------
# Sharing: proportional vs fair
# --------------------------------------------------------------------------------------------
# Volume A: gp3 16,000 IOPS, volume B: gp3 3,000 IOPS (default; 125 MiB/s = 8,000 x 16 KiB, so
# its IOPS cap binds). 16 KiB random, deep queue: wants 16,000 + 3,000 = 19,000.


def _share_run(share, io_balance_pct=100.0):
    inst = instance("m5.xlarge", share=share, io_balance_pct=io_balance_pct)
    sim = Simulation([big_gp3(), gp3(100)], instance=inst)
    return sim.run([deep("16k"), deep("16k")], 10)


def test_proportional_share():
    # Full bucket, cap 18,750: every volume gets 18,750 / 19,000 of its demand:
    # A 16,000 x 18,750 / 19,000 = 15,789.47, B 3,000 x 18,750 / 19,000 = 2,960.53
    r = _share_run("proportional")
    np.testing.assert_allclose(r[0].iops, 16000 * 18750 / 19000, rtol=1e-12)
    np.testing.assert_allclose(r[1].iops, 3000 * 18750 / 19000, rtol=1e-12)
    assert names(r[1].bound) == {"instance_iops"}
    # Empty bucket, cap 6,000: A 16,000 x 6 / 19 = 5,052.63, B 3,000 x 6 / 19 = 947.37
    r = _share_run("proportional", io_balance_pct=0)
    np.testing.assert_allclose(r[0].iops, 16000 * 6000 / 19000, rtol=1e-12)
    np.testing.assert_allclose(r[1].iops, 3000 * 6000 / 19000, rtol=1e-12)
    np.testing.assert_allclose(r.instance.iops, 6000.0, rtol=1e-12)


def test_fair_share():
    # Max-min fair, cap 18,750: level 18,750 / 2 = 9,375 >= B's 3,000, so B gets 3,000 and
    # A the remaining 15,750.
    r = _share_run("fair")
    np.testing.assert_allclose(r[0].iops, 15750.0, rtol=1e-12)
    np.testing.assert_allclose(r[1].iops, 3000.0, rtol=1e-12)
    assert names(r[0].bound) == {"instance_iops"}
    assert "instance_iops" not in names(r[1].bound)  # B's demand is met in full
    np.testing.assert_allclose(r.instance.iops, 18750.0, rtol=1e-12)
    # Cap 6,000: level 6,000 / 2 = 3,000 = B's demand: 3,000 each.
    r = _share_run("fair", io_balance_pct=0)
    np.testing.assert_allclose(r[0].iops, 3000.0, rtol=1e-12)
    np.testing.assert_allclose(r[1].iops, 3000.0, rtol=1e-12)
    assert r.instance.io_balance_end_pct == 0.0  # used 6,000 = baseline: nothing earned


def test_fair_share_three_volumes():
    # Wants 16,000 / 7,000 / 3,000 (gp3 at 16,000, 7,000 and the default 3,000 IOPS).
    # Cap 18,750: 18,750 / 3 = 6,250 >= 3,000 -> 3,000 met, 15,750 left; 15,750 / 2 = 7,875 >= 7,000
    # -> 7,000 met, 8,750 left for the largest. After the cliff (cap 6,000): 2,000 each.
    # Proportional instead: 16,000 x 18,750 / 26,000 = 11,538.46 etc.
    vols = lambda: [big_gp3(), gp3(100, iops=7000), gp3(100)]  # noqa: E731
    fair = Simulation(vols(), instance=instance("m5.xlarge", share="fair")).run([deep("16k")] * 3, 1900)
    np.testing.assert_allclose([v.iops[0] for v in fair], [8750.0, 7000.0, 3000.0], rtol=1e-12)
    np.testing.assert_allclose([v.iops[-1] for v in fair], [2000.0, 2000.0, 2000.0], rtol=1e-12)
    # The bucket drains at 12,750 per s whatever the sharing: the same cliff
    assert fair.instance.cliff_time_s == pytest.approx(1800.0, abs=1e-6)
    prop = Simulation(vols(), instance="m5.xlarge").run([deep("16k")] * 3, 10)
    np.testing.assert_allclose([v.iops[0] for v in prop], [w * 18750 / 26000 for w in (16000, 7000, 3000)], rtol=1e-12)


def test_fair_share_of_throughput():
    # m5.xlarge with an empty byte bucket: 143.75 MB/s = 137.0907 MiB/s. 1 MiB sequential:
    # A wants 1,000 MiB/s, B (gp3 default 125 MiB/s) 125: 1,125 in all.
    # proportional: A 137.09 x 1,000 / 1,125 = 121.86, B 137.09 x 125 / 1,125 = 15.23
    # fair: both want more than 137.09 / 2 = 68.55: 68.55 each.
    cap = 143.75 * MB / MiB
    for share, a, b in (("proportional", cap * 1000 / 1125, cap * 125 / 1125), ("fair", cap / 2, cap / 2)):
        inst = instance("m5.xlarge", share=share, byte_balance_pct=0)
        r = Simulation([big_gp3(), gp3(100)], instance=inst).run([deep("1MiB", pattern="sequential")] * 2, 10)
        np.testing.assert_allclose(r[0].throughput_mib_s, a, rtol=1e-9)
        np.testing.assert_allclose(r[1].throughput_mib_s, b, rtol=1e-9)
        np.testing.assert_allclose(r.instance.throughput_mb_s, 143.75, rtol=1e-9)
        assert names(r.instance.bound) == {"instance_throughput"}


def test_share_must_be_known():
    with pytest.raises(ValueError, match="share='greedy'"):
        instance("m5.large", share="greedy")
    assert ebssim.SHARE_POLICIES == ("proportional", "fair")


# --------------------------------------------------------------------------------------------
# Instance IOPS count EBS-counted operations
# --------------------------------------------------------------------------------------------


def test_instance_iops_are_counted_operations():
    # gp3 default (3,000 IOPS, 125 MiB/s), 32 KiB sequential: 125 MiB/s = 4,000 I/Os of 32 KiB,
    # merged 8 to a 256 KiB operation -> 500 counted per s; 131.072 MB/s: the instance does not bind.
    r = simulate(gp3(100), deep("32k", pattern="sequential"), duration_s=10, instance="m5.xlarge")
    np.testing.assert_allclose(r.iops, 4000.0, rtol=1e-12)
    np.testing.assert_allclose(r.ebs_iops, 500.0, rtol=1e-12)
    sim = Simulation([gp3(100)], instance="m5.xlarge")
    inst = sim.run([deep("32k", pattern="sequential")], 10).instance
    np.testing.assert_allclose(inst.iops, 500.0, rtol=1e-12)
    np.testing.assert_allclose(inst.throughput_mb_s, 125 * MiB / MB, rtol=1e-12)  # 131.072
    # 1 MiB random: 4 counted per I/O. The gp3 (1,000 MiB/s) asks 1,048.576 MB/s > 593.75:
    # 593.75 MB/s = 566.24 I/Os of 1 MiB per s -> 2,264.97 counted.
    sim = Simulation([big_gp3()], instance="m5.xlarge")
    r = sim.run([deep("1MiB")], 10)
    np.testing.assert_allclose(r[0].iops, 593.75 * MB / MiB, rtol=1e-9)
    np.testing.assert_allclose(r.instance.iops, 4 * 593.75 * MB / MiB, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# Non-burstable instance
# --------------------------------------------------------------------------------------------


def test_non_burstable_instance_never_changes_balance():
    row = load_catalog()["c7g.16xlarge"]
    assert row.baseline_iops == row.max_iops == 80000
    assert row.baseline_mb_s == row.max_mb_s == 2500
    inst = instance("c7g.16xlarge")
    assert not inst.burstable
    # Two io2 at 64,000 IOPS, 16 KiB random: 128,000 wanted > 80,000 -> 40,000 each, for ever;
    # 80,000 x 16,384 B = 1,310.72 MB/s < 2,500.
    sim = Simulation([io2(64, 64000), io2(64, 64000)], instance=inst)
    r = sim.run([deep("16k")] * 2, 3600)
    np.testing.assert_allclose(r.instance.iops, 80000.0, rtol=1e-12)
    np.testing.assert_allclose(r[0].iops, 40000.0, rtol=1e-12)
    np.testing.assert_allclose(r.instance.throughput_mb_s, 1310.72, rtol=1e-12)
    np.testing.assert_array_equal(r.instance.io_balance_pct, 100.0)
    np.testing.assert_array_equal(r.instance.byte_balance_pct, 100.0)
    assert r.instance.cliff_time_s is None
    assert r.instance.io_balance_end_pct == 100.0
    assert r.instance.byte_balance_end_pct == 100.0
    assert names(r.instance.bound) == {"instance_iops"}
    rest = sim.rest(100).instance
    np.testing.assert_array_equal(rest.io_balance_pct, 100.0)


def test_light_load_is_not_bound_by_the_instance():
    r = Simulation([gp3(100)], instance="m5.large").run([deep("16k")], 3600)
    # 3,000 IOPS < 3,600 baseline; 3,000 x 16,384 = 49.15 MB/s < 81.25: nothing spent
    np.testing.assert_allclose(r[0].iops, 3000.0, rtol=1e-12)
    np.testing.assert_array_equal(r.instance.io_balance_pct, 100.0)
    np.testing.assert_array_equal(r.instance.byte_balance_pct, 100.0)
    assert r.instance.cliff_time_s is None
    assert names(r.instance.bound) == {"demand"}
    assert names(r[0].bound) == {"volume_iops"}


# --------------------------------------------------------------------------------------------
# Nitro rule: io1/io2 on a Xen instance
# --------------------------------------------------------------------------------------------
# i3.16xlarge: Xen, 65,000 IOPS / 1,750 MB/s (baseline = max) -- above the 32,000 IOPS / 500 MiB/s
# non-Nitro volume limits, so the volume rule shows, not the instance's.


def test_catalog_says_xen():
    for name in ("i3.16xlarge", "m4.large"):
        assert load_catalog()[name].hypervisor == "xen"
        assert instance(name).nitro is False
    assert load_catalog()["m5.large"].hypervisor == "nitro"
    assert instance("m5.large").nitro is True


@pytest.mark.parametrize(
    "make, io, pattern, nitro_value, xen_value, column",
    [
        # io1 64,000 IOPS, 4 KiB random: Nitro 64,000 IOPS, Xen 32,000
        (lambda: io1(1280, 64000), "4k", "random", 64000.0, 32000.0, "iops"),
        # io1 64,000 IOPS, 1 MiB sequential: Nitro 1,000 MiB/s, Xen 500
        (lambda: io1(1280, 64000), "1MiB", "sequential", 1000.0, 500.0, "throughput_mib_s"),
        # io2 64,000 IOPS (the most a Xen instance can attach): 32,000 IOPS on Xen
        (lambda: io2(64, 64000), "4k", "random", 64000.0, 32000.0, "iops"),
        # io2 16,000 IOPS: 4,000 MiB/s on Nitro, 500 on Xen
        (lambda: io2(16, 16000), "1MiB", "sequential", 4000.0, 500.0, "throughput_mib_s"),
        # below both limits: unchanged (io1 10,000 IOPS x 4 KiB = 39 MiB/s)
        (lambda: io1(200, 10000), "4k", "random", 10000.0, 10000.0, "iops"),
    ],
)
def test_nitro_rule(make, io, pattern, nitro_value, xen_value, column):
    w = deep(io, pattern=pattern)
    alone = simulate(make(), w, duration_s=5)  # no instance: Nitro, nothing else binds
    np.testing.assert_allclose(getattr(alone, column), nitro_value, rtol=1e-12)
    on_xen = Simulation([make()], instance="i3.16xlarge").run([w], 5)
    np.testing.assert_allclose(getattr(on_xen[0], column), xen_value, rtol=1e-12)
    assert names(on_xen.instance.bound) == {"demand"}  # the volume limit binds, not the instance
    assert names(on_xen[0].bound) <= {"volume_iops", "volume_throughput"}


def test_io2_above_64000_cannot_attach_to_xen():
    v = io2(65, 65000)  # valid on its own (65 x 1,000)
    Simulation([v], instance="c7g.16xlarge")  # Nitro: fine
    for name in ("i3.16xlarge", "m4.large"):
        with pytest.raises(ValueError, match=r"iops=65000.*non-Nitro"):
            Simulation([v], instance=name)
    with pytest.raises(ValueError, match=r"non-Nitro"):
        simulate(v, deep("4k"), duration_s=1, instance="i3.16xlarge")
    # io1 has no such rule: 64,000 IOPS attaches and delivers 32,000
    Simulation([io1(1280, 64000)], instance="i3.16xlarge")


def test_xen_instance_built_by_hand():
    # nitro=False on an Instance of one's own applies the same rule: 32,000 IOPS at most,
    # and no io2 above 64,000 IOPS; the same limits with nitro=True deliver 64,000.
    xen = Instance("custom", 100000, 100000, 5000, 5000, nitro=False)
    r = Simulation([io2(64, 64000)], instance=xen).run([deep("4k")], 5)
    np.testing.assert_allclose(r[0].iops, 32000.0, rtol=1e-12)
    r = Simulation([io2(64, 64000)], instance=xen.with_(nitro=True)).run([deep("4k")], 5)
    np.testing.assert_allclose(r[0].iops, 64000.0, rtol=1e-12)
    with pytest.raises(ValueError, match="non-Nitro"):
        Simulation([io2(256, 256000)], instance=xen)


# --------------------------------------------------------------------------------------------
# Overrides
# --------------------------------------------------------------------------------------------


def test_burst_s_override_halves_the_burst():
    # m5.large burst_s=900: IO bucket (18,750 - 3,600) x 900 = 13,635,000 / 15,150 = 900 s
    inst = instance("m5.large", burst_s=900)
    assert inst.burst_s == 900
    assert float(inst._params.io_capacity) == (18750 - 3600) * 900
    r = Simulation([big_gp3(), big_gp3()], instance=inst).run([deep("16k")] * 2, 1000)
    np.testing.assert_allclose(r.instance.iops[:900], 18750.0, rtol=1e-12)
    np.testing.assert_allclose(r.instance.iops[900:], 3600.0, rtol=1e-12)
    assert r.instance.cliff_time_s == pytest.approx(900.0, abs=1e-9)


def test_refill_s_and_balance_overrides():
    # refill_s=8,460 from empty: a 846 s rest earns 10 %
    inst = instance("m5.xlarge", refill_s=8460, io_balance_pct=0, byte_balance_pct=50)
    rest = Simulation([gp3(100)], instance=inst).rest(846).instance
    assert rest.io_balance_end_pct == pytest.approx(10.0, rel=1e-9)
    assert rest.byte_balance_end_pct == pytest.approx(60.0, rel=1e-9)


def test_with_changes_fields():
    base = instance("m5.large")
    fair = base.with_(share="fair", burst_s=900)
    assert fair.share == "fair" and fair.burst_s == 900
    assert fair.max_iops == base.max_iops == 18750
    assert base.share == "proportional" and base.burst_s == 1800  # unchanged
    xen = base.with_(nitro=False)
    assert xen.nitro is False


@pytest.mark.parametrize("override", [{"nitro": False}, {"max_iops": 20000}])
def test_catalog_fields_can_be_overridden(override):
    inst = instance("m5.large", **override)
    for k, v in override.items():
        assert getattr(inst, k) == v


def test_unknown_override_is_a_value_error():
    with pytest.raises(ValueError, match=r"'m5\.large'.*burst_seconds.*Instance fields are .*burst_s"):
        instance("m5.large", burst_seconds=900)


def test_invalid_overrides_are_value_errors():
    with pytest.raises(ValueError, match="burst_s=0"):
        instance("m5.large", burst_s=0)
    with pytest.raises(ValueError, match="io_balance_pct=101"):
        instance("m5.large", io_balance_pct=101)
    with pytest.raises(ValueError, match="max_iops=100 is below baseline_iops=200"):
        Instance("x", 200, 100, 10, 10)


def test_instance_bucket_that_starts_empty_has_its_cliff_at_the_start():
    # EBSIOBalance% 0 on m5.large: the first step already gets only the 3,600 IOPS baseline,
    # like a gp2 volume that starts dry: the cliff is at the start of the run.
    inst = instance("m5.large", io_balance_pct=0)
    vols = [gp3(1000, iops=16000, throughput_mib_s=1000)]
    run = Simulation(vols, instance=inst).run([ClosedLoop(64, "16k")], duration_s=10)
    assert run.instance.cliff_time_s == 0.0
    assert run[0].iops[0] == pytest.approx(3600.0)


@pytest.mark.parametrize("read_fraction, mib_s", [(1.0, 1.0), (0.0, 1.0), (0.5, 2.0), (0.25, 1 / 0.75)])
def test_xen_ebs_link_is_full_duplex(read_fraction, mib_s):
    # c4.xlarge (Xen): 93.75 MB/s = 89.407 MiB/s of EBS bandwidth, in each direction (AWS's RDS user
    # guide: "EBS-optimized connections are full-duplex"; data set 01 moved 131 MiB/s of mixed 1 MiB
    # reads and writes on it against 90 MiB/s read-only or write-only). 1 MiB I/Os on io1 at 32,000
    # IOPS (Xen's io1 cap) would do 500 MiB/s: the instance binds. Reads only or writes only: 89.4;
    # half and half: 89.4 each way, 178.8 in all; a quarter reads: the writes' 89.4 / 0.75 = 119.2.
    cap = 93.75e6 / 2**20
    w = ebssim.ClosedLoop(64, "1m", read_fraction=read_fraction)
    r = ebssim.simulate(ebssim.io1(1000, 50000), w, 10, instance="c4.xlarge")
    assert r.throughput_mib_s[-1] == pytest.approx(cap * mib_s, rel=1e-12)
    assert ebssim.BOUND_NAMES[r.bound[-1]] == "instance_throughput"
    # On Nitro (m5.large) reads and writes share one budget: the mix changes nothing.
    nitro = [
        ebssim.simulate(ebssim.io1(1000, 50000), ebssim.ClosedLoop(64, "1m", read_fraction=f), 10, instance="m5.large")
        for f in (1.0, read_fraction)
    ]
    assert nitro[0].throughput_mib_s[-1] == nitro[1].throughput_mib_s[-1]
