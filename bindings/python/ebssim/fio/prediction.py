"""Prediction: fio runs simulated back to back on :class:`ebssim.Volume` objects (and an instance) with
ebssim's public API, each job clone a closed loop sharing its volumes' limits, in fio's phases, giving
what fio would report (:class:`FioPrediction` of :class:`JobPrediction`, written by
:mod:`ebssim.fio.report`) and the logs the jobs ask for (windowed from the simulated steps, written by
:mod:`ebssim.fio.logs`); also :func:`parse_volume_spec` for ``ebssim fio``'s ``--volume`` specs.
What a prediction may cost is in :mod:`ebssim.fio.cost`.
"""

# The mapping from fio to the model (docs/fio.md has the details and the assumptions):
#
# - Each job clone (``numjobs``) is a closed loop of ``effective_depth`` users (1 per job for
#   synchronous engines such as psync, ``iodepth`` for async ones) issuing ``bs`` I/Os, with
#   ``thinktime`` between an I/O's completion and the next submission, capped by ``rate_iops`` /
#   ``rate``. Unthrottled, a clone offers ``R = min(depth / (s + think), rate caps)`` I/Os per second.
# - Clones on the same volume at the same time share its limits: the volume serves the same
#   fraction ``f`` of every clone's offer (``f < 1`` when a limit binds); the instance, if any,
#   shares its budget between volumes in the same way.
# - A clone's latency is its service time ``s`` while unthrottled; throttled, Little's law over its
#   closed loop: ``depth / served rate - think``.
# - Jobs run in fio's phases (``stonewall``/``wait_for_previous``); a phase ends when its last job
#   does. A job ends after ``ramp_time + runtime`` when ``time_based``, otherwise when it has moved
#   ``io_size`` (or ``size``; by default the volume's size) bytes after its ramp, or at
#   ``ramp_time + runtime`` if that comes first. Runs follow each other; volume and instance state
#   carries over, and a volume no job uses in a phase rests.

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import _repr
from .._outputs import input_at
from .._rds import rds_from_spec
from ..instances import Instance
from ..latency import LatencyModel, latency_moments, latency_quantiles, submission_share
from ..recording import BOUND_NAMES
from ..simulation import Simulation
from ..stripes import StripedSet, _target
from ..volumes import NITRO_OVERSHOOT_S, Volume, volume_from_spec, volume_spec
from ..workloads import Idle, LoopResult, SharedClosedLoops, Workload
from ._files import PathLike
from ._types import JobPrediction, LatencyStats, _Clone
from .cmdline import parse_run
from .cost import _check_log_rows, _Work
from .histograms import FIO_PERCENTILES
from .job import FioJob, FioJobError, FioJobSet
from .logs import LOG_OPTIONS, WindowedLog, window_steps, write_logs
from .report import _normal_report, _prediction_json, parse_json

__all__ = [
    "FioPrediction",
    "JobPrediction",
    "parse_volume_spec",
    "volume_from_spec",
    "volume_spec",
    "predict",
]

FloatArray = npt.NDArray[np.float64]


def parse_volume_spec(arg: str) -> Tuple[str, Union[Volume, StripedSet]]:
    """``TARGET=SPEC`` -> (target, Volume or StripedSet).

    A volume SPEC ``TYPE[:key=value,...]`` is read by :func:`ebssim.volumes.volume_from_spec` (the
    grammar, its keys and defaults, are in :mod:`ebssim.volumes`); a striped set
    ``raid0[:chunk=KIB,members=N]+SPEC[+SPEC...]`` by :func:`ebssim.target_from_spec`; RDS
    storage ``rds:engine=ENGINE,type=TYPE,size=GIB[,iops=,throughput=,chunk=]`` by
    :func:`ebssim.rds_from_spec` (its volumes). Invalid combinations raise ValueError naming the rule.
    """
    if "=" not in arg:
        raise ValueError(f"--volume {arg!r}: expected TARGET=TYPE[:key=value,...], e.g. /dev/nvme1n1=gp3:size=100")
    target, spec = arg.split("=", 1)
    if not target:
        raise ValueError(f"--volume {arg!r}: the TARGET before '=' is empty")
    if spec.startswith("rds:"):
        try:
            return target, rds_from_spec(spec).volumes
        except ValueError as e:
            raise ValueError(f"--volume {arg!r}: {e}") from None
    return target, _target(spec, f"--volume {arg!r}")


