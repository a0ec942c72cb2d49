"""What a prediction may cost: the work and memory of :func:`ebssim.fio.predict` (job-steps,
volume-steps, log rows, job-events), estimated from each job's shortest possible time before anything
is simulated and counted again while it runs, and the limits (:data:`MAX_JOB_STEPS`,
:data:`MAX_VOLUME_STEPS`, :data:`MAX_LOG_ROWS`, :data:`MAX_JOB_EVENTS`) past which a run is refused
with the figure and the way out.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from ..volumes import Volume
from .logs import empty_when_predicted, window_steps

if TYPE_CHECKING:
    from ._types import _Clone

__all__ = ["MAX_JOB_EVENTS", "MAX_JOB_STEPS", "MAX_LOG_ROWS", "MAX_VOLUME_STEPS"]

#: Job-steps one :func:`ebssim.fio.predict` may simulate: each job's steps, summed over jobs (a job's
#: ``numjobs`` clones count once). About 100 bytes of memory each, so the limit is about 1 GB.
MAX_JOB_STEPS = 10_000_000
#: Volume-steps one :func:`ebssim.fio.predict` may simulate: steps of every phase times the volumes given.
MAX_VOLUME_STEPS = 100_000_000
#: Rows the jobs' ``write_*_log`` files may hold together (about 25 bytes each).
MAX_LOG_ROWS = 10_000_000
#: Job-events one :func:`ebssim.fio.predict` may handle: a job's ramp end or end is an event, and every job
#: of the phase still running does some Python work at each (about 70 us), so jobs that end at
#: many different times cost time quadratic in their number.
MAX_JOB_EVENTS = 250_000


def _steps(seconds: float, dt: float) -> float:
    return math.inf if not math.isfinite(seconds) else max(1.0, math.ceil(seconds / dt - 1e-9))


def _where(c: _Clone) -> str:
    job = c.job
    at = f"{job.source}:{job.line}" if job.line is not None else (job.source or c.run_label)
    return f"job {job.name!r} ({at})"


def _check_log_rows(rows: float) -> None:
    """Refuse logs of more than :data:`MAX_LOG_ROWS` rows."""
    if rows <= MAX_LOG_ROWS:
        return
    raise ValueError(
        f"the jobs' logs would hold {'at least ' if math.isinf(rows) else ''}{rows:,.0f} rows, more than the "
        f"limit of {MAX_LOG_ROWS:,} (ebssim.fio.cost.MAX_LOG_ROWS): average them over longer windows "
        f"(log_avg_msec=1000), use a coarser --dt, or write no logs (--no-logs; log_dir=None)"
    )


class _Work:
    """What a prediction costs: estimated before the run, and counted while it runs."""

    def __init__(self, dt: float, volumes: Sequence[Volume]) -> None:
        self.dt = dt
        self.volumes = list(volumes)
        self.job_steps = 0.0
        self.volume_steps = 0.0
        self.events = 0.0

    def min_duration(self, c: _Clone) -> float:
        """The shortest time the job can take: its runtime, or its bytes at the fastest rate it
        could get (its own offer, and its volume's highest limits)."""
        if c.byte_target is None:
            return c.ramp_s + (c.runtime_s or 0.0)
        vol = self.volumes[c.volume]
        rate = c.rate * c.io_bytes
        rate = min(rate, vol.max_throughput_mib_s * 2**20, vol.max_iops / c.counted * c.io_bytes)
        d = c.ramp_s + (c.byte_target / rate if rate > 0 else math.inf)
        return d if c.runtime_s is None else min(d, c.ramp_s + c.runtime_s)

    def estimate(self, clones_by_run: List[List[_Clone]], logs_by_run: List[Dict[int, Dict[str, List[str]]]]) -> None:
        """Refuse a prediction whose work or memory is too large, before anything is simulated.

        The figures are lower bounds (a throttled size-limited job takes longer): :meth:`spend`
        keeps counting during the run.
        """
        dt = self.dt
        job_steps = volume_steps = rows = events = 0.0
        longest: Optional[Tuple[float, _Clone]] = None
        busiest: Tuple[float, int, int] = (0.0, 0, 0)  # job-events, jobs, end times
        for clones, logs in zip(clones_by_run, logs_by_run):
            phases: Dict[int, float] = {}
            ends: Dict[int, Set[float]] = {}
            jobs: Dict[int, int] = {}
            logged: Set[int] = set()
            for c in clones:
                d = self.min_duration(c)
                job_steps += _steps(d, dt)
                phases[c.job.phase] = max(phases.get(c.job.phase, 0.0), d)
                ends.setdefault(c.job.phase, set()).update((_steps(c.ramp_s, dt), _steps(d, dt)))
                jobs[c.job.phase] = jobs.get(c.job.phase, 0) + 1
                if longest is None or d > longest[0]:
                    longest = (d, c)
                paths = logs.get(c.job.thread_number)
                if paths and c.job.thread_number not in logged:  # once per job, not per volume
                    logged.add(c.job.thread_number)
                    job = c.job
                    per = window_steps(job.log_avg_msec, dt)
                    kinds = sum(1 for k in paths if not empty_when_predicted(k, job.sync_engine))
                    dirs = int(job.read_fraction > 0) + int(job.read_fraction < 1)
                    windows = math.floor(max(0.0, d - c.ramp_s) / dt / per + 1e-9) if math.isfinite(d) else math.inf
                    rows += windows * kinds * dirs * c.count
            volume_steps += sum(_steps(d, dt) for d in phases.values()) * len(self.volumes)
            for phase, n_jobs in jobs.items():
                # Every ramp or job end is an event, and every job still running does work at each:
                # about half the jobs, when the ends are spread.
                cost = n_jobs * len(ends[phase]) / 2
                events += cost
                if cost > busiest[0]:
                    busiest = (cost, n_jobs, len(ends[phase]))
        if job_steps > MAX_JOB_STEPS and longest is not None:
            d, c = longest
            need = dt * job_steps / MAX_JOB_STEPS
            raise ValueError(
                f"this prediction needs at least {job_steps:,.0f} job-steps of dt={dt:g} s, more than the limit "
                f"of {MAX_JOB_STEPS:,} (ebssim.fio.cost.MAX_JOB_STEPS, about 1 GB of memory); the longest, "
                f"{_where(c)}, runs at least {d:,.6g} s: use a coarser --dt ({need:.3g} s or more), "
                f"a shorter runtime or smaller size, or fewer jobs"
            )
        if volume_steps > MAX_VOLUME_STEPS:
            raise ValueError(
                f"this prediction needs at least {volume_steps:,.0f} volume-steps ({len(self.volumes)} volume(s) "
                f"stepped at dt={dt:g} s), more than the limit of {MAX_VOLUME_STEPS:,} "
                f"(ebssim.fio.cost.MAX_VOLUME_STEPS): use a coarser --dt, shorter jobs, or fewer --volume"
            )
        _check_log_rows(rows)
        if events > MAX_JOB_EVENTS:
            raise ValueError(
                f"this prediction needs about {events:,.0f} job-events, more than the limit of {MAX_JOB_EVENTS:,} "
                f"(ebssim.fio.cost.MAX_JOB_EVENTS, about 20 s of work): {busiest[1]:,} jobs run in one phase "
                f"and end at {busiest[2]:,} different times, and each end makes every running job do work; give "
                f"the jobs of a phase the same size or runtime, split them into phases (stonewall), or run fewer"
            )

    def spend(self, n_steps: int, n_active: int, now_s: float) -> None:
        """Count a stretch of the run; refuse it when the run turns out larger than estimated."""
        self.job_steps += n_steps * n_active
        self.volume_steps += n_steps * len(self.volumes)
        self.events += n_active
        if self.events > MAX_JOB_EVENTS:
            raise ValueError(
                f"the simulation passed the limit of {MAX_JOB_EVENTS:,} job-events at t={now_s:g} s "
                f"(ebssim.fio.cost.MAX_JOB_EVENTS): too many jobs of one phase end at different times (they "
                f"share their volume, so they end later and further apart than estimated); give them the same "
                f"size or runtime, split them into phases (stonewall), or run fewer"
            )
        if self.job_steps > MAX_JOB_STEPS or self.volume_steps > MAX_VOLUME_STEPS:
            raise ValueError(
                f"the simulation passed the limit of {MAX_JOB_STEPS:,} job-steps or {MAX_VOLUME_STEPS:,} "
                f"volume-steps at t={now_s:g} s (ebssim.fio.cost.MAX_JOB_STEPS, MAX_VOLUME_STEPS): a job "
                f"that ends when it has moved its size was throttled and runs longer than its fastest time; "
                f"use a coarser --dt (now {self.dt:g} s), a smaller size or io_size, or a runtime limit"
            )
