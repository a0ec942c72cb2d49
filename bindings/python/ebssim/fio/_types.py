"""The data types that the prediction (:mod:`ebssim.fio.prediction`), its cost
(:mod:`ebssim.fio.cost`) and its report (:mod:`ebssim.fio.report`) share: the job clones being
simulated (``_Clone``) and what fio would report for a job (:class:`JobPrediction`). In a module
of their own, so that the three import them and not each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .. import _repr
from ..latency import LatencyModel
from ..workloads import ClosedLoop
from .job import FioJob

__all__ = ["JobPrediction"]

FloatArray = npt.NDArray[np.float64]


@dataclass(eq=False)
class _Clone:
    """``count`` identical fio job clones being simulated (a job's ``numjobs``, on one of its volumes).

    Clones of one job start together, offer the same load and are served the same fraction of it,
    so one stands for all: the cost of a job does not grow with ``numjobs``. Per-step series are
    one clone's; the volume's load is ``count`` times that.
    """

    job: FioJob
    run: int
    run_label: str
    volume: int
    loop: ClosedLoop  # the clone alone on its volume: depth, think time, mean I/O size, counting
    service_s: float
    model: LatencyModel  # service times per direction, their spread, the waits' spread
    io_bytes: float  # mean bytes per I/O
    counted: float  # EBS-counted operations per I/O
    rate: float  # offered I/Os per second, unthrottled
    cap: float  # the rate_iops/rate caps, I/Os per second (inf: none)
    ramp_s: float
    runtime_s: Optional[float]
    byte_target: Optional[float]
    count: int = 1
    # On a member of a striped set: member I/Os (chunks) per set I/O. The loop, service time and
    # counting are the member's, in pieces; ops, rate and io_bytes are in set I/Os.
    pieces: float = 1.0
    start_s: float = 0.0
    end_s: Optional[float] = None
    bytes_after_ramp: float = 0.0
    # Per-step series while the clone ran (after the ramp): time, I/Os, latency, bound.
    t: List[FloatArray] = field(default_factory=list)
    ops: List[FloatArray] = field(default_factory=list)
    lat: List[FloatArray] = field(default_factory=list)
    bound: List[npt.NDArray[np.uint8]] = field(default_factory=list)
    cliff_s: Optional[float] = None
    instance_cliff_s: Optional[float] = None
    balance_end: Optional[float] = None


@dataclass(frozen=True)
class LatencyStats:
    """The latency of one direction's I/Os in a :class:`JobPrediction`, seconds: fio's completion
    latency (``clat``), and ``slat_mean_s`` the mean submission latency (``slat``: 0 for a
    synchronous engine; docs/model.md, "Submission latency"), so that fio's ``lat`` averages
    ``mean_s + slat_mean_s``."""

    mean_s: float
    stddev_s: float
    min_s: float
    max_s: float
    percentiles_s: Dict[float, float]
    slat_mean_s: float = 0.0

    def _rows(self) -> List[Tuple[str, str]]:
        rows = [(name, _repr.latency_s(getattr(self, f"{name}_s"))) for name in ("mean", "stddev", "min", "max")]
        return rows + [(f"p{p:g}", _repr.latency_s(v)) for p, v in self.percentiles_s.items()]

    def __repr__(self) -> str:
        return _repr.short_repr("LatencyStats", [f"{k} {v}" for k, v in self._rows()])

    def _repr_html_(self) -> str:
        return _repr.html_table("LatencyStats", self._rows())


@dataclass
class JobPrediction:
    """What fio would report for one job clone (or one reporting group).

    ``series`` holds per-step arrays: ``t`` (s from the end of the ramp), ``ops`` (I/Os done in
    the step by all the clones the entry covers) and ``lat`` (mean latency, s); a reporting group
    concatenates its jobs' series.
    """

    name: str
    run: str
    groupid: int
    clones: int
    read_fraction: float
    io_bytes: float
    total_ios: float
    runtime_s: float
    latency_mean_s: float
    latency_stddev_s: float
    latency_min_s: float
    latency_max_s: float
    percentiles_s: Dict[float, float]
    cliff_time_s: Optional[float]
    instance_cliff_time_s: Optional[float]
    burst_balance_end_pct: Optional[float]
    bound_fraction: Dict[str, float]
    job_options: Dict[str, str]
    series: Dict[str, FloatArray]
    by_direction: Dict[str, LatencyStats] = field(default_factory=dict)
    """The latency of the reads and of the writes (each direction the job does), which differ when
    the volume serves them in different times."""

    @property
    def iops(self) -> float:
        return self.total_ios / self.runtime_s if self.runtime_s > 0 else 0.0

    @property
    def bw_bytes_s(self) -> float:
        return self.io_bytes / self.runtime_s if self.runtime_s > 0 else 0.0

    @property
    def bound(self) -> str:
        """The limit that bound most of the time (``demand``: none)."""
        return max(self.bound_fraction.items(), key=lambda kv: kv[1])[0] if self.bound_fraction else "demand"

    def _cells(self) -> List[str]:
        """run, job, IOPS, bandwidth, mean latency, p99, cliff, binding limit: a row of the report."""
        p99 = self.percentiles_s.get(99.0)
        return [
            self.run,
            self.name if self.clones == 1 else f"{self.name} (x{self.clones})",
            _repr.number(self.iops, "IOPS"),
            _repr.number(self.bw_bytes_s / 2**20, "MiB/s"),
            _repr.latency_s(self.latency_mean_s),
            _repr.latency_s(p99),
            "none" if self.cliff_time_s is None else _repr.when(self.cliff_time_s),
            self.bound,
        ]

    def __repr__(self) -> str:
        run, name, iops, bw, mean, p99, cliff, bound = self._cells()
        return _repr.short_repr(
            "JobPrediction",
            [f"{name} ({run})", iops, bw, f"{mean} mean latency", f"p99 {p99}", f"cliff {cliff}", f"bound by {bound}"],
        )

    def _repr_html_(self) -> str:
        keys = ["run", "job", "IOPS", "bandwidth", "mean latency", "p99", "cliff", "bound by"]
        return _repr.html_table(f"JobPrediction: {self.name}", list(zip(keys, self._cells())))
