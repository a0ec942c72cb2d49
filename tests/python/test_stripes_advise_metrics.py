"""advise on a striped set from measured metrics (issue 23): the set's demand is its members'
metrics summed (each member then replays an N-th of it), or the set's own counters (an md
device's, from Prometheus) split by the set's rule. Every figure is worked out by hand."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Dict, List, Tuple

import ebssim
import ebssim.aws as aws
import pandas as pd
import pytest
from ebssim import prometheus
from ebssim.advise import advise

KIB = 1024
IDX = pd.date_range("2024-05-01", periods=30, freq="1min", tz="UTC")  # 30 one-minute periods
A, B = "vol-0aaaaaaaaaaaaaaaa", "vol-0bbbbbbbbbbbbbbbb"


def _reads(iops: float, io_bytes: float, balance: Any = None) -> pd.DataFrame:
    """A wide frame of 30 minutes of steady reads: per minute, 60 x iops I/Os of io_bytes."""
    cols: Dict[str, Any] = {
        "VolumeReadOps": 60.0 * iops,
        "VolumeWriteOps": 0.0,
        "VolumeReadBytes": 60.0 * iops * io_bytes,
        "VolumeWriteBytes": 0.0,
    }
    if balance is not None:
        cols["BurstBalance"] = [balance] + [None] * (len(IDX) - 1)
    return pd.DataFrame(cols, index=IDX)


def _members_metrics(balance_a: Any = None, balance_b: Any = None) -> pd.DataFrame:
    return pd.concat(
        [
            aws.metrics_from_wide(_reads(1800, 16 * KIB, balance_a), A),
            aws.metrics_from_wide(_reads(2600, 16 * KIB, balance_b), B),
        ],
        ignore_index=True,
    )


def test_members_metrics_summed_are_the_sets_demand() -> None:
    # 2 x gp2 500 GiB (1,500 IOPS baseline, burst 3,000, 250 MiB/s), 64 KiB chunks. Its members
    # measured 1,800 and 2,600 IOPS of 16 KiB reads: the set's demand is 4,400 IOPS, 2,200 on
    # each member (16 KiB < 64 KiB: one piece per I/O). Observed p99 per member: 2,200 IOPS and
    # 2,200 x 16 KiB = 34.375 MiB/s; + 20 %: 2,640 IOPS, 41.25 MiB/s, below gp3's included
    # 3,000 and 125: each member's advice is gp3 at its defaults. (Read as the busiest member's
    # 2,600, + 20 % would be 3,120 IOPS; as the sum on one member, 5,280.)
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    fleet = advise({"md0": md}, "us-east-1", metrics=_members_metrics(), members={"md0": [A, B]})
    a = fleet["md0"]
    assert a.advice.spec == "raid0:chunk=64,members=2+gp3:size=500,iops=3000,throughput=125"
    assert "observed p99 2200 IOPS and 34.4 MiB/s, plus 20% headroom: 2640 IOPS, 41.2 MiB/s" in a.reason
    assert "each member runs its share of the measured demand" in a.reason
    assert a.load.startswith(
        f"the set's demand: the sum of its 2 members' metrics ({A}, {B}), an N-th of it on each member; "
        "each member: metrics replayed (30 periods of 60 s)"
    )
    # The job: all 30 minutes (steady), 4,400 x 16 KiB x 1,800 s on the set.
    assert a.job_bytes == pytest.approx(4400 * 16 * KIB * 1800)
    # A full bucket lasts: 2,200 - 1,500 = 700 credits/s out of 5.4e6: 7,714 s > 1,800. Not throttled.
    assert a.current.throttled_minutes == 0.0 and a.advice.throttled_minutes == 0.0
    # Priced as the members' sums (us-east-1: gp2 $0.10, gp3 $0.08 per GiB): $100 now, $80 advised.
    assert (a.current.monthly_usd, a.advice.monthly_usd) == (100.0, 80.0)


def test_the_emptiest_members_bucket_starts_the_replay() -> None:
    # Member B measured BurstBalance 10 % at the start (A 100 %): the members start from 10 %,
    # 5.4e5 credits, drained at 700 a second: empty after 771 s, then each member serves 1,500
    # of its 2,200 IOPS. Backlog by 1,800 s: 700 x (1,800 - 771) = 720,000 I/Os, served at 1,500
    # IOPS with nothing arriving: 480 s more. Throttled from 771 s to 2,280 s: 1,509 s, 25.1 min
    # (to within a 60 s step).
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    m = _members_metrics(balance_a=100.0, balance_b=10.0)
    a = advise({"md0": md}, "us-east-1", metrics=m, members={"md0": [A, B]})["md0"]
    assert a.current.throttled_minutes == pytest.approx(25.1, abs=1.0)
    assert a.advice.throttled_minutes == 0.0  # gp3's 3,000 IOPS hold 2,200


def _md_answer(devices: Dict[str, Tuple[float, float]], n: int = 31, step: int = 60) -> Dict[str, Any]:
    """A query_range answer of node_exporter's counters: each device reading iops I/Os of
    io_bytes a second, n samples step seconds apart (n - 1 periods)."""
    result: List[Dict[str, Any]] = []
    t0 = 1714521600  # 2024-05-01T00:00:00Z
    for dev, (iops, io_bytes) in devices.items():
        per = {
            "node_disk_reads_completed_total": iops,
            "node_disk_read_bytes_total": iops * io_bytes,
            "node_disk_writes_completed_total": 0.0,
            "node_disk_written_bytes_total": 0.0,
        }
        for name, rate in per.items():
            values = [[t0 + step * i, f"{1000 + rate * step * i:.0f}"] for i in range(n)]
            result.append({"metric": {"__name__": name, "device": dev, "instance": "node:9100"}, "values": values})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def test_the_md_devices_own_counters_split_by_the_sets_rule() -> None:
    # 2 x gp2 2000 GiB (6,000 IOPS baseline, 250 MiB/s), 64 KiB chunks; md0 reads 3,000 I/Os of
    # 256 KiB a second. By the set's rule each 256 KiB I/O is 4 pieces of 64 KiB, 2 on each member
    # (member_share 2): each member serves 6,000 IOPS of 64 KiB, 375 MiB/s. + 20 %: 7,200 IOPS,
    # 450 MiB/s: gp3 2000 GiB at 7,200 IOPS and 450 MiB/s (within 500 IOPS/GiB and 0.25 MiB/s per
    # IOPS). (Without the split, 1,500 IOPS of 256 KiB: + 20 % = 1,800, gp3's 3,000 IOPS.)
    md = ebssim.striped([ebssim.gp2(2000)] * 2, chunk_kib=64)
    sp = md.split("256k")
    assert (sp.pieces_per_io, sp.piece_bytes, sp.member_share) == (4.0, 64 * KIB, 2.0)
    m = prometheus.read_metrics(_md_answer({"md0": (3000, 256 * KIB)}), devices={"md0": "md0"})
    a = advise({"md0": md}, "us-east-1", metrics=m)["md0"]
    assert a.advice.spec == "raid0:chunk=64,members=2+gp3:size=2000,iops=7200,throughput=450"
    assert "observed p99 6000 IOPS and 375.0 MiB/s, plus 20% headroom: 7200 IOPS, 450.0 MiB/s" in a.reason
    assert a.load.startswith("the set's own counters (under md0, e.g. its md device's), each period's I/Os split")
    # Now (gp2: 250 MiB/s per member) the 30 minutes ask 375 x 1,800 = 675,000 MiB of each member,
    # served at 250 MiB/s: 2,700 s, throttled 45 minutes (to within a 60 s step: the last serves
    # just what is left, at the cap); the advice (450 MiB/s) none.
    assert a.current.throttled_minutes == pytest.approx(45.0, abs=1.0)
    assert a.advice.throttled_minutes == 0.0
    # us-east-1: gp3 $0.08/GiB, $0.005 per IOPS above 3,000, 40.96 per GiBps (0.04 per MiB/s)
    # above 125: per member 160 + 4,200 x 0.005 + 325 x 0.04 = 160 + 21 + 13 = $194; the set $388.
    p = ebssim.cost.prices("us-east-1")
    assert p.price("gp3.iops") == Decimal("0.005")
    assert a.advice.monthly_usd == pytest.approx(388.0)


def test_members_win_over_the_sets_own_counters() -> None:
    # The answer has md0 and both members' devices: members= says the members' are used.
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    answer = _md_answer({"md0": (4400, 16 * KIB), "nvme1n1": (1800, 16 * KIB), "nvme2n1": (2600, 16 * KIB)})
    m = prometheus.read_metrics(answer, devices={"md0": "md0", "nvme1n1": A, "nvme2n1": B})
    a = advise({"md0": md}, "us-east-1", metrics=m, members={"md0": [A, B]})["md0"]
    assert a.load.startswith("the set's demand: the sum of its 2 members' metrics")
    assert "observed p99 2200 IOPS" in a.reason  # (1,800 + 2,600) / 2, as above
    # The md device alone: 4,400 I/Os of 16 KiB, one piece each, half on each member: also 2,200.
    b = advise({"md0": md}, "us-east-1", metrics=m)["md0"]
    assert b.load.startswith("the set's own counters") and "observed p99 2200 IOPS" in b.reason


def test_set_and_plain_volumes_together() -> None:
    # A plain gp2 volume beside the set keeps its own metrics (member A's: 1,800 IOPS of 16 KiB,
    # + 20 % = 2,160, gp3's defaults).
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    fleet = advise({"md0": md, A: ebssim.gp2(500)}, "us-east-1", metrics=_members_metrics(), members={"md0": [A, B]})
    assert "observed p99 1800 IOPS" in fleet[A].reason
    assert "observed p99 2200 IOPS" in fleet["md0"].reason


@pytest.mark.parametrize(
    "members, words",
    [
        (None, r"volumes\['md0'\] is a striped set and the metrics hold neither its members' \(name them: members="),
        ({"md0": [A]}, r"members\['md0'\]=\['vol-0a+'\] must name each of the set's 2 members once"),
        ({"md0": [A, A]}, r"must name each of the set's 2 members once \(1 distinct ids given\)"),
        ({"md1": [A, B]}, r"members\['md1'\]: 'md1' is not a striped set among the volumes \(the sets: 'md0'\)"),
        ({"md0": A}, r"members\['md0'\]='vol-0a+' must be a list of the members' VolumeIds"),
        ({"md0": [A, "vol-0c"]}, r"members\['md0'\]: the metrics hold no VolumeReadOps/.* Sum of vol-0c \(they hold"),
    ],
)
def test_set_metrics_errors(members: Any, words: str) -> None:
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    with pytest.raises(ValueError, match=words):
        advise({"md0": md}, "us-east-1", metrics=_members_metrics(), members=members)


# --- the command line ------------------------------------------------------------------------


def test_cli_members_from_prometheus(cli, tmp_path) -> None:
    answer = _md_answer({"nvme1n1": (1800, 16 * KIB), "nvme2n1": (2600, 16 * KIB), "md0": (3000, 256 * KIB)})
    f = tmp_path / "answer.json"
    f.write_text(json.dumps(answer))
    base = ["advise", "--region", "us-east-1", "--metrics", str(f), "--output-format", "json"]
    devices = ["--device", f"nvme1n1={A}", "--device", f"node:9100/nvme2n1={B}", "--device", "md0=md1"]
    # md0 by its members (as the first test: gp3's defaults), md1 (another set on the same
    # answer's md0 device: 3,000 I/Os of 256 KiB) by its own counters (as the md0 test).
    r = cli(
        *base,
        *devices,
        "--members",
        f"md0={A},{B}",
        "md0=raid0:chunk=64,members=2+gp2:size=500",
        "md1=raid0:chunk=64,members=2+gp2:size=2000",
    )
    assert r.returncode == 0, r.stderr
    by = {v["volume_id"]: v for v in json.loads(r.stdout)["volumes"]}
    assert by["md0"]["advice"] == "raid0:chunk=64,members=2+gp3:size=500,iops=3000,throughput=125"
    assert by["md0"]["load"].startswith("the set's demand: the sum of its 2 members' metrics")
    assert by["md1"]["advice"] == "raid0:chunk=64,members=2+gp3:size=2000,iops=7200,throughput=450"
    assert by["md1"]["load"].startswith("the set's own counters (under md1")


def test_cli_members_errors(cli, tmp_path) -> None:
    base = ["advise", "--region", "us-east-1"]
    spec = "md0=raid0:chunk=64,members=2+gp2:size=500"
    r = cli(*base, "--members", f"md0={A},{B}", spec)
    assert r.returncode == 2 and "--members names whose metrics are a striped set's: it needs --metrics" in r.stderr
    f = tmp_path / "answer.json"
    f.write_text(json.dumps(_md_answer({"nvme1n1": (1800, 16 * KIB)})))
    r = cli(*base, "--metrics", str(f), "--device", f"nvme1n1={A}", "--members", "md0", spec)
    assert r.returncode == 2 and "--members 'md0': expected SET_ID=ID,ID,..." in r.stderr
    r = cli(*base, "--metrics", str(f), "--device", f"nvme1n1={A}", "--members", f"md0={A},{B}", spec)
    assert r.returncode == 2 and "members['md0']: the metrics hold no VolumeReadOps" in r.stderr


def _queue_frame(vid: str, ops_per_min: float, io_bytes: float, queue: float) -> pd.DataFrame:
    idx = pd.date_range("2024-05-01", periods=3, freq="1min", tz="UTC")
    wide = pd.DataFrame(
        {
            "VolumeReadOps": ops_per_min,
            "VolumeReadBytes": ops_per_min * io_bytes,
            "VolumeWriteOps": 0.0,
            "VolumeWriteBytes": 0.0,
            "VolumeQueueLength": queue,
        },
        index=idx,
    )
    return aws.metrics_from_wide(wide, vid)


def _queue_of(frame: pd.DataFrame) -> List[float]:
    return [float(v) for v in frame[frame.metric == "VolumeQueueLength"].value]


def test_member_metrics_carry_the_queue_length() -> None:
    md0 = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256)
    vid = "vol-0123456789abcdef0"
    # The md device's own: 1 MiB I/Os on 256 KiB chunks are 4 pieces, 2 on each member, so a
    # member holds 2 pieces for each set I/O outstanding: 2 x 10 = 20. At 16 KiB (one piece on
    # one member, share 1 / 2), 5.
    assert _queue_of(md0.member_metrics(_queue_frame(vid, 600.0, 2**20, 10.0), vid)) == [20.0] * 3
    assert _queue_of(md0.member_metrics(_queue_frame(vid, 600.0, 16384, 10.0), vid)) == [5.0] * 3
    # An idle queue stays idle.
    assert _queue_of(md0.member_metrics(_queue_frame(vid, 600.0, 16384, 0.0), vid)) == [0.0] * 3
    # The members' own: alike members, their mean.
    a, b = "vol-0aaaaaaaaaaaaaaaa", "vol-0bbbbbbbbbbbbbbbb"
    both = pd.concat([_queue_frame(a, 600.0, 16384, 4.0), _queue_frame(b, 600.0, 16384, 8.0)], ignore_index=True)
    assert _queue_of(md0.member_metrics(both, vid, [a, b])) == [6.0] * 3
    # Without a queue length, none is made up.
    plain = _queue_frame(vid, 600.0, 16384, 1.0)
    assert _queue_of(md0.member_metrics(plain[plain.metric != "VolumeQueueLength"], vid)) == []
