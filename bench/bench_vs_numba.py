#!/usr/bin/env python3
"""ebssim against a numba port of its own step loop: the ratios that issue 12 sets as goals.

    make bench-numba                                            # every case at full size (peak ~7 GB)
    make bench-numba BENCH_NUMBA_ARGS="--quick"                 # small sizes, a minute or two
    .venv/bin/python bench/bench_vs_numba.py --cases a,c --repeats 7
    .venv/bin/python bench/bench_vs_numba.py --cases b --fleet-volumes 1000 --threads 1,2

The baseline is bench/numba_port.py: the open-loop step loop of libebssim/src/stepper.hpp (its formulas in step.hpp) for
volumes without an instance, ported to one numba ``@njit`` function, its limits taken from the
engine (no AWS rule restated). Before anything is timed, each case checks that ebssim and the
port agree on its own inputs (totals to 1e-9 relative, steps per bound and cliffs exactly, every
recorded series to 1e-9); a disagreement is exit status 1. The goals are reported, not enforced:
exit status 0 whether they are met or not.

Timing: each case runs both once first (numba's JIT compilation, first-touch memory; not
timed), then alternates them --repeats times (ebssim first on even repetitions, the port first
on odd ones, so that neither always runs on a warmer machine) and takes the best of each; the
median is printed beside it. ebssim is timed as a user calls it (``simulate`` or
``Simulation.run``); the port on its prepared arrays.

Cases (``--cases``, default all):

a. Piecewise-constant demand: a gp2 volume, 30 days at 1 s steps (2,592,000 steps), demand
   constant within each hour (busy hours drain the bucket, quiet ones refill it), totals only.
   ebssim is given the dense per-step trace, and also, when it exists,
   ``ebssim.OpenLoop.piecewise`` (the change times and levels; the output says which path ran).
   Goal: ebssim >= 10x the numba loop.
b. A fleet: --fleet-volumes volumes (default 10,000) x 30 days at 1-minute steps (432 M
   volume-steps), each with its own trace and size (gp2 and gp3), totals only: one
   ``Simulation(...).run(record=False)`` (with ``threads=`` for each of --threads when the
   keyword exists) against the port's fleet loop on one thread; numba's ``parallel=True``
   (``prange`` over volumes) is a separate line. Goals: >= 4x the single-threaded port, and the
   432 M volume-steps in under 3 s. The traces are built once (two float64 arrays of
   volumes x steps: 6.9 GB at the default size) and shared by both.
c. A noisy 1-second trace (bench/bench_replay.py's, 30 days), recorded: ``ebssim.simulate`` with
   the per-step series against the port recording the same series. Goal: >= 2x. Then the cost of
   recording in ebssim at --overhead-steps steps (default 1e8, the noisy trace repeated; ~4.9 GB
   of series and 1.6 GB of trace): recorded time / totals-only time. Goal: <= 1.3x. The port's
   own ratio is printed for reference.
d. Start-up, as subprocesses (best of --startup-repeats): ``ebssim fio --help`` (goal < 0.3 s)
   and ``ebssim fio`` on a one-job file (goal < 0.5 s).
"""

from __future__ import annotations

import argparse
import gc
import inspect
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# OpenBLAS's worker threads spin for a while after any BLAS call in this process and take the
# second core from the thread that ebssim's recorded run writes its series with (case c: 14 ms
# with them spinning, 9 ms without). Neither side of any case uses BLAS; a caller's setting is
# kept. Set before numpy is imported (by ebssim, numba and the port).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import ebssim  # noqa: E402
import numba  # noqa: E402
import numba_port as port  # noqa: E402  # bench/numba_port.py, beside this script
import numpy as np  # noqa: E402
from bench_replay import make_trace  # noqa: E402  # the noisy 1-second trace of the replay benchmark
from ebssim.recording import DEFAULT_VOLUME_SERIES  # noqa: E402

HOUR = 3600
DAY = 86400


@dataclass
class Row:
    """One line of the results table."""

    case: str
    what: str
    seconds: float = math.nan
    median: float = math.nan
    ratio: Optional[float] = None  # the numba time / this time (speed-up), or a cost ratio
    goal: str = ""
    met: Optional[bool] = None
    note: str = ""