class FioPrediction:
    """fio's report for every job of every run, predicted. :meth:`to_json` gives fio's JSON shape."""

    jobs: List[JobPrediction]
    """What fio would report for each job (or reporting group), in the order the runs ran them."""
    runs: List[str]
    """A label per run: its job file, or its command line."""

    def __init__(self, jobs: List[JobPrediction], runs: List[str]) -> None:
        self.jobs = jobs
        self.runs = runs

    def to_json(self) -> Dict[str, Any]:
        """One fio-shaped JSON document listing the jobs of every run in order."""
        return _prediction_json(self.jobs, self.runs)

    def to_pandas(self) -> Any:
        """The report as :func:`ebssim.fio.read_json` reads fio's: the same rows and columns as
        ``read_json(...).jobs`` (one row per job and direction that did I/O, latency in ns), so
        predictions and measurements line up column by column.

        Statistics fio measures and the model does not (window statistics, CPU) are NaN; what
        fio cannot know (run, cliff time, binding limit) is in :attr:`jobs` and in
        :meth:`to_json`'s ``ebssim`` objects.
        """
        return parse_json(self.to_json(), source="<prediction>").jobs

    def to_normal(self) -> str:
        """A report that reads like fio's normal output."""
        return _normal_report(self.jobs)

    def __repr__(self) -> str:
        n, runs = len(self.jobs), len(self.runs)
        head = f"{n} job{'s' * (n != 1)} in {runs} run{'s' * (runs != 1)}"
        jobs = [f"{j.name}: {j._cells()[2]}, {j._cells()[4]} mean latency, bound by {j.bound}" for j in self.jobs]
        return _repr.short_repr("FioPrediction", [head, *jobs], sep="; ")

    def _repr_html_(self) -> str:
        """A table with a row per job (Jupyter shows it): IOPS, bandwidth, latency, cliff, binding limit."""
        header = ["run", "job", "IOPS", "bandwidth", "mean latency", "p99", "cliff", "bound by"]
        n = len(self.jobs)
        return _repr.html_grid(f"FioPrediction: {n} job{'s' * (n != 1)}", header, [j._cells() for j in self.jobs])


# --------------------------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------------------------


def _match_volumes(job: FioJob, targets: Sequence[str], where: str) -> List[int]:
    """The volumes a job does I/O to, one per file (fio spreads I/O round-robin over its files)."""
    prefix = "" if job.source else f"{where}: "

    def error(reason: str) -> FioJobError:
        msg = f"{prefix}job {job.name!r} {reason}"
        return FioJobError(msg, source=job.source or None, line=job.line, key="filename")

    paths = job.targets
    if not paths:
        raise error(
            "has no filename or directory; give filename= matching a --volume TARGET "
            f"({', '.join(targets) or 'none given'})"
        )
    found: List[int] = []
    for p in paths:
        # The most specific TARGET wins: an exact match, else the deepest directory.
        hit = None
        best = -1
        for i, t in enumerate(targets):
            if p == t:
                hit, best = i, 1 << 30
            elif p.startswith(t.rstrip("/") + "/") and len(t) > best:
                hit, best = i, len(t)
        if hit is None:
            raise error(
                f"filename {p!r} matches no --volume TARGET (given: {', '.join(targets) or 'none'}); "
                f"add e.g. --volume {p}=gp3"
            )
        found.append(hit)
    return found


def _clone(
    job: FioJob, run: int, label: str, vi: int, vol: Volume, share: float = 1.0, instance: Optional[Instance] = None
) -> _Clone:
    load = job.offered_load(vol, share)  # the one mapping from a fio job to the model's load
    # Reads of bs_read and writes of bs_write: the model at the read size, the write's own time.
    # An asynchronous engine's job spends part of each held I/O's wait in io_submit: fio's slat.
    nitro = True if instance is None else bool(instance.nitro)
    slat_share = 0.0 if job.sync_engine else submission_share(job.effective_depth, nitro)
    model = dataclasses.replace(
        LatencyModel.of(vol, job.bs_read, job.read_fraction, instance=instance),
        write_service_s=load.write_service_s,
        submission_share=slat_share,
    )
    size = job.size
    if size is None and job.size_percent is not None:
        size = int(vol.size_gib * 2**30 * job.size_percent / 100)
    if size is None:
        size = int(vol.size_gib * 2**30)  # fio on a block device: its whole size
    target = float(job.io_size if job.io_size is not None else size) * max(1, job.loops) * share
    runtime = job.runtime
    if job.time_based:
        byte_target = None
    else:
        byte_target = float(target)
    return _Clone(
        job=job,
        run=run,
        run_label=label,
        volume=vi,
        loop=load.loop,
        service_s=load.service_s,
        model=model,
        io_bytes=load.loop.io_bytes,
        counted=load.counted,
        rate=load.offered_iops,
        cap=load.cap_iops,
        ramp_s=job.ramp_time,
        runtime_s=runtime,
        byte_target=byte_target,
    )


