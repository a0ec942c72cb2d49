"""ebssim.fit on captures whose every level is the job's own fio rate cap (issue 22).

Real fio 3.33 captures (tests/data/fit, README there): each job held by its own ``rate_iops``, so
with ``rate_limits="workload"`` (the default) the levels are what the jobs asked for, and any
volume whose limits do not bind below the caps fits. The expected ranges are worked out by hand
from the job files and AWS's rules as docs/model.md states them (gp2: 3 IOPS/GiB, at least 100,
bursting to 3,000 from a 5.4e6-credit bucket; gp3: 3,000 IOPS and 125 MiB/s at least, throughput
at most IOPS / 4; io1: throughput 0.25 MiB/s per IOPS; SSD I/Os counted in 256 KiB units).
"""

from __future__ import annotations

import json
from pathlib import Path

import ebssim
import ebssim.fio as fio
import ebssim.fit as fit
import pytest
from ebssim.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "fit"
CREDITS = 5.4e6  # gp2's bucket
GP2_MAX_GIB = 16384


def _runtimes_s(path: Path) -> dict[str, float]:
    return {j["jobname"]: j["job_runtime"] / 1e3 for j in json.loads(path.read_text())["jobs"]}


# ---- gp2: a range, not one size ---------------------------------------------------------------


def test_gp2_on_capped_jobs_is_a_range_of_sizes_not_one() -> None:
    # perio.fio: rate_iops=3000 for 10 s, then rate_iops=300 for 10 s.
    f = fit.fit([DATA / "02_gp2_perio"], type="gp2")
    assert f.levels_are_caps
    assert f.volume is None  # no size is determined (before: "gp2 299 GiB")
    size = f.parameter("size_gib")
    assert size.value is None and (size.lower, size.upper) == (1, GP2_MAX_GIB)
    r = f.volume_range
    assert r is not None and r["type"] == "gp2"
    assert (r["min_size_gib"], r["max_size_gib"]) == (1, GP2_MAX_GIB)
    # A 1 GiB gp2 still bursts to 3,000 (every gp2 below 1,000 GiB does): its bucket must hold what
    # the jobs take above its 100 IOPS baseline, (3,000 - 100) x T1 + (300 - 100) x T2.
    t = _runtimes_s(DATA / "02_gp2_perio" / "perio.json")
    need = (3000 - 100) * t["burst"] + (300 - 100) * t["baseline"]  # 31,000 credits for 10 s + 10 s
    assert r["min_burst_balance_pct"] == pytest.approx(100 * need / CREDITS, abs=2e-3)  # 0.574 %
    bal = f.parameter("burst_balance_pct")
    assert bal.value is None and bal.lower == r["min_burst_balance_pct"] and bal.upper == 100
    # 3,000 IOPS without credits: a baseline of 3,000, 3,000 / 3 = 1,000 GiB
    assert r["no_credits_from_gib"] == 1000
    assert all(p.bound == "demand" for p in f.phases)
    assert f.cliff_time_s is None
    text = str(f)
    assert "levels: every level is its job's own fio rate cap" in text
    assert "fits: gp2: any size from 1 to 16,384 GiB" in text
    assert "no credits needed from 1,000 GiB" in text
    html = f._repr_html_()
    assert "own fio rate cap" in html and "any size from 1 to 16,384 GiB" in html


def test_without_type_the_caps_fit_a_range_per_type() -> None:
    f = fit.fit([DATA / "02_gp2_perio"])
    assert f.levels_are_caps
    by_type = {c["type"]: c for c in f.consistent}
    # 4 KiB random at 3,000 IOPS: st1 and sc1 count each as a 1 MiB I/O (3,000 MiB/s, beyond any
    # st1's 500), standard bursts to 200 IOPS: none of them serves the caps.
    assert set(by_type) == {"gp2", "gp3", "io1", "io2"}
    gp2 = by_type["gp2"]
    assert gp2["size_gib"] is None  # before: "gp2 100 GiB", a size read off a cap
    assert (gp2["min_size_gib"], gp2["max_size_gib"], gp2["no_credits_from_gib"]) == (1, GP2_MAX_GIB, 1000)
    assert by_type["gp3"]["min_iops"] == 3000  # gp3's least, above the 3,000 asked for
    assert by_type["io1"]["min_iops"] == 3000  # the 3,000 4 KiB IOPS asked for
    assert "own fio rate cap" in str(f)


