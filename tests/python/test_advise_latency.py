"""The advice with the latency model (issue 21, item 1: "the advice" uses it): with the load's
concurrency known (the measured VolumeQueueLength, or a stated ``max_in_flight``), each choice
reports the device latency percentiles of its I/Os, and a slower choice slows the job down
instead of queueing at the volume. Numbers worked out by hand from the rules (arithmetic in the
comments): under a cap the device holds the application's N I/Os, so its mean latency is
N / cap (Little's law); the percentiles are then the latency model's of that one mean
(docs/model.md), which ``latency_quantiles`` gives for a step of that mean."""

from __future__ import annotations

import json
from pathlib import Path

import ebssim
import ebssim.aws as aws
import numpy as np
import pandas as pd
import pytest
from ebssim import LatencyModel, latency_quantiles
from ebssim.advise import LATENCY_PERCENTILES, BatchJob, advise

AWS = Path(__file__).resolve().parents[1] / "data" / "aws"
GP2_100 = "vol-609409ddb74484deb"  # the moto fixture's 'data' volume: gp2 100 GiB, queue length 0.8 then 0.1
KiB16 = 16384.0


def _expected(volume: ebssim.Volume, mean_s: float, io_bytes: float = KiB16, in_flight: float = 16.0) -> list:
    """p50 and p99, ms, of I/Os whose step mean latency is ``mean_s`` on ``volume`` (reads)."""
    model = LatencyModel.of(volume, io_bytes, 1.0, in_flight=in_flight)
    q = latency_quantiles([mean_s], [1.0], np.array(LATENCY_PERCENTILES) / 100, model)
    return [float(v) * 1e3 for v in q]


# --- a stated concurrency: the batch job ---


def test_batch_job_with_a_concurrency_reports_device_latency_and_slows_down():
    # gp2 2,000 GiB: 6,000 IOPS; 32 16-KiB reads in flight would do 32 / 0.5 ms = 64,000 IOPS, so
    # the volume's cap holds: the job is 52 min x 6,000 IOPS = 18.72 M I/Os, all ready at the
    # start, 32 at the device. On gp2 and on the advice (6,000 IOPS) it takes 52 min, throttled
    # all of it, at 32 / 6,000 s = 5.33 ms mean at the device; on gp3's defaults (3,000 IOPS)
    # 104 min at 32 / 3,000 = 10.67 ms.
    job = BatchJob(minutes=52, max_in_flight=32)
    db = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=job)["vol-db"]
    assert (db.current.job_minutes, db.defaults.job_minutes, db.advice.job_minutes) == (52.0, 104.0, 52.0)
    # Throttled: every second but the last, whose demand (the rest of the job) meets the cap
    # exactly: a limit met, not exceeded, holds nothing back (throttle_tie, step.hpp).
    assert db.current.throttled_minutes == pytest.approx(3119 / 60, abs=1e-9)
    assert db.defaults.throttled_minutes == pytest.approx(6239 / 60, abs=1e-9)
    for sc, cap in ((db.current, 6000.0), (db.defaults, 3000.0), (db.advice, 6000.0)):
        assert list(sc.latency_ms) == [50.0, 99.0]
        want = _expected(sc.volume, 32 / cap, in_flight=32)
        assert list(sc.latency_ms.values()) == pytest.approx(want, rel=1e-9)
        assert sc.p99_ms == sc.latency_ms[99.0]
    assert db.defaults.p99_ms > 1.9 * db.current.p99_ms  # twice the wait, the same service time
    assert "with 32 I/Os in flight" in db.load
    assert "device latency p99" in db.reason


