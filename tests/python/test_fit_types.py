"""ebssim.fit on a volume of every type, built by the core at a size other than the console's.

The fit asks the core for every limit and range (ebssim/fit/_rules.py); these runs catch a rule
the fit would write down again and get wrong. Each capture is ebssim's own prediction (fio job
file, JSON and 1 s iops log, as ``ebssim fio`` writes them) of fio at queue depth 32, so the
truth is the volume it ran on. Expected numbers are worked out here from AWS's rules (and, for
``standard``, ebssim's documented assumption: docs/model.md), never read off the fitter:

- gp2 200 GiB: 600 IOPS baseline (3 per GiB), bursts at 3,000; 10 % of 5.4e6 credits last
  540,000 / (3,000 - 600) = 225 s.
- st1 512 GiB: 20 MiB/s baseline (40 per TiB), bursts at 125 (250 per TiB); a bucket of
  512 x 1,024 MiB, of which b % lasts 250 s at 125 - 20 MiB/s for b = 100 x 250 x 105 / 524,288.
- sc1 2,048 GiB: 24 MiB/s baseline (12 per TiB), bursts at 160 (80 per TiB); 2 % of
  2,097,152 MiB lasts 41,943.04 / 136 = 308.4 s.
- standard 50 GiB: 100 IOPS baseline and 200 burst whatever the size (1 to 1,024 GiB); 10 % of
  360,000 credits last 36,000 / (200 - 100) = 360 s.
- gp3 200 GiB at 6,000 IOPS and 250 MiB/s: at least 6,000 / 500 = 12 GiB.
- io1 100 GiB at 3,000 IOPS: at least 3,000 / 50 = 60 GiB; io2 100 GiB at 20,000: 20,000 / 1,000 = 20.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence, Tuple

import ebssim
import ebssim.fio as fio
import ebssim.fit as fit
import pytest

#: (name, bs, rw, runtime_s) of the jobs, one after another (stonewall)
Jobs = Sequence[Tuple[str, str, str, int]]


def _capture(tmp_path: Path, vol: ebssim.Volume, jobs: Jobs) -> Path:
    text = "[global]\nfilename=/dev/nvme1n1\nioengine=libaio\niodepth=32\ntime_based\nlog_avg_msec=1000\n"
    for name, bs, rw, runtime in jobs:
        text += f"[{name}]\nstonewall\nrw={rw}\nbs={bs}\nruntime={runtime}\nwrite_iops_log={name}\n"
    job = tmp_path / "capture.fio"
    job.write_text(text)
    pred = fio.predict([str(job)], {"/dev/nvme1n1": vol}, log_dir=str(tmp_path))
    (tmp_path / "capture.json").write_text(json.dumps(pred.to_json()))
    return tmp_path


ST1_BALANCE = 100 * 250 * 105 / 524288

BUCKET_CASES = [
    # volume, bs, rw, runtime, expected size (None: not determined), its bounds, cliff, balance
    (ebssim.gp2(200, burst_balance_pct=10), "4k", "randread", 400, 200, None, 225.0, 10.0),
    (ebssim.st1(512, burst_balance_pct=ST1_BALANCE), "1m", "read", 350, 512, None, 250.0, ST1_BALANCE),
    (ebssim.sc1(2048, burst_balance_pct=2), "1m", "read", 500, 2048, None, 0.02 * 2048 * 1024 / 136, 2.0),
    (ebssim.standard(50, burst_balance_pct=10), "4k", "randread", 600, None, (1, 1024), 360.0, 10.0),
]


@pytest.mark.parametrize(
    ("vol", "bs", "rw", "runtime", "size", "bounds", "cliff", "balance"),
    BUCKET_CASES,
    ids=[c[0].type for c in BUCKET_CASES],
)
def test_bucket_types_recover_size_balance_and_cliff(
    tmp_path: Path,
    vol: ebssim.Volume,
    bs: str,
    rw: str,
    runtime: int,
    size: Optional[int],
    bounds: Optional[Tuple[int, int]],
    cliff: float,
    balance: float,
) -> None:
    d = _capture(tmp_path, vol, [("j", bs, rw, runtime)])
    f = fit.fit([d], type=vol.type)
    assert f.volume is not None and f.volume.type == vol.type
    p = f.parameter("size_gib")
    if size is not None:
        assert p.value == size and f.volume.size_gib == size
    else:
        assert p.value is None and (p.lower, p.upper) == bounds
    # what the volume does is the truth's, whatever size it uses
    assert f.volume.baseline_iops == vol.baseline_iops and f.volume.max_iops == vol.max_iops
    assert f.volume.max_throughput_mib_s == vol.max_throughput_mib_s
    assert f.cliff_time_s == pytest.approx(cliff, abs=1.0)
    assert f.parameter("burst_balance_pct").value == pytest.approx(balance, abs=0.01)
    # without the type: the levels are consistent with the true type and size
    g = fit.fit([d])
    assert {"type": vol.type, "size_gib": size} in [{k: c[k] for k in ("type", "size_gib")} for c in g.consistent]


def test_standard_size_is_the_whole_range_and_cheap(tmp_path: Path) -> None:
    # standard's baseline is 100 IOPS at every size (docs/model.md): the capture cannot show the
    # size, so the fit must not claim a range narrower than the type's 1 to 1,024 GiB (it took
    # 100 IOPS for 100 per TiB and reported "every size from 625 to 1024 GiB"), nor profile it.
    d = _capture(tmp_path, ebssim.standard(50, burst_balance_pct=10), [("j", "4k", "randread", 600)])
    f = fit.fit([d], type="standard")
    p = f.parameter("size_gib")
    assert (p.value, p.lower, p.upper) == (None, 1, 1024)
    assert "does not depend on it" in p.note
    assert f.volume is not None and f.volume.size_gib == 8  # the EC2 console's size for a new volume
    assert f.engine_runs < 50
    # the capture's own size, given, fits as well
    g = fit.fit([d], type="standard", size_gib=50)
    assert g.parameter("size_gib").note == "given"
    assert g.cliff_time_s == pytest.approx(360, abs=1.0)


PROVISIONED_CASES = [
    # volume, jobs, expected iops, throughput (None: not determined), least size
    (ebssim.gp3(200, iops=6000, throughput_mib_s=250), [("a", "4k", "randread", 30)], 6000, None, 12),
    (
        ebssim.gp3(200, iops=6000, throughput_mib_s=250),
        [("a", "4k", "randread", 30), ("b", "256k", "randread", 30)],
        6000,
        250,
        12,
    ),
    (ebssim.io1(100, iops=3000), [("a", "4k", "randread", 30)], 3000, None, 60),
    (ebssim.io2(100, iops=20000), [("a", "4k", "randread", 30)], 20000, None, 20),
]


@pytest.mark.parametrize(
    ("vol", "jobs", "iops", "tput", "least"),
    PROVISIONED_CASES,
    ids=["gp3", "gp3-throughput", "io1", "io2"],
)
def test_provisioned_types_recover_iops_and_least_size(
    tmp_path: Path, vol: ebssim.Volume, jobs: Jobs, iops: float, tput: Optional[float], least: float
) -> None:
    f = fit.fit([_capture(tmp_path, vol, jobs)], type=vol.type)
    assert f.parameter("iops").value == pytest.approx(iops, rel=1e-6)
    t = f.parameter("throughput_mib_s") if vol.type == "gp3" else None
    if t is not None:
        assert t.value == (pytest.approx(tput, rel=1e-6) if tput is not None else None)
    p = f.parameter("size_gib")
    assert p.value is None and p.lower == least
    assert f.volume is not None and f.volume.size_gib == least
    assert f.volume.max_iops == vol.max_iops
    if tput is not None:
        assert f.volume.max_throughput_mib_s == vol.max_throughput_mib_s


def test_no_gp2_above_its_largest_baseline(tmp_path: Path) -> None:
    # 20,000 IOPS with no cliff: no gp2 sustains it (3 IOPS/GiB stops at 16,000), though 20,000 / 3
    # GiB is a gp2 size; gp3 can be provisioned for it.
    f = fit.fit([_capture(tmp_path, ebssim.io2(100, iops=20000), [("a", "4k", "randread", 30)])])
    gp2 = [c for c in f.consistent if c["type"] == "gp2"]
    assert len(gp2) == 1 and gp2[0]["why"].startswith("no: 20000 IOPS is above every gp2's baseline (16,000)")
    assert any(c["type"] == "gp3" for c in f.consistent)
