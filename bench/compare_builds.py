#!/usr/bin/env python3
"""Two builds of bench/bench_engine.cpp run alternately, the least time of each compared.

    python3 bench/compare_builds.py BEFORE/ebssim_bench AFTER/ebssim_bench 'BM_OpenLoop_gp2/|BM_Piecewise' 6

A change to the engine is measured before and after in the same session: build the old commit's
``bench`` preset in a worktree, the new one here, and run this on a quiet machine. Each round
runs both (the order alternating between rounds, so that neither always runs on a warmer
machine); this VM has slow phases, so the least figure of each side is the one compared.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
from typing import Dict, List


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("filter", help="--benchmark_filter of both runs")
    ap.add_argument("rounds", type=int, nargs="?", default=4)
    a = ap.parse_args()
    times: Dict[str, Dict[str, List[float]]] = {
        "before": collections.defaultdict(list),
        "after": collections.defaultdict(list),
    }
    for r in range(a.rounds):
        order = (("before", a.before), ("after", a.after))
        for side, exe in order if r % 2 == 0 else order[::-1]:
            out = subprocess.run(
                [exe, f"--benchmark_filter={a.filter}", "--benchmark_format=json", "--benchmark_min_time=0.3"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for b in json.loads(out)["benchmarks"]:
                times[side][b["name"]].append(b["real_time"] if "real_time" in b["name"] else b["cpu_time"])
    print(f"{'benchmark':60s} {'before':>10s} {'after':>10s} {'ratio':>7s}")
    for name, before in times["before"].items():
        b, n = min(before), min(times["after"][name])
        print(f"{name:60s} {b:10.3f} {n:10.3f} {n / b:7.3f}")


if __name__ == "__main__":
    main()
