"""Many independent volumes in one Simulation, totals only: the engine steps their open-loop
traces several at a time (the lockstep kernel, docs/design.md). The results must be those of
each volume run alone, to the last bit: the per-volume runs are the independent path."""

from __future__ import annotations

import math

import ebssim
import numpy as np
import pytest

TOTALS = (
    "demanded_ops",
    "demanded_bytes",
    "served_ops",
    "served_bytes",
    "served_counted",
    "latency_ops_s",
    "backlog_ops",
    "backlog_bytes",
    "credits_end",
)


def _volumes() -> list[ebssim.Volume]:
    # Every type, small gp2 and low balances so that buckets run dry and refill.
    return [
        ebssim.gp2(5, burst_balance_pct=1),
        ebssim.gp2(100),
        ebssim.gp3(100, iops=4000, throughput_mib_s=200),
        ebssim.io1(100, 3000),
        ebssim.io2(200, 10000),
        ebssim.st1(500, burst_balance_pct=2),
        ebssim.sc1(1000),
        ebssim.standard(50, burst_balance_pct=5),
        ebssim.gp2(20, burst_balance_pct=0),
        ebssim.gp3(50),
        ebssim.gp2(1000),
    ]


def _workloads(n: int, count: int) -> list[ebssim.OpenLoop]:
    rng = np.random.default_rng(12)
    out = []
    for i in range(count):
        # Rests and bursts far above any burst rate, noisy in between; I/O sizes 4 KiB..1 MiB.
        level = rng.choice([0.0, 50.0, 3000.0, 20000.0], size=n // 50 + 1).repeat(50)[:n]
        ops = np.floor(level * rng.uniform(0.0, 2.0, n))
        size = 4096.0 * 2.0 ** rng.integers(0, 9, n)
        pattern = "sequential" if i % 3 == 2 else "random"
        kwargs = {"max_in_flight": 16.0} if i % 4 == 3 else {}
        service = 2.0 if i % 5 == 4 else None
        out.append(ebssim.OpenLoop(ops, ops * size, pattern=pattern, service_time_ms=service, **kwargs))
    return out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("lockstep", [True, False])
def test_many_volumes_equal_each_alone_exactly(lockstep: bool) -> None:
    vols = _volumes()
    n = 4000
    ws = _workloads(n, len(vols))
    together = ebssim.Simulation(vols).run(ws, record=False, lockstep=lockstep)
    cliffs = 0
    for i, (v, w) in enumerate(zip(vols, ws)):
        # The lockstep kernel steps every step; alone, a volume jumps a backlog draining at its
        # cap, which agrees with stepping to rounding only (docs/model.md): compare it stepped.
        alone = ebssim.Simulation([v]).run([w], record=False, jump=not lockstep)[0]
        got = together[i].totals
        for field in TOTALS:
            assert _same(getattr(got, field), getattr(alone.totals, field)), (i, field)
        assert _same(got.cliff_time_s, alone.totals.cliff_time_s), i
        assert got.steps_bound == alone.totals.steps_bound, i
        assert got.cliffs == alone.totals.cliffs, i
        cliffs += len(got.cliffs)
    assert cliffs >= 3  # buckets ran dry, so the episode bookkeeping was compared too


def test_lockstep_flag_is_checked() -> None:
    sim = ebssim.Simulation([ebssim.gp3(10), ebssim.gp3(10)])
    w = ebssim.OpenLoop(np.ones(3), np.ones(3) * 4096)
    with pytest.raises(ValueError, match="lockstep=1 must be True or False"):
        sim.run([w, w], record=False, lockstep=1)  # type: ignore[arg-type]
