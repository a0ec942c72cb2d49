#!/usr/bin/env python3
"""How long ebssim.plot takes to draw long runs, end to end (plot, then savefig to PNG).

    .venv/bin/python bench/bench_plot.py                 # three week-long runs, three 30-day runs
    .venv/bin/python bench/bench_plot.py --repeats 5 --out /tmp/plots

A synthetic open-loop trace at 1-second steps (fixed seed: a diurnal load with a nightly batch,
16 KiB I/O, lognormal noise) is replayed on three volumes (gp2, gp3 at its defaults, gp3 at
6,000 IOPS) for a week (604,800 steps each) and for 30 days (2,592,000 steps each); each figure
is drawn and saved as a PNG, best of --repeats. The figures are written to --out so that they
can be looked at. Target: under a second (docs/analysis.md, *Plots*).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import List

import ebssim
import numpy as np


def trace(days: int, seed: int = 1) -> ebssim.OpenLoop:
    rng = np.random.default_rng(seed)
    t = np.arange(days * 86400, dtype=np.float64)
    hour = (t / 3600) % 24
    iops = (
        150 + 1250 * np.clip(np.sin((hour - 7) / 14 * np.pi), 0, None) + np.where((hour >= 1) & (hour < 2.5), 3300, 0)
    )
    ops = iops * rng.lognormal(0, 0.15, t.shape[0])
    return ebssim.OpenLoop(ops, ops * 16384, read_fraction=0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("out"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    week, month = trace(7), trace(30)
    volumes = (ebssim.gp2(500), ebssim.gp3(100), ebssim.gp3(100, iops=6000))
    cases = [
        ("three week-long runs at 1 s (604,800 steps each)", [ebssim.simulate(v, week) for v in volumes], "week3"),
        (
            "three 30-day runs at 1 s (2,592,000 steps each)",
            [ebssim.simulate(v, month) for v in volumes],
            "month3",
        ),
    ]
    for what, results, name in cases:
        times: List[float] = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ebssim.plot(results).savefig(args.out / f"bench_plot_{name}.png")
            times.append(time.perf_counter() - t0)
        shown = ", ".join(f"{x:.2f}" for x in times)
        path = args.out / f"bench_plot_{name}.png"
        print(f"{what}: plot + savefig {min(times):.2f} s best of {args.repeats} ({shown}); {path}")


if __name__ == "__main__":
    main()
