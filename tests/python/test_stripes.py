"""Striped sets (RAID-0 of alike volumes): the splitting rule, runs per member and for the set,
the SPEC form, cost and the fio front end. Numbers worked out by hand from the rules
(docs/model.md, "Striped sets")."""

from __future__ import annotations

import math
from typing import Tuple

import ebssim
import ebssim.fio
import pytest
from ebssim.fio import volume_spec
from ebssim.stripes import target_from_spec, target_spec

GP3_4000 = ebssim.gp3(202, iops=4000, throughput_mib_s=1000)


def md0() -> ebssim.StripedSet:
    return ebssim.striped([GP3_4000] * 2, chunk_kib=512)


def test_split_follows_the_chunks() -> None:
    # 4 KiB at 4 KiB offsets in 512 KiB chunks: gcd 4096, (1 - 1) x 4096 / 524288 = 0 boundaries.
    s = md0().split("4k")
    assert (s.pieces_per_io, s.piece_bytes, s.member_share, s.members) == (1.0, 4096.0, 0.5, 2)
    # 1 MiB at 1 MiB offsets in 256 KiB chunks: (4 - 1) x 262144 / 262144 = 3 boundaries, 4 pieces,
    # 4 / 2 = 2 on each member.
    s = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256).split("1m")
    assert (s.pieces_per_io, s.piece_bytes, s.member_share) == (4.0, 262144.0, 2.0)
    # 12 KiB at 12 KiB offsets in 8 KiB chunks: gcd 4096, (3 - 1) x 4096 / 8192 = 1 boundary: 2 pieces.
    assert ebssim.striped([ebssim.gp3(100)] * 3, chunk_kib=8).split("12k").pieces_per_io == pytest.approx(2.0)
    # 256 KiB at 4 KiB offsets in 512 KiB chunks: (64 - 1) x 4096 / 524288 = 0.4921875 boundaries.
    assert md0().split("256k", align="4k").pieces_per_io == pytest.approx(1.4921875)


def test_member_workload_carries_its_share_in_flight() -> None:
    member = md0().member_workload(ebssim.ClosedLoop(256, "4k", read_fraction=0, think_time_ms=1))
    assert isinstance(member, ebssim.ClosedLoop)
    # 256 x 1 piece / 2 members = 128 in flight, 4 KiB each, the set's mix and think time.
    assert (member.in_flight, member.io_bytes, member.read_fraction, member.think_time_ms) == (128, 4096, 0, 1)
    assert md0().member_workload(ebssim.Idle()) == ebssim.Idle()


def test_md0_of_two_gp3_small_writes() -> None:
    """fio's 16 jobs x iodepth 16 of 4 KiB random writes on the RAID-0 of two gp3 4,000 IOPS volumes
    (data set 05's md0): each member holds 128 in flight and its 4,000 IOPS binds (128 / 0.5 ms is far
    above), so the set completes 2 x 4,000 = 8,000 I/Os per second, 8,000 x 4 KiB = 31.25 MiB/s, and each
    waits 128 / 4,000 s = 32 ms (Little's law on a member; on the set: 256 / 8,000 s, the same)."""
    r = md0().simulate(ebssim.ClosedLoop(256, "4k", read_fraction=0), duration_s=10, instance="r5b.large")
    assert [m.iops[0] for m in r.members] == [4000.0, 4000.0]
    assert r.iops[0] == pytest.approx(8000.0)
    assert r.throughput_mib_s[0] == pytest.approx(31.25)
    assert r.latency_ms[0] == pytest.approx(32.0)
    w = r.window(0, 10)
    assert (w.iops, w.throughput_mib_s, w.latency_ms) == pytest.approx((8000.0, 31.25, 32.0))
    assert r.cliff_time_s is None  # gp3 has no bucket; r5b.large's stays above empty in 10 s


def test_md0_256k_writes_share_the_instance() -> None:
    """256 KiB writes: each member alone would reach 4,000 x 256 KiB = 1,000 MiB/s (both caps at once),
    2,000 MiB/s together, above r5b.large's burst of 1,250 MB/s = 1,250e6 / 2^20 = 1,192.09 MiB/s. The
    members share it equally (alike demands): 596.05 MiB/s = 2,384.19 writes/s each, 4,768.37 for the
    set, each waiting 128 / 2,384.19 s = 53.69 ms."""
    r = md0().simulate(ebssim.ClosedLoop(256, "256k", read_fraction=0), duration_s=10, instance="r5b.large")
    mib_s = 1250e6 / 2**20
    assert r.throughput_mib_s[0] == pytest.approx(mib_s, rel=1e-9)
    assert r.iops[0] == pytest.approx(mib_s * 4, rel=1e-9)  # 256 KiB = 1/4 MiB
    assert r.members[0].iops[0] == pytest.approx(mib_s * 2, rel=1e-9)
    assert r.latency_ms[0] == pytest.approx(128 / (mib_s * 2) * 1e3, rel=1e-9)


