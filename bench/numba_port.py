#!/usr/bin/env python3
"""A numba ``@njit`` port of ebssim's open-loop step loop: the baseline the engine is measured against.

    make bench-numba                                  # installs the `bench` extra, checks, then times
    .venv/bin/python bench/numba_port.py              # the agreement check on its own (exit 1 on a mismatch)

The loop of ``Stepper<OpenSource>`` in libebssim/src/stepper.hpp (formulas: step.hpp) for volumes without an instance
(``run_independent``), written as a competent numba user would: one ``@njit`` function over the
steps of one volume, scalars in locals, the per-step series written into preallocated arrays when
asked. Rule for rule and in the same order of operations: AWS's counting (``IoCounting``,
workload.hpp), the throttle (``throttle``, engine.hpp: IOPS cap from the credits on hand,
throughput cap with or without credits, a tie going to IOPS), the application's
``max_in_flight`` bound, the fluid backlog, the credit bucket with its clamp, the cliff episodes
(when the bucket runs dry, interpolated inside the step), Little's-law latency with the
service-time model, the totals and the per-step series (iops, ebs_iops, throughput, credits,
latency, backlog, bound). It checks the trace values as the engine does (inside the loop).

No AWS rule is restated here: each volume's limits come from the engine itself
(``Simulation(...)._sim.params(i)``, the ``VolumeParams`` the C++ loop steps with) and each
workload's options from its compiled ``OpenLoop``; :func:`limits` packs them into one row of
numbers per volume. Volumes on an instance (the coupled loop) are not ported.

Functions: :func:`replay` (one volume, totals and optionally the series), :func:`fleet` (a 2-D
trace, one row per volume, totals only, one thread) and :func:`fleet_parallel` (the same with
``numba.prange`` over volumes, ``parallel=True``). Run as a script, it checks agreement with
ebssim on a few volumes and workloads (totals and every recorded series to 1e-9 relative, steps
per bound and the cliffs exactly) and exits 1 on any disagreement; bench/bench_vs_numba.py runs
the same check before it times anything.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Sequence, Tuple

import ebssim
import numba
import numpy as np
from numba import njit, prange

# One row of numbers per volume (and its workload): what the loop reads.
P_EARNED = 0  # baseline_iops x dt: credits earned per step (the IOPS cap without a bucket)
P_BURST_CAP = 1  # burst_iops x dt
P_TPUT_HI = 2  # throughput cap per step with credits, bytes
P_TPUT_LO = 3  # without credits
P_CAPACITY = 4  # credit_capacity (0: no bucket)
P_CREDITS0 = 5  # credits at the start of the run
P_UNIT = 6  # counting unit, bytes
P_MERGE_MIN = 7  # merge floor (at most the unit)
P_INV_UNIT = 8
P_SEQUENTIAL = 9  # 1.0 for a sequential pattern
P_LATENCY = 10  # unloaded service time of a zero-byte I/O at the workload's read share, s
P_INV_TRANSFER = 11  # 1 / transfer rate of the service-time model, s/byte
P_SERVICE_TIME = 12  # the workload's own service time, s (NaN: the model at the mean I/O size)
P_MAX_IN_FLIGHT = 13  # the workload's bound on outstanding I/Os (inf: none)
P_DT = 14
P_T0 = 15  # simulated time at the start of the run
N_PARAMS = 16

# Totals, one row per volume.
T_DEMANDED_OPS = 0
T_DEMANDED_BYTES = 1
T_SERVED_OPS = 2
T_SERVED_BYTES = 3
T_SERVED_COUNTED = 4
T_LATENCY_OPS_S = 5
T_BACKLOG_OPS = 6
T_BACKLOG_BYTES = 7
T_CREDITS_END = 8
T_CLIFF_TIME_S = 9  # first time the bucket ran dry (NaN: never)
T_N_CLIFFS = 10  # episodes with the bucket empty
T_INPUT_OK = 11  # 1.0 when every trace value was acceptable
T_STEPS_BOUND = 12  # 6 counts, one per ebssim.BOUND_NAMES
N_BOUNDS = 6
N_TOTALS = T_STEPS_BOUND + N_BOUNDS

# Recorded series: rows of a (6, n) float64 array, plus the bound codes in a uint8 array: the
# default recording's floating-point series, in the engine's table (series_table.hpp).
SERIES = tuple(
    name for name, aggregation, _, _ in ebssim._core.VOLUME_SERIES_TABLE if aggregation in ("rate", "latency", "level")
)
# The rows the loop writes (a series added to the table stops the port here until it follows).
S_IOPS, S_EBS_IOPS, S_MIB_S, S_CREDITS, S_LATENCY, S_BACKLOG = (
    SERIES.index(name) for name in ("iops", "ebs_iops", "throughput_mib_s", "credits", "latency_s", "backlog_ops")
)
assert len(SERIES) == 6, f"the port records 6 series, the engine's table has {SERIES}"
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

MAX_DEMAND_PER_STEP = ebssim._core.max_demand_per_step  # the engine's bound of the trace check (workload.hpp)
INV_MIB = 1.0 / (1024.0 * 1024.0)


def _make_loop(record: bool) -> Any:
    """The step loop of one volume; ``record`` is a compile-time constant (two specialisations)."""

    @njit(fastmath=False, boundscheck=False)
    def loop(ops, nbytes, prm, tot, series, bound_codes):
        earned = prm[P_EARNED]
        burst_cap = prm[P_BURST_CAP]
        tput_hi = prm[P_TPUT_HI]
        tput_lo = prm[P_TPUT_LO]
        capacity = prm[P_CAPACITY]
        bucket = capacity > 0.0
        unit = prm[P_UNIT]
        merge_min = prm[P_MERGE_MIN]
        inv_unit = prm[P_INV_UNIT]
        sequential = prm[P_SEQUENTIAL] != 0.0
        lat0 = prm[P_LATENCY]
        inv_transfer = prm[P_INV_TRANSFER]
        fixed_st = prm[P_SERVICE_TIME]
        has_fixed_st = not math.isnan(fixed_st)
        max_in_flight = prm[P_MAX_IN_FLIGHT]
        bounded = max_in_flight < math.inf
        dt = prm[P_DT]
        t0 = prm[P_T0]
        inv_dt = 1.0 / dt
        inf = math.inf
        nan = math.nan

        credits = prm[P_CREDITS0]
        b_ops = 0.0
        b_bytes = 0.0
        b_cnt = 0.0
        dem_ops = 0.0
        dem_bytes = 0.0
        srv_ops = 0.0
        srv_bytes = 0.0
        srv_cnt = 0.0
        lat_ops_s = 0.0
        cliff_time = nan
        n_cliffs = 0
        dry = False
        ok = True
        steps_bound = np.zeros(N_BOUNDS, np.int64)

        for k in range(ops.shape[0]):
            o = ops[k]
            b = nbytes[k]
            ok &= (
                (o >= 0.0)
                & (o <= MAX_DEMAND_PER_STEP)
                & (b >= 0.0)
                & (b <= MAX_DEMAND_PER_STEP)
                & ((o > 0.0) | (b == 0.0))
            )
            # AWS's counting (IoCounting): sequential I/Os from the floor merge up to the unit;
            # random ones up to the unit count once, larger ones split.
            if sequential:
                c = b * inv_unit if b >= o * merge_min else o
            elif b <= o * unit:
                c = o
            else:
                c = o * math.ceil(b / o * inv_unit - 1e-9)

            av_ops = b_ops + o
            av_bytes = b_bytes + b
            av_cnt = b_cnt + c
            pool = credits + earned
            cap_cnt = burst_cap if burst_cap < pool else pool
            cap_bytes = tput_hi if credits > 0.0 else tput_lo

            # The throttle: whichever limit binds first; a tie goes to IOPS.
            f = 1.0
            bound = 0
            if av_cnt > cap_cnt or av_bytes > cap_bytes:
                f_cnt = cap_cnt / av_cnt if av_cnt > cap_cnt else 1.0
                f_bytes = cap_bytes / av_bytes if av_bytes > cap_bytes else 1.0
                if f_cnt < 1.0 and f_cnt <= f_bytes:
                    f = f_cnt
                    bound = 1
                else:
                    f = f_bytes
                    bound = 2

            # Unloaded service time: the workload's, else the model at the mean size available.
            if has_fixed_st:
                st = fixed_st
            elif av_ops > 0.0:
                st = lat0 + av_bytes / av_ops * inv_transfer
            else:
                st = lat0
            # The application's bound on outstanding I/Os: max_in_flight / st completions per second.
            if bounded and av_ops > 0.0:
                cap_ops = max_in_flight * dt / st
                if cap_ops < f * av_ops:
                    f = cap_ops / av_ops
                    bound = 5

            served_cnt = cap_cnt if bound == 1 else f * av_cnt  # exact at the cap: the bucket empties to 0
            served_ops = f * av_ops
            served_bytes = f * av_bytes
            prev_b_ops = b_ops
            b_ops = av_ops - served_ops
            b_bytes = av_bytes - served_bytes
            b_cnt = av_cnt - served_cnt
            dem_ops += o
            dem_bytes += b

            if bucket:
                before = credits
                cr = pool - served_cnt
                credits = 0.0 if cr < 0.0 else (capacity if cr > capacity else cr)
                if (credits <= 0.0) != dry:
                    if credits > 0.0:
                        dry = False  # the open episode ends
                    else:
                        # Drained at the rate the demand asked for while credits last.
                        wanted = min(av_cnt, burst_cap, tput_hi / av_bytes * av_cnt if av_bytes > 0.0 else inf)
                        spend = wanted - earned
                        if before > 0.0 or spend > 0.0:
                            frac = min(1.0, before / spend) if spend > 0.0 else 1.0
                            at = t0 + k * dt + dt * frac
                            if n_cliffs == 0:
                                cliff_time = at
                            n_cliffs += 1
                            dry = True

            # Little's law: mean latency = mean outstanding I/Os / completion rate.
            rate = served_ops * inv_dt
            waiting = 0.5 * (prev_b_ops + b_ops)
            latency = nan
            if rate > 0.0:
                if waiting > 0.0:
                    q = (rate * st + waiting) / rate
                    latency = q if st < q else st
                else:
                    latency = st
                lat_ops_s += latency * served_ops

            srv_ops += served_ops
            srv_bytes += served_bytes
            srv_cnt += served_cnt
            steps_bound[bound] += 1

            if record:
                series[S_IOPS, k] = rate
                series[S_EBS_IOPS, k] = served_cnt * inv_dt
                series[S_MIB_S, k] = served_bytes * inv_dt * INV_MIB
                series[S_CREDITS, k] = credits
                series[S_LATENCY, k] = latency
                series[S_BACKLOG, k] = b_ops
                bound_codes[k] = bound

        tot[T_DEMANDED_OPS] = dem_ops
        tot[T_DEMANDED_BYTES] = dem_bytes
        tot[T_SERVED_OPS] = srv_ops
        tot[T_SERVED_BYTES] = srv_bytes
        tot[T_SERVED_COUNTED] = srv_cnt
        tot[T_LATENCY_OPS_S] = lat_ops_s
        tot[T_BACKLOG_OPS] = b_ops
        tot[T_BACKLOG_BYTES] = b_bytes
        tot[T_CREDITS_END] = credits
        tot[T_CLIFF_TIME_S] = cliff_time
        tot[T_N_CLIFFS] = n_cliffs
        tot[T_INPUT_OK] = 1.0 if ok else 0.0
        for j in range(N_BOUNDS):
            tot[T_STEPS_BOUND + j] = steps_bound[j]

    return loop


_loop_recorded = _make_loop(True)
_loop_totals = _make_loop(False)


@njit
def _fleet(ops, nbytes, prm, tot):
    no_series = np.empty((0, 0), np.float64)
    no_bounds = np.empty(0, np.uint8)
    for i in range(ops.shape[0]):
        _loop_totals(ops[i], nbytes[i], prm[i], tot[i], no_series, no_bounds)


@njit(parallel=True)
def _fleet_parallel(ops, nbytes, prm, tot):
    for i in prange(ops.shape[0]):
        _loop_totals(ops[i], nbytes[i], prm[i], tot[i], np.empty((0, 0), np.float64), np.empty(0, np.uint8))


def limits(sim: ebssim.Simulation, workloads: Sequence[ebssim.OpenLoop]) -> np.ndarray:
    """One row of loop parameters per volume of ``sim`` (no instance), from the engine's own numbers.

    The limits are the ``VolumeParams`` the C++ loop steps with, the workload's options those of
    its compiled ``OpenLoop``: nothing about AWS is restated here, only multiplied by ``dt``.
    """
    if sim.instance is not None:
        raise ValueError("the numba port has only the loop of volumes without an instance")
    dt = sim.dt
    out = np.empty((len(workloads), N_PARAMS))
    for i, w in enumerate(workloads):
        p = sim._sim.params(i)
        native = w._native
        row = out[i]
        row[P_EARNED] = p.baseline_iops * dt
        row[P_BURST_CAP] = p.burst_iops * dt
        row[P_TPUT_HI] = p.tput_burst_bytes_s * dt
        row[P_TPUT_LO] = p.tput_base_bytes_s * dt
        row[P_CAPACITY] = p.credit_capacity
        row[P_CREDITS0] = sim._sim.credits(i)
        row[P_UNIT] = p.io_unit_bytes
        row[P_MERGE_MIN] = min(p.merge_min_bytes, p.io_unit_bytes)  # as IoCounting reads a floor above the unit
        row[P_INV_UNIT] = 1.0 / p.io_unit_bytes
        row[P_SEQUENTIAL] = 1.0 if native.sequential else 0.0
        row[P_LATENCY] = p.latency_at(native.read_fraction)  # the engine's zero-byte latency at the mix
        row[P_INV_TRANSFER] = 1.0 / p.transfer_bytes_s
        row[P_SERVICE_TIME] = native.service_time_s
        row[P_MAX_IN_FLIGHT] = native.max_in_flight
        row[P_DT] = dt
        row[P_T0] = sim.time_s
    return out


def replay(
    ops: np.ndarray, nbytes: np.ndarray, prm: np.ndarray, record: bool = True
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One volume: (totals, series (6, n) or empty, bound codes (n,) or empty).

    The series are numpy arrays allocated here, fresh on each call, as a numba user would
    (numpy's allocator; on Linux it asks for transparent huge pages on large arrays).
    """
    n = ops.shape[0]
    tot = np.empty(N_TOTALS)
    if record:
        series = np.empty((len(SERIES), n))
        codes = np.empty(n, np.uint8)
        _loop_recorded(ops, nbytes, prm, tot, series, codes)
    else:
        series = np.empty((0, 0))
        codes = np.empty(0, np.uint8)
        _loop_totals(ops, nbytes, prm, tot, series, codes)
    return tot, series, codes


