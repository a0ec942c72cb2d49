"""A striped set beside plain volumes on one instance (issue 23 item 1): ``Simulation({name: target})``,
``ebssim fio`` with several ``--volume`` targets, and what a fleet refuses. Numbers worked out by hand
from the rules (docs/model.md, "Instances", "Striped sets", "Assumptions for instances")."""

from __future__ import annotations

from typing import Tuple

import ebssim
import ebssim.fio
import numpy as np
import pytest
from ebssim.fleet import simulate_fleet

GP3 = ebssim.gp3(100)  # 3,000 IOPS, 125 MiB/s


def six_k(share: str = "proportional") -> ebssim.Instance:
    """An instance of 6,000 IOPS and 1,000 MB/s with no burst (baseline = maximum: no bucket)."""
    return ebssim.Instance("six-k", baseline_iops=6000, max_iops=6000, baseline_mb_s=1000, max_mb_s=1000, share=share)


def md0() -> ebssim.StripedSet:
    return ebssim.striped([GP3] * 2, chunk_kib=512)


def test_set_and_volume_share_the_instance_by_its_rule() -> None:
    """md0 (two gp3 3,000 IOPS) runs 4 KiB random reads at depth 64, one piece per I/O (4 KiB in 512 KiB
    chunks), so each member holds 64 x 1 / 2 = 32 in flight; a gp3 3,000 IOPS log volume runs depth 32.
    Unthrottled (32 / ~0.5 ms service) each asks far more than its 3,000 IOPS cap, so the three offer
    3,000 each, 9,000 against the instance's 6,000: proportional sharing keeps 6,000 / 9,000 = 2/3 of each,
    2,000 IOPS. The set completes min(2,000, 2,000) / member_share 0.5 = 4,000 I/Os per second, each waiting
    32 / 2,000 s = 16 ms on its member (Little's law), as the log volume's do."""
    sim = ebssim.Simulation({"md0": md0(), "log": GP3}, instance=six_k())
    run = sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.ClosedLoop(32, "4k")}, duration_s=10)
    s, log = run["md0"], run["log"]
    assert isinstance(s, ebssim.StripedResult) and isinstance(log, ebssim.VolumeResult)
    assert [float(m.iops[0]) for m in s.members] == pytest.approx([2000.0, 2000.0], rel=1e-12)
    assert s.iops[0] == pytest.approx(4000.0, rel=1e-12)
    assert s.latency_ms[0] == pytest.approx(16.0, rel=1e-12)
    assert float(log.iops[0]) == pytest.approx(2000.0, rel=1e-12)
    assert float(log.latency_ms[0]) == pytest.approx(16.0, rel=1e-12)
    assert s.mean_iops == pytest.approx(4000.0, rel=1e-12) and s.mean_latency_ms == pytest.approx(16.0, rel=1e-12)
    # The instance served 2,000 x 3 = 6,000 counted I/Os a second, its whole budget.
    assert float(run.instance.series.iops[0]) == pytest.approx(6000.0, rel=1e-12)
    # run[i] is still each volume stepped: md0's two members, then the log volume.
    assert len(run) == 3 and run[2] is log and tuple(run[:2]) == s.members
    assert list(run.targets) == ["md0", "log"]


@pytest.mark.parametrize(
    "share, member, log",
    [
        # offers 3,000 + 3,000 (members) + 6,000 (log, gp3 6,000 IOPS) = 12,000 on 6,000: each keeps half.
        ("proportional", 1500.0, 3000.0),
        # max-min fair: 6,000 / 3 = 2,000 each, below every offer: all get 2,000.
        ("fair", 2000.0, 2000.0),
    ],
)
def test_who_gets_what_under_each_sharing_rule(share: str, member: float, log: float) -> None:
    sim = ebssim.Simulation({"md0": md0(), "log": ebssim.gp3(100, iops=6000)}, instance=six_k(share))
    run = sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.ClosedLoop(32, "4k")}, duration_s=5)
    s = run["md0"]
    assert isinstance(s, ebssim.StripedResult)
    assert [float(m.iops[-1]) for m in s.members] == pytest.approx([member, member], rel=1e-12)
    assert float(s.iops[-1]) == pytest.approx(member / 0.5, rel=1e-12)  # member_share 0.5
    assert float(s.latency_ms[-1]) == pytest.approx(32 / member * 1e3, rel=1e-12)  # 32 in flight per member
    assert float(run["log"].iops[-1]) == pytest.approx(log, rel=1e-12)
    assert float(run["log"].latency_ms[-1]) == pytest.approx(32 / log * 1e3, rel=1e-12)


