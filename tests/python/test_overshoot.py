"""Overshoot (``overshoot_s``, docs/model.md "Overshoot"): each rate limit of a volume is a token
bucket of ``overshoot_s`` seconds of the limit, refilled at the limit's rate while the volume runs
below it. Numbers are worked by hand from that rule."""

from __future__ import annotations

import pickle

import ebssim
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, gp2, gp3, io2, simulate
from ebssim.fio import volume_from_spec, volume_spec


def test_a_saved_second_doubles_the_first_held_step():
    # gp3 3,000 IOPS, 64 x 4 KiB in flight: step 0 serves 3,000 x (1 + 1) = 6,000, then 3,000.
    r = simulate(gp3(100, overshoot_s=1, overshoot_balance_s=1), ClosedLoop(64, "4k"), 10)
    assert r.iops[0] == pytest.approx(6000)
    assert list(r.iops[1:]) == pytest.approx([3000] * 9)
    assert r.latency_s[0] == pytest.approx(64 / 6000)
    assert r.totals.served_ops == pytest.approx(33000)


def test_none_by_default_and_none_saved_at_the_start():
    assert gp3(100).overshoot == 0.0
    assert simulate(gp3(100), ClosedLoop(64, "4k"), 10).totals.served_ops == pytest.approx(30000)
    # overshoot_s alone starts empty: a run held from its first step is the cap's.
    v = gp3(100, overshoot_s=1)
    assert v.overshoot == 1.0
    assert simulate(v, ClosedLoop(64, "4k"), 10).totals.served_ops == pytest.approx(30000)
    # After an idle second, the first held second serves 6,000.
    sim = ebssim.Simulation([v])
    sim.run([Idle()], 1, record=False)
    assert sim.run([ClosedLoop(64, "4k")], 2)[0].iops[0] == pytest.approx(6000)


def test_the_fio_front_end_gives_nitro_volumes_a_second():
    # 16 x 16 KiB in flight on gp3 3,000 IOPS for 10 s after 5 s of one I/O at a time (about
    # 1,940 IOPS, below the cap): the second run spends the second the first saved, 3,000 x 11 / 10.
    slow = "fio --name=a --filename=/dev/x --rw=randread --bs=16k --ioengine=psync --runtime=5 --time_based"
    deep = (
        "fio --name=b --filename=/dev/x --rw=randread --bs=16k --ioengine=libaio --iodepth=16 --runtime=10 --time_based"
    )
    jobs = ebssim.fio.predict([slow, deep], {"/dev/x": gp3(100)}, log_dir=None).jobs
    assert jobs[1].iops == pytest.approx(3000 * 11 / 10, rel=1e-9)
    # A stated depth wins; on a Xen instance none by default.
    stated = ebssim.fio.predict([slow, deep], {"/dev/x": gp3(100, overshoot_s=0)}, log_dir=None).jobs
    assert stated[1].iops == pytest.approx(3000, rel=1e-9)
    xen = ebssim.fio.predict([slow, deep], {"/dev/x": gp3(100)}, instance="c4.xlarge", log_dir=None).jobs
    assert xen[1].iops == pytest.approx(3000, rel=1e-9)


def test_time_below_the_cap_saves_its_unused_share():
    # io2 16,000 IOPS at dt = 0.1 s: 1,600 a step. 8,000 IOPS use half of it and save 0.05 s a
    # step; 0.4 s of them save 0.2 s, and the held step after serves 1,600 x (1 + 0.2 / 0.1) = 4,800.
    sim = ebssim.Simulation([io2(100, 16000, overshoot_s=1)], dt=0.1)
    sim.run([OpenLoop.constant(8000, "4k", duration_s=0.4, dt=0.1)], record=False)
    iops_s, bytes_s = sim.overshoot_saved_s(0)
    assert iops_s == pytest.approx(0.2)
    # 31.25 MiB/s of its 4,000 MiB/s: 0.4 x (1 - 31.25 / 4,000) of the throughput limit saved.
    assert bytes_s == pytest.approx(0.4 * (1 - 31.25 / 4000))
    r = sim.run([ClosedLoop(256, "4k")], 0.2)
    assert r[0].iops[0] * 0.1 == pytest.approx(4800)
    assert r[0].iops[1] * 0.1 == pytest.approx(1600)
    assert sim.overshoot_saved_s(0)[0] == 0.0


def test_gp2_extra_ios_cost_credits():
    # gp2 100 GiB: the first held step serves 6,000 from 5.4 M + 300 earned.
    sim = ebssim.Simulation([gp2(100, overshoot_s=1, overshoot_balance_s=1)])
    sim.run([ClosedLoop(64, "4k")], 1, record=False)
    assert sim.credits(0) == pytest.approx(5.4e6 + 300 - 6000)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"overshoot_s": -1}, "overshoot_s=-1 must be between 0 and 10 seconds"),
        ({"overshoot_s": 11}, "overshoot_s=11 must be between 0 and 10 seconds"),
        ({"overshoot_s": 1, "overshoot_balance_s": 2}, "overshoot_balance_s=2 must be between 0 and overshoot_s=1"),
        ({"overshoot_balance_s": 0.5}, "overshoot_balance_s=0.5 must be between 0 and overshoot_s=0"),
        ({"overshoot_s": float("nan")}, "overshoot_s=nan must be a finite number"),
        ({"overshoot_s": "1"}, "overshoot_s"),
    ],
)
def test_bad_overshoot_is_a_value_error_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gp3(100, **kwargs)


def test_spec_keys_round_trip_and_pickle():
    v = volume_from_spec("gp3:size=100,iops=4000,overshoot=1s,overshoot_balance=0.5")
    assert (v.overshoot_s, v.overshoot_balance_s, v.overshoot) == (1.0, 0.5, 1.0)
    assert volume_spec(v) == "gp3:size=100,iops=4000,throughput=125,overshoot=1,overshoot_balance=0.5"
    assert volume_spec(volume_from_spec(volume_spec(v))) == volume_spec(v)
    assert pickle.loads(pickle.dumps(v)) == v


def test_saved_seconds_index_errors():
    sim = ebssim.Simulation([gp3(100)])
    assert sim.overshoot_saved_s(-1) == (0.0, 0.0)
    with pytest.raises(IndexError, match="volume index 1 is out of range"):
        sim.overshoot_saved_s(1)
    # An idle step fills what it can, at most overshoot_s.
    sim2 = ebssim.Simulation([gp3(100, overshoot_s=0.5)])
    sim2.run([Idle()], 3, record=False)
    assert sim2.overshoot_saved_s(0) == (0.5, 0.5)