def test_batch_job_at_a_concurrency_only_the_slower_choice_caps():
    # 2 16-KiB reads in flight on gp3 2,000 GiB at 6,000 IOPS: 2 / s IOPS, s its service time
    # (0.5153 ms: 3,881 IOPS), under its cap: the device holds each I/O for its service time only
    # (no wait) and the job is 30 min x 2 / s I/Os. gp3's defaults cap it at 3,000 IOPS: the job
    # takes (30 x 60 x 2 / s) / 3,000 s, whole seconds, at 2 / 3,000 s mean at the device.
    v = ebssim.gp3(2000, iops=6000, throughput_mib_s=250)
    s = v.service_time_s(KiB16, 1.0)
    assert 3000 < 2 / s < 6000
    a = advise({"v": v}, "us-east-1", job=BatchJob(minutes=30, max_in_flight=2))["v"]
    assert a.current.throttled_minutes == 0 and a.current.job_minutes == 30.0
    assert list(a.current.latency_ms.values()) == pytest.approx(_expected(v, s, in_flight=2), rel=1e-9)
    seconds = np.ceil(30 * 60 * (2 / s) / 3000 - 1e-9)
    assert a.defaults.job_minutes == pytest.approx(seconds / 60, abs=1e-12)
    # Every second at 2 / 3,000 s, the last too: its backlog runs out 0.93 s into it, and the I/Os
    # it serves until then are fed 2 at a time at the rate before (application.hpp's
    # drained_device_latency_s; nothing arrives after).
    want = _expected(a.defaults.volume, 2 / 3000, in_flight=2)
    assert list(a.defaults.latency_ms.values()) == pytest.approx(want, rel=1e-9)


def test_without_a_concurrency_no_latency_is_reported():
    db = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52))["vol-db"]
    assert db.current.latency_ms is None and db.defaults.p99_ms is None
    assert "no device latency" in db.load
    assert db.to_dict()["device_latency_ms"] == {"current": None, "defaults": None, "advice": None}


def test_max_in_flight_of_advise_is_the_batch_jobs():
    a = advise({"v": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52), max_in_flight=32)["v"]
    b = advise({"v": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52, max_in_flight=32))["v"]
    assert a.to_dict() == b.to_dict()
    with pytest.raises(ValueError, match=r"max_in_flight=16 contradicts job=BatchJob\(max_in_flight=32\)"):
        advise({"v": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(max_in_flight=32), max_in_flight=16)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_in_flight="x"), r"max_in_flight='x' must be 'auto', 'peak'"),
        (dict(max_in_flight=0), r"max_in_flight=0 must be a positive number of I/Os"),
        (dict(max_in_flight=float("inf")), r"max_in_flight=inf must be a positive number"),
        (dict(max_in_flight="measured"), r"max_in_flight='measured' takes the VolumeQueueLength of the metrics"),
        (dict(max_in_flight="peak"), r"max_in_flight='peak' takes the VolumeQueueLength of the metrics"),
    ],
)
def test_bad_concurrency_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        advise({"v": ebssim.gp2(100)}, "us-east-1", **kwargs)


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), "8"])
def test_bad_batch_job_concurrency_is_named(bad):
    with pytest.raises(ValueError, match=r"BatchJob max_in_flight"):
        BatchJob(max_in_flight=bad)


def test_striped_set_members_take_their_share_of_the_jobs_concurrency():
    # RAID-0 of 2 x gp2 500 GiB, 64 KiB chunks, 256 KiB I/Os: 4 pieces of 64 KiB, 2 on each member
    # (member_share 2), so 16 set I/Os in flight are 32 pieces on each member. gp2 500 GiB bursts to
    # 3,000 IOPS (3,000 x 64 KiB = 187.5 MiB/s, within its 250): the member's device latency is
    # 32 / 3,000 s = 10.67 ms. gp3's defaults cap 64 KiB pieces at 125 MiB/s = 2,000 IOPS:
    # 32 / 2,000 = 16 ms, and the 30-minute job takes 45 minutes.
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    a = advise({"md0": md}, "us-east-1", job=BatchJob(minutes=30, io_size="256k", max_in_flight=16))["md0"]
    assert (a.current.job_minutes, a.defaults.job_minutes) == (30.0, 45.0)
    member = md.members[0]
    want_now = _expected(member, 32 / 3000, 65536.0, in_flight=32)
    want_defaults = _expected(ebssim.gp3(500), 32 / 2000, 65536.0, in_flight=32)
    assert list(a.current.latency_ms.values()) == pytest.approx(want_now, rel=1e-9)
    assert list(a.defaults.latency_ms.values()) == pytest.approx(want_defaults, rel=1e-9)


