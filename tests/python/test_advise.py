"""ebssim.advise and ``ebssim advise``: gp2 -> gp3 and io1/io2 -> gp3 (or io1 -> io2) advice, priced and replayed.

Every expected number is worked out by hand in the comment beside it (prices: ebssim/data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import ebssim
import ebssim.aws as aws
import pytest
from ebssim.advise import (
    MAX_MODIFICATIONS_PER_24H,
    BatchJob,
    advise,
    burst_balance_alarm,
    gp3_for,
    modify_volume_plan,
)

DATA = Path(__file__).resolve().parents[1] / "data"
AWS = DATA / "aws"
METRICS_CSV = AWS / "cloudwatch-metrics.moto.csv"  # moto's CloudWatch, scenario in scripts/make_aws_fixtures.py
VOLUMES = AWS / "ec2-describe-volumes.moto.json"
GP2_100 = "vol-609409ddb74484deb"  # the fixture's 'data' volume: gp2, 100 GiB
GP3_200 = "vol-8bff23db4601cc0da"  # its 'logs' volume: gp3, 200 GiB, 4,000 IOPS, 250 MiB/s


# --- the 2,000 GiB database volume: the case ---


def test_2000_gib_gp2_with_defaults_is_slower_and_the_advice_is_not():
    # gp2 2,000 GiB: 3 x 2,000 = 6,000 IOPS baseline, 250 MiB/s. The job: 16 KiB reads at
    # 6,000 IOPS for 52 min = 18,720,000 I/Os. gp3 defaults serve 3,000/s: 6,240 s = 104 min, every
    # minute throttled; gp3 at 6,000 IOPS / 250 MiB/s: 52 min.
    fleet = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52))
    db = fleet["vol-db"]
    assert (db.current.spec, db.defaults.spec, db.advice.spec) == (
        "gp2:size=2000",
        "gp3:size=2000,iops=3000,throughput=125",
        "gp3:size=2000,iops=6000,throughput=250",
    )
    assert (db.current.job_minutes, db.defaults.job_minutes, db.advice.job_minutes) == (52.0, 104.0, 52.0)
    # Throttled: every second of the 6,240 but the last, which serves exactly the 3,000 I/Os left
    # (the demand, not the limit, binds): 6,239 s.
    assert (db.current.throttled_minutes, db.defaults.throttled_minutes, db.advice.throttled_minutes) == (
        0.0,
        6239 / 60,
        0.0,
    )
    # 2000 x 0.11 = 220; 2000 x 0.088 = 176; 176 + 3000 x 0.0055 + 125 x 0.044 = 198.
    assert (db.current.monthly_usd, db.defaults.monthly_usd, db.advice.monthly_usd) == (220.0, 176.0, 198.0)
    assert db.job_bytes == 52 * 60 * 6000 * 16384
    assert db.needs_provisioned and not db.can_use_defaults
    assert "6000 IOPS baseline, never bursts" in db.reason  # its baseline is at least 3,000
    assert "the job takes 104 min against 52 (2.00x the time)" in db.reason
    assert db.alarm is None  # a 2,000 GiB gp2 never bursts
    s = fleet.summary
    assert s["slower_with_defaults"] == ["vol-db"]
    assert s["need_provisioned"] == ["vol-db"]
    assert s["savings_usd"] == {"defaults": 44.0, "advice": 22.0}
    assert s["savings_pct"] == {"defaults": 20.0, "advice": 10.0}


def test_2000_gib_case_on_the_command_line(cli):
    r = cli("advise", "--region", "eu-west-1", "--job-minutes", "52", "--output-format", "json", "vol-db=gp2:size=2000")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["region"], doc["prices_as_of"]) == ("eu-west-1", "2025-10-28")
    (v,) = doc["volumes"]
    assert v["volume_id"] == "vol-db"
    assert (v["current"], v["defaults"], v["advice"]) == (
        "gp2:size=2000",
        "gp3:size=2000,iops=3000,throughput=125",
        "gp3:size=2000,iops=6000,throughput=250",
    )
    assert v["monthly_usd"] == {"current": 220.0, "defaults": 176.0, "advice": 198.0}
    assert v["throttled_minutes"] == {"current": 0.0, "defaults": 103.98, "advice": 0.0}  # 6,239 s
    assert v["job_minutes"] == {"current": 52.0, "defaults": 104.0, "advice": 52.0}
    # Done when: defaults slower than gp2, the advice at least as fast and cheaper than gp2.
    assert v["job_minutes"]["defaults"] > v["job_minutes"]["current"] >= v["job_minutes"]["advice"]
    assert v["monthly_usd"]["advice"] < v["monthly_usd"]["current"]
    assert v["reason"]
    assert doc["summary"]["monthly_usd"] == {"current": 220.0, "defaults": 176.0, "advice": 198.0}
    assert doc["modify_volume"]["commands"] == [
        "aws ec2 modify-volume --volume-id vol-db --volume-type gp3 --iops 6000 --throughput 250"
    ]


# --- with CloudWatch metrics ---


def test_with_metrics_the_observed_p99_decides():
    # moto's 'data' volume: minutes 0-59 72,000 reads of 4 KiB + 18,000 writes of 16 KiB per minute
    # (1,500 IOPS, 589,824,000 B = 9.375 MiB/s), minutes 60-119 6,000 + 6,000 (200 IOPS). p99 x 1.2:
    # 1,800 IOPS and 11.25 MiB/s, under gp3's included 3,000 and 125: the defaults are the advice.
    metrics = aws.read_metrics_csv(METRICS_CSV)
    vols = aws.read_volumes(VOLUMES)
    fleet = advise({GP2_100: vols[GP2_100], GP3_200: vols[GP3_200]}, "us-east-1", metrics=metrics)
    data = fleet[GP2_100]
    assert data.advice.spec == data.defaults.spec == "gp3:size=100,iops=3000,throughput=125"
    assert data.can_use_defaults and not data.needs_provisioned
    assert "observed p99 1500 IOPS and 9.4 MiB/s, plus 20% headroom: 1800 IOPS, 11.2 MiB/s" in data.reason
    # 100 x 0.10 = 10.00 on gp2; 100 x 0.08 = 8.00 on gp3.
    assert (data.current.monthly_usd, data.advice.monthly_usd) == (10.0, 8.0)
    # The job: minutes 0-59 (minutes 60-119 carry 122,880,000 B a minute, under a quarter of the
    # peak): 60 x 589,824,000 B, served as it comes on every choice.
    assert data.job_bytes == 60 * 589_824_000
    assert (data.current.job_minutes, data.defaults.job_minutes) == (60.0, 60.0)
    assert data.current.throttled_minutes == data.defaults.throttled_minutes == 0.0
    # If it stays gp2: at the observed 1,500 IOPS a full bucket lasts 5.4e6 / 1,200 = 4,500 s;
    # 15 minutes of warning is 900 / 4,500 = 20 %.
    assert data.alarm is not None
    assert (data.alarm.iops, data.alarm.threshold_pct) == (1500.0, 20.0)
    logs = fleet[GP3_200]
    assert not logs.changes and logs.advice.spec == "gp3:size=200,iops=4000,throughput=250"
    s = fleet.summary
    assert (s["can_use_defaults"], s["need_provisioned"], s["unchanged"]) == ([GP2_100], [], [GP3_200])
    # 10.00 + (200 x 0.08 + 1,000 x 0.005 + 125 x 0.04 = 26.00) = 36.00 now; advice 8.00 + 26.00.
    assert s["monthly_usd"] == {"current": 36.0, "defaults": 24.0, "advice": 34.0}


def test_metrics_must_cover_every_volume():
    metrics = aws.read_metrics_csv(METRICS_CSV)
    with pytest.raises(ValueError, match=r"the metrics do not cover 1 of the volumes: .* for vol-0other"):
        advise({GP2_100: ebssim.gp2(100), "vol-0other": ebssim.gp2(50)}, "us-east-1", metrics=metrics)


def test_metrics_on_the_command_line(cli):
    r = cli(
        "advise",
        "--region",
        "us-east-1",
        "--metrics",
        str(METRICS_CSV),
        "--volume-id",
        GP2_100,
        "--output-format",
        "json",
        str(VOLUMES),
    )
    assert r.returncode == 0, r.stderr
    (v,) = json.loads(r.stdout)["volumes"]
    assert v["advice"] == "gp3:size=100,iops=3000,throughput=125"
    assert v["burst_balance_alarm"]["threshold_pct"] == 20.0
    r = cli("advise", "--region", "us-east-1", "--metrics", str(METRICS_CSV), str(VOLUMES))
    assert r.returncode == 2
    assert r.stderr.startswith("ebssim: error: the metrics do not cover 6 of the volumes")


# --- other volumes ---


def test_small_gp2_bursts_and_its_job_falls_off_the_cliff():
    # gp2 100 GiB: bursts to 3,000 IOPS for 5.4e6 / 2,700 = 2,000 s, then 300. A 60-minute job of
    # 3,000 IOPS (10,800,000 I/Os): 6,000,000 in the first 2,000 s, the remaining 4,800,000 at 300/s
    # take 16,000 s: 18,000 s = 300 min on gp2; 60 min on gp3 at 3,000 IOPS. gp2 <= 170 GiB moves
    # 128 MiB/s: without metrics the advice keeps that (3 MiB/s x 0.04 = 0.12 in us-east-1).
    fleet = advise({"vol-s": ebssim.gp2(100)}, "us-east-1")
    v = fleet["vol-s"]
    assert (v.current.job_minutes, v.defaults.job_minutes, v.advice.job_minutes) == (300.0, 60.0, 60.0)
    assert v.advice.spec == "gp3:size=100,iops=3000,throughput=128"
    assert (v.current.monthly_usd, v.defaults.monthly_usd, v.advice.monthly_usd) == (10.0, 8.0, 8.12)
    assert "bursts to 3000 IOPS for 33 min from a full bucket, then 300" in v.reason


def test_small_io1_moves_to_gp3_with_defaults():
    # The issue's case: io1 4 GiB at 200 IOPS moves at most 200 x 256 KiB = 50 MiB/s; gp3's
    # included 3,000 IOPS and 125 MiB/s cover it. us-east-1: io1 4 x 0.125 + 200 x 0.065 = 13.50
    # (io2 at the same IOPS the same); gp3 4 x 0.08 = 0.32. The job (16 KiB at io1's 200 IOPS for
    # 60 min) is served as it comes on both: 60 min.
    v = advise({"vol-io": ebssim.io1(4, 200)}, "us-east-1")["vol-io"]
    assert v.advice.spec == v.defaults.spec == "gp3:size=4,iops=3000,throughput=125"
    assert v.can_use_defaults and not v.needs_provisioned
    assert (v.current.monthly_usd, v.advice.monthly_usd) == (13.5, 0.32)
    assert (v.current.job_minutes, v.advice.job_minutes) == (60.0, 60.0)
    assert v.advice.throttled_minutes == 0.0
    assert "gp3 serves it (all it can do: 200 IOPS, 50 MiB/s) at 3000 IOPS, 125 MiB/s, for $0.32/month" in v.reason
    assert "against $13.50 as io2 at its IOPS" in v.reason


def test_io1_moves_to_gp3_at_its_iops():
    # io1 500 GiB at 20,000 IOPS: 20,000 x 256 KiB capped at 500 MiB/s. gp3 500 GiB allows
    # 500 x 500 = 250,000 IOPS (at most 80,000) and 500 MiB/s needs 2,000: gp3 at 20,000 IOPS,
    # 500 MiB/s. us-east-1: 500 x 0.08 = 40 + 17,000 x 0.005 = 85 + 375 x 40.96 / 1024 (= 0.04) = 15
    # -> 140.00, against io2 (and io1) 500 x 0.125 + 20,000 x 0.065 = 1,362.50.
    v = advise({"vol-io": ebssim.io1(500, 20000)}, "us-east-1", job=BatchJob(minutes=10))["vol-io"]
    assert v.advice.spec == "gp3:size=500,iops=20000,throughput=500"
    assert v.needs_provisioned
    assert (v.current.monthly_usd, v.advice.monthly_usd) == (1362.5, 140.0)
    # 16 KiB at 20,000 IOPS = 312.5 MiB/s, within both: 10 min on each.
    assert v.advice.job_minutes == v.current.job_minutes == 10.0


def test_io2_moves_to_gp3_and_says_what_it_gives_up():
    # io2 100 GiB at 1,000 IOPS: 1,000 x 0.25 = 250 MiB/s. gp3: 3,000 IOPS (included), 250 MiB/s.
    # us-east-1: 100 x 0.08 = 8 + 125 x 0.04 = 5 -> 13.00, against 100 x 0.125 + 1,000 x 0.065 = 77.50.
    v = advise({"vol-io": ebssim.io2(100, 1000)}, "us-east-1", job=BatchJob(minutes=5))["vol-io"]
    assert v.advice.spec == "gp3:size=100,iops=3000,throughput=250"
    assert (v.current.monthly_usd, v.advice.monthly_usd) == (77.5, 13.0)
    # The family's unloaded latencies (docs/model.md): gp3 0.5 ms, io2 0.44 ms read and 0.335 write.
    assert "unloaded latency 0.5 ms read, 0.5 ms write against 0.44 and 0.335" in v.reason
    assert "io2's 99.999% durability given up" in v.reason


def test_io2_that_gp3_cannot_serve_stays():
    # io2 100 GiB at 100,000 IOPS (4,000 MiB/s): gp3 100 GiB reaches 500 x 100 = 50,000 IOPS and at
    # most 2,000 MiB/s: it stays io2.
    v = advise({"vol-io": ebssim.io2(100, 100000)}, "us-east-1", job=BatchJob(minutes=1))["vol-io"]
    assert not v.changes and v.advice.spec == "io2:size=100,iops=100000"
    assert "io2 kept; gp3 cannot serve all it can do: 100000 IOPS, 4000 MiB/s: IOPS lowered from 100000" in v.reason


def test_io1_with_metrics_moves_to_gp3_when_the_observed_load_fits():
    # moto's 'data' volume's metrics (p99 1,500 IOPS, 9.375 MiB/s; x 1.2 = 1,800 and 11.25) on an
    # io1 100 GiB at 5,000 IOPS: gp3's defaults. us-east-1: io1 100 x 0.125 + 5,000 x 0.065 = 337.50;
    # gp3 100 x 0.08 = 8.00.
    metrics = aws.read_metrics_csv(METRICS_CSV)
    v = advise({GP2_100: ebssim.io1(100, 5000)}, "us-east-1", metrics=metrics)[GP2_100]
    assert v.advice.spec == "gp3:size=100,iops=3000,throughput=125"
    assert (v.current.monthly_usd, v.advice.monthly_usd) == (337.5, 8.0)
    assert "observed p99 1500 IOPS and 9.4 MiB/s, plus 20% headroom: 1800 IOPS, 11.2 MiB/s" in v.reason
    assert (v.current.job_minutes, v.advice.job_minutes) == (60.0, 60.0)
    # With 1,000 % headroom the load asks for 1,500 x 11 = 16,500 IOPS; an io1 of 4 GiB moves to a
    # gp3 of 4 GiB at most at its included 3,000 (500 x 4 = 2,000 per-GiB): io2 at the same IOPS.
    v = advise({GP2_100: ebssim.io1(4, 200)}, "us-east-1", metrics=metrics, headroom_pct=1000)[GP2_100]
    assert v.advice.spec == "io2:size=4,iops=200"
    assert "gp3 cannot serve observed p99 1500 IOPS and 9.4 MiB/s, plus 1000% headroom: 16500 IOPS" in v.reason


def test_other_types_are_kept():
    v = advise({"vol-st": ebssim.st1(500)}, "us-east-1", job=BatchJob(minutes=5, io_size="1m"))["vol-st"]
    assert not v.changes and v.advice.spec == "st1:size=500"
    assert "no migration rule for this type" in v.reason


def test_gp3_within_rules():
    # 10 GiB allows 500 x 10 = 5,000 IOPS.
    vol, notes = gp3_for(10, 8000, 125)
    assert (vol.baseline_iops, vol.max_throughput_mib_s) == (5000, 125)
    assert notes[0].startswith("IOPS lowered from 8000 to 5000: iops=8000 exceeds gp3's limit of 500 IOPS per GiB")
    # 1,000 MiB/s needs 1,000 / 0.25 = 4,000 IOPS.
    vol, notes = gp3_for(1000, 3000, 1000)
    assert (vol.baseline_iops, vol.max_throughput_mib_s) == (4000, 1000)
    assert notes[0].startswith("IOPS raised from 3000 to 4000 for 1000 MiB/s")
    # Never below the included 3,000 IOPS and 125 MiB/s; rounded up to whole units.
    vol, notes = gp3_for(100, 10.2, 0.5)
    assert (vol.baseline_iops, vol.max_throughput_mib_s, notes) == (3000, 125, [])
    vol, _ = gp3_for(100, 3000.2, 125.01)
    assert (vol.baseline_iops, vol.max_throughput_mib_s) == (3001, 126)


# --- alarms ---


def test_burst_balance_alarm():
    # 100 GiB gp2 at 3,000 IOPS: 5.4e6 / 2,700 = 2,000 s; 5 minutes = 300 s = 15 % of the bucket.
    a = burst_balance_alarm(ebssim.gp2(100), volume_id="vol-0abc", warning_minutes=5)
    assert a is not None
    assert (a.threshold_pct, a.full_bucket_minutes) == (15.0, 2000 / 60)
    args = a.arguments
    assert args[:2] == ["cloudwatch", "put-metric-alarm"]
    assert args[args.index("--threshold") + 1] == "15"
    assert args[args.index("--metric-name") + 1] == "BurstBalance"
    assert args[args.index("--dimensions") + 1] == "Name=VolumeId,Value=vol-0abc"
    # 250 GiB at 3,000 IOPS: 5.4e6 / 2,250 = 2,400 s; 10 minutes: 600 / 2,400 = 25 %.
    assert burst_balance_alarm(ebssim.gp2(250), warning_minutes=10).threshold_pct == 25.0  # type: ignore[union-attr]
    # At 1,000 IOPS a 100 GiB volume lasts 5.4e6 / 700 = 7,714.3 s: 5 min = 3.889 % -> 3.9 (rounded up).
    assert burst_balance_alarm(ebssim.gp2(100), iops=1000, warning_minutes=5).threshold_pct == 3.9  # type: ignore[union-attr]
    assert burst_balance_alarm(ebssim.gp2(2000)) is None
    # Above the 3,000 ceiling the bucket drains at 3,000: 3087.91 asked is worked out, and said, at
    # 3,000 (2,000 s, 5 min = 15 %).
    a = burst_balance_alarm(ebssim.gp2(100), volume_id="vol-0abc", iops=3087.91, warning_minutes=5)
    assert a is not None
    assert (a.iops, a.threshold_pct, a.full_bucket_minutes) == (3000.0, 15.0, 2000 / 60)
    assert a.arguments[a.arguments.index("--alarm-description") + 1] == (
        "BurstBalance of vol-0abc below 15%: about 5 min of burst left at 3000 IOPS, the volume's burst ceiling "
        "(3087.91 IOPS asked)"
    )
    with pytest.raises(ValueError, match=r"lasts only 33.3 min at 3000 IOPS, the volume's burst ceiling \(3500 IOPS"):
        burst_balance_alarm(ebssim.gp2(100), iops=3500, warning_minutes=40)
    with pytest.raises(ValueError, match=r"a full bucket lasts only 33.3 min at 3000 IOPS"):
        burst_balance_alarm(ebssim.gp2(100), warning_minutes=40)
    with pytest.raises(ValueError, match="a gp3 volume has no burst bucket"):
        burst_balance_alarm(ebssim.gp3(100))


# --- modify-volume plans ---


def test_modify_volume_plan_batches_each_volume_into_one_call():
    plan = modify_volume_plan(
        [
            ("vol-a", ebssim.gp2(2000), ebssim.gp3(2000, iops=6000, throughput_mib_s=250)),
            ("vol-b", ebssim.io1(500, 20000), ebssim.io2(500, 20000)),
            ("vol-c", ebssim.gp3(100), ebssim.gp3(100)),
            ("vol-d", ebssim.gp3(100), ebssim.gp3(200, iops=4000)),
        ]
    )
    assert plan.commands == [
        "aws ec2 modify-volume --volume-id vol-a --volume-type gp3 --iops 6000 --throughput 250",
        "aws ec2 modify-volume --volume-id vol-b --volume-type io2 --iops 20000",
        "aws ec2 modify-volume --volume-id vol-d --size 200 --iops 4000",
    ]
    assert plan.warnings == []


def test_modify_volume_plan_warns_past_the_daily_limit():
    assert MAX_MODIFICATIONS_PER_24H == 4
    change = [("vol-a", ebssim.gp2(100), ebssim.gp3(100))]
    assert modify_volume_plan(change, recent_modifications={"vol-a": 3}).warnings == []
    (w,) = modify_volume_plan(change, recent_modifications={"vol-a": 4}).warnings
    assert w.startswith("vol-a: 4 modifications in the last 24 hours plus 1 planned is 5, more than 4: AWS allows")
    twice = change + [("vol-a", ebssim.gp3(100), ebssim.gp3(100, iops=4000))]
    (w,) = modify_volume_plan(twice, recent_modifications={"vol-a": 3}).warnings
    assert "3 modifications in the last 24 hours plus 2 planned is 5" in w
    with pytest.raises(ValueError, match="cannot shrink"):
        modify_volume_plan([("vol-a", ebssim.gp2(100), ebssim.gp3(50))])


# --- bad input ---


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"region": "eu-west-9"}, "region 'eu-west-9' is not an AWS commercial region code"),
        ({"headroom_pct": -5}, "headroom_pct=-5 must be a percentage"),
        ({"volumes": {}}, "volumes must be a non-empty mapping"),
        ({"volumes": {"v": "gp2:size=10"}}, "volumes\\['v'\\]='gp2:size=10' must be an ebssim.Volume"),
    ],
)
def test_bad_arguments(kwargs, message):
    args = {"volumes": {"v": ebssim.gp2(100)}, "region": "us-east-1", **kwargs}
    with pytest.raises(ValueError, match=message):
        advise(args.pop("volumes"), args.pop("region"), **args)


def test_batch_job_is_checked():
    with pytest.raises(ValueError, match="BatchJob minutes=0"):
        BatchJob(minutes=0)
    with pytest.raises(ValueError, match="pattern"):
        BatchJob(pattern="sideways")


def test_cli_bad_inputs(cli, tmp_path):
    doc = json.loads((AWS / "ec2-describe-volumes.awscli-example.json").read_text())
    del doc["Volumes"][1]["Size"]
    no_size = tmp_path / "volumes.json"
    no_size.write_text(json.dumps(doc))
    neither = tmp_path / "other.json"
    neither.write_text('{"Reservations": []}')
    cases = [
        (["--region", "eu-west-9", "gp2"], "region 'eu-west-9' is not an AWS commercial region code"),
        (["--region", "us-east-1", str(no_size)], "Volumes[1] (vol-1234567890abcdef0): no Size (GiB)"),
        (["--region", "us-east-1", str(neither)], "neither aws ec2 describe-volumes output (no Volumes) nor"),
        (["--region", "us-east-1", "missing.json"], "INPUT missing.json: no such file"),
        (["--region", "us-east-1", "gp5:size=1"], "SPEC 'gp5:size=1': volume type 'gp5' is not one of"),
        (["--region", "us-east-1", "a=gp2:size=1", "a=gp3"], "INPUT a=gp3: volume a is given twice"),
        (["--region", "us-east-1", "--volume-id", "vol-x", "gp2"], "--volume-id vol-x: not among the INPUTs"),
    ]
    for args, message in cases:
        r = cli("advise", *args)
        assert r.returncode == 2, args
        assert message in r.stderr, (args, r.stderr)
        assert r.stderr.startswith("ebssim: error: ") and r.stderr.count("\n") == 1


def test_normal_report(cli):
    r = cli("advise", "--region", "eu-west-1", "--job-minutes", "52", "vol-db=gp2:size=2000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Region eu-west-1, AWS list prices of 2025-10-28 (USD per month)"
    assert lines[2] == "vol-db: gp2:size=2000 -> gp3:size=2000,iops=6000,throughput=250"
    assert lines[4].split() == ["current", "gp2:size=2000", "220.00", "0.0", "52.0"]
    assert lines[5].split() == ["defaults", "gp3:size=2000,iops=3000,throughput=125", "176.00", "104.0", "104.0"]
    assert lines[6].split() == ["advice", "gp3:size=2000,iops=6000,throughput=250", "198.00", "0.0", "52.0"]
    assert "  aws ec2 modify-volume --volume-id vol-db --volume-type gp3 --iops 6000 --throughput 250" in lines
    # One volume, which needs provisioned performance: singular nouns and verbs.
    assert "Fleet: 1 volume; 0 can use gp3's defaults, 1 needs provisioned performance, 0 unchanged" in lines


def test_counts_agree_with_their_nouns():
    two = advise({"a": ebssim.gp2(2000), "b": ebssim.gp2(3000)}, "eu-west-1", job=BatchJob(minutes=1)).to_normal()
    assert "Fleet: 2 volumes; 0 can use gp3's defaults, 2 need provisioned performance, 0 unchanged" in two
    # 1 modification earlier plus 4 planned is 5.
    change = [("vol-a", ebssim.gp3(100), ebssim.gp3(100, iops=3000 + k)) for k in range(1, 5)]
    (w,) = modify_volume_plan(change, recent_modifications={"vol-a": 1}).warnings
    assert w.startswith("vol-a: 1 modification in the last 24 hours plus 4 planned is 5, more than 4")


def test_instance_limits_apply():
    # On an m5.large (EBS baseline 3,600 IOPS, 18,750 for about 30 min from a bucket of
    # (18,750 - 3,600) x 1,800 = 27,270,000 I/Os) the 52-minute job of 6,000 IOPS drains the bucket
    # at 6,000 - 3,600 = 2,400 a second: 11,362 s, longer than the job, which is unchanged.
    fleet = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52), instance="m5.large")
    assert fleet["vol-db"].current.job_minutes == 52.0
    with pytest.raises(ValueError, match="m5.lrage"):
        advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", instance="m5.lrage")


def test_cli_warns_about_the_modification_limit(cli):
    args = ["advise", "--region", "eu-west-1", "--job-minutes", "5", "--output-format", "json", "vol-db=gp2:size=2000"]
    r = cli(*args, "--recent-modifications", "vol-db=4")
    assert r.returncode == 0, r.stderr
    (w,) = json.loads(r.stdout)["modify_volume"]["warnings"]
    assert w.startswith("vol-db: 4 modifications in the last 24 hours plus 1 planned is 5, more than 4")
    r = cli(*args, "--recent-modifications", "vol-db=four")
    assert r.returncode == 2 and "--recent-modifications 'vol-db=four': expected VOLUME_ID=N" in r.stderr