def test_large_io_splits_into_pieces() -> None:
    """8 in flight of 1 MiB reads over two gp3 100 GiB (3,000 IOPS, 125 MiB/s) in 256 KiB chunks: 4 pieces
    of 256 KiB, 2 per member, so each member holds 8 x 2 = 16 pieces; its 125 MiB/s is 500 pieces of
    256 KiB a second (500 counted I/Os, under 3,000), so the set completes 500 / 2 = 250 MiB reads a
    second (2 x 125 MiB/s), each waiting 16 / 500 s = 32 ms (on the set: 8 / 250 s)."""
    s = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256)
    r = s.simulate(ebssim.ClosedLoop(8, "1m"), duration_s=5)
    assert r.members[0].workload.in_flight == 16
    assert r.members[0].iops[0] == pytest.approx(500.0)
    assert r.iops[0] == pytest.approx(250.0)
    assert r.throughput_mib_s[0] == pytest.approx(250.0)
    assert r.latency_ms[0] == pytest.approx(32.0)


def test_gp2_members_keep_their_own_buckets() -> None:
    """Four gp2 100 GiB members under 4 KiB reads at depth 128: each holds 32 and bursts at 3,000 until
    its own 5.4e6 credits run out, 5.4e6 / (3,000 - 300) = 2,000 s, then serves its 300 baseline: the set
    falls from 12,000 to 1,200 IOPS at 2,000 s."""
    s = ebssim.striped([ebssim.gp2(100)] * 4, chunk_kib=64)
    r = s.simulate(ebssim.ClosedLoop(128, "4k"), duration_s=2100)
    assert r.cliff_time_s == 2000.0
    assert all(m.cliff_time_s == 2000.0 for m in r.members)
    assert r.iops[0] == pytest.approx(12000.0)
    assert r.iops[-1] == pytest.approx(1200.0)


def test_sums_of_the_members() -> None:
    s = md0()
    assert (s.n, s.size_gib, s.baseline_iops, s.max_iops, s.max_throughput_mib_s) == (2, 404, 8000, 8000, 2000)
    assert s.chunk_bytes == 512 * 1024


def test_cost_is_the_sum_of_the_members() -> None:
    # us-east-1 gp3 (prices of 2023-02-16): 0.08 per GiB-month, 0.005 per IOPS above 3,000, 0.04 per
    # MiB/s above 125: 202 x 0.08 + 1,000 x 0.005 + 875 x 0.04 = 16.16 + 5 + 35 = 56.16 per member.
    one = ebssim.cost.monthly_cost(GP3_4000, "us-east-1")
    assert one.monthly_usd == 56.16
    c = md0().monthly_cost("us-east-1")
    assert c.monthly_usd == 112.32
    assert c.breakdown == {"storage": 32.32, "iops": 10.0, "throughput": 70.0, "io_requests": 0.0}
    assert c.spec == "raid0:chunk=512,members=2+gp3:size=202,iops=4000,throughput=1000"


def test_spec_round_trip_and_forms() -> None:
    spec = "raid0:chunk=512+gp3:size=202,iops=4000,throughput=1000+gp3:size=202,iops=4000,throughput=1000"
    s = target_from_spec(spec)
    assert s == md0()
    assert target_from_spec(target_spec(s)) == s
    assert target_from_spec("raid0:chunk=512KiB,members=2+gp3:size=202,iops=4000,throughput=1000") == s
    assert target_from_spec("raid0+gp3+gp3").chunk_kib == 512  # mdadm's default
    plain = target_from_spec("gp3:size=100")  # a plain volume stays a volume
    assert isinstance(plain, ebssim.Volume) and volume_spec(plain) == volume_spec(ebssim.gp3(100))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("raid0:chunk=6+gp3+gp3", "chunk_bytes=6144 must be a multiple of 4 KiB"),
        ("raid0:chunk=512", "a striped set names its members after '+'"),
        ("raid0:members=3+gp3+gp3", "members=3 but 2 member SPECs are given"),
        ("raid0:members=0+gp3", "members=0 must be a whole number >= 1"),
        ("raid0:stripe=4+gp3", "'stripe=4' is not one of chunk=KIB, members=N"),
        ("raid0:chunk=1e3+gp3", "chunk='1e3' is not a number"),
        ("raid0+gp3:size=100+gp3:size=200", "members[1]='gp3:size=200,iops=3000,throughput=125' differs from"),
        ("raid0+gp4", "member 0: volume type 'gp4' is not one of"),
        ("gp3:size=100+gp3", "size='100+gp3' is not a number"),
    ],
)
def test_bad_specs_name_the_field(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match="SPEC") as e:
        target_from_spec(spec)
    assert message in str(e.value)