def test_a_mix_with_an_idle_volume_is_the_set_alone() -> None:
    """On m5.large (18,750 IOPS for 30 minutes, then 3,600) md0 of two gp3 16,000 IOPS with 16 KiB reads at
    depth 128 asks 32,000 and gets 18,750 until the instance's IO bucket of (18,750 - 3,600) x 1,800 I/Os runs
    dry at 1,800 s, then 3,600: each member half of it, 9,375 and then 1,800, so 9,375 / member_share 0.5 =
    18,750 and then 3,600 set I/Os. An idle gp2 volume beside it offers nothing and changes nothing."""
    big = ebssim.striped([ebssim.gp3(1000, iops=16000, throughput_mib_s=1000)] * 2)
    w = ebssim.ClosedLoop(128, "16k")
    alone = big.simulate(w, duration_s=3600, instance="m5.large")
    sim = ebssim.Simulation({"md0": big, "boot": ebssim.gp2(8)}, instance="m5.large")
    mixed = sim.run({"md0": w, "boot": ebssim.Idle()}, duration_s=3600)
    s = mixed["md0"]
    assert isinstance(s, ebssim.StripedResult)
    assert [float(m.iops[0]) for m in s.members] == pytest.approx([9375.0, 9375.0], rel=1e-12)
    assert s.window(0, 1800).iops == pytest.approx(18750.0, rel=1e-12)
    assert s.window(1800, 3600).iops == pytest.approx(3600.0, rel=1e-12)
    assert mixed.instance.cliff_time_s == pytest.approx(1800.0, rel=1e-9)
    for a, b in zip(alone.members, s.members):
        np.testing.assert_array_equal(a.iops, b.iops)
        np.testing.assert_array_equal(a.latency_s, b.latency_s)
        assert a.totals.served_ops == b.totals.served_ops
    np.testing.assert_array_equal(alone.iops, s.iops)
    assert mixed["boot"].totals.served_ops == 0.0
    # The idle gp2 8 GiB volume earns its 100 IOPS baseline in credits from a full bucket: it stays full.
    assert sim.credits(2) == 5.4e6


def test_state_carries_and_rest_names_the_targets() -> None:
    """Two gp2 100 GiB members (300 IOPS baseline, 3,000 burst, 5.4e6 credits) under 4 KiB reads at depth 64
    (32 per member) burst at 3,000 for 5.4e6 / 2,700 = 2,000 s each; a rest of 600 s earns 600 x 300."""
    gp2set = ebssim.striped([ebssim.gp2(100)] * 2)
    sim = ebssim.Simulation({"md0": gp2set, "log": GP3})
    run = sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.Idle()}, duration_s=2700)
    s = run["md0"]
    assert isinstance(s, ebssim.StripedResult)
    assert s.cliff_time_s == pytest.approx(2000.0, rel=1e-9)
    assert float(s.iops[0]) == pytest.approx(6000.0) and float(s.iops[-1]) == pytest.approx(600.0)
    rest = sim.rest(600)
    assert isinstance(rest["md0"], ebssim.StripedResult) and isinstance(rest["log"], ebssim.VolumeResult)
    assert rest["md0"].mean_iops == 0.0
    assert [sim.credits(i) for i in range(2)] == pytest.approx([180000.0, 180000.0], rel=1e-12)


def test_named_plain_volumes_take_a_list_in_order() -> None:
    sim = ebssim.Simulation({"data": ebssim.gp3(100, iops=6000), "log": GP3})
    run = sim.run([ebssim.ClosedLoop(32, "4k"), ebssim.Idle()], duration_s=3)
    assert run["data"] is run[0] and run["log"] is run[1]
    assert float(run["data"].iops[0]) == 6000.0  # its own cap, no instance
    trace = ebssim.OpenLoop.constant(1000, "4k", 4)
    rep = sim.replay({"data": trace, "log": trace})
    assert rep["log"].totals.served_ops == pytest.approx(4000.0)  # 1,000 a second for 4 s, under the cap


def test_reprs_name_the_targets() -> None:
    sim = ebssim.Simulation({"md0": md0(), "log": GP3}, instance=six_k())
    run = sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.ClosedLoop(32, "4k")}, duration_s=10)
    text = repr(run)
    assert len(text) <= 400
    assert (
        "['md0'] RAID-0 of 2 x gp3 100 GiB: 4,000 IOPS, 16 ms, no cliff" in text
        and "['log'] gp3 100 GiB: 2,000 IOPS" in text
    )
    html = run._repr_html_()
    assert ">md0<" in html and ">md0[0]<" in html and ">md0[1]<" in html and ">log<" in html


