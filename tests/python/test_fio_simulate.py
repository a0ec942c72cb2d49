"""ebssim.fio.predict: what fio would report, worked out from the model's rules.

Every expected number below is derived by hand in the comments from the rules in
docs/model.md and the mapping in the comment at the top of ebssim/fio/prediction.py:

- unloaded service time s = latency_ms (0.5 ms on gp2/gp3) + io_bytes / 1,024 MiB/s, so
  s(4 KiB) = 0.5 ms + 4096 / 2**30 s = 0.503815 ms, s(16 KiB) = 0.515259 ms,
  s(1 MiB) = 1.476563 ms;
- a job clone is a closed loop of `depth` users (1 for psync, iodepth for libaio) offering
  depth / (s + think) I/Os per second, capped by rate_iops; the volume serves
  min(offer, limits); latency = s unthrottled, depth / served - think when a limit binds;
- gp2 100 GiB: 3,000 IOPS while 5.4 M credits last, earning 300/s; gp3 defaults 3,000 IOPS and
  125 MiB/s; a 1 MiB sequential I/O counts as four 256 KiB operations.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Dict, Sequence

import ebssim
import numpy as np
import pytest
from ebssim import Volume
from ebssim.fio import (
    FIO_PERCENTILES,
    FioLogOrderWarning,
    FioPrediction,
    JobPrediction,
    parse_volume_spec,
    predict,
    read_json,
    read_log,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "fio_jobs"
FOUR_PHASE = DATA / "four_phase_stonewall.fio"
PSYNC_VS_LIBAIO = DATA / "psync_vs_libaio.fio"

KiB = 1024
MiB = 1024**2
GiB = 1024**3
GP2_CREDITS = 5_400_000.0

S4K = 0.5e-3 + 4096 / (1024 * MiB)  # 0.503815 ms
S16K = 0.5e-3 + 16384 / (1024 * MiB)  # 0.515259 ms
S1M = 0.5e-3 + MiB / (1024 * MiB)  # 1.476563 ms


def fast_gp3() -> Volume:
    """gp3 provisioned high: 16,000 IOPS (<= 500/GiB x 1000 GiB), 1,000 MiB/s (<= 0.25 x 16,000)."""
    return Volume("gp3", size_gib=1000, iops=16000, throughput_mib_s=1000)


def run(runs: Sequence[str], volumes: Dict[str, Volume], **kw: object) -> FioPrediction:
    kw.setdefault("log_dir", None)
    return predict(list(runs), volumes, **kw)  # type: ignore[arg-type]


def by_name(p: FioPrediction) -> Dict[str, JobPrediction]:
    out: Dict[str, JobPrediction] = {}
    for j in p.jobs:
        assert j.name not in out, f"duplicate entry {j.name}"
        out[j.name] = j
    return out


def pct(credits: float) -> float:
    return credits / GP2_CREDITS * 100.0


# ---------------------------------------------------------------------------------------------
# 1. psync vs libaio: I/Os in flight decide everything
# ---------------------------------------------------------------------------------------------


def test_psync_numjobs4_keeps_four_in_flight() -> None:
    cmd = (
        "fio --name=ps --filename=/dev/x --rw=randread --bs=16k --ioengine=psync --iodepth=64 "
        "--numjobs=4 --runtime=30 --time_based"
    )
    p = run([cmd], {"/dev/x": fast_gp3()})
    # psync ignores iodepth: 1 in flight per job, 4 jobs -> 4 in flight.
    # Each job: 1 / 0.5152588 ms = 1,940.77 IOPS; together 7,763.09 < 16,000: demand-bound.
    assert len(p.jobs) == 4  # numjobs without group_reporting: one entry per clone, same name
    assert {j.name for j in p.jobs} == {"ps"}
    for j in p.jobs:
        assert j.iops == pytest.approx(1 / S16K, rel=1e-9)
        assert j.runtime_s == pytest.approx(30.0)
        assert j.latency_mean_s == pytest.approx(S16K, rel=1e-9)  # unthrottled: latency = service time
        assert j.bound == "demand"
        assert j.io_bytes == pytest.approx(30 / S16K * 16384, rel=1e-9)
    assert sum(j.iops for j in p.jobs) == pytest.approx(7763.09, abs=0.01)


def test_libaio_qd64_numjobs4_is_capped_by_the_volume() -> None:
    cmd = (
        "fio --name=aio --filename=/dev/x --rw=randread --bs=16k --ioengine=libaio --iodepth=64 "
        "--numjobs=4 --runtime=30 --time_based"
    )
    p = run([cmd], {"/dev/x": fast_gp3()})
    # 4 x 64 = 256 in flight offer 256 / 0.515 ms = 496,838 IOPS; gp3 allows 16,000 (16 KiB x
    # 16,000 = 250 MiB/s < 1,000 MiB/s, so IOPS binds). Each job: 4,000 IOPS; latency
    # (Little) = 256 / 16,000 = 16 ms = 64 / 4,000 per job.
    assert len(p.jobs) == 4
    for j in p.jobs:
        assert j.iops == pytest.approx(4000.0, rel=1e-9)
        assert j.latency_mean_s == pytest.approx(0.016, rel=1e-9)
        assert j.bound == "volume_iops"
        # Throttled: the I/Os wait 16 - 0.515 = 15.48 ms on average, spread with Nitro's cv 0.65
        # (gamma shape 1 / 0.65^2 = 2.367, whose median is 0.8626 x its mean): p50 ~ 0.515 +
        # 0.8626 x 15.48 = 13.87 ms, below the mean, as data set 05 shows (p50 0.7-0.87 x mean).
        assert j.percentiles_s[50.0] == pytest.approx(0.000515 + 0.8626 * 0.015485, rel=0.02)
    assert sum(j.iops for j in p.jobs) == pytest.approx(16000.0, rel=1e-9)


def test_psync_vs_libaio_fixture_phases() -> None:
    p = run([str(PSYNC_VS_LIBAIO)], {"/dev/nvme1n1": fast_gp3()})
    names = [j.name for j in p.jobs]
    assert names == ["psync_qd4"] * 4 + ["libaio_qd4"] * 4 + ["default_engine"]
    assert [j.groupid for j in p.jobs] == [0] * 4 + [1] * 4 + [2]
    for j in p.jobs:
        assert j.runtime_s == pytest.approx(30.0)
    # psync_qd4: iodepth=4 is capped at 1 -> 1 / s = 1,940.77 per job.
    for j in p.jobs[:4]:
        assert j.iops == pytest.approx(1 / S16K, rel=1e-9)
    # libaio_qd4: 4 x 4 = 16 in flight offer 16 / s = 31,052 > 16,000 -> 4,000 per job, latency
    # 16 / 16,000 = 1 ms. The psync phase before it stayed below 16,000 IOPS and saved a second of
    # the cap (overshoot, 1 s on Nitro): the first second serves 32,000 at 16 / 32,000 = 0.5 ms,
    # so the 30 s serve 16,000 x 31 (4,000 x 31 / 30 per job) at a mean of 30 / 31 ms.
    for j in p.jobs[4:8]:
        assert j.iops == pytest.approx(4000.0 * 31 / 30, rel=1e-9)
        assert j.latency_mean_s == pytest.approx(1e-3 * 30 / 31, rel=1e-9)
    # default_engine: no ioengine -> psync, iodepth=8 ignored: 1 / s.
    assert p.jobs[8].iops == pytest.approx(1 / S16K, rel=1e-9)
    assert p.jobs[8].latency_mean_s == pytest.approx(S16K, rel=1e-9)


def test_group_reporting_merges_clones() -> None:
    cmd = (
        "fio --name=aio --filename=/dev/x --rw=randread --bs=16k --ioengine=libaio --iodepth=64 "
        "--numjobs=4 --runtime=30 --time_based --group_reporting"
    )
    (j,) = run([cmd], {"/dev/x": fast_gp3()}).jobs
    assert j.clones == 4
    # One entry: the clones' I/Os add up, the runtime is the longest clone's (30 s).
    assert j.iops == pytest.approx(16000.0, rel=1e-9)
    assert j.total_ios == pytest.approx(16000.0 * 30, rel=1e-9)
    assert j.runtime_s == pytest.approx(30.0)
    assert j.latency_mean_s == pytest.approx(0.016, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 2. gp2 cliff through fio
# ---------------------------------------------------------------------------------------------


def test_gp2_cliff_job(tmp_path: Path) -> None:
    cmd = (
        "fio --name=rr --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--runtime=2700 --time_based --write_iops_log=rr --write_lat_log=rr --log_avg_msec=1000"
    )
    p = run([cmd], {"/dev/x": Volume("gp2", size_gib=100)}, log_dir=tmp_path)
    (j,) = p.jobs
    # 32 in flight offer 32 / 0.504 ms = 63,515 IOPS: the gp2 cap binds throughout.
    # Credits last 5.4e6 / (3,000 - 300) = 2,000 s; then 300 IOPS.
    # IOPS = (2,000 x 3,000 + 700 x 300) / 2,700 = 6,210,000 / 2,700 = 2,300.
    assert j.cliff_time_s == pytest.approx(2000.0, abs=1e-6)
    assert j.iops == pytest.approx(2300.0, rel=1e-9)
    assert j.total_ios == pytest.approx(6_210_000, rel=1e-9)
    assert j.runtime_s == pytest.approx(2700.0)
    assert j.burst_balance_end_pct == pytest.approx(0.0, abs=1e-9)
    assert j.bound == "volume_iops"
    # Mean latency weighted by I/Os: (6,000,000 x 32/3,000 + 210,000 x 32/300) / 6,210,000.
    mean = (6_000_000 * 32 / 3000 + 210_000 * 32 / 300) / 6_210_000
    assert j.latency_mean_s == pytest.approx(mean, rel=1e-9)
    # libaio at iodepth 32 on Nitro: fio's slat is 0.84 / 32 = 0.02625 of each wait (docs/model.md,
    # "Submission latency"). Service s = 0.5 ms + 4 KiB / 1,024 MiB/s = 0.50381 ms; waits
    # 10.6667 - 0.5038 = 10.1629 ms before the cliff, 106.6667 - 0.5038 = 106.1629 ms after;
    # slat 0.26678 and 2.78678 ms; mean (6e6 x 0.26678 + 2.1e5 x 2.78678) / 6.21e6 = 0.35200 ms.
    s = 0.0005 + 4096 / 2**30
    share = 0.84 / 32
    slat = [share * (32 / 3000 - s), share * (32 / 300 - s)]
    assert slat[0] == pytest.approx(0.26678e-3, rel=1e-4) and slat[1] == pytest.approx(2.78678e-3, rel=1e-4)
    (st,) = j.by_direction.values()
    assert st.slat_mean_s == pytest.approx((6_000_000 * slat[0] + 210_000 * slat[1]) / 6_210_000, rel=1e-9)
    assert st.slat_mean_s == pytest.approx(0.35200e-3, rel=1e-4)
    # clat = lat - slat: its mean, and its distribution the API's with the same share of each wait
    # before submission. 96.6 % of the I/Os complete before the cliff at 10.40 ms of clat, 3.4 %
    # after at 103.9 ms; the waits under the cap spread (Nitro): p50 below the first, p99 past the
    # second.
    assert st.mean_s + st.slat_mean_s == pytest.approx(mean, rel=1e-9)
    r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), 2700)
    model = dataclasses.replace(r.latency_model, submission_share=share)
    api = r.latency_percentiles([50, 99], model=model)
    assert j.percentiles_s[50.0] == pytest.approx(api[50] / 1e3, rel=1e-6)
    assert j.percentiles_s[99.0] == pytest.approx(api[99] / 1e3, rel=1e-6)
    assert 0.85 < j.percentiles_s[50.0] / (32 / 3000 - slat[0]) < 0.95
    assert 1.1 < j.percentiles_s[99.0] / (32 / 300 - slat[1]) < 1.3
    doc = p.to_json()["jobs"][0]["read"]
    assert doc["lat_ns"]["mean"] == pytest.approx(doc["slat_ns"]["mean"] + doc["clat_ns"]["mean"], rel=1e-12)
    assert doc["lat_ns"]["mean"] == pytest.approx(mean * 1e9, rel=1e-9)

    iops = read_log(tmp_path / "rr_iops.1.log")
    assert len(iops) == 2700
    assert iops["time_ms"].iloc[0] == 1000 and iops["time_ms"].iloc[-1] == 2_700_000
    before = iops[iops["time_ms"] <= 2_000_000]
    after = iops[iops["time_ms"] > 2_000_000]
    assert (before["iops"] == 3000).all()
    assert (after["iops"] == 300).all()
    assert set(iops["direction"]) == {"read"}
    # The logs: lat = slat + clat in every window.
    for kind, before_s, after_s in (
        ("lat", 32 / 3000, 32 / 300),
        ("clat", 32 / 3000 - slat[0], 32 / 300 - slat[1]),
        ("slat", slat[0], slat[1]),
    ):
        at = read_log(tmp_path / f"rr_{kind}.1.log").set_index("time_ms")[f"{kind}_ns"]
        assert at[2_000_000] == pytest.approx(before_s * 1e9, rel=1e-6)
        assert at[2_001_000] == pytest.approx(after_s * 1e9, rel=1e-6)


# ---------------------------------------------------------------------------------------------
# 3. Size-limited jobs, io_size, loops, ramp_time
# ---------------------------------------------------------------------------------------------

SEQ1M = "fio --name=s --filename=/dev/x --rw=read --bs=1m --ioengine=libaio --iodepth=8"


@pytest.mark.parametrize("dt", [None, 1.0, 0.1])
def test_size_limited_job_ends_when_size_is_done(dt: object) -> None:
    p = run([SEQ1M + " --size=1g"], {"/dev/x": Volume("gp3", size_gib=100)}, dt=dt)
    (j,) = p.jobs
    # 8 x 1 MiB in flight offer 8 / 1.4766 ms = 5,418 MiB/s; gp3 default caps 125 MiB/s
    # (= 500 counted IOPS < 3,000). 1,024 MiB / 125 MiB/s = 8.192 s, within the 9th 1 s step.
    assert j.runtime_s == pytest.approx(8.192, rel=1e-9)
    assert j.io_bytes == pytest.approx(GiB, rel=1e-9)
    assert j.total_ios == pytest.approx(1024, rel=1e-9)
    assert j.iops == pytest.approx(125.0, rel=1e-9)
    assert j.bw_bytes_s == pytest.approx(125 * MiB, rel=1e-9)
    assert j.latency_mean_s == pytest.approx(8 / 125, rel=1e-9)  # Little: 8 / 125 = 64 ms
    assert j.bound == "volume_throughput"


def test_psync_sequential_also_hits_the_throughput_cap() -> None:
    cmd = "fio --name=s --filename=/dev/x --rw=read --bs=1m --size=1g"  # fio's default engine: psync
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    # 1 / 1.4766 ms = 677 MiB/s > 125: still capped; latency 1 / 125 = 8 ms.
    assert j.runtime_s == pytest.approx(8.192, rel=1e-9)
    assert j.latency_mean_s == pytest.approx(1 / 125, rel=1e-9)


@pytest.mark.parametrize(
    "extra, runtime_s, io_bytes",
    [
        ("--size=4g --io_size=1g", 8.192, GiB),  # io_size, not size, is the amount of I/O
        ("--size=1g --loops=2", 16.384, 2 * GiB),  # loops repeat size
        ("--size=1g --runtime=4", 4.0, 4 * 125 * MiB),  # runtime first: 4 s x 125 MiB/s = 500 MiB
        ("--size=1g --ramp_time=3", 8.192, GiB),  # the ramp is not counted: size after it
        ("--size=1g --runtime=20 --time_based --ramp_time=5", 20.0, 20 * 125 * MiB),  # time_based
        ("--size=50%", 8.192, GiB),  # half of the 2 GiB volume
    ],
)
def test_size_io_size_loops_runtime_ramp(extra: str, runtime_s: float, io_bytes: float) -> None:
    (j,) = run([f"{SEQ1M} {extra}"], {"/dev/x": Volume("gp3", size_gib=2)}).jobs
    assert j.runtime_s == pytest.approx(runtime_s, rel=1e-9)
    assert j.io_bytes == pytest.approx(io_bytes, rel=1e-9)
    assert j.iops == pytest.approx(125.0, rel=1e-9)


def test_no_size_means_the_whole_device() -> None:
    (j,) = run([SEQ1M], {"/dev/x": Volume("gp3", size_gib=1)}).jobs
    # fio on a block device without size reads all of it: 1 GiB / 125 MiB/s = 8.192 s.
    assert j.runtime_s == pytest.approx(8.192, rel=1e-9)
    assert j.io_bytes == pytest.approx(GiB, rel=1e-9)


def test_ramp_time_spends_credits_but_is_not_reported() -> None:
    cmd = (
        "fio --name=r --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--ramp_time=500 --runtime=2000 --time_based"
    )
    (j,) = run([cmd], {"/dev/x": Volume("gp2", size_gib=100)}).jobs
    # The volume works at 3,000 IOPS during the 500 s ramp too, so credits run out 2,000 s after
    # the job starts, i.e. 1,500 s into the reported 2,000 s.
    # IOPS = (1,500 x 3,000 + 500 x 300) / 2,000 = 4,650,000 / 2,000 = 2,325.
    assert j.runtime_s == pytest.approx(2000.0)
    assert j.iops == pytest.approx(2325.0, rel=1e-9)
    assert j.total_ios == pytest.approx(4_650_000, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 4. Phases: the four_phase_stonewall fixture on two gp2 volumes
# ---------------------------------------------------------------------------------------------


def four_phase_volumes() -> Dict[str, Volume]:
    # Without overshoot: the phases' credits below are worked with the limits holding from each
    # phase's first second (overshoot across phases: test_psync_vs_libaio_fixture_phases).
    return {
        "/dev/nvme1n1": Volume("gp2", size_gib=100, overshoot_s=0),
        "/dev/nvme2n1": Volume("gp2", size_gib=100, overshoot_s=0),
    }


def test_four_phase_fixture_jobs_groups_and_rates() -> None:
    p = run([str(FOUR_PHASE)], four_phase_volumes())
    # Jobs in order; mixed_b's two clones are merged by group_reporting into one entry.
    assert [j.name for j in p.jobs] == ["warm_a", "warm_b", "seqwrite_a", "mixed_b", "probe_a", "final"]
    # Groups as the fixture's comments say.
    assert [j.groupid for j in p.jobs] == [0, 0, 1, 2, 3, 4]
    j = by_name(p)
    assert j["mixed_b"].clones == 2
    assert all(j[n].clones == 1 for n in ("warm_a", "warm_b", "seqwrite_a", "probe_a", "final"))

    # Phase 1 (60 s): 4 KiB QD32 on each volume: 32 / 0.504 ms >> 3,000 -> 3,000 IOPS, 10.67 ms.
    for n in ("warm_a", "warm_b"):
        assert j[n].iops == pytest.approx(3000.0, rel=1e-9)
        assert j[n].runtime_s == pytest.approx(60.0)
        assert j[n].latency_mean_s == pytest.approx(32 / 3000, rel=1e-9)
    # Phase 2 (60 s): 1 MiB sequential writes, QD8: gp2 <= 170 GiB caps 128 MiB/s -> 128 IOPS,
    # latency 8 / 128 = 62.5 ms; all writes.
    assert j["seqwrite_a"].iops == pytest.approx(128.0, rel=1e-9)
    assert j["seqwrite_a"].bw_bytes_s == pytest.approx(128 * MiB, rel=1e-9)
    assert j["seqwrite_a"].latency_mean_s == pytest.approx(8 / 128, rel=1e-9)
    assert j["seqwrite_a"].read_fraction == 0.0
    assert j["seqwrite_a"].bound == "volume_throughput"
    # Phase 3: mixed_b, 2 clones of a 70/30 mix at QD16, rate_iops=2000,500: the write cap binds,
    # 500 / 0.3 = 1,666.7 IOPS per clone, 3,333 together > 3,000 -> 3,000 IOPS for 60 s.
    assert j["mixed_b"].iops == pytest.approx(3000.0, rel=1e-9)
    assert j["mixed_b"].runtime_s == pytest.approx(60.0)
    assert j["mixed_b"].read_fraction == pytest.approx(0.7)
    # probe_a: psync, thinktime 500 us: 1 / (0.504 + 0.5) ms = 996.2 IOPS for its own 30 s.
    assert j["probe_a"].iops == pytest.approx(1 / (S4K + 500e-6), rel=1e-9)
    assert j["probe_a"].runtime_s == pytest.approx(30.0)
    assert j["probe_a"].latency_mean_s == pytest.approx(S4K, rel=1e-9)
    # Phase 4: final spreads QD4 over both volumes (2 in flight on each): 2 / 0.515 ms = 3,882 >
    # 3,000 on each -> 6,000 IOPS; latency 2 / 3,000 = 0.667 ms; runtime 2 m without the 5 s ramp.
    assert j["final"].iops == pytest.approx(6000.0, rel=1e-9)
    assert j["final"].runtime_s == pytest.approx(120.0)
    assert j["final"].latency_mean_s == pytest.approx(2 / 3000, rel=1e-9)


def test_four_phase_fixture_credits_follow_phases_and_rests() -> None:
    """BurstBalance at each job's end, tracked through the phases by hand.

    A = /dev/nvme1n1, B = /dev/nvme2n1, both gp2 100 GiB (300 IOPS baseline, 5.4 M credits).
    """
    j = by_name(run([str(FOUR_PHASE)], four_phase_volumes()))
    # Phase 1, 0-60 s: both spend 3,000 - 300 = 2,700/s: 5,400,000 - 162,000 = 5,238,000 (97 %).
    a = b = GP2_CREDITS - 2700 * 60
    assert j["warm_a"].burst_balance_end_pct == pytest.approx(pct(a), rel=1e-9)
    assert j["warm_b"].burst_balance_end_pct == pytest.approx(97.0, rel=1e-9)
    # Phase 2, 60-120 s: A serves 128 MiB/s = 512 counted ops/s, spends 212/s -> -12,720;
    # B rests: +300 x 60 = +18,000.
    a -= (512 - 300) * 60
    b += 300 * 60
    assert j["seqwrite_a"].burst_balance_end_pct == pytest.approx(pct(a), rel=1e-9)
    # Phase 3, 120-180 s: B at 3,000 for 60 s: -162,000 (5,256,000 -> 5,094,000, 94.33 %).
    b -= 2700 * 60
    assert j["mixed_b"].burst_balance_end_pct == pytest.approx(pct(b), rel=1e-9)
    # A: probe_a at 996.2 IOPS for 30 s spends 696.2/s, then A rests for the rest of the phase:
    # phase 3 lasts as long as its longest job (mixed_b, 60 s), so +300 x 30.
    a -= (1 / (S4K + 500e-6) - 300) * 30
    assert j["probe_a"].burst_balance_end_pct == pytest.approx(pct(a), rel=1e-9)
    a += 300 * 30
    # Phase 4 starts at 180 s, after the longest job of phase 3: final works A (and B) at 3,000
    # for the 5 s ramp + 120 s: -2,700 x 125 = -337,500. Reported: the first volume, A.
    a -= 2700 * 125
    assert j["final"].burst_balance_end_pct == pytest.approx(pct(a), rel=1e-9)
    assert j["final"].burst_balance_end_pct == pytest.approx(90.2943, abs=1e-4)


def test_four_phase_fixture_twice_carries_credits() -> None:
    p = run([str(FOUR_PHASE), str(FOUR_PHASE)], four_phase_volumes())
    assert len(p.jobs) == 12
    first, second = p.jobs[:6], p.jobs[6:]
    assert [j.name for j in first] == [j.name for j in second]
    assert {j.run for j in first} == {str(FOUR_PHASE)}
    # Run 2 warm_a starts from A's balance at the end of run 1 (see the previous test):
    a_end_run1 = GP2_CREDITS - 2700 * 60 - 212 * 60 - (1 / (S4K + 500e-6) - 300) * 30 + 300 * 30 - 2700 * 125
    assert second[0].burst_balance_end_pct == pytest.approx(pct(a_end_run1 - 2700 * 60), rel=1e-9)
    # B at the end of run 1: 5,094,000 - 337,500 = 4,756,500; after run 2's phase 1: 4,594,500.
    assert second[1].burst_balance_end_pct == pytest.approx(pct(4_756_500 - 162_000), rel=1e-9)


def test_stonewall_waits_for_the_longest_earlier_job(tmp_path: Path) -> None:
    jobfile = tmp_path / "st.fio"
    jobfile.write_text(
        "[global]\nioengine=libaio\niodepth=32\nrw=randread\nbs=4k\ntime_based\n"
        "[short]\nfilename=/dev/a\nruntime=100\n"
        "[long]\nfilename=/dev/b\nruntime=400\n"
        "[after]\nstonewall\nfilename=/dev/a\nruntime=2500\n"
    )
    vols = {"/dev/a": Volume("gp2", size_gib=100), "/dev/b": Volume("gp3", size_gib=100)}
    j = by_name(run([str(jobfile)], vols))
    assert j["after"].groupid == 1 and j["short"].groupid == 0 and j["long"].groupid == 0
    # A spends 2,700/s for 100 s, then rests until "long" ends at 400 s: 300 x 300 = +90,000.
    # "after" starts at 400 s with 5,400,000 - 270,000 + 90,000 = 5,220,000 credits. The rest saved
    # a second of the 3,000 IOPS cap (overshoot): its first second serves 6,000, spending 5,700,
    # and the rest runs out (5,220,000 - 5,700) / 2,700 = 1,931.22 s later: the cliff 1,932.22 s
    # in. (Starting at 100 s it would be about 1,900 s.)
    credits = GP2_CREDITS - 2700 * 100 + 300 * 300
    cliff = 1 + (credits - 5700) / 2700
    assert j["after"].cliff_time_s == pytest.approx(cliff, abs=1e-6)
    # IOPS = (6,000 + (cliff - 1) x 3,000 + (2,500 - cliff) x 300) / 2,500: the credits, spent
    # either way, give the same total as without overshoot, 2,388.
    assert j["after"].iops == pytest.approx((6000 + (cliff - 1) * 3000 + (2500 - cliff) * 300) / 2500, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 5. Several RUNs back to back
# ---------------------------------------------------------------------------------------------

QD32 = "--rw=randread --bs=4k --ioengine=libaio --iodepth=32 --time_based"


def test_runs_carry_state_and_name_their_run() -> None:
    r1 = f"fio --name=drain --filename=/dev/a {QD32} --runtime=2000"
    r2 = f"fio --name=after --filename=/dev/a {QD32} --runtime=100"
    p = run([r1, r2], {"/dev/a": Volume("gp2", size_gib=100)})
    assert p.runs == [r1, r2]
    assert [(j.name, j.run) for j in p.jobs] == [("drain", r1), ("after", r2)]
    drain, after = p.jobs
    # Run 1 uses up exactly the 5.4 M credits in 2,000 s at 3,000 IOPS.
    assert drain.iops == pytest.approx(3000.0, rel=1e-9)
    assert drain.burst_balance_end_pct == pytest.approx(0.0, abs=1e-9)
    # Run 2 starts at the cliff: 300 IOPS (earned as fast as spent), 32 / 300 = 106.7 ms.
    assert after.iops == pytest.approx(300.0, rel=1e-9)
    assert after.latency_mean_s == pytest.approx(32 / 300, rel=1e-9)
    assert after.cliff_time_s == pytest.approx(0.0, abs=1e-9)

    doc = p.to_json()
    assert [j["jobname"] for j in doc["jobs"]] == ["drain", "after"]
    assert [j["ebssim"]["run"] for j in doc["jobs"]] == [r1, r2]


def test_volume_unused_by_a_run_rests() -> None:
    r1 = f"fio --name=drain --filename=/dev/a {QD32} --runtime=2000"
    r2 = f"fio --name=other --filename=/dev/b {QD32} --runtime=1000"
    r3 = f"fio --name=back --filename=/dev/a {QD32} --runtime=1000"
    vols = {"/dev/a": Volume("gp2", size_gib=100), "/dev/b": Volume("gp2", size_gib=100)}
    back = by_name(run([r1, r2, r3], vols))["back"]
    # A rests through run 2: +300 x 1,000 = 300,000 credits, which last 300,000 / 2,700 = 111.1 s
    # at 3,000 IOPS. IOPS = (111.1 x 3,000 + 888.9 x 300) / 1,000 = 600.
    # The rest also saved a second of the cap (overshoot): the first second serves 6,000 from
    # 300,300, and the 294,300 left last 109 s: the cliff at 110 s; the same 600 IOPS.
    assert back.cliff_time_s == pytest.approx(1 + (300_300 - 6000) / 2700, abs=1e-6)
    assert back.iops == pytest.approx(600.0, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 6. rate_iops, thinktime, jobs sharing a volume
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "opts, total, reads",
    [
        # 32 / 0.504 ms = 63,515 offered, capped at 500 by rate_iops.
        ("--rw=randread --rate_iops=500", 500.0, 500.0),
        # rate_iops is per job: two clones, 500 each.
        ("--rw=randread --rate_iops=500 --numjobs=2 --group_reporting", 1000.0, 1000.0),
        # rate_iops=500 caps reads and writes separately: 500 + 500.
        ("--rw=randrw --rate_iops=500", 1000.0, 500.0),
        # 70/30 with reads <= 2,000 and writes <= 500: writes bind, 500 / 0.3 = 1,666.7 in all.
        ("--rw=randrw --rwmixread=70 --rate_iops=2000,500", 500 / 0.3, 0.7 * 500 / 0.3),
    ],
)
def test_rate_iops_caps_a_job(opts: str, total: float, reads: float) -> None:
    cmd = f"fio --name=r --filename=/dev/x --bs=4k --ioengine=libaio --iodepth=32 --runtime=10 --time_based {opts}"
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    assert j.iops == pytest.approx(total, rel=1e-9)
    assert j.iops * j.read_fraction == pytest.approx(reads, rel=1e-9)
    assert j.bound == "demand"
    assert j.latency_mean_s == pytest.approx(S4K, rel=1e-9)  # the volume is not the limit
    doc = p_json(j)
    assert doc["read"]["iops"] == pytest.approx(reads, rel=1e-9)
    assert doc["write"]["iops"] == pytest.approx(total - reads, rel=1e-9, abs=1e-9)


def p_json(j: JobPrediction) -> Dict[str, object]:
    return FioPrediction([j], [j.run]).to_json()["jobs"][0]  # type: ignore[no-any-return]


def test_thinktime_psync() -> None:
    cmd = (
        "fio --name=t --filename=/dev/x --rw=randread --bs=4k --ioengine=psync --thinktime=1000 "
        "--runtime=10 --time_based"
    )
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    # One I/O, then 1 ms of think: 1 / (0.000504 + 0.001) = 664.98 IOPS; latency = service time.
    assert j.iops == pytest.approx(1 / (S4K + 0.001), rel=1e-9)
    assert j.iops == pytest.approx(664.98, abs=0.01)
    assert j.latency_mean_s == pytest.approx(S4K, rel=1e-9)


def test_thinktime_throttled_latency_excludes_think() -> None:
    cmd = (
        "fio --name=t --filename=/dev/x --rw=randread --bs=4k --ioengine=psync --thinktime=1000 "
        "--numjobs=8 --group_reporting --runtime=10 --time_based"
    )
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    # 8 / 1.504 ms = 5,320 offered > 3,000: throttled. Each loop: latency + think = 8 / 3,000,
    # so latency = 2.667 ms - 1 ms = 1.667 ms.
    assert j.iops == pytest.approx(3000.0, rel=1e-9)
    assert j.latency_mean_s == pytest.approx(8 / 3000 - 0.001, rel=1e-9)


def test_thinktime_caps_async_queue_depth_at_thinktime_blocks() -> None:
    cmd = (
        "fio --name=t --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--thinktime=1000 --runtime=10 --time_based"
    )
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    assert j.iops == pytest.approx(1 / (S4K + 0.001), rel=1e-6)


def test_concurrent_jobs_share_a_volume() -> None:
    # Options before the first --name are global. a: 61,440,000 bytes = 15,000 x 4 KiB.
    cmd = (
        "fio --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--name=a --size=61440000 --name=b --runtime=20 --time_based"
    )
    j = by_name(run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}, dt=1.0))
    # Equal offers share 3,000 IOPS: 1,500 each; a's 15,000 I/Os take 10 s (latency 32 / 1,500).
    assert j["a"].runtime_s == pytest.approx(10.0, rel=1e-9)
    assert j["a"].iops == pytest.approx(1500.0, rel=1e-9)
    assert j["a"].latency_mean_s == pytest.approx(32 / 1500, rel=1e-9)
    # b: 10 s at 1,500 then 10 s alone at 3,000: 2,250 IOPS; latency weighted by I/Os:
    # (15,000 x 21.33 ms + 30,000 x 10.67 ms) / 45,000 = 14.22 ms.
    assert j["b"].iops == pytest.approx(2250.0, rel=1e-9)
    assert j["b"].latency_mean_s == pytest.approx((15000 * 32 / 1500 + 30000 * 32 / 3000) / 45000, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 7. Instance limits
# ---------------------------------------------------------------------------------------------


def test_instance_m5_large_shared_budget() -> None:
    cmd = (
        "fio --rw=randread --bs=16k --ioengine=libaio --iodepth=64 --runtime=3600 --time_based "
        "--name=a --filename=/dev/a --name=b --filename=/dev/b"
    )
    vols = {"/dev/a": fast_gp3(), "/dev/b": fast_gp3()}
    p = run([cmd], vols, instance="m5.large", dt=1.0)
    # Alone each would do 16,000. m5.large: 18,750 IOPS max for 1,800 s (bucket (18,750 - 3,600)
    # x 1,800), then 3,600; proportional sharing of equal demands: half each.
    # Mean for both: (1,800 x 18,750 + 1,800 x 3,600) / 3,600 = 11,175; each 5,587.5.
    assert [j.name for j in p.jobs] == ["a", "b"]
    for j in p.jobs:
        assert j.iops == pytest.approx(5587.5, rel=1e-9)
        assert j.bound == "instance_iops"
        ops = j.series["ops"]  # I/Os per 1 s step
        assert ops[:1800] == pytest.approx(np.full(1800, 9375.0), rel=1e-9)
        assert ops[1800:] == pytest.approx(np.full(1800, 1800.0), rel=1e-9)
        # Latency 64 / 9,375 = 6.83 ms before, 64 / 1,800 = 35.6 ms after.
        assert j.series["lat"][0] == pytest.approx(64 / 9375, rel=1e-9)
        assert j.series["lat"][-1] == pytest.approx(64 / 1800, rel=1e-9)
    assert sum(j.iops for j in p.jobs) == pytest.approx((1800 * 18750 + 1800 * 3600) / 3600, rel=1e-9)


def test_no_instance_no_shared_limit() -> None:
    cmd = (
        "fio --rw=randread --bs=16k --ioengine=libaio --iodepth=64 --runtime=60 --time_based "
        "--name=a --filename=/dev/a --name=b --filename=/dev/b"
    )
    p = run([cmd], {"/dev/a": fast_gp3(), "/dev/b": fast_gp3()})
    assert [j.iops for j in p.jobs] == pytest.approx([16000.0, 16000.0], rel=1e-9)


# ---------------------------------------------------------------------------------------------
# Volumes, targets, outputs
# ---------------------------------------------------------------------------------------------


def test_parse_volume_spec_keys_and_defaults() -> None:
    t, v = parse_volume_spec("/dev/x=gp3:size=1000,iops=16000,throughput=1000,latency_ms=0.5")
    assert t == "/dev/x"
    assert (v.type, v.size_gib, v.max_iops, v.max_throughput_mib_s, v.latency_ms) == ("gp3", 1000, 16000, 1000, 0.5)
    t, v = parse_volume_spec("/mnt/data=gp2:size=100,burst_balance=50")
    assert (t, v.type, v.size_gib) == ("/mnt/data", "gp2", 100)
    assert v.initial_credits == pytest.approx(GP2_CREDITS / 2)
    _, v = parse_volume_spec("/dev/y=gp3")  # AWS defaults: 3,000 IOPS, 125 MiB/s
    assert (v.max_iops, v.max_throughput_mib_s) == (3000, 125)
    _, v = parse_volume_spec("/dev/z=io1")  # io1 needs IOPS: ebssim's default 3,000 on 100 GiB
    assert (v.type, v.max_iops) == ("io1", 3000)


def test_burst_balance_and_latency_keys_reach_the_model() -> None:
    _, half = parse_volume_spec("/dev/x=gp2:size=100,burst_balance=50")
    cmd = f"fio --name=r --filename=/dev/x {QD32} --runtime=2000"
    (j,) = run([cmd], {"/dev/x": half}).jobs
    # 2.7 M credits last 2,700,000 / 2,700 = 1,000 s.
    assert j.cliff_time_s == pytest.approx(1000.0, abs=1e-6)
    _, slow = parse_volume_spec("/dev/x=gp3:latency_ms=2")
    cmd = "fio --name=p --filename=/dev/x --rw=randread --bs=4k --runtime=10 --time_based"
    (j,) = run([cmd], {"/dev/x": slow}).jobs
    # psync: 1 / (2 ms + 4 KiB / 1,024 MiB/s).
    assert j.iops == pytest.approx(1 / (2e-3 + 4096 / GiB), rel=1e-9)


def test_directory_target_matches_files_under_it() -> None:
    vols = {"/mnt/data": Volume("gp2", size_gib=100), "/dev/x": Volume("gp3", size_gib=100)}
    cmds = [
        f"fio --name=f --filename=/mnt/data/testfile {QD32} --runtime=10",
        f"fio --name=d --directory=/mnt/data {QD32} --runtime=10",
    ]
    p = run(cmds, vols)
    # Both on the gp2 volume: its credits fall by 2,700 x 10 per run.
    assert [j.burst_balance_end_pct for j in p.jobs] == pytest.approx(
        [pct(GP2_CREDITS - 27_000), pct(GP2_CREDITS - 54_000)], rel=1e-9
    )


def test_exact_target_wins_over_directory() -> None:
    vols = {"/dev": Volume("gp2", size_gib=100), "/dev/nvme1n1": fast_gp3()}
    cmd = (
        "fio --name=f --filename=/dev/nvme1n1 --rw=randread --bs=16k --ioengine=libaio --iodepth=64 "
        "--runtime=10 --time_based"
    )
    (j,) = run([cmd], vols).jobs
    assert j.iops == pytest.approx(16000.0, rel=1e-9)


def test_to_json_round_trips_through_read_json() -> None:
    cmd = (
        "fio --name=m --filename=/dev/x --rw=randrw --rwmixread=70 --bs=16k --ioengine=libaio "
        "--iodepth=16 --numjobs=2 --group_reporting --runtime=30 --time_based"
    )
    p = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)})
    (j,) = p.jobs
    text = json.dumps(p.to_json())
    res = read_json(text)
    rows = res.jobs.set_index("direction")
    assert list(rows.index) == ["read", "write"]
    # 32 in flight >> 3,000: 3,000 IOPS split 70/30; both see latency 32 / 3,000.
    assert rows.loc["read", "iops"] == pytest.approx(2100.0, rel=1e-9)
    assert rows.loc["write", "iops"] == pytest.approx(900.0, rel=1e-9)
    for d, share in (("read", 0.7), ("write", 0.3)):
        assert rows.loc[d, "runtime_ms"] == 30000
        assert rows.loc[d, "io_bytes"] == pytest.approx(3000 * share * 30 * 16384, abs=1)
        assert rows.loc[d, "total_ios"] == pytest.approx(3000 * share * 30, abs=1)
        assert rows.loc[d, "bw_kib_s"] == pytest.approx(3000 * share * 16, abs=1)
        # libaio at iodepth 16 (Nitro): slat is 0.84 / 16 = 0.0525 of the wait 32 / 3,000 - s,
        # s = 0.5 ms + 16 KiB / 1,024 MiB/s = 0.51526 ms: 0.0525 x 10.15141 = 0.53295 ms; clat the
        # rest, 10.13372 ms; lat = slat + clat = 32 / 3,000.
        slat = 0.0525 * (32 / 3000 - (0.0005 + 16384 / 2**30))
        assert slat == pytest.approx(0.53295e-3, rel=1e-4)
        assert rows.loc[d, "slat_mean_ns"] == pytest.approx(slat * 1e9, rel=1e-9)
        assert rows.loc[d, "clat_mean_ns"] == pytest.approx((32 / 3000 - slat) * 1e9, rel=1e-9)
        assert rows.loc[d, "lat_mean_ns"] == pytest.approx(32 / 3000 * 1e9, rel=1e-9)
        assert rows.loc[d, "clat_p99_ns"] == pytest.approx(j.percentiles_s[99.0] * 1e9, abs=1)
    df = p.to_pandas()
    assert list(df["direction"]) == ["read", "write"]
    assert list(df["iops"]) == pytest.approx([2100.0, 900.0], rel=1e-9)
    assert list(df["runtime_ms"]) == pytest.approx([30000.0, 30000.0])
    normal = p.to_normal()
    assert "m: (groupid=0, jobs=2)" in normal
    assert "read: IOPS=2100" in normal and "write: IOPS=900" in normal


def test_percentiles_are_fios_and_ordered() -> None:
    (j,) = run([f"fio --name=r --filename=/dev/x {QD32} --runtime=2700"], {"/dev/x": Volume("gp2", size_gib=100)}).jobs
    assert list(j.percentiles_s) == [float(p) for p in FIO_PERCENTILES]
    vals = list(j.percentiles_s.values())
    assert vals == sorted(vals)
    assert j.latency_min_s <= vals[0] and vals[-1] <= j.latency_max_s
    assert all(math.isfinite(v) for v in vals)


def test_logs_per_clone_and_kinds(tmp_path: Path) -> None:
    cmd = (
        "fio --name=c --filename=/dev/x --rw=randread --bs=16k --ioengine=libaio --iodepth=32 "
        "--numjobs=2 --runtime=10 --time_based --write_iops_log=c --write_bw_log=c --log_avg_msec=1000"
    )
    run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=tmp_path)
    # fio numbers logs by job: clone 1 and clone 2. Each clone gets 1,500 of the 3,000 IOPS.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c_bw.1.log", "c_bw.2.log", "c_iops.1.log", "c_iops.2.log"]
    for n in (1, 2):
        iops = read_log(tmp_path / f"c_iops.{n}.log")
        assert list(iops["time_ms"]) == [1000 * k for k in range(1, 11)]
        assert (iops["iops"] == 1500).all()
        bw = read_log(tmp_path / f"c_bw.{n}.log")
        assert (bw["bw_kib_s"] == 1500 * 16).all()  # KiB/s


def test_logs_start_after_ramp(tmp_path: Path) -> None:
    cmd = (
        "fio --name=r --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--ramp_time=3 --runtime=5 --time_based --write_iops_log=r --log_avg_msec=1000"
    )
    run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=tmp_path)
    iops = read_log(tmp_path / "r_iops.1.log")
    assert list(iops["time_ms"]) == [1000, 2000, 3000, 4000, 5000]
    assert (iops["iops"] == 3000).all()


def test_runtime_not_a_multiple_of_the_default_step() -> None:
    cmd = f"fio --name=r --filename=/dev/x {QD32} --runtime=100500ms"
    (j,) = run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}).jobs
    assert j.runtime_s == pytest.approx(100.5, rel=1e-9)
    assert j.total_ios == pytest.approx(3000 * 100.5, rel=1e-9)


def test_log_of_a_job_on_two_volumes_counts_both(tmp_path: Path) -> None:
    cmd = (
        "fio --name=two --filename=/dev/a:/dev/b --rw=randread --bs=4k --ioengine=libaio --iodepth=64 "
        "--runtime=5 --time_based --write_iops_log=two --log_avg_msec=1000"
    )
    vols = {"/dev/a": Volume("gp3", size_gib=100), "/dev/b": Volume("gp3", size_gib=100)}
    (j,) = run([cmd], vols, log_dir=tmp_path).jobs
    # 32 in flight on each volume >> 3,000: 3,000 + 3,000.
    assert j.iops == pytest.approx(6000.0, rel=1e-9)
    log = read_log(tmp_path / "two_iops.1.log")
    assert list(log["time_ms"]) == [1000, 2000, 3000, 4000, 5000]
    assert (log["iops"] == 6000).all()


def test_shared_log_keeps_every_clone(tmp_path: Path) -> None:
    cmd = (
        "fio --name=pj --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=64 --numjobs=2 "
        "--per_job_logs=0 --runtime=5 --time_based --write_iops_log=pj --log_avg_msec=1000"
    )
    run([cmd], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["pj_iops.log"]
    # The clones append one after the other, as fio's do: the second clone's rows start again at
    # 1000 ms, and read_log sorts them into time order.
    with pytest.warns(FioLogOrderWarning, match="1 row"):
        log = read_log(tmp_path / "pj_iops.log")
    # Two clones share 3,000 IOPS: 1,500 each, five 1 s windows each.
    assert len(log) == 10
    assert list(log["time_ms"]) == [1000, 1000, 2000, 2000, 3000, 3000, 4000, 4000, 5000, 5000]
    assert (log["iops"] == 1500).all()


def test_instance_spread_takes_the_phases_ios_in_flight_on_the_volume() -> None:
    # psync writes of 16 KiB on io2 40,000 IOPS under m5a.xlarge's 16,000: every job's I/O waits
    # for the instance. The instance's spread is the platform's at the I/Os in flight on the
    # volume, all the phase's jobs together (docs/model.md): two jobs of 8 clones keep 16 in
    # flight, as one job of 16 does (cv 0.2); two jobs of 32 keep 64 (cv 0.425, halfway from 16 to
    # 256 on a log scale). Each clone's latency is N / 16,000, its wait N / 16,000 - s; the jobs'
    # p99 is then that of W + S with the instance's cv and io2's write service time (cv 0.12), as
    # the public latency_quantiles gives it for one such step held by the instance (bound 3).
    vol = {"/dev/x": ebssim.io2(100, iops=40000)}
    m5a = ebssim.instance("m5a.xlarge")
    s = 0.335e-3 + 16384 / 2**30

    def jobs(numjobs: Sequence[int]) -> ebssim.fio.FioPrediction:
        cmds = " ".join(
            f"--name=j{i} --filename=/dev/x --rw=randwrite --bs=16k --ioengine=psync --numjobs={n} "
            "--runtime=60 --time_based --group_reporting"
            for i, n in enumerate(numjobs)
        )
        return ebssim.fio.predict([f"fio {cmds}"], vol, instance=m5a, log_dir=None)

    one, two = jobs([16]), jobs([8, 8])
    assert one.jobs[0].percentiles_s[99.0] == pytest.approx(two.jobs[0].percentiles_s[99.0], rel=1e-9)
    for p, (n, cv) in ((one, (16, 0.2)), (jobs([32, 32]), (64, 0.425))):
        for j in p.jobs:
            assert j.latency_mean_s == pytest.approx(n / 16000, rel=1e-9)
            q = ebssim.latency_quantiles(
                [n / 16000], [1.0], [0.99], ebssim.LatencyModel(s, s, 0.0, 0.12, 0.65, cv), bound=[3]
            )
            assert j.percentiles_s[99.0] == pytest.approx(float(q[0]), rel=1e-6), n
    # The wider spread at 64 in flight: p99 / mean further from 1 than at 16.
    assert jobs([32, 32]).jobs[0].percentiles_s[99.0] / (64 / 16000) > one.jobs[0].percentiles_s[99.0] / (16 / 16000)
