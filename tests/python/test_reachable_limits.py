"""Every limit a volume reports is one the engine can serve (docs/model.md, "Reported limits are reachable").

For each type and a grid of configurations: large sequential I/O at a deep queue reaches the
reported throughput caps, and small random I/O the reported IOPS caps; with credits (a full
bucket) the maximum, from an empty bucket the baseline. No run ever exceeds them.
"""

from __future__ import annotations

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, Volume, gp2, gp3, io1, io2, sc1, simulate, st1, standard

# 4,096 in flight ask far more than any limit: the slowest case, HDD 1 MiB (9 ms), offers
# 4,096 / 0.009 = 455,000 MiB/s; io2's 256,000 IOPS at 512 B (0.25 ms) are 16 M offered.
LARGE_SEQUENTIAL = ClosedLoop(4096, "1MiB", pattern="sequential")
# 512 B: small enough that no throughput cap binds at any IOPS cap (gp3 80,000 x 512 B = 39 MiB/s).
SMALL_RANDOM = ClosedLoop(4096, 512)

VOLUMES = {
    **{
        f"gp2-{s}": (lambda s=s, **kw: gp2(s, **kw))
        for s in (1, 33, 100, 170, 171, 250, 333, 334, 500, 999, 1000, 5334, 16384)
    },
    **{
        f"gp3-{s}-{i}-{t}": (lambda s=s, i=i, t=t: gp3(s, iops=i, throughput_mib_s=t))
        for s, i, t in [
            (1, 3000, 125),
            (8, 4000, 125),
            (100, 3000, 750),
            (100, 16000, 1000),
            (20, 10000, 2000),
            (160, 80000, 2000),
            (1000, 80000, 125),
        ]
    },
    **{
        f"io1-{s}-{i}": (lambda s=s, i=i: io1(s, i))
        for s, i in [(4, 100), (40, 2000), (100, 5000), (640, 32000), (641, 32050), (960, 48000), (1280, 64000)]
    },
    **{
        f"io2-{s}-{i}": (lambda s=s, i=i: io2(s, i))
        for s, i in [
            (4, 100),
            (4, 4000),
            (10, 10000),
            (15, 15000),
            (16, 16000),
            (17, 16384),
            (64, 64000),
            (256, 256000),
        ]
    },
    **{f"st1-{s}": (lambda s=s, **kw: st1(s, **kw)) for s in (125, 500, 1024, 2048, 12800, 16384)},
    **{f"sc1-{s}": (lambda s=s, **kw: sc1(s, **kw)) for s in (125, 1024, 3200, 16384)},
    **{f"standard-{s}": (lambda s=s, **kw: standard(s, **kw)) for s in (1, 100, 1024)},
}


def first_step(volume: Volume, workload: ClosedLoop) -> ebssim.VolumeResult:
    return simulate(volume, workload, duration_s=3)


@pytest.mark.parametrize("name", list(VOLUMES))
def test_reported_maximum_is_reached(name):
    v = VOLUMES[name]()  # a full bucket: the caps while credits remain
    r = first_step(v, LARGE_SEQUENTIAL)
    assert r.throughput_mib_s[0] == pytest.approx(v.max_throughput_mib_s, rel=1e-9)
    assert np.all(r.throughput_mib_s <= v.max_throughput_mib_s * (1 + 1e-12))
    r = first_step(v, SMALL_RANDOM)
    assert r.iops[0] == pytest.approx(v.max_iops, rel=1e-9)
    assert np.all(r.ebs_iops <= v.max_iops * (1 + 1e-12))
    # The closed forms say the same.
    assert ebssim.closed_loop_rate(v, LARGE_SEQUENTIAL).throughput_mib_s == pytest.approx(
        v.max_throughput_mib_s, rel=1e-12
    )
    assert ebssim.closed_loop_rate(v, SMALL_RANDOM).iops == pytest.approx(v.max_iops, rel=1e-12)


@pytest.mark.parametrize("name", list(VOLUMES))
def test_reported_baseline_is_reached(name):
    v = VOLUMES[name]()
    if v.has_bucket:
        v = VOLUMES[name](burst_balance_pct=0)  # an empty bucket: the baseline caps
    r = first_step(v, LARGE_SEQUENTIAL)
    assert r.throughput_mib_s[0] == pytest.approx(v.baseline_throughput_mib_s, rel=1e-9)
    r = first_step(v, SMALL_RANDOM)
    assert r.iops[0] == pytest.approx(v.baseline_iops, rel=1e-9)
    assert ebssim.closed_loop_rate(v, LARGE_SEQUENTIAL, with_credits=False).throughput_mib_s == pytest.approx(
        v.baseline_throughput_mib_s, rel=1e-12
    )
    assert ebssim.closed_loop_rate(v, SMALL_RANDOM, with_credits=False).iops == pytest.approx(
        v.baseline_iops, rel=1e-12
    )


def test_io2_4_gib_4000_iops_reports_what_it_serves():
    # AWS's 0.256 MiB/s per IOPS would report 1,024 MiB/s; 4,000 IOPS of 256 KiB serve 1,000.
    v = io2(4, 4000)
    assert v.max_throughput_mib_s == pytest.approx(1000.0, rel=1e-12)
    assert first_step(v, LARGE_SEQUENTIAL).throughput_mib_s[0] == pytest.approx(1000.0, rel=1e-12)


def test_iops_cap_needs_small_enough_io():
    # By design (as on AWS): gp3 at 80,000 IOPS and 125 MiB/s reaches its IOPS cap only with
    # I/Os of at most 125 MiB/s / 80,000 = 1.6 KiB; at 16 KiB the throughput cap holds it to
    # 125 MiB / 16 KiB = 8,000 IOPS.
    v = gp3(1000, iops=80000, throughput_mib_s=125)
    r = first_step(v, ClosedLoop(4096, "16k"))
    assert r.iops[0] == pytest.approx(8000.0, rel=1e-12)
    assert ebssim.BOUND_NAMES[r.bound[0]] == "volume_throughput"
    assert first_step(v, ClosedLoop(4096, 1600)).iops[0] == pytest.approx(80000.0, rel=1e-12)
