"""RDS storage as AWS documents it (docs/model.md, "RDS storage"): the volumes behind an RDS DB
instance's allocated storage and the DB instance class's EBS limits."""

from __future__ import annotations

from typing import Callable

import ebssim
import pytest
from ebssim.fio import volume_spec

# AWS RDS User Guide, "Amazon RDS DB instance storage", gp3 storage: "On gp3 storage volumes, Amazon
# RDS provides a baseline storage performance of 3000 IOPS and 125 MiBps. For every RDS DB engine except
# RDS for SQL Server, when the storage size for gp3 volumes reaches a certain threshold, the baseline
# storage performance increases to 12,000 IOPS and 500 MiBps. This is because of volume striping, where
# the storage uses four logical volumes instead of one." Table: "MariaDB, MySQL, and PostgreSQL | Less
# than 400 GiB | 3,000 IOPS/125 MiBps" and "400 GiB and higher | 12,000 IOPS/500 MiBps"; "Oracle | Less
# than 200 GiB | 3,000 IOPS/125 MiBps" and "200 GiB and higher | 12,000 IOPS/500 MiBps"; "SQL Server |
# 20 GiB-16 TiB | 3,000 IOPS/125 MiBps".


@pytest.mark.parametrize(
    "engine, below, at",
    [("postgres", 399, 400), ("mysql", 399, 400), ("mariadb", 20, 400), ("oracle-ee", 199, 200), ("db2-se", 399, 400)],
)
def test_gp3_baselines_below_and_above_the_threshold(engine: str, below: int, at: int) -> None:
    lo = ebssim.rds(engine, "gp3", below)
    # below: one gp3 volume of the whole storage at 3,000 IOPS / 125 MiB/s
    assert (lo.volumes.n, lo.baseline_iops, lo.max_throughput_mib_s) == (1, 3000, 125)
    assert volume_spec(lo.volumes.members[0]) == volume_spec(ebssim.gp3(below))
    hi = ebssim.rds(engine, "gp3", at)
    # at the threshold: four volumes of at / 4 GiB, 3,000 / 125 each: 4 x 3,000 = 12,000 IOPS, 4 x 125 = 500 MiB/s
    assert (hi.volumes.n, hi.baseline_iops, hi.max_throughput_mib_s) == (4, 12000, 500)
    assert volume_spec(hi.volumes.members[0]) == volume_spec(ebssim.gp3(at / 4, iops=3000, throughput_mib_s=125))


def test_sql_server_never_stripes() -> None:
    # "RDS for SQL Server doesn't support volume striping"; 3,000-16,000 IOPS, 125-1,000 MiB/s at any size.
    s = ebssim.rds("sqlserver-se", "gp3", 16384, iops=16000, throughput_mib_s=1000)
    assert (s.volumes.n, s.baseline_iops, s.max_throughput_mib_s) == (1, 16000, 1000)
    assert ebssim.rds("sqlserver-ex", "gp3", 20).baseline_iops == 3000


def test_gp3_provisioned_above_the_threshold() -> None:
    # 12,000-64,000 IOPS and 500-4,000 MiB/s, split over the four volumes: 64,000 / 4 = 16,000 and
    # 4,000 / 4 = 1,000 each, gp3's per-volume maxima.
    s = ebssim.rds("postgres", "gp3", 1000, iops=64000, throughput_mib_s=4000)
    assert volume_spec(s.volumes.members[0]) == volume_spec(ebssim.gp3(250, iops=16000, throughput_mib_s=1000))
    assert (s.max_iops, s.max_throughput_mib_s) == (64000, 4000)


def test_gp3_runs_at_the_documented_baselines() -> None:
    """16 KiB random reads at depth 256 on PostgreSQL gp3 of 300 and 400 GiB: one gp3 volume serves its
    3,000 IOPS (16 KiB x 3,000 = 46.9 MiB/s, under 125); four serve 4 x 3,000 = 12,000 (187.5 MiB/s, under
    500), each holding 64 in flight."""
    loop = ebssim.ClosedLoop(256, "16k")
    assert ebssim.rds("postgres", "gp3", 300).simulate(loop, duration_s=5).iops[0] == pytest.approx(3000.0)
    r = ebssim.rds("postgres", "gp3", 400).simulate(loop, duration_s=5)
    assert r.iops[0] == pytest.approx(12000.0)
    assert r.members[0].workload.in_flight == 64


