"""The device latency of a bounded open loop after the run (the core's ``device_latency_s``,
application.hpp), on a month of 1 s steps: the steady rule alone (``min(latency, bound / iops)``
in every step) against the drain-aware one (a step whose backlog runs out after a held step
counts the I/Os served until then at the bound over the rate before, the rest at the service
time), timed in turn; and what the drain-aware rule changes in the run's device latency.

    .venv/bin/python bench/bench_device_latency.py [--repeats N]
"""

from __future__ import annotations

import argparse

import ebssim
import numpy as np
from _timing import interleaved_best
from ebssim import _core


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n = 30 * 86400
    rng = np.random.default_rng(3)
    ops = np.where(rng.random(n) < 0.3, 4000.0, 1000.0)  # bursts over gp3's 3,000 IOPS whose backlogs run out
    w = ebssim.OpenLoop(ops, ops * 16384, max_in_flight=32)
    r = ebssim.simulate(ebssim.gp3(200), w)
    lat, iops, bound, backlog = (
        np.asarray(x, dtype=np.float64) for x in (r.latency_s, r.iops, w.in_flight_bounds(), r.backlog_ops)
    )
    (t_steady, steady), (t_drain, drained) = interleaved_best(
        [
            lambda: _core.device_latency_s(lat, iops, bound),
            lambda: _core.device_latency_s(lat, iops, bound, backlog, ops, r.service_time_s, 1.0),
        ],
        args.repeats,
    )
    print(f"{n:,} steps, gp3 200 GiB, 1,000 or 4,000 16-KiB IOPS a second, 32 in flight at most")
    print(f"  device_latency_s: steady rule {t_steady * 1e3:.1f} ms, drain-aware {t_drain * 1e3:.1f} ms")
    changed = int(np.count_nonzero(steady != drained))
    print(f"  steps whose backlog ran out after a held step: {changed:,} ({changed / n:.1%})")
    for name, d in (("steady rule", steady), ("drain-aware", drained)):
        q = ebssim.latency_quantiles(d, iops, [0.5, 0.99], r._latency_model(d), bound=r.bound) * 1e3
        print(f"  {name}: mean {np.nanmean(d) * 1e3:.2f} ms a step, p50 {q[0]:.2f} ms, p99 {q[1]:.2f} ms")


if __name__ == "__main__":
    main()