def _wait_spreads(clones_by_run: List[List[_Clone]], vols: Sequence[Volume], instance: Optional[Instance]) -> None:
    """Each clone's wait spread at the I/Os its phase keeps in flight on its volume, every job of
    the run in that phase together (the platform's default by depth, docs/model.md, "Latency
    percentiles"; a volume's or instance's own ``wait_cv`` stays)."""
    for clones in clones_by_run:
        depth: Dict[Tuple[int, int], float] = {}
        for c in clones:
            key = (c.job.phase, c.volume)
            depth[key] = depth.get(key, 0.0) + float(c.loop.in_flight) * c.count
        for c in clones:
            m = LatencyModel.of(
                vols[c.volume],
                c.job.bs_read,
                c.job.read_fraction,
                instance=instance,
                in_flight=depth[(c.job.phase, c.volume)],
            )
            c.model = dataclasses.replace(c.model, wait_cv=m.wait_cv, instance_wait_cv=m.instance_wait_cv)


def _member_clone(
    job: FioJob, run: int, label: str, vi: int, stripe: StripedSet, share: float, instance: Optional[Instance]
) -> _Clone:
    """One member's part of a job on a striped set (docs/fio.md, "Striped sets"): the member runs
    the job's I/Os cut at the chunks (the core's ``stripe_split``), ``share x member_share`` of
    the job's depth, counted and timed as pieces; its ops are set I/Os (pieces / pieces_per_io)."""
    split = stripe.split(job.mean_io_size)
    p = split.pieces_per_io
    pj = dataclasses.replace(
        job,
        bs_read=max(1, int(round(stripe.split(job.bs_read).piece_bytes))),
        bs_write=max(1, int(round(stripe.split(job.bs_write).piece_bytes))),
    )
    vol = stripe.members[0]
    c = _clone(pj, run, label, vi, vol, share * split.member_share, instance)
    c.pieces = p
    c.io_bytes = c.io_bytes * p  # set I/O bytes
    c.rate = c.rate / p  # set I/Os per second (this member's part)
    c.counted = c.counted * p  # counted operations per set I/O
    c.cap = job._rate_cap(share * split.member_share / p) * p  # the job's caps on set I/Os, in pieces
    if c.byte_target is not None:  # the job's bytes over the set: this member moves 1/n of them
        size = job.size
        if size is None and job.size_percent is not None:
            size = int(stripe.size_gib * 2**30 * job.size_percent / 100)
        if size is None:
            size = int(stripe.size_gib * 2**30)
        c.byte_target = float(job.io_size if job.io_size is not None else size) * max(1, job.loops) * share / stripe.n
    return c


def _choose_dt(runs: Sequence[FioJobSet]) -> float:
    times = [t for js in runs for j in js.jobs for t in (j.runtime, j.ramp_time) if t]
    shortest = min((j.runtime for js in runs for j in js.jobs if j.runtime), default=math.inf)

    def whole(dt: float) -> bool:
        return all(abs(t / dt - round(t / dt)) < 1e-9 for t in times)

    # At least ~100 steps in the shortest timed job, at most 1 s steps, and every runtime and
    # ramp a whole number of steps when that is possible.
    for dt in (1.0, 0.1, 0.01, 0.001):
        if shortest / dt >= 100 and whole(dt):
            return dt
    return 0.001