def fleet(ops: np.ndarray, nbytes: np.ndarray, prm: np.ndarray, parallel: bool = False) -> np.ndarray:
    """Totals of a fleet: ``ops`` and ``nbytes`` are (volumes, steps), one row per volume."""
    tot = np.empty((ops.shape[0], N_TOTALS))
    (_fleet_parallel if parallel else _fleet)(ops, nbytes, prm, tot)
    return tot


def fleet_parallel(ops: np.ndarray, nbytes: np.ndarray, prm: np.ndarray) -> np.ndarray:
    """:func:`fleet` with ``numba.prange`` over the volumes (numba's threading layer)."""
    return fleet(ops, nbytes, prm, parallel=True)


# --- Agreement with ebssim ----------------------------------------------------------------------

RTOL = 1e-9


def _close(a: float, b: float, rtol: float = RTOL) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1.0)


def compare_totals(tot: np.ndarray, t: Any) -> List[str]:
    """Differences between one row of port totals and an ebssim ``VolumeTotals`` (empty: agree)."""
    bad = []
    for j, name in enumerate(TOTALS):
        a, b = float(getattr(t, name)), float(tot[j])
        if not _close(a, b):
            bad.append(f"{name}: ebssim {a!r}, numba {b!r}")
    a, b = float(t.cliff_time_s), float(tot[T_CLIFF_TIME_S])
    if not _close(a, b):
        bad.append(f"cliff_time_s: ebssim {a!r}, numba {b!r}")
    if len(t.cliffs) != int(tot[T_N_CLIFFS]):
        bad.append(f"cliff episodes: ebssim {len(t.cliffs)}, numba {int(tot[T_N_CLIFFS])}")
    sb_e = tuple(int(x) for x in t.steps_bound)
    sb_n = tuple(int(x) for x in tot[T_STEPS_BOUND : T_STEPS_BOUND + N_BOUNDS])
    if sb_e != sb_n:
        bad.append(f"steps_bound: ebssim {sb_e}, numba {sb_n}")
    if tot[T_INPUT_OK] != 1.0:
        bad.append("numba found invalid trace values that ebssim accepted")
    return bad