# --- the measured concurrency: CloudWatch's VolumeQueueLength ---


def _metrics(queue: float | None) -> pd.DataFrame:
    # 30 minutes of 5,000 16-KiB reads a second on vol-db, the queue length measured as given.
    idx = pd.date_range("2024-05-01", periods=30, freq="1min", tz="UTC")
    cols = {
        "VolumeReadOps": 60.0 * 5000,
        "VolumeWriteOps": 0.0,
        "VolumeReadBytes": 60.0 * 5000 * KiB16,
        "VolumeWriteBytes": 0.0,
    }
    if queue is not None:
        cols["VolumeQueueLength"] = queue
    return aws.metrics_from_wide(pd.DataFrame(cols, index=idx), "vol-db")


def test_measured_queue_length_bounds_the_replay():
    # gp2 2,000 GiB (6,000 IOPS) served 5,000 IOPS with 8 I/Os outstanding. The advice: p99 5,000 x
    # 1.2 = 6,000 IOPS. On gp3's defaults (3,000 IOPS) the 9 M I/Os of the 30 minutes take
    # 9e6 / 3,000 s = 50 minutes, throttled throughout, 8 at the device: 8 / 3,000 s = 2.67 ms mean,
    # instead of a queue that grows to 3.6 M I/Os (20 minutes of latency). gp2 and the advice
    # keep up: 8 / s = 15,500 IOPS > 5,000, so the device holds an I/O for its service time s.
    db = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=_metrics(8.0))["vol-db"]
    assert "the largest VolumeQueueLength measured" in db.load
    assert db.advice.spec == "gp3:size=2000,iops=6000,throughput=125"
    # (the 50th minute serves exactly the cap, the rest of the backlog: met, not exceeded, so
    # not throttled)
    assert db.defaults.job_minutes == 50.0 and db.defaults.throttled_minutes == 49.0
    assert db.current.job_minutes == db.advice.job_minutes == 30.0
    want = _expected(db.defaults.volume, 8 / 3000, in_flight=8)
    assert list(db.defaults.latency_ms.values()) == pytest.approx(want, rel=1e-9)
    s = db.current.volume.service_time_s(KiB16, 1.0)
    want_now = _expected(db.current.volume, s, in_flight=8)
    assert list(db.current.latency_ms.values()) == pytest.approx(want_now, rel=1e-9)
    assert db.defaults.p99_ms < 20  # device scale, not the 20-minute queue


def test_carried_work_drains_at_the_peak_queue_or_at_each_periods():
    # The 30-minute job (5,000 16-KiB reads a second, 8 outstanding) then an hour of nothing,
    # measured at 0.1 outstanding (at least 1: min_in_flight). On gp3's defaults 3.6 M I/Os are
    # carried past the job. "auto" (the peak, 8) drains them at the cap, 3,000 a second: done
    # 20 minutes after, 50 in all. "measured" takes each period's queue: 1 in flight after the
    # job, so they drain at 1 / s = 1,941 a second (s = 0.5 ms + 16 KiB / 1 GiB/s), 1,855 s,
    # and the job ends in minute ceil((1,800 + 1,855) / 60) = 61.
    quiet = pd.date_range("2024-05-01 00:30", periods=60, freq="1min", tz="UTC")
    zero = pd.DataFrame(
        {
            "VolumeReadOps": 0.0,
            "VolumeWriteOps": 0.0,
            "VolumeReadBytes": 0.0,
            "VolumeWriteBytes": 0.0,
            "VolumeQueueLength": 0.1,
        },
        index=quiet,
    )
    m = pd.concat([_metrics(8.0), aws.metrics_from_wide(zero, "vol-db")], ignore_index=True)
    auto = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=m)["vol-db"]
    per = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=m, max_in_flight="measured")["vol-db"]
    assert auto.defaults.job_minutes == 50.0
    s = 0.0005 + KiB16 / 2**30
    assert per.defaults.job_minutes == np.ceil((1800 + 3.6e6 * s) / 60)
    assert "each period's measured VolumeQueueLength" in per.load
    tr = aws.traces(m, gaps="zero", max_in_flight="peak")["vol-db"]
    assert tr.max_in_flight == 8.0


