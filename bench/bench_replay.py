#!/usr/bin/env python3
"""Replay a long open-loop trace through a gp2 volume: ebssim against a plain Python loop.

    make bench-python                       # 30 days at 1 s steps (2,592,000 steps)
    .venv/bin/python bench/bench_replay.py --days 2 --repeats 3

A synthetic trace (fixed seed: diurnal demand plus bursts above gp2's 3,000 IOPS, 4..64 KiB
I/Os) is replayed through a 100 GiB gp2 volume twice: by ``ebssim.simulate`` (compiled step loop)
and by ``pure_python_replay`` below, a straightforward Python loop that implements the same
model, step by step, as libebssim/src/stepper.hpp does (same rules, same order of operations).
The script first checks that both agree (totals, final credits and backlog, steps per bound,
cliff time and every recorded per-step series, to 1e-6 relative) so that the comparison is
honest, then prints the times and the speed-up.

ebssim is timed end to end as a user calls it (building the OpenLoop and the volume, the run,
the numpy results), best of --repeats, with record=True (per-step series: the realistic case)
and record=False (totals only). The pure-Python loop records the same series and runs once.
Exit status 1 if the two disagree; the targets (>= 100x, < 1 s) are reported, not enforced.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from array import array
from typing import Any, Callable, Dict, List, Tuple

import ebssim
import numpy as np

MiB = 1024.0 * 1024.0
DAY = 86400

# The volume: gp2, 100 GiB, new (bucket full). Its limits, from AWS's gp2 rules; the script
# checks them against ebssim's own derivation before replaying.
SIZE_GIB = 100.0
BASELINE_IOPS = min(max(3.0 * SIZE_GIB, 100.0), 16000.0)  # 300: 3 IOPS per GiB
BURST_IOPS = max(BASELINE_IOPS, 3000.0)
CREDIT_CAPACITY = 5.4e6
TIER_MIB_S = 128.0 if SIZE_GIB <= 170.0 else 250.0
TPUT_BURST_BYTES_S = min(TIER_MIB_S, BURST_IOPS * 0.25) * MiB  # 128 MiB/s while credits remain
TPUT_BASE_BYTES_S = min(TIER_MIB_S, BASELINE_IOPS * 0.25) * MiB  # 75 MiB/s once they are gone
IO_UNIT_BYTES = 256.0 * 1024.0  # random I/Os count ceil(size / 256 KiB) operations
LATENCY_S = 0.5 / 1e3  # unloaded service time: 0.5 ms + size / (1 GiB/s)
TRANSFER_BYTES_S = 1024.0 * MiB

TARGET_SPEEDUP = 100.0
TARGET_SECONDS = 1.0
RTOL = 1e-6

SERIES = ("iops", "ebs_iops", "throughput_mib_s", "credits", "latency_s", "bound")


def make_trace(days: float, seed: int = 20240601, dt: float = 1.0) -> Tuple[np.ndarray, np.ndarray]:
    """Demanded I/Os and bytes per step of ``dt`` seconds over ``days`` days.

    Diurnal demand of 40..160 IOPS (below the 300 IOPS baseline, so the bucket refills) plus
    bursts: Poisson, 4 a day, each 60..900 s at 1,000..6,000 IOPS, so some exceed the 3,000 IOPS
    burst rate and clusters of them drain the bucket; large-I/O bursts hit the 128 MiB/s cap.
    I/O size log-uniform 4..64 KiB per step (fixed within a burst). Whole I/Os per step with
    +-40 % noise. bench/bench_engine.cpp generates the same kind of trace for the C++ benchmarks.
    """
    rng = np.random.default_rng(seed)
    n = int(round(days * DAY / dt))
    t = np.arange(n, dtype=np.float64) * dt
    rate = 100.0 + 60.0 * np.sin(2.0 * np.pi * (t / DAY - 0.25))
    size = 4096.0 * np.exp2(4.0 * rng.random(n))
    n_bursts = rng.poisson(4.0 * n * dt / DAY)
    starts = np.sort(rng.integers(0, n, n_bursts))
    lengths = (rng.uniform(60.0, 900.0, n_bursts) / dt).astype(np.int64)
    burst_iops = rng.uniform(1000.0, 6000.0, n_bursts)
    burst_size = 4096.0 * np.exp2(4.0 * rng.random(n_bursts))
    for s, d, r, z in zip(starts, lengths, burst_iops, burst_size):
        rate[s : s + d] = r
        size[s : s + d] = z
    ops = np.floor(rate * dt * (0.6 + 0.8 * rng.random(n)) + rng.random(n))
    return ops, ops * size


def pure_python_replay(ops: List[float], nbytes: List[float], dt: float = 1.0, record: bool = True) -> Dict[str, Any]:
    """The engine's open-loop step loop for one gp2 volume, in plain Python.

    Mirrors ``kernel<OpenSource>`` in libebssim/src/stepper.hpp (formulas: step.hpp) rule for rule: counted operations,
    the IOPS and throughput caps, the fraction served with the backlog carried (FIFO,
    work-conserving), the credit bucket, the cliff time and the latency by Little's law.
    """
    inf = math.inf
    nan = math.nan
    ceil = math.ceil
    earned = BASELINE_IOPS * dt
    burst_cap = BURST_IOPS * dt
    tput_hi = TPUT_BURST_BYTES_S * dt
    tput_lo = TPUT_BASE_BYTES_S * dt
    cap_credits = CREDIT_CAPACITY
    inv_dt = 1.0 / dt
    inv_unit = 1.0 / IO_UNIT_BYTES
    to_mib = 1.0 / MiB
    latency_s = LATENCY_S
    transfer = TRANSFER_BYTES_S

    credits = CREDIT_CAPACITY
    b_ops = b_bytes = b_cnt = 0.0
    dem_ops = dem_bytes = 0.0
    srv_ops = srv_bytes = srv_cnt = lat_ops_s = 0.0
    # One count per ebssim.BOUND_NAMES: demand, volume IOPS, volume throughput, instance IOPS,
    # instance throughput, max_in_flight (this loop has no instance and no bound on in-flight I/O).
    steps_bound = [0] * len(ebssim.BOUND_NAMES)
    cliff_seen = False
    cliff_time_s = nan

    # Per-step outputs in typed arrays (raw doubles; faster than lists of float objects).
    s_iops = array("d")
    s_ebs = array("d")
    s_tput = array("d")
    s_credits = array("d")
    s_lat = array("d")
    s_bound = array("B")

    for k, (o, b) in enumerate(zip(ops, nbytes)):
        # Counted operations: random I/Os count ceil(size / 256 KiB), at least 1.
        if o > 0:
            per = ceil(b / o * inv_unit - 1e-9)
            c = o * (1.0 if per < 1.0 else per)
        else:
            c = 0.0
        prev_b_ops = b_ops
        av_ops = b_ops + o
        av_bytes = b_bytes + b
        av_cnt = b_cnt + c

        # Caps this step: burst IOPS limited by the credits on hand, throughput by the tier.
        pool = credits + earned
        cap_cnt = pool if pool < burst_cap else burst_cap
        cap_bytes = tput_hi if credits > 0 else tput_lo
        f_cnt = cap_cnt / av_cnt if av_cnt > 0 else inf
        f_bytes = cap_bytes / av_bytes if av_bytes > 0 else inf

        f = 1.0
        bound = 0
        served_cnt = av_cnt
        if f_cnt < 1.0 and f_cnt <= f_bytes:
            f = f_cnt
            bound = 1
            served_cnt = cap_cnt
        elif f_bytes < 1.0:
            f = f_bytes
            bound = 2
            served_cnt = f * av_cnt
        served_ops = f * av_ops
        served_bytes = f * av_bytes

        # What is not served stays queued.
        b_ops = av_ops - served_ops
        b_bytes = av_bytes - served_bytes
        b_cnt = av_cnt - served_cnt
        dem_ops += o
        dem_bytes += b

        # The bucket earns the baseline and pays for what was served.
        before = credits
        cr = pool - served_cnt
        credits = 0.0 if cr < 0 else (cap_credits if cr > cap_credits else cr)
        # A cliff: the bucket runs dry in this step, or starts the run dry under demand that wants
        # more than the baseline; interpolated inside the step at the rate the demand asked for.
        if not cliff_seen and credits <= 0 and (before > 0 or k == 0):
            wanted = min(av_cnt, burst_cap, tput_hi / av_bytes * av_cnt if av_bytes > 0 else inf)
            spend = wanted - earned
            if before > 0 or spend > 0:
                cliff_seen = True
                frac = min(1.0, before / spend) if spend > 0 else 1.0
                cliff_time_s = (k + frac) * dt

        # Little's law: mean latency = mean outstanding I/Os / completion rate.
        rate = served_ops * inv_dt
        st = latency_s + (av_bytes / av_ops) / transfer if av_ops > 0 else latency_s
        outstanding = rate * st + 0.5 * (prev_b_ops + b_ops)
        latency = nan
        if rate > 0:
            latency = outstanding / rate
            if latency < st:
                latency = st
            lat_ops_s += latency * served_ops

        srv_ops += served_ops
        srv_bytes += served_bytes
        srv_cnt += served_cnt
        steps_bound[bound] += 1

        if record:
            s_iops.append(rate)
            s_ebs.append(served_cnt * inv_dt)
            s_tput.append(served_bytes * inv_dt * to_mib)
            s_credits.append(credits)
            s_lat.append(latency)
            s_bound.append(bound)

    totals = {
        "demanded_ops": dem_ops,
        "demanded_bytes": dem_bytes,
        "served_ops": srv_ops,
        "served_bytes": srv_bytes,
        "served_counted": srv_cnt,
        "latency_ops_s": lat_ops_s,
        "backlog_ops": b_ops,
        "backlog_bytes": b_bytes,
        "credits_end": credits,
        "cliff_time_s": cliff_time_s,
        "steps_bound": tuple(steps_bound),
    }
    series = {
        "iops": np.frombuffer(s_iops, dtype=np.float64),
        "ebs_iops": np.frombuffer(s_ebs, dtype=np.float64),
        "throughput_mib_s": np.frombuffer(s_tput, dtype=np.float64),
        "credits": np.frombuffer(s_credits, dtype=np.float64),
        "latency_s": np.frombuffer(s_lat, dtype=np.float64),
        "bound": np.frombuffer(s_bound, dtype=np.uint8),
    }
    return {"totals": totals, "series": series}


def run_ebssim(ops: np.ndarray, nbytes: np.ndarray, record: bool) -> ebssim.VolumeResult:
    return ebssim.simulate(ebssim.gp2(SIZE_GIB), ebssim.OpenLoop(ops, nbytes), record=record)


def best_of(fn: Callable[[], Any], repeats: int) -> Tuple[float, float, Any]:
    """Best and first time of ``repeats`` calls (the first call pays for fresh memory)."""
    best = math.inf
    first = math.nan
    out = None
    for i in range(repeats):
        out = None  # free the previous result first, as a caller replacing it would
        t0 = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t0
        first = t if i == 0 else first
        best = min(best, t)
    return best, first, out


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= RTOL * max(abs(a), abs(b), 1.0)


def compare(r: ebssim.VolumeResult, ref: Dict[str, Any]) -> List[Tuple[str, str, str, bool]]:
    """Rows (quantity, ebssim, pure Python, agrees) for the totals and the recorded series."""
    rows = []
    for key in (
        "served_ops",
        "served_bytes",
        "served_counted",
        "demanded_ops",
        "latency_ops_s",
        "credits_end",
        "backlog_ops",
        "cliff_time_s",
    ):
        a, b = float(r.totals[key]), float(ref["totals"][key])
        rows.append((key, f"{a:.10g}", f"{b:.10g}", close(a, b)))
    a_sb, b_sb = tuple(int(x) for x in r.totals["steps_bound"]), tuple(ref["totals"]["steps_bound"])
    rows.append(("steps_bound", str(a_sb), str(b_sb), a_sb == b_sb))
    worst, where = 0.0, ""
    ok = True
    for name in SERIES:
        x = np.asarray(getattr(r, name), dtype=np.float64)
        y = np.asarray(ref["series"][name], dtype=np.float64)
        if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
            ok = False
            where = f"{name} (shape or NaN positions)"
            continue
        m = ~np.isnan(x)
        if m.any():
            err = np.abs(x[m] - y[m]) / np.maximum(np.maximum(np.abs(x[m]), np.abs(y[m])), 1.0)
            e = float(err.max())
            if e > worst:
                worst, where = e, name
    ok = ok and worst <= RTOL
    detail = f"{worst:.1e}" + (f" in {where}" if where else "")
    rows.append((f"per-step series ({len(SERIES)})", "max rel diff", detail, ok))
    return rows


def fmt_rate(steps: int, seconds: float) -> str:
    r = steps / seconds
    return f"{r / 1e6:.2f} M/s" if r >= 1e6 else f"{r / 1e3:.1f} k/s"


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=float, default=30.0, help="trace length in days (default 30)")
    ap.add_argument("--repeats", type=int, default=5, help="ebssim runs per mode, best taken (default 5)")
    ap.add_argument("--seed", type=int, default=20240601, help="trace seed")
    args = ap.parse_args(argv)
    if args.days <= 0 or args.repeats < 1:
        ap.error("--days must be > 0 and --repeats >= 1")

    vol = ebssim.gp2(SIZE_GIB)
    derived = (
        vol.baseline_iops,
        vol.max_iops,
        vol.credit_capacity,
        vol.max_throughput_mib_s * MiB,
        vol.baseline_throughput_mib_s * MiB,
    )
    mine = (BASELINE_IOPS, BURST_IOPS, CREDIT_CAPACITY, TPUT_BURST_BYTES_S, TPUT_BASE_BYTES_S)
    if not all(close(a, b) for a, b in zip(derived, mine)):
        print(f"volume limits differ: ebssim {derived} vs this script {mine}", file=sys.stderr)
        return 1

    ops, nbytes = make_trace(args.days, args.seed)
    n = len(ops)
    if n < 1:
        ap.error(f"--days {args.days:g} is less than one step of 1 s")
    iops = ops  # per step of 1 s
    print(f"ebssim replay benchmark: {args.days:g} days at dt = 1 s = {n:,} steps through {vol}")
    print(
        f"trace (seed {args.seed}): mean {iops.mean():.0f} IOPS, peak {iops.max():.0f}, "
        f"{100 * np.mean(iops > BURST_IOPS):.2f} % of steps above {BURST_IOPS:.0f} IOPS, "
        f"I/O 4..64 KiB (mean {nbytes.sum() / ops.sum() / 1024:.1f} KiB)"
    )

    # ebssim, timed as a user calls it.
    t_rec, t_rec_first, r = best_of(lambda: run_ebssim(ops, nbytes, True), args.repeats)
    t_tot, _, r_tot = best_of(lambda: run_ebssim(ops, nbytes, False), args.repeats)

    # The pure-Python loop, once (lists prepared outside the timing, its fastest input).
    ops_l, bytes_l = ops.tolist(), nbytes.tolist()
    t0 = time.perf_counter()
    ref = pure_python_replay(ops_l, bytes_l, record=True)
    t_py = time.perf_counter() - t0

    sb = r.totals["steps_bound"]
    c = r.credits
    dry = int(np.sum((c[1:] <= 0) & (c[:-1] > 0)) + (c[0] <= 0))
    cliff = r.cliff_time_s
    lat_ms = r.latency_ms[~np.isnan(r.latency_ms)]
    first = "never" if cliff is None else f"first after {cliff / 3600:.1f} h"
    print(
        f"outcome: steps demand-bound {100 * sb[0] / n:.2f} %, IOPS-bound {100 * sb[1] / n:.2f} %, "
        f"throughput-bound {100 * sb[2] / n:.2f} %; bucket ran dry {dry} times ({first}), "
        f"BurstBalance min {100 * c.min() / CREDIT_CAPACITY:.1f} %, end {r.burst_balance_end_pct:.1f} %"
    )
    print(
        f"         latency median {np.median(lat_ms):.3f} ms, p99 {np.percentile(lat_ms, 99):,.1f} ms "
        f"(bursts above the cap queue: max queue {r.queue_length.max():,.0f} I/Os)"
    )

    # Honesty check: both implementations must give the same results.
    rows = compare(r, ref)
    rows.append(
        (
            "record=False totals",
            "served_ops",
            f"{float(r_tot.totals['served_ops']):.10g}",
            all(
                close(float(r_tot.totals[k]), float(r.totals[k]))
                for k in ("served_ops", "served_bytes", "credits_end", "latency_ops_s")
            ),
        )
    )
    print(f"\ncheck: ebssim against the pure-Python loop (relative tolerance {RTOL:g})")
    w0 = max(len(q) for q, *_ in rows)
    print(f"  {'quantity':<{w0}}  {'ebssim':>22}  {'pure Python':>22}  ")
    for q, a, b, ok in rows:
        print(f"  {q:<{w0}}  {a:>22}  {b:>22}  {'ok' if ok else 'MISMATCH'}")
    agree = all(ok for *_, ok in rows)

    print("\ntimes (time.perf_counter)")
    table = [
        (f"ebssim, record=True   (best of {args.repeats})", t_rec),
        ("ebssim, record=True   (first call)", t_rec_first),
        (f"ebssim, record=False  (best of {args.repeats})", t_tot),
        ("pure Python, recording (once)", t_py),
    ]
    w1 = max(len(x) for x, _ in table)
    print(f"  {'':<{w1}}  {'seconds':>9}  {'steps/s':>11}  {'speed-up':>9}")
    for label, t in table:
        print(f"  {label:<{w1}}  {t:>9.4f}  {fmt_rate(n, t):>11}  {t_py / t:>8.0f}x")

    speedup = t_py / t_rec
    ok_speed = speedup >= TARGET_SPEEDUP
    ok_time = t_rec < TARGET_SECONDS
    print(
        f"\ntarget, ebssim record=True: >= {TARGET_SPEEDUP:.0f}x the pure-Python loop: "
        f"{speedup:.0f}x {'met' if ok_speed else 'MISSED'}; "
        f"under {TARGET_SECONDS:g} s: {t_rec:.3f} s {'met' if ok_time else 'MISSED'}"
    )
    if not agree:
        print("FAIL: ebssim and the pure-Python loop disagree; the timings compare different work", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
