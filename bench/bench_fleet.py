"""Fleet benchmark: many volumes with distinct traces, on 1 and 2 threads and on a Dask LocalCluster.

    .venv/bin/python bench/bench_fleet.py                         # 10,000 volumes x 30 days at 60 s: 432 M
    .venv/bin/python bench/bench_fleet.py --volumes 200 --days 2  # a quick check that it runs

Each volume is a gp2 or gp3 (sizes 50..1,000 GiB) under its own trace: a diurnal load (level,
phase and day shape per volume) with noise, fixed seed, so that volumes differ and some gp2
buckets run dry. Traces are built a batch at a time inside ebssim.fleet.simulate_fleet (a lazy
mapping), so memory stays bounded: the table shows the time to build all traces alone, which the
simulate_fleet rows include. The "engine" rows time one Simulation.run of all the volumes (totals
only) on traces that are windows of one long trace at distinct offsets (distinct traces without
building one array per volume): the step loop and its threads without Python per volume. Peak
memory is the process's maximum resident set (and, for Dask, the largest worker's). Needs the
``fleet`` extra (dask, distributed) for the Dask row.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from collections.abc import Mapping
from typing import Iterator, List

import ebssim
import numpy as np
from ebssim.fleet import FleetVolume, simulate_fleet, simulate_fleet_dask

DAY = 86400.0


class Fleet(Mapping[str, ebssim.OpenLoop]):
    """Traces by volume id, built when asked (deterministic: the same id gives the same trace)."""

    def __init__(self, volumes: int, days: float, dt: float, seed: int) -> None:
        self.n = int(round(days * DAY / dt))
        self.dt = dt
        self.ids = [f"vol-{i:05d}" for i in range(volumes)]
        rng = np.random.default_rng(seed)
        t = np.arange(self.n) * dt
        # A pool of noise and two day shapes; each volume picks its level, phase, shape and noise.
        self.noise = rng.normal(0.0, 1.0, (16, self.n))
        self.shapes = np.stack(
            [1 + 0.8 * np.sin(2 * np.pi * t / DAY), 1 + 0.6 * np.sin(2 * np.pi * t / DAY) ** 8 * 3 - 0.3]
        ).clip(0.05)
        self.seed = seed

    def volume(self, vid: str) -> ebssim.Volume:
        i = int(vid[4:])
        size = 50.0 + (i * 37) % 950
        return ebssim.gp2(size) if i % 3 else ebssim.gp3(size)

    def __getitem__(self, vid: str) -> ebssim.OpenLoop:
        # Each volume's own parameters, from its own seed: the same whichever process builds it.
        rng = np.random.default_rng([self.seed, int(vid[4:])])
        level = rng.uniform(100.0, 2500.0)  # mean IOPS
        phase = int(rng.integers(0, self.n))
        shape = int(rng.integers(0, 2))  # day shape
        noise = int(rng.integers(0, 16))
        io = (4096.0, 16384.0, 65536.0)[int(rng.integers(0, 3))]  # I/O size
        iops = level * np.roll(self.shapes[shape], phase) + 0.2 * level * self.noise[noise]
        ops = np.maximum(iops, 0.0) * self.dt
        return ebssim.OpenLoop(ops, ops * io, dt=self.dt)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def _items(part: List[tuple[int, float, float, int, str]]) -> List[FleetVolume]:
    """A bag partition's FleetVolume items, built on the worker (one Fleet per partition)."""
    part = list(part)
    if not part:
        return []
    volumes, days, dt, seed, _ = part[0]
    fleet = Fleet(volumes, days, dt, seed)
    return [FleetVolume(vid, fleet.volume(vid), fleet[vid]) for *_, vid in part]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--volumes", type=int, default=10_000)
    p.add_argument("--days", type=float, default=30.0)
    p.add_argument("--dt", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=2, help="Dask LocalCluster worker processes (0: skip Dask)")
    p.add_argument("--partitions", type=int, default=64, help="Dask bag partitions")
    a = p.parse_args(argv)
    fleet = Fleet(a.volumes, a.days, a.dt, a.seed)
    vols = {vid: fleet.volume(vid) for vid in fleet}
    vsteps = a.volumes * fleet.n
    print(f"{a.volumes:,} volumes x {a.days:g} days at dt={a.dt:g} s: {vsteps / 1e6:,.1f} M volume-steps")
    rows = []

    t = time.perf_counter()
    for vid in fleet:
        fleet[vid]
    rows.append(("build traces only (numpy)", "-", time.perf_counter() - t, math.nan, peak_mb()))

    # The engine alone: one Simulation of all the volumes (none shares an instance), each trace a
    # window at its own offset of one long diurnal, noisy trace (views, no copy), so that no
    # per-volume trace is built and the run is what is timed. Not a summary per volume.
    stride = 37
    t = np.arange(fleet.n + stride * a.volumes) * a.dt
    rng = np.random.default_rng(a.seed)
    base = np.maximum(0.0, 1200 * (1 + 0.8 * np.sin(2 * np.pi * t / DAY)) + rng.normal(0, 300, t.size)) * a.dt
    base_bytes = base * 16384
    windows = [
        ebssim.OpenLoop(base[i * stride : i * stride + fleet.n], base_bytes[i * stride : i * stride + fleet.n], dt=a.dt)
        for i in range(a.volumes)
    ]
    totals = {}
    for threads in (1, 2):
        sim = ebssim.Simulation(list(vols.values()), dt=a.dt)
        t0 = time.perf_counter()
        run = sim.run(windows, record=False, threads=threads)
        wall = time.perf_counter() - t0
        totals[threads] = [r.totals.served_ops for r in run]
        rows.append((f"engine: Simulation.run threads={threads}", str(threads), wall, vsteps / wall / 1e6, peak_mb()))
    same_engine = totals[1] == totals[2]
    del windows, base, base_bytes

    # Warm-up (imports of pandas, tqdm, the fleet module), not timed.
    few = fleet.ids[:2]
    simulate_fleet({v: vols[v] for v in few}, {v: fleet[v] for v in few})

    summaries = {}
    for threads in (1, 2):
        t = time.perf_counter()
        res = simulate_fleet(vols, fleet, threads=threads, batch_size=a.batch_size)
        wall = time.perf_counter() - t
        summaries[threads] = res.summary
        rows.append((f"simulate_fleet threads={threads}", str(threads), wall, vsteps / wall / 1e6, peak_mb()))
    same = summaries[1].equals(summaries[2])

    if a.workers > 0:
        import dask.bag as db
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None) as c:
            with Client(c) as client:
                client.run(lambda: __import__("ebssim.fleet"))  # warm-up: each worker imports ebssim once
                bag = db.from_sequence(
                    [(a.volumes, a.days, a.dt, a.seed, vid) for vid in fleet], npartitions=a.partitions
                ).map_partitions(_items)
                t = time.perf_counter()
                res = simulate_fleet_dask(vols, bag, batch_size=a.batch_size)
                wall = time.perf_counter() - t
                worker_peak = max(
                    client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0).values()
                )
        same = same and res.summary.equals(summaries[1])
        rows.append(
            (
                f"Dask LocalCluster {a.workers} workers x 1 thread",
                str(a.workers),
                wall,
                vsteps / wall / 1e6,
                worker_peak,
            )
        )

    print(f"{'run':<42} {'cores':>5} {'wall s':>8} {'M vsteps/s':>11} {'peak MB':>8}")
    for name, cores, wall, rate, mb in rows:
        print(f"{name:<42} {cores:>5} {wall:>8.2f} {rate:>11.1f} {mb:>8.0f}")
    print(f"summaries equal across runs: {same}; engine totals equal on 1 and 2 threads: {same_engine}")
    print("(peak MB: this process's maximum RSS so far; Dask: the largest worker's)")
    return 0 if same and same_engine else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