def test_auto_without_a_queue_length_is_an_unbounded_queue():
    db = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=_metrics(None))["vol-db"]
    assert db.current.latency_ms is None
    assert "no VolumeQueueLength in the metrics" in db.load
    # The unbounded queue on gp3's defaults: the same 50 minutes for the work (the job's time
    # does not depend on where the backlog waits).
    assert db.defaults.job_minutes == 50.0
    with pytest.raises(ValueError, match="vol-db: max_in_flight='measured' takes each period's VolumeQueueLength"):
        advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=_metrics(None), max_in_flight="measured")


def test_a_stated_concurrency_overrides_the_measured_one():
    # 16 stated instead of the 8 measured: 16 / 3,000 s at the device on gp3's defaults.
    db = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=_metrics(8.0), max_in_flight=16)["vol-db"]
    assert "at most 16 I/Os in flight (stated)" in db.load
    want = _expected(db.defaults.volume, 16 / 3000, in_flight=16)
    assert list(db.defaults.latency_ms.values()) == pytest.approx(want, rel=1e-9)
    none = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", metrics=_metrics(8.0), max_in_flight=None)["vol-db"]
    assert none.defaults.latency_ms is None and "max_in_flight=None" in none.load


def test_a_striped_set_with_metrics_refuses_a_number():
    md = ebssim.striped([ebssim.gp2(1000)] * 2, chunk_kib=64)
    m = _metrics(8.0)
    m["volume_id"] = "md0"
    with pytest.raises(ValueError, match=r"volumes\['md0'\] is a striped set: max_in_flight=16 cannot bound"):
        advise({"md0": md}, "us-east-1", metrics=m, max_in_flight=16)


def test_moto_fixture_volume_queue_length_gives_latency_on_the_command_line(cli):
    # The moto fixture's gp2 100 GiB measured VolumeQueueLength 0.8 then 0.1 (at least 1 I/O,
    # min_in_flight): 1,500 IOPS at 1 in flight keeps up, so the device latency is the service
    # time's spread alone on every choice.
    r = cli(
        "advise",
        "--region",
        "us-east-1",
        "--metrics",
        str(AWS / "cloudwatch-get-metric-data.labels.moto.json"),
        "--volume-id",
        GP2_100,
        "--output-format",
        "json",
        str(AWS / "ec2-describe-volumes.moto.json"),
    )
    assert r.returncode == 0, r.stderr
    (v,) = json.loads(r.stdout)["volumes"]
    lat = v["device_latency_ms"]
    assert set(lat) == {"current", "defaults", "advice"} and set(lat["current"]) == {"p50", "p99"}
    assert lat["current"]["p99"] < 5 and lat["current"]["p50"] < lat["current"]["p99"]
    text = cli(
        "advise",
        "--region",
        "us-east-1",
        "--max-in-flight",
        "none",
        "--metrics",
        str(AWS / "cloudwatch-get-metric-data.labels.moto.json"),
        "--volume-id",
        GP2_100,
        str(AWS / "ec2-describe-volumes.moto.json"),
    )
    assert text.returncode == 0 and "device p50 ms" not in text.stdout
    bad = cli("advise", "--region", "us-east-1", "--max-in-flight", "lots", "gp2:size=100")
    assert (
        bad.returncode == 2 and "--max-in-flight 'lots': expected auto, peak, measured, none or a number" in bad.stderr
    )


# --- a bound on the advice's device p99 ---