def predict(
    runs: Sequence[Union[PathLike, FioJobSet]],
    volumes: Mapping[str, Union[Volume, StripedSet]],
    *,
    instance: Union[Instance, str, None] = None,
    dt: Optional[float] = None,
    log_dir: Optional[PathLike] = ".",
    allow_outside_log_paths: bool = False,
) -> FioPrediction:
    """Simulate fio runs back to back on the given volumes and predict fio's report.

    Parameters
    ----------
    runs : job file paths, ``"fio ..."`` command lines, or parsed :class:`FioJobSet`
    volumes : mapping TARGET -> Volume or StripedSet
        A job's filename matches TARGET exactly or lies under it (TARGET a directory). A striped
        set's members are simulated as volumes sharing the instance; a job on it runs on each.
    instance : Instance or instance type name, optional
    dt : float, optional
        Simulation step; default chosen from the shortest timed job (1 s down to 1 ms).
    log_dir : path or None
        Where the jobs' ``write_*_log`` files go (fio writes them in the working directory);
        None writes none.
    allow_outside_log_paths : bool, default False
        Write logs whose names are absolute or climb out of ``log_dir`` (``write_iops_log=/x``,
        ``=../x``) where they point, as fio does. By default such a job is refused: job files
        come from anywhere, and a prediction should not write outside ``log_dir``.

    Raises
    ------
    ValueError
        A job that cannot be simulated (:class:`FioJobError`, naming file, line and option), a
        log path outside ``log_dir`` or one that is an input (a RUN's job file or include, by
        device and inode: checked before anything is written), or a run too large to simulate:
        the work is estimated before the simulation starts, and a run needing more than
        :data:`~ebssim.fio.cost.MAX_JOB_STEPS` job-steps, :data:`~ebssim.fio.cost.MAX_VOLUME_STEPS`
        volume-steps, :data:`~ebssim.fio.cost.MAX_LOG_ROWS` log rows or
        :data:`~ebssim.fio.cost.MAX_JOB_EVENTS` job-events is refused with the figure and the way
        out (a coarser ``dt``, shorter jobs, fewer jobs).
    """
    jobsets, labels = _parse_runs(runs)
    return _predict(jobsets, labels, volumes, instance, dt, log_dir, allow_outside_log_paths)


def _parse_runs(runs: Sequence[Union[PathLike, FioJobSet]]) -> Tuple[List[FioJobSet], List[str]]:
    """The runs parsed, and their labels (``ebssim fio`` parses them first, to check its ``--output``)."""
    jobsets: List[FioJobSet] = []
    labels: List[str] = []
    for r in runs:
        if isinstance(r, FioJobSet):
            jobsets.append(r)
            labels.append(r.source or "<jobs>")
        else:
            try:
                jobsets.append(parse_run(r))
            except FioJobError as e:
                if "no jobs" in str(e):
                    raise FioJobError(f"RUN {str(r)!r}: {e}") from None
                raise
            labels.append(str(r))
    return jobsets, labels


def _input_files(jobsets: Sequence[FioJobSet]) -> List[str]:
    """Every file the runs were read from (job files and their includes): nothing may be written over them."""
    return [f for js in jobsets for f in js.input_files]


def _predict(
    jobsets: List[FioJobSet],
    labels: List[str],
    volumes: Mapping[str, Union[Volume, StripedSet]],
    instance: Union[Instance, str, None],
    dt: Optional[float],
    log_dir: Optional[PathLike],
    allow_outside_log_paths: bool,
) -> FioPrediction:
    """:func:`predict` of parsed runs."""
    if not volumes:
        raise ValueError("no --volume given: every job's filename must match a simulated volume")
    targets = list(volumes)
    # Each target's volumes in the simulation: a volume, or a striped set's members.
    vols: List[Volume] = []
    first: List[int] = []
    for t in targets:
        first.append(len(vols))
        v = volumes[t]
        vols.extend(v.members if isinstance(v, StripedSet) else [v])
    step = dt if dt is not None else _choose_dt(jobsets)
    sim = Simulation(vols, dt=step, instance=instance)
    # The limiter's second (overshoot, docs/model.md): none by default in the engine, but a fio
    # run lasts seconds, where a second of the cap is 3-10 % of it, so on Nitro (or without an
    # instance) the volumes that do not say otherwise take the Nitro depth.
    if sim.instance is None or sim.instance.nitro:
        depth = NITRO_OVERSHOOT_S
        over = [v if v.overshoot_s is not None else dataclasses.replace(v, overshoot_s=depth) for v in vols]
        if over != vols:
            vols = over
            sim = Simulation(vols, dt=step, instance=sim.instance)

    clones_by_run: List[List[_Clone]] = []
    for ri, (js, label) in enumerate(zip(jobsets, labels)):
        clones: List[_Clone] = []
        for job in js.jobs:  # numjobs clones as one _Clone each (see _Clone)
            hits = _match_volumes(job, targets, label)
            for ti in hits:  # a job on several files: an equal share on each
                target = volumes[targets[ti]]
                if isinstance(target, StripedSet):
                    parts = [
                        _member_clone(job, ri, label, first[ti] + k, target, 1.0 / len(hits), sim.instance)
                        for k in range(target.n)
                    ]
                else:
                    parts = [_clone(job, ri, label, first[ti], target, 1.0 / len(hits), sim.instance)]
                for c in parts:
                    c.count = job.numjobs
                    clones.append(c)
        clones_by_run.append(clones)

    _wait_spreads(clones_by_run, vols, sim.instance)

    # Log paths are checked before anything is simulated, so that a refused path costs nothing.
    inputs = _input_files(jobsets)
    logs_by_run: List[Dict[int, Dict[str, List[str]]]] = [
        {j.thread_number: _log_paths(j, log_dir, allow_outside_log_paths, inputs) for j in js.jobs}
        if log_dir is not None
        else {}
        for js in jobsets
    ]
    work = _Work(step, vols)
    work.estimate(clones_by_run, logs_by_run)

    for clones in clones_by_run:
        by_phase: Dict[int, List[_Clone]] = {}
        for c in clones:
            by_phase.setdefault(c.job.phase, []).append(c)
        for phase in sorted(by_phase):
            _run_phase(sim, by_phase[phase], len(vols), work)

    if log_dir is not None:
        _write_logs(clones_by_run, logs_by_run, step)

    out: List[JobPrediction] = []
    for clones, label in zip(clones_by_run, labels):
        groups: Dict[int, List[_Clone]] = {}
        for c in clones:
            groups.setdefault(c.job.groupid, []).append(c)
        for members in groups.values():
            if any(m.job.group_reporting for m in members):
                out.append(_summarise(members, step, label, weighted=True))
            else:
                by_thread: Dict[int, List[_Clone]] = {}
                for m in members:
                    by_thread.setdefault(m.job.thread_number, []).append(m)
                for ms in by_thread.values():
                    # The job's clones report the same figures: one summary, one entry per clone.
                    one = _summarise(ms, step, label, weighted=False)
                    out.extend([one] + [dataclasses.replace(one) for _ in range(ms[0].count - 1)])
    return FioPrediction(out, labels)