def compare_series(r: ebssim.VolumeResult, series: np.ndarray, codes: np.ndarray) -> Tuple[List[str], float]:
    """Differences between ebssim's recorded series and the port's, and the largest relative difference."""
    bad = []
    worst = 0.0
    for j, name in enumerate(SERIES):
        x = np.asarray(getattr(r, name), dtype=np.float64)
        y = series[j]
        if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
            bad.append(f"{name}: shape or NaN positions differ")
            continue
        m = ~np.isnan(x)
        if m.any():
            err = np.abs(x[m] - y[m]) / np.maximum(np.maximum(np.abs(x[m]), np.abs(y[m])), 1.0)
            k = int(np.argmax(err))
            e = float(err[k])
            worst = max(worst, e)
            if e > RTOL:
                bad.append(f"{name}: relative difference {e:.2e} at a step (ebssim {x[m][k]!r}, numba {y[m][k]!r})")
    if not np.array_equal(np.asarray(r.bound), codes):
        k = int(np.argmax(np.asarray(r.bound) != codes))
        bad.append(f"bound: differs first at step {k} (ebssim {int(r.bound[k])}, numba {int(codes[k])})")
    return bad, worst


def check_case(
    volume: ebssim.Volume, workload: ebssim.OpenLoop, dt: float = 1.0, record: bool = True
) -> Tuple[List[str], float]:
    """Replay one volume by ebssim and by the port; return the differences and the worst series difference."""
    sim = ebssim.Simulation([volume], dt=dt)
    prm = limits(sim, [workload])[0]
    r = sim.run([workload], record=record, max_memory_bytes=1 << 40)[0]
    tot, series, codes = replay(workload.ops, workload.bytes, prm, record=record)
    bad = compare_totals(tot, r.totals)
    worst = 0.0
    if record:
        more, worst = compare_series(r, series, codes)
        bad += more
    return bad, worst


