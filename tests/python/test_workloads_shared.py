"""SharedClosedLoops: closed loops sharing one volume's limits, each served the same fraction of its offer.

Expected numbers come from the rules (docs/model.md, "Closed loops sharing one volume"): a loop
alone offers N / (s + z), s = 0.5 ms + I/O size / 1,024 MiB/s on gp3; the volume serves the sum up
to its limits and every loop gets the same fraction; latency by Little's law, N / served rate - z.
"""

from __future__ import annotations

import math

import ebssim
import pytest
from ebssim import ClosedLoop, SharedClosedLoops

S16 = 0.5e-3 + 16384 / (1024 * 2**20)  # gp3 service time of a 16 KiB I/O


def test_two_loops_capped_by_gp3_share_its_3000_iops_in_proportion_to_their_depth() -> None:
    w = SharedClosedLoops([ClosedLoop(8, "16k"), ClosedLoop(24, "16k")])
    vol = ebssim.gp3(100)
    assert w.offered_iops(vol) == pytest.approx([8 / S16, 24 / S16], rel=1e-12)
    r = ebssim.simulate(vol, w, duration_s=60)
    assert r.iops.mean() == pytest.approx(3000.0)
    a, b = w.split(r)
    f = 3000 / (32 / S16)
    assert a.fraction == pytest.approx(f, rel=1e-12) and b.fraction == pytest.approx(f, rel=1e-12)
    assert a.mean_iops == pytest.approx(750.0) and b.mean_iops == pytest.approx(2250.0)
    assert a.throughput_mib_s.mean() == pytest.approx(750 * 16 / 1024)
    assert a.mean_latency_ms == pytest.approx(8 / 750 * 1e3) and b.mean_latency_ms == pytest.approx(24 / 2250 * 1e3)


def test_unthrottled_loops_get_their_offer_at_their_service_time() -> None:
    # 1 + 2 users of 16 KiB on a gp3 with 16,000 IOPS: 3 / s = 5,822 IOPS, below every limit.
    w = SharedClosedLoops([ClosedLoop(1, "16k"), ClosedLoop(2, "16k")])
    r = ebssim.simulate(ebssim.gp3(100, iops=16000, throughput_mib_s=500), w, duration_s=10)
    a, b = w.split(r)
    assert a.mean_iops == pytest.approx(1 / S16) and b.mean_iops == pytest.approx(2 / S16)
    assert a.mean_latency_ms == pytest.approx(S16 * 1e3) and b.mean_latency_ms == pytest.approx(S16 * 1e3)


def test_caps_copies_and_think_time() -> None:
    # Loop a: 4 users, 1 ms think: 4 / (s + 1 ms) = 2,639.8 alone, capped at 500, in 2 copies.
    # Loop b: 16 users: 16 / s = 31,052. Total 2 x 500 + 31,052 = 32,052 offered of which gp3 serves
    # 3,000: f = 3,000 / 32,052; a copy of a gets 500 f, and waits 4 / (500 f) - 1 ms.
    a_loop, b_loop = ClosedLoop(4, "16k", think_time_ms=1.0), ClosedLoop(16, "16k")
    w = SharedClosedLoops([a_loop, b_loop], max_iops=[500, math.inf], copies=[2, 1])
    r = ebssim.simulate(ebssim.gp3(100), w, duration_s=30)
    total = 2 * 500 + 16 / S16
    f = 3000 / total
    a, b = w.split(r)
    assert a.mean_iops == pytest.approx(500 * f) and b.mean_iops == pytest.approx(16 / S16 * f)
    assert 2 * a.mean_iops + b.mean_iops == pytest.approx(3000.0)
    assert a.mean_latency_ms == pytest.approx((4 / (500 * f) - 1e-3) * 1e3)
    assert b.mean_latency_ms == pytest.approx(16 / (16 / S16 * f) * 1e3)
    # The volume ran their sum as one closed loop.
    assert r.workload == w.on(ebssim.gp3(100))
    assert "2 x 16 KiB random reads" in str(w)


def test_in_a_simulation_next_to_other_workloads() -> None:
    sim = ebssim.Simulation([ebssim.gp3(100), ebssim.gp3(100)])
    w = SharedClosedLoops([ClosedLoop(8, "16k"), ClosedLoop(24, "16k")])
    res = sim.run([w, ClosedLoop(32, "16k")], duration_s=10)
    assert [round(p.mean_iops) for p in w.split(res[0])] == [750, 2250]
    assert res[1].iops.mean() == pytest.approx(3000.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"loops": []}, r"loops=\[\] must be a non-empty sequence of ClosedLoop"),
        ({"loops": ClosedLoop(1)}, r"must be a non-empty sequence of ClosedLoop"),
        ({"loops": [ClosedLoop(1), "x"]}, r"loops\[1\]='x' must be a ClosedLoop"),
        ({"loops": [ClosedLoop(1)], "max_iops": [1, 2]}, r"max_iops has 2 entries but loops has 1"),
        ({"loops": [ClosedLoop(1)], "max_iops": [0]}, r"max_iops\[0\]=0 must be a positive number"),
        ({"loops": [ClosedLoop(1)], "max_iops": [math.nan]}, r"max_iops\[0\]=nan must be a positive number"),
        ({"loops": [ClosedLoop(1)], "max_iops": ["5"]}, r"max_iops\[0\]='5' must be a number of I/Os per second"),
        ({"loops": [ClosedLoop(1)], "copies": [1, 1]}, r"copies has 2 entries but loops has 1"),
        ({"loops": [ClosedLoop(1)], "copies": [0]}, r"copies\[0\]=0 must be at least 1"),
        ({"loops": [ClosedLoop(1)], "copies": [1.5]}, r"copies\[0\]=1.5 must be a whole number of copies"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        SharedClosedLoops(**kwargs)