def test_with_volume_rate_limits_the_caps_are_the_volume() -> None:
    # The same capture read as an imitation of EBS: one gp2, 100 GiB (300 IOPS / 3 per GiB).
    f = fit.fit([DATA / "02_gp2_perio"], rate_limits="volume")
    assert not f.levels_are_caps
    assert any(c["type"] == "gp2" and c["size_gib"] == 100 for c in f.consistent)


def test_gp2_with_the_size_given_bounds_the_balance() -> None:
    f = fit.fit([DATA / "02_gp2_perio"], type="gp2", size_gib=100)
    assert f.levels_are_caps and f.volume is not None and f.volume.size_gib == 100
    bal = f.parameter("burst_balance_pct")
    # 100 GiB: (3,000 - 300) x T1 credits, the baseline job asks for the baseline
    t = _runtimes_s(DATA / "02_gp2_perio" / "perio.json")
    assert bal.value is None and bal.lower == pytest.approx(100 * 2700 * t["burst"] / CREDITS, abs=0.01)


# ---- provisioned types: the least configuration that serves the caps -------------------------


def test_gp3_and_io1_on_capped_jobs_of_several_sizes() -> None:
    # sizes.fio: 4 KiB .. 1 MiB reads, each held at rate_iops=200, one after the other.
    f = fit.fit([DATA / "04_service_time"], type="gp3")
    assert f.levels_are_caps
    r = f.volume_range
    assert r is not None
    assert r["min_iops"] == 3000  # gp3's least; the most asked for is 200 x 4 = 800 counted (1 MiB / 256 KiB)
    assert r["min_throughput_mib_s"] == 200  # 200 x 1 MiB
    assert r["iops_with_min_throughput"] == 3000  # 200 MiB/s needs 800 IOPS (IOPS / 4), less than 3,000
    assert f.volume is not None
    assert (f.volume.iops, f.volume.throughput_mib_s) == (3000, 200)
    assert f.parameter("iops").value is None and f.parameter("iops").lower == 3000
    assert f.parameter("throughput_mib_s").lower == 200
    assert all(p.bound == "demand" for p in f.phases)
    # io1: 800 counted IOPS, whose 0.25 MiB/s each are the 200 MiB/s the 1 MiB job asks for
    g = fit.fit([DATA / "04_service_time"], type="io1")
    assert g.volume_range is not None and g.volume_range["min_iops"] == 800
    assert g.volume is not None and g.volume.iops == 800
    # io1 allows 50 IOPS per GiB: 800 IOPS need 16 GiB
    assert g.volume_range["min_size_gib"] == 16
    with pytest.raises(ValueError, match=r"size_gib=4: the jobs' caps need io1 with at least 800 IOPS \(16 GiB"):
        fit.fit([DATA / "04_service_time"], type="io1", size_gib=4)