def test_bad_sets_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"members\[1\]='io1:size=100,iops=1000' differs from members\[0\]="):
        ebssim.striped([ebssim.gp3(100), ebssim.io1(100, 1000)])
    with pytest.raises(ValueError, match="members is empty"):
        ebssim.striped([])
    with pytest.raises(ValueError, match=r"members\[1\] must be an ebssim.Volume, got str"):
        ebssim.striped([ebssim.gp3(100), "gp3"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="chunk_kib=0: chunk_bytes=0 must be > 0"):
        ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=0)
    with pytest.raises(ValueError, match="chunk_kib=True"):
        ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=True)
    phased = ebssim.PhasedClosedLoop([4.0])
    with pytest.raises(ValueError, match="workload=PhasedClosedLoop: a striped set runs a ClosedLoop, an OpenLoop"):
        md0().simulate(phased, duration_s=1)  # type: ignore[arg-type]


def test_fio_on_md0() -> None:
    """ebssim fio on /dev/md0 (data set 05's 4 KiB job): the job runs on both members, 128 in flight each;
    fio's figures are the set's: 8,000 IOPS, lat 256 / 8,000 s = 32 ms."""
    run = (
        "fio --name=4kb_16threads --filename=/dev/md0 --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite "
        "--bs=4k --size=1G --numjobs=16 --time_based=1 --runtime=10 --norandommap=1 --group_reporting=1"
    )
    target, vol = ebssim.fio.parse_volume_spec(
        "/dev/md0=raid0:chunk=512,members=2+gp3:size=202,iops=4000,throughput=1000"
    )
    assert isinstance(vol, ebssim.StripedSet)
    job = ebssim.fio.predict([run], {target: vol}, instance="r5b.large", log_dir=None).jobs[0]
    assert job.iops == pytest.approx(8000.0, rel=1e-9)
    assert job.latency_mean_s == pytest.approx(0.032, rel=1e-9)
    assert job.io_bytes == pytest.approx(8000.0 * 10 * 4096, rel=1e-9)
    # The same job on an RDS target: PostgreSQL gp3 at 400 GiB is four gp3 of 3,000 IOPS: 12,000 IOPS,
    # lat 256 / 12,000 s = 21.33 ms.
    target, vol = ebssim.fio.parse_volume_spec("/dev/md0=rds:engine=postgres,type=gp3,size=400")
    job = ebssim.fio.predict([run], {target: vol}, log_dir=None).jobs[0]
    assert job.iops == pytest.approx(12000.0, rel=1e-9)
    assert job.latency_mean_s == pytest.approx(256 / 12000, rel=1e-9)


def test_fio_large_blocks_on_a_striped_set() -> None:
    """1 MiB random reads, iodepth 8, on two gp3 100 GiB in 256 KiB chunks: as in
    test_large_io_splits_into_pieces, 250 reads of 1 MiB a second, 8 / 250 s = 32 ms each."""
    run = (
        "fio --name=big --filename=/dev/md1 --rw=randread --bs=1m --ioengine=libaio --iodepth=8 --runtime=5 "
        "--time_based"
    )
    _, vol = ebssim.fio.parse_volume_spec("/dev/md1=raid0:chunk=256,members=2+gp3:size=100")
    job = ebssim.fio.predict([run], {"/dev/md1": vol}, log_dir=None).jobs[0]
    assert job.iops == pytest.approx(250.0, rel=1e-9)
    assert job.latency_mean_s == pytest.approx(0.032, rel=1e-9)
    assert job.io_bytes / job.runtime_s / 2**20 == pytest.approx(250.0, rel=1e-9)
    assert not math.isnan(job.percentiles_s[99.0])


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> Tuple[int, str, str]:
    from ebssim.cli import main

    try:
        rc = main(list(args))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def test_cost_cli_prices_a_striped_set(capsys: pytest.CaptureFixture[str]) -> None:
    # 2 x 56.16 (test_cost_is_the_sum_of_the_members) = 112.32, plus gp3 100 GiB at 100 x 0.08 = 8.00.
    rc, out, err = _cli(
        capsys, "cost", "--region", "us-east-1", "raid0:members=2+" + volume_spec(GP3_4000), "gp3:size=100"
    )
    assert rc == 0, err
    assert "112.32" in out and "  total" in out and "120.32" in out


def test_fio_cli_on_a_striped_target(capsys: pytest.CaptureFixture[str]) -> None:
    run = (
        "fio --name=x --filename=/dev/md0 --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite --bs=4k "
        "--numjobs=16 --time_based --runtime=10 --group_reporting"
    )
    spec = "/dev/md0=raid0:chunk=512,members=2+" + volume_spec(GP3_4000)
    rc, out, err = _cli(capsys, "fio", "--no-logs", "--instance", "r5b.large", "--volume", spec, run)
    assert rc == 0, err
    assert "IOPS=8000," in out  # 2 x 4,000 (test_fio_on_md0)
    rc, out, err = _cli(capsys, "fio", "--no-logs", "--volume", "/dev/md0=raid0:chunk=5+gp3", run)
    assert rc == 2 and out == ""
    assert "chunk_bytes=5120 must be a multiple of 4 KiB" in err and "--volume '/dev/md0=raid0:chunk=5+gp3'" in err
