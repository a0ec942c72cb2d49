#!/usr/bin/env python3
"""A fleet given as one long DataFrame against the same fleet given as workloads by id (issue 22).

    .venv/bin/python bench/bench_fleet_frame.py                     # 1,000 gp2 volumes x 1,440 minutes
    .venv/bin/python bench/bench_fleet_frame.py --volumes 200 --repeats 3

Goal: ``ebssim.fleet.simulate_fleet(volumes, long_frame)`` takes at most twice as long as
``simulate_fleet(volumes, workloads)`` where ``workloads`` holds the same traces by volume id,
already built (so the long frame's side also pays for reading every trace; the other side only
simulates). The fleet: gp2 volumes of 50..1,000 GiB, each with a day of one-minute rows of
``read_ops`` (CloudWatch's Sum per minute: a diurnal load of its own level and phase, with noise,
fixed seed), I/Os of 4 KiB (``io_size="4k"``). Three shapes of the frame:

- ``read_ops``: columns ``volume_id``, ``time``, ``read_ops``, each volume's rows together;
- ``4 columns``: ``read_ops``, ``write_ops``, ``read_bytes``, ``write_bytes`` (no ``io_size``);
- ``by time``: the ``read_ops`` frame sorted by time, so the volumes' rows interleave.

Each case first checks that both give the same summary, bit for bit, then times both, best of
``--repeats``. Exit status 1 if a summary differs or a case misses the goal.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Tuple

import ebssim
import numpy as np
import pandas as pd
from _timing import interleaved_best
from ebssim.fleet import simulate_fleet

GOAL = 2.0  # the long frame's time / the workloads' time, at most


def fleet(volumes: int, rows: int, seed: int) -> Tuple[Dict[str, ebssim.Volume], pd.DataFrame]:
    """The volumes and one long frame of their one-minute Sums (volume by volume)."""
    rng = np.random.default_rng(seed)
    ids = [f"vol-{i:05x}" for i in range(volumes)]
    vols = {v: ebssim.gp2(50.0 + (37 * i) % 950) for i, v in enumerate(ids)}
    t = np.arange(rows)
    level = rng.uniform(100.0, 2500.0, volumes)[:, None]  # mean IOPS
    phase = rng.uniform(0.0, 2 * np.pi, volumes)[:, None]
    iops = level * (1 + 0.8 * np.sin(2 * np.pi * t / rows + phase)) + rng.normal(0, 50, (volumes, rows))
    reads = np.floor(np.maximum(iops, 0.0) * 60.0)  # I/Os per minute
    writes = np.floor(reads * rng.uniform(0.0, 0.5, (volumes, 1)))
    times = pd.date_range("2024-05-01", periods=rows, freq="1min", tz="UTC")
    frame = pd.DataFrame(
        {
            "volume_id": np.repeat(ids, rows),
            "time": np.tile(times, volumes),
            "read_ops": reads.ravel(),
            "write_ops": writes.ravel(),
            "read_bytes": reads.ravel() * 4096.0,
            "write_bytes": writes.ravel() * 16384.0,
        }
    )
    return vols, frame


def by_id(frame: pd.DataFrame, **trace: Any) -> Dict[str, ebssim.OpenLoop]:
    """The same traces, one per volume id, built as a user would from each volume's rows."""
    return {
        str(v): ebssim.OpenLoop.from_pandas(rows.drop(columns="volume_id").set_index("time"), **trace)
        for v, rows in frame.groupby("volume_id", sort=False)
    }


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--volumes", type=int, default=1000)
    p.add_argument("--rows", type=int, default=1440, help="one-minute rows per volume (default a day)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=22)
    a = p.parse_args(argv)
    vols, frame = fleet(a.volumes, a.rows, a.seed)
    reads = frame[["volume_id", "time", "read_ops"]]
    cases = [
        ("read_ops", reads, {"io_size": "4k"}),
        ("4 columns", frame, {}),
        ("by time", reads.sort_values("time", kind="stable"), {"io_size": "4k"}),
    ]
    simulate_fleet(dict(list(vols.items())[:2]), reads[reads.volume_id.isin(list(vols)[:2])], io_size="4k")  # warm-up
    print(
        f"{a.volumes:,} gp2 volumes x {a.rows:,} one-minute rows ({len(frame):,} rows); "
        f"best of {a.repeats}; goal: long frame <= {GOAL:g}x workloads by id"
    )
    print(f"{'frame':<10} {'long frame s':>12} {'by id s':>9} {'ratio':>6}  goal")
    ok = True
    for name, long, trace in cases:
        loads = by_id(long, **trace)
        (t_long, res_long), (t_id, res_id) = interleaved_best(
            [
                lambda long=long, trace=trace: simulate_fleet(vols, long, **trace),
                lambda loads=loads: simulate_fleet(vols, loads),
            ],
            a.repeats,
        )
        same = res_long.summary.equals(res_id.summary) and not res_long.errors
        ratio = t_long / t_id
        met = same and ratio <= GOAL
        ok = ok and met
        verdict = "met" if met else ("MISSED" if same else "MISSED (summaries differ)")
        print(f"{name:<10} {t_long:>12.3f} {t_id:>9.3f} {ratio:>6.2f}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