def _run_phase(sim: Simulation, clones: List[_Clone], n_volumes: int, work: _Work) -> None:
    dt = sim.dt
    t0 = sim.time_s
    for c in clones:
        c.start_s = t0
    active = list(clones)
    f_prev = [1.0] * n_volumes
    guard = 0
    while active:
        guard += 1
        if guard > 10_000_000:
            raise RuntimeError("fio phase did not finish")  # pragma: no cover
        now = sim.time_s
        # Steps until the next event: a ramp or runtime ending, or a byte target being reached.
        horizon = math.inf
        for c in active:
            el = now - c.start_s
            if el < c.ramp_s:
                horizon = min(horizon, c.ramp_s - el)
            if c.runtime_s is not None:
                horizon = min(horizon, c.ramp_s + c.runtime_s - el)
            if c.byte_target is not None and el >= c.ramp_s:
                r = c.rate * f_prev[c.volume] * c.io_bytes
                if r > 0:
                    horizon = min(horizon, (c.byte_target - c.bytes_after_ramp) / r)
        n = 1 if math.isinf(horizon) else max(1, int(math.floor(horizon / dt + 1e-9)))
        n = min(n, 1_000_000)
        # The clones on each volume share its limits (SharedClosedLoops); a _Clone is `count` copies.
        workloads: List[Union[Workload, SharedClosedLoops]] = []
        by_volume: Dict[int, List[_Clone]] = {}
        for c in active:
            by_volume.setdefault(c.volume, []).append(c)
        for vi in range(n_volumes):
            mine = by_volume.get(vi, [])
            if not mine:
                workloads.append(Idle())
                continue
            workloads.append(
                SharedClosedLoops(
                    [c.loop for c in mine], max_iops=[c.cap for c in mine], copies=[c.count for c in mine]
                )
            )
        work.spend(n, len(active), now)
        res = sim.run(workloads, n * dt)
        parts: Dict[int, LoopResult] = {}
        for vi, mine in by_volume.items():
            shared = workloads[vi]
            assert isinstance(shared, SharedClosedLoops)
            parts.update(zip((id(c) for c in mine), shared.split(res[vi])))
        ended: List[_Clone] = []
        for c in active:
            vr = res[c.volume]
            mine_now = parts[id(c)]
            f = mine_now.fraction
            f_prev[c.volume] = float(f[-1])
            served = mine_now.iops / c.pieces  # I/Os per second: the clone's offer times f (set I/Os on a member)
            elapsed = vr.time_s - c.start_s  # at each step's start
            after_ramp = elapsed >= c.ramp_s - 1e-9
            lat = mine_now.latency_s  # the service time unthrottled; throttled, Little's law over the clone's loop
            ops: FloatArray = served * dt * after_ramp
            end_k = n
            by_runtime = False
            if c.runtime_s is not None:
                over = np.flatnonzero(elapsed + dt > c.ramp_s + c.runtime_s + 1e-9)
                if over.size:
                    end_k = min(end_k, int(over[0]) + 1)
                    by_runtime = True
                    # A runtime that ends inside a step: only that part of the step counts.
                    k = end_k - 1
                    part = (c.ramp_s + c.runtime_s - elapsed[k]) / dt
                    if part < 1.0:
                        ops = ops.copy()
                        ops[k] *= max(0.0, part)
            if c.byte_target is not None:
                cum = c.bytes_after_ramp + np.cumsum(ops * c.io_bytes)
                hit = np.nonzero(cum >= c.byte_target * (1 - 1e-12))[0]
                if hit.size and int(hit[0]) + 1 <= end_k:
                    k = int(hit[0])
                    end_k = k + 1
                    # The last step serves only what the target still needs.
                    before = cum[k - 1] if k > 0 else c.bytes_after_ramp
                    need = (c.byte_target - before) / c.io_bytes
                    ops = ops.copy()
                    ops[k] = need
            sl = slice(0, end_k)
            c.t.append(vr.time_s[sl] - c.start_s - c.ramp_s)
            c.ops.append(ops[sl])
            c.lat.append(lat[sl])
            c.bound.append(vr.bound[sl])
            c.bytes_after_ramp += float((ops[sl] * c.io_bytes).sum())
            # Times in fio's time base: from the end of the job's ramp.
            if vr.cliff_time_s is not None and c.cliff_s is None:
                c.cliff_s = vr.cliff_time_s - c.start_s - c.ramp_s
            if res.instance is not None and res.instance.cliff_time_s is not None and c.instance_cliff_s is None:
                c.instance_cliff_s = res.instance.cliff_time_s - c.start_s - c.ramp_s
            c.balance_end = vr.burst_balance_end_pct
            if end_k < n or (end_k == n and _done(c, now + n * dt)):
                if c.byte_target is not None and c.bytes_after_ramp >= c.byte_target * (1 - 1e-12):
                    frac = float(ops[end_k - 1] / (served[end_k - 1] * dt)) if served[end_k - 1] > 0 else 1.0
                    c.end_s = vr.time_s[end_k - 1] + frac * dt
                elif by_runtime and c.runtime_s is not None:
                    c.end_s = c.start_s + c.ramp_s + c.runtime_s
                else:
                    c.end_s = vr.time_s[end_k - 1] + dt
                ended.append(c)
        gone = {id(c) for c in ended}
        active = [c for c in active if id(c) not in gone]