def test_cli_says_the_levels_are_caps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "--type", "gp2", str(DATA / "02_gp2_perio")]) == 0
    out = capsys.readouterr().out
    assert "levels: every level is its job's own fio rate cap" in out
    assert "fits: gp2: any size from 1 to 16,384 GiB" in out
    assert main(["fit", "--type", "gp2", "--output-format", "json", str(DATA / "02_gp2_perio")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["levels_are_caps"] is True and d["volume"] is None and d["size_gib"] is None
    assert d["volume_range"]["min_size_gib"] == 1 and d["volume_range"]["no_credits_from_gib"] == 1000


# ---- rate_limits="volume": the fitted service time is kept -----------------------------------


def test_volume_rate_limits_keep_the_fitted_service_time() -> None:
    f = fit.fit([DATA / "02_gp2_perio"], type="gp2", rate_limits="volume")
    rep = json.loads((DATA / "02_gp2_perio" / "perio.json").read_text())["jobs"]
    n = [j["read"]["total_ios"] for j in rep]
    mean_ns = sum(j["read"]["clat_ns"]["mean"] * k for j, k in zip(rep, n)) / sum(n)  # 78,420 ns
    transfer_ns = 4096 / (1024 * 2**20) * 1e9  # 4 KiB at the default 1,024 MiB/s: 3,815 ns
    a = f.parameter("service_intercept_ms")
    assert a.value == pytest.approx((mean_ns - transfer_ns) / 1e6, rel=1e-6)
    assert f.volume is not None and f.volume.latency_ms == pytest.approx(a.value)
    # no run shows a wait: fio held the I/Os back before submitting them
    w = f.parameter("wait_cv")
    assert w.value is None and "fio's own rate caps" in w.note
    # The burst job again, 5 s (the fitted 0.5 % balance lasts 10 s): clat = the fitted service time
    cmd = (
        "fio --name=burst --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=8 "
        "--rate_iops=3000 --runtime=5 --time_based"
    )
    job = f.predict(cmd).jobs[0]
    assert job.iops == pytest.approx(3000, rel=1e-3)
    assert job.latency_mean_s * 1e9 == pytest.approx(mean_ns, rel=0.01)  # before: 503,815 ns
    measured = rep[0]["read"]["clat_ns"]["mean"]  # the burst job: 73,061 ns
    assert abs(job.latency_mean_s * 1e9 - measured) < 0.1 * measured


def test_predicted_capture_of_capped_jobs_is_not_read_as_a_volume(tmp_path: Path) -> None:
    # ebssim's own prediction of two capped jobs on a gp3 (which serves both): 3,000 then 300 IOPS.
    job = tmp_path / "caps.fio"
    job.write_text(
        "[global]\nfilename=/dev/x\nrw=randread\nbs=4k\nioengine=libaio\niodepth=32\ntime_based\nruntime=60\n"
        "write_iops_log=caps\nlog_avg_msec=1000\n[burst]\nrate_iops=3000\n[baseline]\nstonewall\nrate_iops=300\n"
    )
    run = fio.predict([str(job)], {"/dev/x": ebssim.gp3(100)}, log_dir=str(tmp_path))
    (tmp_path / "caps.json").write_text(json.dumps(run.to_json()))
    f = fit.fit([tmp_path], type="gp2")
    r = f.volume_range
    assert f.levels_are_caps and r is not None
    # 1 GiB: (3,000 - 100) x 60 + (300 - 100) x 60 = 186,000 credits = 3.444 % of 5.4e6
    assert r["min_burst_balance_pct"] == pytest.approx(100 * 186_000 / CREDITS, abs=2e-3)


def test_concurrent_capped_jobs_add_up() -> None:
    # caps.fio: 1,500 4 KiB + 500 64 KiB reads per second at once for 10 s, then 2,000 16 KiB.
    case = DATA / "05_caps_concurrent"
    f = fit.fit([case], type="io1")
    # each job its own level, though two ran at once (fio's caps, within 1 %)
    assert [(p.job, round(p.iops, -1)) for p in f.phases] == [("small", 1500), ("large", 500), ("mid", 2000)]
    assert f.levels_are_caps
    # io1 counts each of these I/Os once (256 KiB units): 1,500 + 500 = 2,000 IOPS at once, whose
    # 0.25 MiB/s each (500 MiB/s) cover the 1,500 x 4 KiB + 500 x 64 KiB = 37.1 MiB/s
    assert f.volume_range is not None and f.volume_range["min_iops"] == 2000
    g = fit.fit([case], type="gp2")
    r = g.volume_range
    assert r is not None
    # 2,000 IOPS from the baseline alone: 2,000 / 3 = 666.7, so 667 GiB
    assert r["no_credits_from_gib"] == 667 and r["min_size_gib"] == 1
    # 1 GiB (100 IOPS): (2,000 - 100) x T1 + (2,000 - 100) x T2 credits; T: each phase's longest job
    t = _runtimes_s(case / "caps.json")
    need = 1900 * max(t["small"], t["large"]) + 1900 * t["mid"]  # 38,000 for 10 s + 10 s
    assert r["min_burst_balance_pct"] == pytest.approx(100 * need / CREDITS, abs=2e-3)  # 0.704 %
    h = fit.fit([case], type="gp3")
    assert h.volume is not None and (h.volume.iops, h.volume.throughput_mib_s) == (3000, 125)  # gp3's least
    no_type = fit.fit([case])
    assert {c["type"] for c in no_type.consistent} == {"gp2", "gp3", "io1", "io2"}
