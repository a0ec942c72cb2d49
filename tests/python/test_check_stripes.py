"""Striped sets in capacity plans (issue 23): ``raid0:`` and ``rds:`` SPECs as plan volumes, fio
jobs and metrics on a set, and each criterion of a set checked on every member. Every expected
figure is worked out by hand in the comment beside it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, Optional

import ebssim
import ebssim.aws as aws
import numpy as np
import pandas as pd
import pytest
from check_report import criterion_lines
from ebssim.check import PlanError, parse_plan, read_plan
from ebssim.testing import Plan

ROOT = Path(__file__).resolve().parents[2]
PLANS = ROOT / "examples" / "plans"
KIB = 1024
A, B = "vol-0aaaaaaaaaaaaaaaa", "vol-0bbbbbbbbbbbbbbbb"  # md0's members
MD = "vol-0cccccccccccccccc"  # a set named by an id: its md device's own counters are under it
IDX = pd.date_range("2024-05-01", periods=30, freq="1min", tz="UTC")  # 30 one-minute periods
GP2_SET = "raid0:chunk=64,members=2+gp2:size=500"  # 2 x gp2 500 GiB: 1,500 IOPS baseline, burst 3,000


# --- the example plans: data set 05's md0 on r5b.large ---------------------------------------


def test_the_md0_example_passes_with_status_0(cli):
    r = cli("check", str(PLANS / "md0-r5b.yaml"))
    assert r.returncode == 0, r.stderr
    lines = criterion_lines(r.stdout)
    assert list(lines) == [
        "p99 latency <= 120 ms",
        "no cliff within 4 h",
        "instance balances >= 40 %",
        "never bound by the instance",
    ]  # one line per criterion for the set, not one per member
    # r5b.large: baseline 5,417 IOPS, maximum 43,333, a bucket of (43,333 - 5,417) x 1,800 s =
    # 68,248,800 I/Os; the set writes 8,000 IOPS (2 x 4,000), draining 2,583 a second: after 4 h,
    # 68,248,800 - 14,400 x 2,583 = 31,053,600 left, 45.5 %.
    assert lines["instance balances >= 40 %"] == "PASS EBSIOBalance 45.5 % (lowest)"
    assert lines["never bound by the instance"] == "PASS never bound"
    assert "  /dev/md0  RAID-0 of 2 x gp3 202 GiB (4000 IOPS, 1000 MiB/s), 512 KiB chunks on r5b.large" in r.stdout
    assert r.stdout.endswith("plan met: 4 of 4 criteria pass\n")


def test_the_md0_example_splits_the_job_over_the_members():
    out = read_plan(PLANS / "md0-r5b.yaml").run()
    md0 = out.results["/dev/md0"]
    assert isinstance(md0, ebssim.StripedResult)
    # 16 jobs x iodepth 16 = 256 in flight on the set; a 16 KiB write is one piece (512 KiB
    # chunks): 256 x 1 / 2 = 128 on each member, held at 4,000 IOPS: 128 / 4,000 s = 32 ms.
    assert md0.workload.in_flight == 256
    for m in md0.members:
        assert m.workload.in_flight == 128
        assert m.workload.io_bytes == 16 * KIB
        assert m.mean_iops == pytest.approx(4000)
        assert m.mean_latency_ms == pytest.approx(32.0)
    assert md0.mean_iops == pytest.approx(8000)  # 4,000 / member_share 0.5


def test_the_failing_md0_example_fails_with_status_1(cli):
    r = cli("check", str(PLANS / "md0-r5b-fails.yaml"))
    assert r.returncode == 1, r.stderr
    lines = criterion_lines(r.stdout)
    assert len(lines) == 4
    # 68,248,800 / 2,583 = 26,422.3 s: the instance's bucket is dry 8 h - 26,422 s = 39.6 min
    # before the end; then 5,417 IOPS, 2,708.5 on each member.
    assert lines["no cliff within 8 h"] == (
        "FAIL EBSIOBalance ran dry at 26,422 s (7.34 h), 39.6 min early (all 2 members)"
    )
    assert lines["never bound by the instance"].startswith("FAIL bound 39.6 min (8% of the run) (all 2 members)")
    assert "serving 2,709 IOPS" in r.stdout
    # 40 % of 68,248,800 is reached after (68,248,800 x 0.6) / 2,583 = 15,853 s.
    assert "EBSIOBalance below 40 % from 15,853 s (4.4 h)" in r.stdout
    assert lines["p99 latency <= 120 ms"].startswith("PASS")
    assert r.stdout.endswith("plan not met: 3 of 4 criteria fail\n")


# --- an RDS instance's storage ---------------------------------------------------------------


def test_rds_storage_is_a_plan_volume(tmp_path):
    plan = parse_plan(
        """