@pytest.mark.parametrize(
    "targets, message",
    [
        ({}, "volumes is empty"),
        ({1: GP3}, "the name 1 must be a non-empty string"),
        ({"": GP3}, "the name '' must be a non-empty string"),
        ({"log": "gp3"}, r"volumes\['log'\] must be an ebssim.Volume or a striped set"),
        ([md0(), GP3], r"volumes\[0\] is a StripedSet: give the targets by name"),
    ],
)
def test_bad_targets_name_the_field(targets: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ebssim.Simulation(targets)  # type: ignore[arg-type]


def _mix() -> ebssim.Simulation:
    return ebssim.Simulation({"md0": md0(), "log": GP3}, instance=six_k())


@pytest.mark.parametrize(
    "workloads, message",
    [
        ({"md0": ebssim.Idle()}, "workloads has no workload for 'log'"),
        ({"md0": ebssim.Idle(), "log": ebssim.Idle(), "md1": ebssim.Idle()}, "workloads names 'md1', which is not"),
        (
            [ebssim.Idle(), ebssim.Idle()],
            "workloads must be a mapping of target names to workloads: the simulation has the striped set 'md0'",
        ),
        (
            {"md0": ebssim.PhasedClosedLoop(np.array([4.0])), "log": ebssim.Idle()},
            r"workloads\['md0'\]: workload=PhasedClosedLoop: a striped set runs a ClosedLoop, an OpenLoop",
        ),
        ({"md0": ebssim.Idle(), "log": "randread"}, r"workloads\['log'\]='randread' must be a ClosedLoop"),
    ],
)
def test_bad_workloads_name_the_target(workloads: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _mix().run(workloads, duration_s=1)  # type: ignore[arg-type]


def test_other_misuses_are_named() -> None:
    with pytest.raises(ValueError, match=r"traces\['md0'\]=.* must be an OpenLoop: a replay goes on after"):
        _mix().replay({"md0": ebssim.ClosedLoop(1, "4k"), "log": ebssim.OpenLoop([1.0], [4096.0])})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="workloads is a mapping but the simulation's volumes are a list"):
        ebssim.Simulation([GP3]).run({"a": ebssim.Idle()}, duration_s=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"volume is a StripedSet: simulate\(\) runs one volume"):
        ebssim.simulate(md0(), ebssim.ClosedLoop(1, "4k"), duration_s=1)  # type: ignore[arg-type]
    run = _mix().rest(1)
    with pytest.raises(KeyError, match="'md1' is not a target of this run: its targets are 'md0', 'log'"):
        run["md1"]
    with pytest.raises(KeyError, match="this run's volumes have no names"):
        ebssim.Simulation([GP3]).rest(1)["log"]


def test_fio_with_a_striped_target_beside_a_volume() -> None:
    """ebssim fio with --volume /dev/md0=raid0... and --volume /dev/nvme1n1=gp3 on one instance: one fio run
    of two jobs, 4 KiB random reads at depth 64 on md0 and depth 32 on the gp3 6,000 IOPS volume, on the
    6,000 IOPS instance. As in test_who_gets_what_under_each_sharing_rule: proportional, 1,500 per member, so
    md0's job completes 1,500 / 0.5 = 3,000 IOPS at 64 / 3,000 s = 21.3 ms, the log's 3,000 at 32 / 3,000 s =
    10.7 ms; fair, 2,000 each: md0 4,000 IOPS at 64 / 4,000 s = 16 ms, the log 2,000 at 16 ms."""
    run = (
        "fio --direct=1 --ioengine=libaio --rw=randread --bs=4k --time_based --runtime=10 "
        "--name=data --filename=/dev/md0 --iodepth=64 --name=log --filename=/dev/nvme1n1 --iodepth=32"
    )
    specs = ["/dev/md0=raid0:chunk=512,members=2+gp3:size=100", "/dev/nvme1n1=gp3:size=100,iops=6000"]
    vols = dict(ebssim.fio.parse_volume_spec(a) for a in specs)
    for share, expect in (
        ("proportional", ((3000.0, 64 / 3000), (3000.0, 32 / 3000))),
        ("fair", ((4000.0, 0.016), (2000.0, 0.016))),
    ):
        jobs = ebssim.fio.predict([run], vols, instance=six_k(share), log_dir=None).jobs
        got: Tuple[float, ...] = tuple(x for j in jobs for x in (j.iops, j.latency_mean_s))
        assert [j.name for j in jobs] == ["data", "log"]
        assert got == pytest.approx(sum(expect, ()), rel=1e-9), share


def test_fleet_refuses_a_striped_set_and_says_why() -> None:
    loads = {"md0": ebssim.ClosedLoop(8, "4k")}
    with pytest.raises(
        ValueError,
        match=r"volumes\['md0'\] is a StripedSet: a fleet takes EBS volumes, each with its "
        r"own trace, and a striped set is not supported",
    ):
        simulate_fleet({"md0": md0()}, loads, duration_s=10)  # type: ignore[dict-item]