def _done(c: _Clone, now: float) -> bool:
    el = now - c.start_s
    if c.runtime_s is not None and el >= c.ramp_s + c.runtime_s - 1e-9:
        return True
    return c.byte_target is not None and c.bytes_after_ramp >= c.byte_target * (1 - 1e-12)


# --------------------------------------------------------------------------------------------
# Summaries and output
# --------------------------------------------------------------------------------------------


def _summarise(members: List[_Clone], dt: float, label: str, *, weighted: bool) -> JobPrediction:
    """One report entry: all ``members`` with each _Clone's ``count`` clones (``weighted``, a
    reporting group), or one clone of each (a job's clones, reported one by one)."""
    first = members[0]
    weight = [float(m.count) if weighted else 1.0 for m in members]
    t = np.concatenate([np.concatenate(m.t) if m.t else np.empty(0) for m in members])
    ops = np.concatenate([np.concatenate(m.ops) * w if m.ops else np.empty(0) for m, w in zip(members, weight)])
    lat = np.concatenate([np.concatenate(m.lat) if m.lat else np.empty(0) for m in members])
    bound = np.concatenate([np.concatenate(m.bound) if m.bound else np.empty(0, np.uint8) for m in members])
    model = _group_model([m.model for m in members], weight)
    total = float(ops.sum())
    io_bytes = float(sum((np.concatenate(m.ops) * m.io_bytes * w).sum() for m, w in zip(members, weight) if m.ops))
    runtime = max((m.end_s or m.start_s) - m.start_s - m.ramp_s for m in members)
    runtime = max(runtime, 0.0)
    by_direction: Dict[str, LatencyStats] = {}
    if total > 0:
        mean = float((lat * ops).sum() / total)
        _, every = _latency_stats(lat, ops, bound, model, "all")
        std, pct, lo, hi = every.stddev_s, every.percentiles_s, every.min_s, every.max_s
        rf = model.read_fraction
        if 0 < rf < 1:  # a mix: each direction its own service time
            by_direction = {d: _latency_stats(lat, ops, bound, model, d)[1] for d in ("read", "write")}
        else:  # one direction: it is every I/O
            by_direction = {"read" if rf == 1 else "write": every}
    else:
        mean = std = lo = hi = math.nan
        pct = {float(p): math.nan for p in FIO_PERCENTILES}
    weights = np.bincount(bound, weights=ops, minlength=len(BOUND_NAMES)) if bound.size else np.zeros(len(BOUND_NAMES))
    wsum = float(weights.sum())
    cliffs = [m.cliff_s for m in members if m.cliff_s is not None]
    icliffs = [m.instance_cliff_s for m in members if m.instance_cliff_s is not None]
    return JobPrediction(
        name=first.job.name,
        run=label,
        groupid=first.job.groupid,
        clones=int(sum({m.job.thread_number: w for m, w in zip(members, weight)}.values())),
        read_fraction=first.job.read_fraction,
        io_bytes=io_bytes,
        total_ios=total,
        runtime_s=runtime,
        latency_mean_s=mean,
        latency_stddev_s=std,
        latency_min_s=lo,
        latency_max_s=hi,
        percentiles_s=pct,
        cliff_time_s=min(cliffs) if cliffs else None,
        instance_cliff_time_s=min(icliffs) if icliffs else None,
        burst_balance_end_pct=first.balance_end,
        bound_fraction={n: float(w / wsum) for n, w in zip(BOUND_NAMES, weights)} if wsum > 0 else {},
        job_options={k: ("" if v is None else str(v)) for k, v in first.job.job_options.items()},
        series={"t": t, "ops": ops, "lat": lat},
        by_direction=by_direction,
    )