volumes:
  /dev/db: rds:engine=postgres,type=gp3,size=400
workload:
  fio: fio --name=q --filename=/dev/db --rw=randread --bs=4k --ioengine=libaio --iodepth=64 --runtime=60 --time_based
criteria:
  p99_ms: 50
  throttled_s: 0
""",
        base_dir=tmp_path,
    )
    db = plan.volumes["/dev/db"]
    assert isinstance(db, ebssim.StripedSet) and db.n == 4  # PostgreSQL gp3 at 400 GiB: 4 x gp3 100 GiB
    out = plan.run()
    r = out.results["/dev/db"]
    # 64 in flight over 4 members: 16 each, at gp3's 3,000 IOPS (16 / 0.504 ms offers far more):
    # 16 / 3,000 s = 5.33 ms; the set 3,000 / 0.25 = 12,000 IOPS.
    assert r.members[0].workload.in_flight == 16
    assert r.members[0].mean_latency_ms == pytest.approx(16 / 3000 * 1e3)
    assert r.mean_iops == pytest.approx(12000)
    text = out.to_text()
    lines = criterion_lines(text)
    assert lines["p99 latency <= 50 ms"].startswith("PASS got ")
    assert lines["never throttled"] == "FAIL bound 60 s (100% of the run) (all 4 members)"
    assert out.exit_status == 1


def test_a_db_instance_class_is_its_ec2_types_limits(tmp_path):
    # RDS storage on db.m5.large: m5.large's EBS limits (18,750 IOPS burst, 3,600 baseline, a
    # bucket of (18,750 - 3,600) x 1,800 s = 27.27 M I/Os). The set's 64 in flight at gp3's
    # 3,000 IOPS per member ask 12,000 IOPS: the bucket drains by 12,000 - 3,600 = 8,400 a
    # second and runs dry at 27.27 M / 8,400 = 3,246 s; after it the set gets the baseline.
    def plan(instance: str) -> Any:
        return parse_plan(
            f"""
instance: {instance}
volumes:
  /dev/db: rds:engine=postgres,type=gp3,size=400
workload:
  fio: fio --name=q --filename=/dev/db --rw=randread --bs=4k --ioengine=libaio --iodepth=64 --runtime=3600 --time_based
criteria:
  instance_bound_s: 0