def check_fleet(
    sim: ebssim.Simulation, workloads: Sequence[ebssim.OpenLoop], ops: np.ndarray, nbytes: np.ndarray
) -> List[str]:
    """ebssim's totals for a fleet against both fleet functions of the port."""
    prm = limits(sim, workloads)
    res = sim.run(list(workloads), record=False)
    bad = []
    for parallel in (False, True):
        tot = fleet(ops, nbytes, prm, parallel=parallel)
        for i, r in enumerate(res):
            bad += [f"volume {i} ({'prange' if parallel else 'serial'}): {d}" for d in compare_totals(tot[i], r.totals)]
    return bad


def _demo_cases() -> Dict[str, Tuple[ebssim.Volume, ebssim.OpenLoop, float]]:
    """Small cases that exercise every branch of the loop: several cliffs and refills, both caps,
    split and merged counting, a fixed service time, max_in_flight, a bucket-less type, an HDD."""
    rng = np.random.default_rng(7)
    n = 20_000
    phase = np.arange(n) % 1800
    # A burst at the start of every half hour, 30..300 s long, quiet in between.
    burst = phase < np.repeat(rng.uniform(30.0, 300.0, n // 1800 + 1), 1800)[:n]
    noise = 0.5 + rng.random(n)
    ops = np.floor(np.where(burst, 2500.0, 30.0) * noise)
    ops[rng.random(n) < 0.02] = 0.0  # idle steps
    size = 4096.0 * np.exp2(4.0 * rng.random(n))  # 4..64 KiB: bursts of large I/Os hit 128 MiB/s
    size[rng.random(n) < 0.03] = 512.0 * 1024.0  # random 512 KiB I/Os count 2 operations each
    size[rng.random(n) < 0.03] = 256.0 * 1024.0 * (1.0 + 1e-12)  # within the rule's tolerance: 1 each
    near = np.floor(rng.uniform(60.0, 140.0, n))  # around a 100 IOPS baseline
    mib = np.floor(np.where(burst, 150.0, 2.0) * noise)  # 1 MiB I/Os for an HDD
    return {
        "gp2 100 GiB at 2 %, random 4 KiB..512 KiB": (
            ebssim.gp2(100, burst_balance_pct=2),
            ebssim.OpenLoop(ops, ops * size),
            1.0,
        ),
        "gp2 100 GiB at 2 %, sequential, dt=0.25": (
            ebssim.gp2(100, burst_balance_pct=2),
            ebssim.OpenLoop(ops / 4, ops / 4 * size, pattern="sequential"),
            0.25,
        ),
        "gp2 20 GiB empty, at its baseline, service 2 ms": (
            ebssim.gp2(20, burst_balance_pct=0),
            ebssim.OpenLoop(near, near * 16384, service_time_ms=2, max_in_flight=64),
            1.0,
        ),
        "gp3 200 GiB, max_in_flight 1": (ebssim.gp3(200), ebssim.OpenLoop(ops, ops * 16384, max_in_flight=1), 1.0),
        "st1 500 GiB, 1 MiB sequential": (
            ebssim.st1(500, burst_balance_pct=5),
            ebssim.OpenLoop(mib, mib * 1048576.0, pattern="sequential"),
            1.0,
        ),
    }


def self_check(verbose: bool = True) -> bool:
    """Check the port against ebssim on the demo cases and a small fleet; print a line per case."""
    ok = True
    for name, (vol, w, dt) in _demo_cases().items():
        bad, worst = check_case(vol, w, dt)
        ok &= not bad
        if verbose:
            print(f"  {name:<48} {'ok' if not bad else 'MISMATCH'} (series within {worst:.1e})")
        for d in bad:
            print(f"    {d}", file=sys.stderr)
    rng = np.random.default_rng(11)
    nv, n = 8, 5_000
    ops = np.floor(rng.uniform(0, 2, (nv, 1)) * 3000.0 * rng.random((nv, n)))
    nbytes = ops * 4096.0 * np.exp2(5.0 * rng.random((nv, n)))
    vols = [ebssim.gp2(float(s)) for s in rng.integers(10, 400, nv)]
    ws = [ebssim.OpenLoop(ops[i], nbytes[i]) for i in range(nv)]
    bad = check_fleet(ebssim.Simulation(vols), ws, ops, nbytes)
    ok &= not bad
    if verbose:
        print(f"  {'fleet of 8 gp2 volumes (serial and prange)':<48} {'ok' if not bad else 'MISMATCH'}")
    for d in bad:
        print(f"    {d}", file=sys.stderr)
    return ok


def main() -> int:
    print(f"numba {numba.__version__} port of the ebssim step loop against ebssim {ebssim.__version__} (rtol {RTOL:g})")
    return 0 if self_check() else 1


if __name__ == "__main__":
    sys.exit(main())