ROWS: List[Row] = []
DISAGREE: List[str] = []


def timed(fn: Callable[[], Any]) -> Tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def interleaved(fns: Sequence[Callable[[], Any]], repeats: int) -> List[Tuple[float, float]]:
    """(best, median) seconds of each function, run in alternating order ``repeats`` times.

    Each result is dropped before the next call, as a caller replacing it would.
    """
    times: List[List[float]] = [[] for _ in fns]
    for r in range(repeats):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            t, out = timed(fns[i])
            del out
            times[i].append(t)
    return [(min(ts), statistics.median(ts)) for ts in times]


def check(case: str, bad: List[str]) -> None:
    """Record disagreements between ebssim and the port (printed, and exit status 1)."""
    status = "agree" if not bad else f"DISAGREE ({len(bad)} differences)"
    print(f"  check: ebssim and the numba port {status}")
    for d in bad[:10]:
        print(f"    {d}", file=sys.stderr)
    DISAGREE.extend(f"{case}: {d}" for d in bad)


def peak_rss_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux


def run_keywords() -> set:
    return set(inspect.signature(ebssim.Simulation.run).parameters)


# --- a. piecewise-constant demand -----------------------------------------------------------------


def hourly_levels(days: float, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """IOPS and I/O size for each hour: busy daytime hours drain a 500 GiB gp2's bucket
    (2,000..4,000 IOPS against its 1,500 baseline and 3,000 burst), quiet ones (20..400 IOPS)
    refill it; the I/O size (4..64 KiB) is constant within the hour too."""
    rng = np.random.default_rng(seed)
    hours = int(math.ceil(days * 24))
    hour_of_day = np.arange(hours) % 24
    busy = (hour_of_day >= 9) & (hour_of_day < 17) & (rng.random(hours) < 0.7)
    iops = np.where(busy, rng.uniform(2000.0, 4000.0, hours), rng.uniform(20.0, 400.0, hours))
    size = 4096.0 * np.exp2(np.floor(5.0 * rng.random(hours)))  # 4, 8, 16, 32 or 64 KiB
    return np.floor(iops), size


def case_a(args: argparse.Namespace) -> None:
    print(f"\na. piecewise-constant demand: gp2 500 GiB, {args.days_a:g} days at dt = 1 s, constant within each hour")
    iops, size = hourly_levels(args.days_a, args.seed)
    n = int(round(args.days_a * DAY))
    ops = np.repeat(iops, HOUR)[:n]  # dt = 1 s: ops per step = IOPS
    nbytes = np.repeat(iops * size, HOUR)[:n]
    vol = ebssim.gp2(500)
    w = ebssim.OpenLoop(ops, nbytes)
    prm = port.limits(ebssim.Simulation([vol]), [w])[0]

    def ebssim_dense() -> ebssim.VolumeResult:
        return ebssim.simulate(vol, ebssim.OpenLoop(ops, nbytes), record=False)

    def numba_dense() -> np.ndarray:
        return port.replay(ops, nbytes, prm, record=False)[0]

    r0, t0 = ebssim_dense(), numba_dense()
    bad = port.compare_totals(t0, r0.totals)
    sb = r0.totals.steps_bound
    print(
        f"  {n:,} steps, {len(iops)} hourly levels; outcome: {len(r0.totals.cliffs)} cliffs, "
        f"steps demand-bound {100 * sb[0] / n:.1f} %, IOPS-bound {100 * sb[1] / n:.1f} %, "
        f"throughput-bound {100 * sb[2] / n:.1f} %"
    )
    fns: List[Callable[[], Any]] = [ebssim_dense, numba_dense]
    labels = ["ebssim, dense per-step trace"]
    if "jump" in run_keywords():
        # The same run stepped through, for comparison with the default (jumping where it can).
        def ebssim_stepping() -> ebssim.VolumeResult:
            return ebssim.Simulation([vol]).run([ebssim.OpenLoop(ops, nbytes)], record=False, jump=False)[0]

        bad += [f"jump=False: {d}" for d in port.compare_totals(t0, ebssim_stepping().totals)]
        fns.insert(1, ebssim_stepping)
        labels.append("ebssim, dense trace, jump=False (stepping)")
        print("  Simulation.run has jump=: timed with its default and with jump=False")
    else:
        print("  Simulation.run has no jump= keyword in this build")
    piecewise = getattr(ebssim.OpenLoop, "piecewise", None)
    if piecewise is None:
        print("  ebssim.OpenLoop.piecewise: not in this build (dense trace only)")
    else:
        make = piecewise_workload(piecewise, iops, size, n)
        if make is None:
            print(
                f"  ebssim.OpenLoop.piecewise{inspect.signature(piecewise)}: a signature this script does not know "
                f"(piecewise_workload()): skipped"
            )
        else:
            rp = ebssim.simulate(vol, make(), record=False)
            check_pw = port.compare_totals(t0, rp.totals)
            print("  ebssim.OpenLoop.piecewise: used as a second ebssim path")
            bad += [f"piecewise: {d}" for d in check_pw]
            fns.insert(len(labels), lambda: ebssim.simulate(vol, make(), record=False))
            labels.append("ebssim, OpenLoop.piecewise (change times and levels)")
    check("a", bad)
    res = interleaved(fns, args.repeats)
    t_numba = res[-1]
    for label, (best, med) in zip(labels, res[:-1]):
        ratio = t_numba[0] / best
        # The goal is on piecewise-constant demand given as such (change times and levels, the
        # issue's "given directly"), as a user with such demand runs it; when there is no such
        # input in the build, on the dense trace. The dense trace beside it and jump=False are
        # for reference: a dense trace's 41 MB must be read to find its runs (about 1.1 ms of
        # this machine's memory bandwidth on its own).
        goal_row = "piecewise" in label or (piecewise is None and "jump=False" not in label)
        if goal_row:
            ROWS.append(Row("a", label, best, med, ratio, ">= 10x numba", ratio >= 10.0))
        else:
            ROWS.append(Row("a", label, best, med, ratio, "", None, "for reference"))
    ROWS.append(Row("a", "numba port, dense trace", t_numba[0], t_numba[1]))


def piecewise_workload(piecewise: Any, iops: np.ndarray, size: np.ndarray, n: int) -> Optional[Callable[[], Any]]:
    """A builder of the hourly demand through ``OpenLoop.piecewise(change_s, iops, *, bytes_per_s,
    duration_s)`` (h-jump's signature); None for a signature this script does not know."""
    params = set(inspect.signature(piecewise).parameters)
    if not {"change_s", "iops", "bytes_per_s", "duration_s"} <= params:
        return None
    change_s = np.arange(len(iops), dtype=np.float64) * HOUR
    rate, bytes_per_s = iops.astype(np.float64), iops * size
    return lambda: piecewise(change_s, rate, bytes_per_s=bytes_per_s, duration_s=float(n))


# --- b. a fleet -------------------------------------------------------------------------------------


def fleet_traces(nv: int, n: int, dt: float, seed: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ops, bytes) of shape (nv, n), one distinct trace per volume, and each volume's size and type
    (0 gp2, 1 gp3). Built in blocks of volumes so that temporaries stay small.

    Each volume: diurnal demand with its own phase and level (a fraction of its gp2 baseline or
    of gp3's 3,000 IOPS), bursts (about 3 a day, 5..120 minutes, 1.5..4x the level), +-40 % noise,
    I/O sizes 4..64 KiB log-uniform per step.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 2000, nv).astype(np.float64)
    kind = (rng.random(nv) < 0.3).astype(np.int64)
    base = np.where(kind == 1, 3000.0, np.clip(3.0 * sizes, 100.0, 16000.0))
    ops = np.empty((nv, n))
    nbytes = np.empty((nv, n))
    t = np.arange(n, dtype=np.float64) * dt
    block = max(1, min(nv, 2_000_000 // max(n, 1) + 1))
    for i0 in range(0, nv, block):
        i1 = min(nv, i0 + block)
        m = i1 - i0
        phase = rng.random((m, 1))
        level = base[i0:i1, None] * rng.uniform(0.1, 0.7, (m, 1))
        rate = level * (1.0 + 0.6 * np.sin(2.0 * np.pi * (t[None, :] / DAY - phase)))
        for j in range(m):
            n_bursts = rng.poisson(3.0 * n * dt / DAY)
            starts = rng.integers(0, n, n_bursts)
            lengths = np.maximum(1, (rng.uniform(300.0, 7200.0, n_bursts) / dt).astype(np.int64))
            mult = rng.uniform(1.5, 4.0, n_bursts)
            for s, d, x in zip(starts, lengths, mult):
                rate[j, s : s + d] = x * level[j, 0]
        rate *= 0.6 + 0.8 * rng.random((m, n))
        ops[i0:i1] = np.floor(rate * dt)
        nbytes[i0:i1] = ops[i0:i1] * (4096.0 * np.exp2(4.0 * rng.random((m, n))))
    return ops, nbytes, sizes, kind


def case_b(args: argparse.Namespace) -> None:
    nv = args.fleet_volumes
    dt = 60.0
    n = int(round(args.fleet_days * DAY / dt))
    vs = nv * n
    print(
        f"\nb. a fleet: {nv:,} volumes x {args.fleet_days:g} days at dt = 60 s = {vs / 1e6:,.1f} M volume-steps, "
        f"distinct traces, totals only"
    )
    t_gen, (ops, nbytes, sizes, kind) = timed(lambda: fleet_traces(nv, n, dt, args.seed))
    print(f"  traces built in {t_gen:.1f} s ({2 * ops.nbytes / 1e9:.2f} GB, shared by ebssim and the port)")

    def make_sim() -> Tuple[ebssim.Simulation, List[ebssim.OpenLoop]]:
        vols = [ebssim.gp3(float(s)) if k else ebssim.gp2(float(s)) for s, k in zip(sizes, kind)]
        ws = [ebssim.OpenLoop(ops[i], nbytes[i], dt=dt) for i in range(nv)]  # row views: no copies
        return ebssim.Simulation(vols, dt=dt), ws

    t_setup, (sim0, ws) = timed(make_sim)
    t_prm, prm = timed(lambda: port.limits(sim0, ws))
    print(
        f"  setup, once, not in the times below: ebssim {t_setup:.2f} s ({nv:,} Volume and OpenLoop objects, "
        f"the Simulation); the port {t_prm:.2f} s (limits of each volume from the engine)"
    )
    kw = run_keywords()
    if "threads" in kw:
        threads: List[Optional[int]] = [int(x) for x in args.threads.split(",")]
    else:
        threads = [None]
        print("  Simulation.run has no threads= keyword in this build: ebssim runs on one core")

    # Each run starts from a fresh Simulation (the same state each time), built before the timing.
    fresh: List[ebssim.Simulation] = []

    def ebssim_run(th: Optional[int]) -> Callable[[], Any]:
        extra = {} if th is None else {"threads": th}

        def go() -> Any:
            sim = fresh.pop() if fresh else ebssim.Simulation(sim0.volumes, dt=dt)
            return sim.run(ws, record=False, **extra)

        return go

    def numba_fleet(parallel: bool) -> Callable[[], np.ndarray]:
        return lambda: port.fleet(ops, nbytes, prm, parallel=parallel)

    # Agreement, on the whole fleet, before timing (each ebssim thread count, both port loops).
    tot_serial = numba_fleet(False)()
    tot_par = numba_fleet(True)()
    bad: List[str] = []
    for th in threads:
        res = ebssim_run(th)()
        for i, r in enumerate(res):
            bad += [f"threads={th} volume {i}: {d}" for d in port.compare_totals(tot_serial[i], r.totals)]
            bad += [f"prange volume {i}: {d}" for d in port.compare_totals(tot_par[i], r.totals)]
        del res
    n_cliffs = int(tot_serial[:, port.T_N_CLIFFS].sum())
    bound_steps = tot_serial[:, port.T_STEPS_BOUND : port.T_STEPS_BOUND + 3].sum(axis=0) / vs
    print(
        f"  outcome: {n_cliffs:,} cliffs in all; volume-steps demand-bound {100 * bound_steps[0]:.1f} %, "
        f"IOPS-bound {100 * bound_steps[1]:.1f} %, throughput-bound {100 * bound_steps[2]:.1f} %"
    )
    check("b", bad)
    del tot_serial, tot_par

    fns = [ebssim_run(th) for th in threads] + [numba_fleet(False), numba_fleet(True)]
    fresh.extend(ebssim.Simulation(sim0.volumes, dt=dt) for _ in range(args.repeats * len(threads)))
    res = interleaved(fns, args.repeats)
    t_numba = res[-2][0]
    for th, (best, med) in zip(threads, res):
        label = "ebssim Simulation.run" + ("" if th is None else f", threads={th}")
        rate = f"{vs / best / 1e6:,.0f} M volume-steps/s"
        # The goal is on this machine's cores (every core); fewer threads are shown for reference.
        if th is None or th >= (os.cpu_count() or 1):
            ROWS.append(Row("b", label, best, med, t_numba / best, ">= 4x numba", t_numba / best >= 4.0, rate))
        else:
            ROWS.append(Row("b", label, best, med, t_numba / best, "", None, rate + "; for reference"))
        if nv * n >= 432_000_000:
            ROWS.append(Row("b", f"  {label}: 432 M volume-steps", best, med, None, "< 3 s", best < 3.0))
    ROWS.append(
        Row(
            "b",
            "numba port, fleet loop, one thread",
            res[-2][0],
            res[-2][1],
            None,
            "",
            None,
            f"{vs / res[-2][0] / 1e6:,.0f} M volume-steps/s",
        )
    )
    ROWS.append(
        Row(
            "b",
            f"numba port, prange over volumes ({numba.get_num_threads()} threads)",
            res[-1][0],
            res[-1][1],
            t_numba / res[-1][0],
            "",
            None,
            "ratio: the one-thread port / this",
        )
    )


# --- c. a noisy trace, recorded ---------------------------------------------------------------------


def case_c(args: argparse.Namespace) -> None:
    print(f"\nc. a noisy 1-second trace, recorded: gp2 100 GiB, {args.days_c:g} days at dt = 1 s")
    ops, nbytes = make_trace(args.days_c, args.seed)
    n = len(ops)
    vol = ebssim.gp2(100)
    prm = port.limits(ebssim.Simulation([vol]), [ebssim.OpenLoop(ops[:1], nbytes[:1])])[0]

    def ebssim_rec() -> ebssim.VolumeResult:
        return ebssim.simulate(vol, ebssim.OpenLoop(ops, nbytes), record=True)

    def numba_rec() -> Any:
        return port.replay(ops, nbytes, prm, record=True)

    r0 = ebssim_rec()
    tot, series, codes = numba_rec()
    bad = port.compare_totals(tot, r0.totals)
    more, worst = port.compare_series(r0, series, codes)
    print(
        f"  {n:,} steps; {len(r0.totals.cliffs)} cliffs; every recorded series within {worst:.1e} "
        f"(relative) of the port's"
    )
    check("c", bad + more)
    del r0, tot, series, codes
    # At least 15 pairs: a pair takes 30 ms, and this VM has phases of a second or more in which
    # a second thread runs slower (docs/performance.md, "Against a numba port").
    (e_best, e_med), (n_best, n_med) = interleaved([ebssim_rec, numba_rec], max(args.repeats, 15))
    ROWS.append(
        Row("c", "ebssim simulate(record=True)", e_best, e_med, n_best / e_best, ">= 2x numba", n_best / e_best >= 2)
    )
    ROWS.append(Row("c", "numba port, recording the same series", n_best, n_med))

    steps = int(args.overhead_steps)
    if steps <= 0:
        return
    reps = max(1, min(args.repeats, args.overhead_repeats))
    print(
        f"  recording overhead at {steps:,} steps (the trace repeated): {steps * 49 / 1e9:.1f} GB of ebssim "
        f"series in the default recording; best of {reps}"
    )
    big_ops = np.resize(ops, steps)
    big_bytes = np.resize(nbytes, steps)
    w = ebssim.OpenLoop(big_ops, big_bytes)
    lim = {"max_memory_bytes": 1 << 40}
    # Caller buffers for every series of every step, allocated (and first touched) once, as a
    # stream of chunks would reuse them.
    buffers: Dict[str, np.ndarray] = {s: np.zeros(steps) for s in DEFAULT_VOLUME_SERIES if s != "bound"}
    buffers["bound"] = np.zeros(steps, np.uint8)
    recordings = [
        ("every series, every step (default; fresh memory)", True, None),
        ("every series, every step, into caller buffers", ebssim.Recording(out=buffers), "<= 1.3x"),
        ("every series, every 60 s", ebssim.Recording(every_s=60), "<= 1.3x"),
        (
            "iops, credits, latency_s every 60 s, float32",
            ebssim.Recording(series=("iops", "credits", "latency_s"), every_s=60, dtype="float32"),
            "<= 1.3x",
        ),
    ]

    def e_tot() -> Any:
        return ebssim.simulate(vol, w, record=False)

    def e_with(record: Any) -> Callable[[], Any]:
        return lambda: ebssim.simulate(vol, w, record=record, **lim)

    def p_rec() -> Any:
        return port.replay(big_ops, big_bytes, prm, record=True)

    def p_tot() -> Any:
        return port.replay(big_ops, big_bytes, prm, record=False)

    # A check at this size too (totals; the series were checked above).
    rt = e_tot()
    check("c-overhead", port.compare_totals(p_tot()[0], rt.totals))
    del rt
    times = interleaved([e_tot] + [e_with(r) for _, r, _ in recordings], reps)
    et, et_med = times[0]
    ROWS.append(Row("c", f"ebssim record=False, {steps:.2g} steps", et, et_med))
    for (what, _, goal), (er, er_med) in zip(recordings, times[1:]):
        ratio = er / et
        met = None if goal is None else ratio <= 1.3
        note = "a cost ratio" if goal else "a cost ratio; fresh memory: the kernel's page faults, for reference"
        ROWS.append(Row("c", f"  {what}", er, er_med, ratio, goal or "", met, note))
    if args.overhead_numba:
        (pr, pr_med), (pt, pt_med) = interleaved([p_rec, p_tot], reps)
        ROWS.append(Row("c", f"numba record=True, {steps:.2g} steps", pr, pr_med))
        ROWS.append(Row("c", f"numba record=False, {steps:.2g} steps", pt, pt_med))
        ROWS.append(Row("c", "  numba recorded / not recorded", math.nan, math.nan, pr / pt, "", None, "for reference"))


# --- d. start-up -----------------------------------------------------------------------------------


def ebssim_command() -> List[str]:
    exe = Path(sys.executable).parent / "ebssim"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys, ebssim.cli; sys.exit(ebssim.cli.main())"]


ONE_JOB = """; one job for the start-up benchmark
[job]
filename=/dev/nvme1n1
rw=randread
bs=4k
iodepth=32
ioengine=libaio
direct=1
size=1G
time_based=1
runtime=60
"""


def case_d(args: argparse.Namespace) -> None:
    print(f"\nd. start-up, as subprocesses, best of {args.startup_repeats}")
    cmd = ebssim_command()
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "one.fio"
        job.write_text(ONE_JOB)
        runs = [
            ("`ebssim fio --help`", [*cmd, "fio", "--help"], 0.3),
            (
                "`ebssim fio` on a one-job file",
                [*cmd, "fio", "--volume", "/dev/nvme1n1=gp2:size=100", "--no-logs", str(job)],
                0.5,
            ),
        ]
        for label, argv, goal in runs:
            ts = []
            for _ in range(args.startup_repeats):
                t0 = time.perf_counter()
                p = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
                ts.append(time.perf_counter() - t0)
                if p.returncode != 0:
                    print(f"  {label} failed (exit {p.returncode}): {p.stderr.strip()}", file=sys.stderr)
                    break
            best, med = min(ts), statistics.median(ts)
            ROWS.append(Row("d", label, best, med, None, f"< {goal:g} s", best < goal))


# --- the report --------------------------------------------------------------------------------------


def report() -> None:
    print("\nresults (seconds: best, and median, of the interleaved runs; ratio: the numba time / ebssim's)")
    w = max(len(r.what) for r in ROWS)
    print(f"  {'':2} {'':<{w}}  {'best s':>9}  {'median s':>9}  {'ratio':>8}  {'goal':<14} {'':9}")
    for r in ROWS:
        best = "" if math.isnan(r.seconds) else f"{r.seconds:9.4f}"
        med = "" if math.isnan(r.median) else f"{r.median:9.4f}"
        ratio = "" if r.ratio is None else f"{r.ratio:7.2f}x"
        met = "" if r.met is None else ("met" if r.met else "NOT MET")
        note = f"  {r.note}" if r.note else ""
        print(f"  {r.case:2} {r.what:<{w}}  {best:>9}  {med:>9}  {ratio:>8}  {r.goal:<14} {met:9}{note}")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="a,b,c,d", help="cases to run, comma-separated (default a,b,c,d)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each, interleaved, best taken (default 5)")
    ap.add_argument("--seed", type=int, default=20240601, help="trace seed")
    ap.add_argument("--days-a", type=float, default=30.0, help="case a: days at 1 s steps (default 30)")
    ap.add_argument("--fleet-volumes", type=int, default=10_000, help="case b: volumes (default 10,000)")
    ap.add_argument("--fleet-days", type=float, default=30.0, help="case b: days at 1-minute steps (default 30)")
    ap.add_argument(
        "--threads",
        default=",".join(str(x) for x in sorted({1, os.cpu_count() or 1})),
        help="case b: ebssim thread counts to time when run() has threads= (default 1 and all cores)",
    )
    ap.add_argument("--days-c", type=float, default=30.0, help="case c: days of the noisy trace (default 30)")
    ap.add_argument(
        "--overhead-steps", type=float, default=1e8, help="case c: steps for the recording overhead (0: skip)"
    )
    ap.add_argument("--overhead-repeats", type=int, default=3, help="case c: runs at --overhead-steps (default 3)")
    ap.add_argument("--overhead-numba", action="store_true", help="case c: also time the port's recording overhead")
    ap.add_argument("--startup-repeats", type=int, default=7, help="case d: runs of each command (default 7)")
    ap.add_argument("--json", metavar="FILE", help="also write the results table to FILE as JSON")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="small sizes: 3 days (a, c), 300 volumes x 7 days (b), 1e7 overhead steps, 3 repeats",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.days_a, args.days_c, args.fleet_volumes, args.fleet_days = 3.0, 3.0, 300, 7.0
        args.overhead_steps, args.repeats = 1e7, 3
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(cases) - set("abcd")
    if unknown or args.repeats < 1 or args.fleet_volumes < 1 or min(args.days_a, args.days_c, args.fleet_days) <= 0:
        ap.error(f"--cases takes a,b,c,d (got {args.cases!r}); sizes and --repeats must be positive")

    print(
        f"ebssim {ebssim.__version__} against a numba {numba.__version__} port of its step loop "
        f"(bench/numba_port.py); {os.cpu_count()} CPUs, numba threads {numba.get_num_threads()}"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"command: {' '.join([Path(sys.argv[0]).name, *argv])}; {time.strftime('%Y-%m-%d %H:%M %Z')}; load {load}")
    t_jit, ok = timed(lambda: port.self_check(verbose=False))
    print(f"port self-check on its demo cases (and JIT compilation): {'agree' if ok else 'DISAGREE'}, {t_jit:.1f} s")
    if not ok:
        DISAGREE.append("self-check")
    for c in cases:
        {"a": case_a, "b": case_b, "c": case_c, "d": case_d}[c](args)
        print(f"  peak memory of this process so far: {peak_rss_gb():.2f} GB")
    if ROWS:
        report()
    if args.json:
        import json
        from dataclasses import asdict

        doc = {
            "command": [Path(sys.argv[0]).name, *argv],
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "load": os.getloadavg(),
            "agree": not DISAGREE,
            "rows": [
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(r).items()} for r in ROWS
            ],
        }
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    if DISAGREE:
        print(
            f"\nFAIL: ebssim and the numba port disagree ({len(DISAGREE)} differences): the times compare other work",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