def _group_model(models: Sequence[LatencyModel], weight: Sequence[float]) -> LatencyModel:
    """One latency model for a reporting group: each parameter the I/O-weighted mean of its
    members' (one job: that job's model)."""
    if len(models) == 1:
        return models[0]
    w = np.asarray(weight, dtype=float)

    def avg(name: str) -> float:
        return float(np.average([getattr(m, name) for m in models], weights=w))

    return LatencyModel(*(avg(f) for f in LatencyModel.__dataclass_fields__))


def _latency_stats(
    lat: FloatArray, ops: FloatArray, bound: npt.NDArray[np.uint8], model: LatencyModel, direction: str
) -> Tuple[bool, LatencyStats]:
    """The latency of one direction's I/Os (``all``: every I/O) under ``model``: fio's clat (the
    wait after submission and the service) and the mean slat (the total's mean less clat's, so
    that lat = slat + clat); False when the job does none of that direction."""
    share = {"all": 1.0, "read": model.read_fraction, "write": 1.0 - model.read_fraction}[direction]
    if share <= 0:
        return False, LatencyStats(math.nan, math.nan, math.nan, math.nan, {})
    b = bound if bound.size == lat.size else None
    mean, std = latency_moments(lat, ops, model, bound=b, direction=direction)
    # Reads and writes wait alike: one slat for both directions, the I/O-weighted mean of the steps'.
    slat = 0.0
    if model.submission_share > 0:
        done = np.isfinite(lat) & (ops > 0)
        slat = float(np.average(model.submission_latency_s(lat[done]), weights=ops[done]))
    qs = latency_quantiles(
        lat, ops, np.array(FIO_PERCENTILES, dtype=float) / 100.0, model, bound=b, direction=direction
    )
    lo, hi = (float(v) for v in latency_quantiles(lat, ops, [1e-6, 1 - 1e-6], model, bound=b, direction=direction))
    pct = {float(p): float(v) for p, v in zip(FIO_PERCENTILES, qs)}
    return True, LatencyStats(mean, std, lo, hi, pct, slat)