""",
            base_dir=tmp_path,
        )

    db, ec2 = plan("db.m5.large"), plan("m5.large")
    assert db.instance == "m5.large"
    a, b = db.run(), ec2.run()
    assert a.results["/dev/db"].members[0].instance_bound_s == b.results["/dev/db"].members[0].instance_bound_s
    bound = a.results["/dev/db"].members[0].instance_bound_s
    assert bound == pytest.approx(3600 - 15150 * 1800 / 8400, abs=2)  # the last 354 s
    assert a.exit_status == 1
    for bad, message in [
        ("db.r5.large.tpc1.mem2x", "no documented EC2 counterpart"),
        ("db.nosuch.large", "not in the catalog"),
    ]:
        with pytest.raises(PlanError, match=message) as e:
            plan(bad)
        assert e.value.key == "instance"


# --- metrics of a striped set ----------------------------------------------------------------


def _reads(vid: str, iops: float, balance: Optional[float] = None) -> pd.DataFrame:
    """30 minutes of steady 16 KiB reads of ``iops`` (per minute 60 x iops I/Os), as metrics."""
    cols: Dict[str, Any] = {
        "VolumeReadOps": 60.0 * iops,
        "VolumeWriteOps": 0.0,
        "VolumeReadBytes": 60.0 * iops * 16 * KIB,
        "VolumeWriteBytes": 0.0,
    }
    if balance is not None:
        cols["BurstBalance"] = [balance] + [None] * (len(IDX) - 1)
    return aws.metrics_from_wide(pd.DataFrame(cols, index=IDX), vid)


def _metrics_plan(tmp_path: Path, frames: Any, volumes: str, extra: str, criteria: str) -> Any:
    pd.concat(frames, ignore_index=True).to_csv(tmp_path / "m.csv", index=False)
    text = f"volumes:\n{volumes}\nworkload:\n  metrics: m.csv\n{extra}criteria:\n{criteria}\n"
    return parse_plan(text, base_dir=tmp_path)


def test_a_sets_demand_is_its_members_metrics_summed(tmp_path):
    # The members measured 1,800 and 2,600 IOPS of 16 KiB reads: the set's 4,400, 2,200 on each
    # member. Each gp2 500 GiB member bursts at 3,000 and earns 1,500: its bucket drains by 700
    # a second, from the emptiest member's BurstBalance, 50 % of 5.4 M = 2.7 M; after 30 min,
    # 2.7 M - 1,800 x 700 = 1.44 M = 26.7 %. The plain gp3 beside it has no bucket.
    plan = _metrics_plan(
        tmp_path,
        [_reads(A, 1800, 80.0), _reads(B, 2600, 50.0), _reads("vol-0dddddddddddddddd", 1000)],
        f"  md0: {GP2_SET}\n  vol-0dddddddddddddddd: gp3:size=100",
        f"  members:\n    md0: [{A}, {B}]\n",
        "  min_burst_balance_pct: 30\n  no_cliff: true",
    )
    out = plan.run()
    md0 = out.results["md0"]
    for m in md0.members:
        assert m.mean_iops == pytest.approx(2200)
        assert m.credits[-1] == pytest.approx(2.7e6 - 1800 * 700)
    assert out.results["vol-0dddddddddddddddd"].mean_iops == pytest.approx(1000)
    # How many set I/Os the members' own workloads make up is not known: NaN (n/a), not 0.
    assert math.isnan(md0.mean_iops) and np.isnan(md0.iops).all() and "n/a" in repr(md0)
    names = [n for n, _ in out.checks]
    assert names == ["md0", "md0", "vol-0dddddddddddddddd", "vol-0dddddddddddddddd"]
    first = {c.criterion: c for n, c in out.checks if n == "md0"}
    assert not first["BurstBalance >= 30 %"].ok
    assert first["BurstBalance >= 30 %"].got == "got 26.7 % (lowest) (all 2 members)"
    assert first["no cliff"].ok  # 2.7 M / 700 = 3,857 s > 30 min
    assert out.exit_status == 1


def test_a_sets_own_counters_are_split_by_the_sets_rule(tmp_path):
    # The md device's own 4,400 IOPS of 16 KiB: one piece per I/O (64 KiB chunks), member_share
    # 1 / 2: 2,200 on each member. No BurstBalance: each starts full, 5.4 M - 1,800 x 700 =
    # 4.14 M = 76.7 % after 30 min.
    plan = _metrics_plan(tmp_path, [_reads(MD, 4400)], f"  {MD}: {GP2_SET}", "", "  min_burst_balance_pct: 80")
    out = plan.run()
    for m in out.results[MD].members:
        assert m.mean_iops == pytest.approx(2200)
    (name, check), *_ = out.checks
    assert (name, check.ok, check.got) == (MD, False, "got 76.7 % (lowest) (all 2 members)")
    # The same bound at 70 % holds.
    plan = _metrics_plan(tmp_path, [_reads(MD, 4400)], f"  {MD}: {GP2_SET}", "", "  min_burst_balance_pct: 70")
    assert plan.run().exit_status == 0


GP3_SET = "raid0:chunk=64+gp3:size=100+gp3:size=100"  # 3,000 IOPS on each member


def _queued(vid: str, iops: float, queue: float) -> pd.DataFrame:
    """:func:`_reads` with the measured VolumeQueueLength (Average) of each minute."""
    m = _reads(vid, iops)
    q = aws.metrics_from_wide(pd.DataFrame({"VolumeQueueLength": queue}, index=IDX), vid)
    return pd.concat([m, q], ignore_index=True)


@pytest.mark.parametrize("how", ["measured", "peak"])  # the queue is the same in every period: one bound
def test_a_sets_measured_queue_bounds_each_member(tmp_path, how):
    # The md device asks 8,000 IOPS of 16 KiB with 32 I/Os outstanding (its VolumeQueueLength).
    # 64 KiB chunks: one piece per I/O, member_share 1 / 2: each member is asked 4,000 IOPS with
    # 16 outstanding, and serves gp3's 3,000. With max_in_flight: measured the application holds
    # the rest: the device latency is Little's 16 / 3,000 s = 5.33 ms, and 1,000 I/Os a second
    # are carried past each period (60,000 a minute, 1.8 M after 30 min). A member's 7.2 M I/Os
    # take 7.2 M / 3,000 = 2,400 s: the job's slowdown is 40 / 30 min.
    plan = _metrics_plan(
        tmp_path, [_queued(MD, 8000, 32.0)], f"  {MD}: {GP3_SET}", f"  max_in_flight: {how}\n", "  no_cliff: true"
    )
    out = plan.run()
    for m in out.results[MD].members:
        assert m.iops[:40] == pytest.approx(3000) and m.iops[40] == 0  # 40 one-minute steps, then drained
        assert np.asarray(m.device_latency_s)[:40] == pytest.approx(16 / 3000, rel=1e-9)
        assert float(m.backlog_ops[29]) == pytest.approx(1000 * 1800, rel=1e-9)
        assert m.slowdown == pytest.approx(40 / 30, rel=1e-9)
    # The members' own queues, measured as 16 each: the same bound, their mean.
    plan = _metrics_plan(
        tmp_path,
        [_queued(A, 4000, 16.0), _queued(B, 4000, 16.0)],
        f"  md0: {GP3_SET}",
        f"  members:\n    md0: [{A}, {B}]\n  max_in_flight: {how}\n",
        "  no_cliff: true",
    )
    for m in plan.run().results["md0"].members:
        assert np.asarray(m.device_latency_s)[:40] == pytest.approx(16 / 3000, rel=1e-9)
        assert m.slowdown == pytest.approx(40 / 30, rel=1e-9)


@pytest.mark.parametrize(
    "volumes, extra, key, message",
    [
        (
            f"  md0: {GP2_SET}",
            f"  members:\n    log: [{A}, {B}]\n",
            "workload.members.log",
            r"'log' is not one of the plan's volumes \(the plan's striped sets: md0\)",
        ),
        (
            f"  md0: {GP2_SET}\n  {A}: gp3",
            f"  members:\n    {A}: [{A}, {B}]\n",
            f"workload.members.{A}",
            r"is a volume, not a striped set",
        ),
        (
            f"  md0: {GP2_SET}",
            f"  members:\n    md0: [{A}]\n",
            "workload.members.md0",
            r"must name each of the set's 2 members once",
        ),
        (
            f"  md0: {GP2_SET}",
            "  max_in_flight: 32\n",
            "workload.max_in_flight",
            r"the plan has the striped set 'md0'.* not split over a set's members; give max_in_flight: measured",
        ),
        (
            f"  md0: {GP2_SET}",
            "",
            "volumes.md0",
            r"the metrics hold neither its members' \(name them: members=",
        ),
        (
            f"  md0: {GP2_SET}",
            f"  members:\n    md0: [{A}, vol-0eeeeeeeeeeeeeeee]\n",
            "workload.members.md0",
            r"hold no VolumeReadOps/.* Sum of vol-0eeeeeeeeeeeeeeee",
        ),
    ],
)
def test_metrics_on_a_set_errors_name_the_key(tmp_path, volumes, extra, key, message):
    with pytest.raises(PlanError, match=message) as e:
        _metrics_plan(tmp_path, [_reads(A, 1800), _reads(B, 2600)], volumes, extra, "  no_cliff: true")
    assert e.value.key == key


def test_members_is_a_list_of_ids(tmp_path):
    with pytest.raises(PlanError, match=r"expected a list of the set's members' VolumeIds") as e:
        _metrics_plan(tmp_path, [_reads(A, 1)], f"  md0: {GP2_SET}", f"  members:\n    md0: {A}\n", "  no_cliff: true")
    assert e.value.key == "workload.members.md0"


def test_members_is_an_option_of_metrics_workloads_only(tmp_path):
    (tmp_path / "t.csv").write_text("time_s,read_ops\n0,1\n")
    with pytest.raises(PlanError, match=r"is an option of metrics and prometheus workloads, not of trace") as e:
        parse_plan(
            f"volumes:\n  md0: {GP2_SET}\nworkload:\n  trace:\n    md0: t.csv\n  members:\n    md0: [{A}, {B}]\n"
            "criteria:\n  no_cliff: true\n",
            base_dir=tmp_path,
        )
    assert e.value.key == "workload.members"


def test_a_trace_on_a_set_is_the_sets_io_split_by_its_rule(tmp_path):
    # md0's own I/O (its md device's, e.g. iostat's): 18,000 reads of 1 MiB a minute for 200
    # minutes, 300 a second. In 64 KiB chunks 1 MiB is 16 pieces of 64 KiB, 8 on each member: each
    # gp2 500 GiB is asked 2,400 I/Os a second (counted one each, <= 256 KiB; 150 MiB/s, under its
    # 250), above its 1,500 baseline: its bucket of 5.4e6 drains 900 a second, dry at 6,000 s.
    idx = pd.date_range("2024-05-01", periods=200, freq="1min", tz="UTC", name="time")
    pd.DataFrame({"read_ops": 18_000.0, "read_bytes": 18_000.0 * 2**20}, index=idx).to_csv(tmp_path / "t.csv")
    text = f"volumes:\n  md0: {GP2_SET}\nworkload:\n  trace:\n    md0: t.csv\ncriteria:\n  no_cliff_within_h: %s\n"
    ok = parse_plan(text % 1, base_dir=tmp_path).run()
    assert ok.ok, ok.checks
    late = parse_plan(text % 2, base_dir=tmp_path).run()
    assert not late.ok
    # 2 h = 7,200 s; dry at 6,000 s: 20 min early, on both members
    assert "ran dry at 6,000 s (100 min), 20 min early" in late.checks[0][1].got
    r = late.results["md0"]
    assert isinstance(r, ebssim.StripedResult)
    # before the cliff the set completes 2,400 / member_share 8 = 300 I/Os a second
    assert float(r.iops[0]) == pytest.approx(300.0, rel=1e-12)


def test_a_bad_raid0_spec_names_the_volume(tmp_path):
    with pytest.raises(PlanError, match=r"members=3 but 2 member SPECs are given") as e:
        parse_plan(
            "volumes:\n  md0: raid0:members=3+gp3+gp3\nworkload:\n  fio: x.fio\ncriteria:\n  no_cliff: true\n",
            base_dir=tmp_path,
        )
    assert e.value.key == "volumes.md0"


# --- testing.Plan on a StripedResult ---------------------------------------------------------


def test_a_sets_check_names_the_first_failing_member():
    # Two gp2 100 GiB members (300 IOPS baseline, burst 3,000, a 5.4 M bucket) from two runs:
    # member 0 idle (full), member 1 at queue depth 32 for 1,000 s: 3,000 IOPS, draining 2,700 a
    # second, 5.4 M - 2.7 M = 2.7 M = 50 % at the end. A 60 % floor fails on member 1 only.
    st = ebssim.striped([ebssim.gp2(100)] * 2)
    idle = ebssim.simulate(ebssim.gp2(100), ebssim.Idle(), duration_s=1000)
    busy = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=1000)
    r = ebssim.StripedResult(st, None, None, ebssim.RunResult([idle, busy]))
    report = Plan(min_burst_balance_pct=60).check(r)
    (subject,) = report.subjects
    (check,) = subject.checks
    assert not check.ok
    assert check.got == "got 50 % (lowest) (member 1; 1 of 2 members)"
    assert subject.name.startswith("RAID-0 of 2 x gp2 100 GiB")
    # 40 %: both hold; the members differ, and the line shows each one's lowest (member 0 full
    # from the first step; member 1 at 50 % at the end of its last step, which starts at 999 s).
    (check,) = Plan(min_burst_balance_pct=40).check([r]).checks
    assert check.ok
    assert check.got == "member 0: got 100 % (lowest, at 0 s); member 1: got 50 % (lowest, at 999 s (16.6 min))"


# --- Prometheus: an md device's own counters -------------------------------------------------


def test_prometheus_counters_of_a_set_are_split_over_its_members(tmp_path):
    # The real node_exporter fixture (tests/data/prometheus, made by
    # scripts/make_prometheus_fixtures.sh) as md0's own counters, replayed beside the plain volume
    # of examples/plans/prometheus-gp3.yaml. Each member moves an N-th of the bytes: half the
    # plain volume's. Its I/Os (34 KiB on average) are under the 512 KiB chunk: each is one piece,
    # or two when it straddles a chunk boundary, which one of b bytes (aligned to b) does with
    # probability at most b / chunk. So each member serves at least half the plain volume's I/Os
    # and at most half of them plus half of bytes / chunk.
    counters = ROOT / "tests" / "data" / "prometheus" / "counters.json"
    plain = read_plan(PLANS / "prometheus-gp3.yaml").run().results["data"]
    plan = parse_plan(
        f"volumes:\n  md0: raid0:members=2+gp3:size=100\nworkload:\n  prometheus: {counters}\n  devices:\n"
        "    vda: md0\ncriteria:\n  throttled_s: 0\n",
        base_dir=tmp_path,
    )
    out = plan.run()
    md0 = out.results["md0"]
    total = plain.totals.served_ops
    assert total > 0
    nbytes = plain.totals.served_bytes
    for m in md0.members:
        assert m.totals.served_bytes == pytest.approx(nbytes / 2)
        assert total / 2 < m.totals.served_ops <= (total + nbytes / (512 * KIB)) / 2 + 1e-6
    assert out.exit_status == 0
    assert criterion_lines(out.to_text()) == {"never throttled": "PASS never bound"}