def test_gp2_stripes_burst_to_twelve_thousand() -> None:
    # "for DB instances larger than 1 TiB where the storage is striped across four Amazon EBS volumes, burst
    # performance of up to 12,000 IOPS can be seen": 1,000 GiB as four gp2 of 250 GiB, each 3 x 250 = 750
    # IOPS baseline and 3,000 burst: 3,000 and 12,000 for the storage.
    s = ebssim.rds("mysql", "gp2", 1000)
    assert s.volumes.n == 4 and volume_spec(s.volumes.members[0]) == volume_spec(ebssim.gp2(250))
    assert (s.baseline_iops, s.max_iops) == (3000, 12000)
    assert volume_spec(ebssim.rds("mysql", "gp2", 300).volumes.members[0]) == volume_spec(ebssim.gp2(300))


def test_io1_splits_its_iops() -> None:
    s = ebssim.rds("postgres", "io1", 1000, iops=40000)
    assert volume_spec(s.volumes.members[0]) == volume_spec(ebssim.io1(250, 10000))
    io2 = ebssim.rds("postgres", "io2", 100, iops=5000)
    assert volume_spec(io2.volumes.members[0]) == volume_spec(ebssim.io2(100, 5000))


def test_db_instance_classes_are_their_ec2_types() -> None:
    i = ebssim.db_instance("db.r5b.large")
    assert i == ebssim.instance("r5b.large")
    s = ebssim.rds("postgres", "gp3", 400, instance_class="db.r5b.large")
    assert s.instance == i
    # 256 KiB writes at depth 256 on four gp3 of 3,000 IOPS / 125 MiB/s: each member's 125 MiB/s binds
    # first (500 writes/s of 256 KiB, 4 x 125 = 500 MiB/s in all, under r5b.large's 1,192 MiB/s).
    r = s.simulate(ebssim.ClosedLoop(256, "256k", read_fraction=0), duration_s=5)
    assert r.throughput_mib_s[0] == pytest.approx(500.0)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: ebssim.rds("postgres", "gp3", 300, iops=4000),
            "iops=4000: RDS provisions no gp3 IOPS or throughput below postgres's threshold of 400 GiB",
        ),
        (lambda: ebssim.rds("postgres", "gp3", 400, iops=64001), "iops=64001 is outside RDS's gp3 range 12000-64000"),
        (
            lambda: ebssim.rds("sqlserver-ee", "gp3", 100, throughput_mib_s=100),
            "throughput_mib_s=100 is outside RDS's gp3 range 125-1000",
        ),
        (lambda: ebssim.rds("postgres", "gp3", 19), "allocated_gib=19 must be a whole number of GiB from 20 to 65536"),
        (
            lambda: ebssim.rds("sqlserver-ee", "gp3", 16385),
            "allocated_gib=16385 must be a whole number of GiB from 20 to 16384",
        ),
        (
            lambda: ebssim.rds("postgres", "io1", 99, iops=1000),
            "allocated_gib=99 must be a whole number of GiB from 100",
        ),
        (lambda: ebssim.rds("postgres", "io1", 100), "iops is required for io1 storage"),
        (lambda: ebssim.rds("db2-se", "gp2", 100), "RDS for Db2 doesn't support gp2 storage"),
        (lambda: ebssim.rds("aurora", "gp3", 100), "engine='aurora' is not one of"),
        (lambda: ebssim.rds("postgres", "st1", 100), "storage_type='st1' is not one of gp2, gp3, io1, io2"),
        (lambda: ebssim.rds("postgres", "gp2", 100, iops=300), "iops=300: gp2 storage provisions no IOPS"),
        (lambda: ebssim.db_instance("r5b.large"), "instance_class='r5b.large' must be a DB instance class"),
        (lambda: ebssim.db_instance("db.r5.large.tpc1.mem2x"), "has no documented EC2 counterpart"),
        (lambda: ebssim.db_instance("db.r99.large"), "its EC2 counterpart 'r99.large' is not in the catalog"),
        (lambda: ebssim.rds_from_spec("rds:engine=postgres,type=gp3"), "size= is required"),
        (lambda: ebssim.rds_from_spec("rds:engine=postgres,type=gp3,size=1e3"), "size='1e3' is not a number"),
        (
            lambda: ebssim.rds_from_spec("rds:engine=postgres,type=gp3,size=100,class=db.m5.large"),
            "'class=db.m5.large' is not one of",
        ),
    ],
)
def test_bad_input_names_the_field(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


def test_spec_form() -> None:
    s = ebssim.rds_from_spec("rds:engine=oracle-se2,type=gp3,size=200GiB,iops=20000,throughput=800")
    assert volume_spec(s.volumes.members[0]) == volume_spec(ebssim.gp3(50, iops=5000, throughput_mib_s=200))
    assert s.engine == "oracle-se2" and s.allocated_gib == 200