def _log_paths(job: FioJob, log_dir: PathLike, allow_outside: bool, inputs: Sequence[str]) -> Dict[str, List[str]]:
    """Where each of the job's logs goes, by kind (one path per clone, or one shared path).

    A name that is absolute or leaves ``log_dir`` (``..``, or a symbolic link out of it) is
    refused unless ``allow_outside``: fio would write there, but job files are downloaded and
    run by people who did not read them. A log that would be written over one of ``inputs``
    (the runs' job files and includes; a job file named like its own log) is always refused.
    """
    base = os.fspath(log_dir)
    real_base = os.path.realpath(base)
    out: Dict[str, List[str]] = {}
    for kind, names in job.log_file_names().items():
        paths: List[str] = []
        for name in names:
            path = os.path.join(base, name)
            if not allow_outside:
                real = os.path.realpath(path)
                inside = not os.path.isabs(name) and os.path.commonpath([real_base, real]) == real_base
                if not inside:
                    option = next(o for o, kinds in LOG_OPTIONS.items() if kind in kinds)
                    raise FioJobError(
                        f"job {job.name!r}: {option}={getattr(job, option)} writes {name!r}, outside the log "
                        f"directory {base!r}: ebssim writes logs only under it (--log-dir); use a relative name, "
                        f"or --allow-outside-log-paths (allow_outside_log_paths=True) to write there as fio would",
                        source=job.source or None,
                        line=job.line,
                        key=option,
                    )
            folder = os.path.dirname(path) or "."
            if not os.path.isdir(folder):
                raise FioJobError(
                    f"job {job.name!r}: log file {path!r}: directory {folder!r} does not exist",
                    source=job.source or None,
                    line=job.line,
                )
            overwritten = input_at(path, inputs)
            if overwritten is not None:
                option = next(o for o, kinds in LOG_OPTIONS.items() if kind in kinds)
                raise FioJobError(
                    f"job {job.name!r}: {option}={getattr(job, option)} writes the log {path!r}, which is the input "
                    f"{overwritten!r}: writing it would overwrite it; choose another log name or --log-dir",
                    source=job.source or None,
                    line=job.line,
                    key=option,
                )
            if os.path.exists(path) and not os.path.isfile(path):
                raise FioJobError(
                    f"job {job.name!r}: log file {path!r} exists and is not a regular file",
                    source=job.source or None,
                    line=job.line,
                )
            paths.append(path)
        out[kind] = paths
    return out


def _log_windows(parts: List[_Clone], dt: float, paths: Dict[str, List[str]]) -> Optional[WindowedLog]:
    """The windows of one job's logs (``parts``: the job's _Clone on each of its volumes)."""
    job = parts[0].job
    if not paths or not parts[0].t:
        return None
    t = np.concatenate(parts[0].t)
    ops = np.zeros_like(t)
    lat_ops = np.zeros_like(t)
    slat_ops = np.zeros_like(t)
    for c in parts:
        o = np.concatenate(c.ops)[: t.size]
        lat = np.concatenate(c.lat)[: o.size]
        ops[: o.size] += o
        lat_ops[: o.size] += o * lat
        if c.model.submission_share > 0:  # fio's slat: part of the wait (docs/model.md)
            slat_ops[: o.size] += np.where(o > 0, o * c.model.submission_latency_s(lat), 0.0)
    keep = t >= -1e-9  # fio logs nothing during the ramp
    t, ops, lat_ops, slat_ops = t[keep], ops[keep], lat_ops[keep], slat_ops[keep]
    per = window_steps(job.log_avg_msec, dt)
    n = (t.size // per) * per
    w_ops = ops[:n].reshape(-1, per).sum(axis=1)

    def mean(x: FloatArray) -> FloatArray:
        total = x[:n].reshape(-1, per).sum(axis=1)
        return np.asarray(np.divide(total, w_ops, out=np.zeros_like(w_ops), where=w_ops > 0), dtype=np.float64)

    w_lat = mean(lat_ops)
    w_slat = mean(slat_ops) if not job.sync_engine else None
    w_end_ms = (t[:n].reshape(-1, per)[:, -1] + dt) * 1000
    dirs = [
        (d, share, bs)
        for d, share, bs in ((0, job.read_fraction, job.bs_read), (1, 1 - job.read_fraction, job.bs_write))
        if share > 0
    ]
    return WindowedLog(paths, w_end_ms, w_ops, w_lat, per * dt, dirs, job.numjobs, w_slat)


def _write_logs(
    clones_by_run: List[List[_Clone]], logs_by_run: List[Dict[int, Dict[str, List[str]]]], dt: float
) -> None:
    """Each job's logs, one row per window and direction (:class:`~ebssim.fio.logs.WindowedLog`).

    Times count from the end of the job's ramp, as fio's do; a job on several volumes logs the sum
    of its shares; every clone of a job logs the same rows. Nothing is written when the logs would
    exceed :data:`~ebssim.fio.cost.MAX_LOG_ROWS`.
    """
    runs: List[List[WindowedLog]] = []
    for clones, paths in zip(clones_by_run, logs_by_run):
        by_job: Dict[int, List[_Clone]] = {}
        for c in clones:
            by_job.setdefault(c.job.thread_number, []).append(c)
        found = [_log_windows(parts, dt, paths.get(thread, {})) for thread, parts in by_job.items()]
        runs.append([lg for lg in found if lg is not None])
    _check_log_rows(sum(lg.rows for run_logs in runs for lg in run_logs))
    for run_logs in runs:
        write_logs(run_logs)