def test_p99_bound_raises_gp3_iops_to_the_fewest_that_meet_it():
    # The 52-minute job with 32 in flight: on gp3 at C IOPS (C >= 6,000) it runs capped, 32 / C s
    # at the device, so its p99 is the latency model's at that mean; 15.4 ms at 6,000. The fewest
    # IOPS whose p99 is within 10 ms, found here from the model directly:
    def p99(c: int) -> float:
        return _expected(ebssim.gp3(2000, iops=c, throughput_mib_s=250), 32 / c, in_flight=32)[1]

    lo, hi = 6000, 16000
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if p99(mid) <= 10 else (mid + 1, hi)
    assert p99(lo) <= 10 < p99(lo - 1)
    fleet = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52, max_in_flight=32), p99_ms=10)
    db = fleet["vol-db"]
    assert db.advice.spec == f"gp3:size=2000,iops={lo},throughput=250"
    assert db.advice.p99_ms == pytest.approx(p99(lo), rel=1e-9)
    assert f"IOPS raised from 6000 to {lo} for a device p99 within 10 ms" in db.reason
    assert fleet.p99_ms == 10 and fleet.summary["above_p99"] == []
    assert fleet.to_dict()["p99_ms"] == 10
    # Priced as provisioned: 2,000 x 0.088 + (lo - 3,000) x 0.0055 + 125 x 0.044 (eu-west-1).
    assert db.advice.monthly_usd == pytest.approx(round(176 + (lo - 3000) * 0.0055 + 5.5, 2), abs=0.005)


def test_p99_bound_gp3_cannot_meet_keeps_io2():
    # io2 100 GiB at 5,000 IOPS, a job with 1 I/O in flight: never capped, so the device latency is
    # the service time's spread alone, whatever the IOPS: gp3's p99 at 16 KiB reads is above
    # 1 ms at any IOPS and throughput, io2's below. Without a bound the advice is gp3 (it serves
    # 5,000 IOPS for less); with p99_ms=1 io2 stays, and the reason says why.
    vol = ebssim.io2(100, 5000)
    job = BatchJob(minutes=10, max_in_flight=1)
    gp3_p99 = _expected(ebssim.gp3(100), ebssim.gp3(100).service_time_s(KiB16, 1.0), in_flight=1)[1]
    io2_p99 = _expected(vol, vol.service_time_s(KiB16, 1.0), in_flight=1)[1]
    assert io2_p99 < 1.0 < gp3_p99
    free = advise({"v": vol}, "us-east-1", job=job)["v"]
    assert free.advice.volume.type == "gp3"
    bound = advise({"v": vol}, "us-east-1", job=job, p99_ms=1.0)["v"]
    assert bound.advice.spec == "io2:size=100,iops=5000"
    assert "no gp3 of 100 GiB keeps the device p99 within 1 ms" in bound.reason
    assert bound.advice.p99_ms == pytest.approx(io2_p99, rel=1e-9)
    assert "within the bound of 1 ms" in bound.reason


def test_p99_bound_needs_a_concurrency_and_a_positive_number():
    with pytest.raises(ValueError, match=r"p99_ms=5 bounds the device latency, which needs the application's"):
        advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52), p99_ms=5)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"p99_ms=.* must be a positive number of milliseconds"):
            advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(max_in_flight=4), p99_ms=bad)


def test_p99_bound_on_the_command_line(cli):
    r = cli(
        "advise",
        "--region",
        "eu-west-1",
        "--job-minutes",
        "52",
        "--max-in-flight",
        "32",
        "--p99-ms",
        "10",
        "--output-format",
        "json",
        "vol-db=gp2:size=2000",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (v,) = doc["volumes"]
    assert doc["p99_ms"] == 10 and v["device_latency_ms"]["advice"]["p99"] <= 10
    assert v["device_latency_ms"]["current"]["p99"] > 10
    text = cli("advise", "--region", "eu-west-1", "--p99-ms", "10", "--max-in-flight", "32", "vol-db=gp2:size=2000")
    assert "device p99 bound 10 ms: every advice within it" in text.stdout
