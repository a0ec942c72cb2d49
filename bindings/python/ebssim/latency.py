"""The latency model (docs/model.md, "Latency percentiles"), computed by the C++ core.

In a step whose mean latency is ``m`` (Little's law), an I/O waits ``W`` for the limit that holds
it back and is then served in ``S``. ``S`` is gamma-distributed with the read or write service
time as its mean and coefficient of variation ``service_cv``; ``W`` is gamma-distributed with mean
``max(0, m - s)`` (``s`` the I/O-weighted mean service time, so a step's mean stays ``m``) and
coefficient of variation ``wait_cv`` (``instance_wait_cv`` in steps the instance's limits hold
back; by default the platform's, the instance's at the run's I/Os in flight:
:func:`default_wait_spread`). Over a run the distribution mixes the steps, weighted by the I/Os
each completes. These functions take per-step series, so callers that assemble their own (fio
predictions) use the same model as :meth:`VolumeResult.latency_percentiles`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _core
from ._units import flag, real, real_array
from .instances import Instance
from .volumes import Volume
from .workloads import ClosedLoop

__all__ = [
    "DIRECTIONS",
    "LatencyModel",
    "closed_loop_latency_s",
    "default_wait_spread",
    "held_in_flight",
    "latency_moments",
    "latency_quantiles",
    "submission_share",
]

FloatArray = npt.NDArray[np.float64]

#: The directions a latency distribution can describe: every I/O, the reads, the writes.
DIRECTIONS: Tuple[str, ...] = ("all", "read", "write")


def check_latency_at(at: str, name: str = "at") -> str:
    """``at``, where a latency counts from, checked: ``"arrival"`` (each I/O's arrival) or
    ``"device"`` (its submission to the device); a ValueError naming ``name`` otherwise."""
    if at not in ("arrival", "device"):
        raise ValueError(
            f"{name}={at!r} must be 'arrival' (from each I/O's arrival) or 'device' (from its submission to the device)"
        )
    return at


def default_wait_spread(nitro: bool = True, in_flight: float = math.inf) -> Tuple[float, float]:
    """The default coefficients of variation of the wait under a volume's and under an instance's
    limits, on Nitro (``nitro=True``) or Xen instances, with ``in_flight`` I/Os in flight on the
    volume (C++ ``default_wait_spread``, ``instance_wait_cv_at``; docs/model.md, "Latency
    percentiles", with the measurements behind them). Nitro: 0.65 under a volume's limits; under
    the instance's 0.2 up to 16 in flight, 0.65 from 256, linear in log(in flight) between
    (``math.inf``, the default: a backlog without bound). Xen: 0.1 and 0.1.

    >>> [tuple(round(v, 4) for v in default_wait_spread(in_flight=n)) for n in (16, 64, 256)]
    [(0.65, 0.2), (0.65, 0.425), (0.65, 0.65)]
    >>> default_wait_spread(False, 16)
    (0.1, 0.1)
    """
    n = real(in_flight, "in_flight", "a number of I/Os in flight")
    try:
        vol, inst = _core.default_wait_spread(flag(nitro, "nitro"), n)
    except ValueError as e:
        raise ValueError(f"default_wait_spread: {e}") from None
    return float(vol), float(inst)


def held_in_flight(mean_latency_s: npt.ArrayLike, iops: npt.ArrayLike, service_s: float) -> float:
    """The I/Os a run keeps in flight while a limit holds it (C++ ``held_in_flight``, Little's
    law): the mean over the steps whose mean latency ``mean_latency_s`` exceeds ``service_s`` of
    ``iops x latency``; over every step that completes I/O when none was held; NaN when none
    does. A closed loop of N I/Os (no think time) gives N.

    >>> held_in_flight([0.0005, 0.016, 0.016], [32000, 1000, 1000], 0.0005)  # 16 in flight, held
    16.0
    """
    lat = np.asarray(real_array(mean_latency_s, "mean_latency_s"), dtype=np.float64)
    rate = np.asarray(real_array(iops, "iops"), dtype=np.float64)
    s = real(service_s, "service_s", "a number of seconds")
    try:
        return float(_core.held_in_flight(lat, rate, s))
    except ValueError as e:
        raise ValueError(f"held_in_flight: {e}") from None


def submission_share(depth: float, nitro: bool = True, submitting: Optional[float] = None) -> float:
    """The share of a held I/O's wait that fio reports as submission latency (``slat``) for a job
    of an asynchronous engine (libaio) keeping ``depth`` I/Os in flight: ``submitting / depth``, at
    most 1 (docs/model.md, "Submission latency"). ``submitting`` is the share of its time a held
    job spends in ``io_submit``; by default the platform's, measured on Nitro (0.84) and Xen (0.75).

    >>> round(submission_share(16), 4), round(submission_share(32, nitro=False), 4)
    (0.0525, 0.0234)
    """
    d = real(depth, "depth", "a number of I/Os in flight")
    sub = _core.default_submitting(flag(nitro, "nitro")) if submitting is None else real(submitting, "submitting")
    try:
        return float(_core.submission_share(d, sub))
    except ValueError as e:
        raise ValueError(f"submission_share: {e}") from None


@dataclass(frozen=True)
class LatencyModel:
    """The latency model of one run (C++ ``LatencyModel``): mean unloaded service times of a read
    and of a write (seconds), the share of reads, the service time's coefficient of variation,
    and the wait's under the volume's and under the instance's limits; ``submission_share``, the
    share of each wait spent before submission (fio's ``slat``, :func:`submission_share`): the
    distributions then describe the rest, fio's ``clat`` (0: the whole latency). Checked on
    construction."""

    read_service_s: float
    write_service_s: float
    read_fraction: float = 1.0
    service_cv: float = 0.5
    wait_cv: float = 0.65
    instance_wait_cv: float = 0.65
    submission_share: float = 0.0

    def __post_init__(self) -> None:
        self._native()  # a ValueError names the field

    def _native(self) -> _core.LatencyModel:
        return _core.LatencyModel(
            real(self.read_service_s, "read_service_s", "a number of seconds"),
            real(self.write_service_s, "write_service_s", "a number of seconds"),
            real(self.read_fraction, "read_fraction", "a share of reads from 0 to 1"),
            real(self.service_cv, "service_cv"),
            real(self.wait_cv, "wait_cv"),
            real(self.instance_wait_cv, "instance_wait_cv"),
            real(self.submission_share, "submission_share"),
        )

    def submission_latency_s(self, mean_latency_s: npt.ArrayLike) -> FloatArray:
        """fio's mean submission latency (``slat``), seconds, of steps of these mean latencies:
        ``submission_share`` of each step's wait ``max(0, m - s)`` (C++ ``submission_latency_s``;
        docs/model.md, "Submission latency"). NaN (nothing completed) stays NaN.

        >>> m = LatencyModel(0.001, 0.001, submission_share=0.05)  # 1 ms service; 41 ms: a 40 ms wait
        >>> [round(float(v) * 1e3, 9) for v in m.submission_latency_s([0.041, 0.0008])]
        [2.0, 0.0]
        """
        lat = np.asarray(real_array(mean_latency_s, "mean_latency_s"), dtype=np.float64)
        return np.asarray(_core.submission_latency_s(lat, self._native()), dtype=np.float64)

    @property
    def mean_service_s(self) -> float:
        """The I/O-weighted mean service time (what the engine's Little's law uses)."""
        return float(self._native().mean_service_s())

    @classmethod
    def of(
        cls,
        volume: Volume,
        io_bytes: float,
        read_fraction: float,
        *,
        nitro: Optional[bool] = None,
        service_time_s: Optional[float] = None,
        instance: Optional[Instance] = None,
        in_flight: Optional[float] = None,
    ) -> "LatencyModel":
        """The model of I/Os of ``io_bytes`` with this share of reads on ``volume`` attached to
        ``instance`` (an :class:`ebssim.Instance`; or, without one, a Nitro (``nitro=True``, the
        default) or Xen instance): its service times per direction, their spread, and the waits'
        spread under the volume's limits (its ``wait_cv``, else the platform's default: the
        core's rule, as the engine builds the volume) and under the instance's (the instance's
        ``wait_cv``, else the platform's with ``in_flight`` I/Os in flight on the volume,
        :func:`default_wait_spread`; None: a backlog without bound, the widest);
        ``service_time_s`` a workload's own service time for both directions."""
        if not isinstance(volume, Volume):
            raise ValueError(f"volume must be an ebssim.Volume, got {type(volume).__name__}")
        if instance is not None:
            if not isinstance(instance, Instance):
                raise ValueError(f"instance must be an ebssim.Instance or None, got {type(instance).__name__}")
            if nitro is not None and bool(nitro) != bool(instance.nitro):
                raise ValueError(
                    f"nitro={nitro!r} contradicts instance {instance.name!r} (nitro={instance.nitro!r}): "
                    "give one of them"
                )
            nitro = bool(instance.nitro)
        nitro = True if nitro is None else flag(nitro, "nitro")
        # The volume's parameters on this platform, as Simulation builds them (make_volume).
        p = volume._params if nitro else _core.make_volume(volume._spec(), False)
        if service_time_s is not None:
            rs = ws = real(service_time_s, "service_time_s", "a number of seconds")
        else:
            size = real(io_bytes, "io_bytes", "a number of bytes")
            rs, ws = float(p.service_time_s(size, 1.0)), float(p.service_time_s(size, 0.0))
        # The instance's spread: its own, else the platform's at this depth (make_instance leaves it NaN).
        depth = math.inf if in_flight is None else real(in_flight, "in_flight", "a number of I/Os in flight")
        inst = float(instance._params.wait_cv) if instance is not None else math.nan
        if math.isnan(inst):
            inst = default_wait_spread(nitro, 0.0 if math.isnan(depth) else depth)[1]
        return cls(rs, ws, read_fraction, float(p.latency_cv), float(p.wait_cv), inst)


def _direction(direction: str) -> int:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction={direction!r} must be one of {', '.join(DIRECTIONS)}")
    return DIRECTIONS.index(direction)


def _bound(bound: Optional[npt.ArrayLike], n: int) -> npt.NDArray[np.uint8]:
    if bound is None:
        return np.zeros(0, dtype=np.uint8)
    b = np.asarray(bound)
    if b.dtype.kind not in "ui" or b.ndim != 1:
        raise ValueError(f"bound must be a 1-d array of Bound codes (integers), got {b.dtype} with shape {b.shape}")
    if b.size and (int(b.min()) < 0 or int(b.max()) > 255):
        raise ValueError(f"bound holds {int(b.min())}..{int(b.max())}: Bound codes are 0 to 5")
    return b.astype(np.uint8, copy=False)


def latency_quantiles(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    quantiles: npt.ArrayLike,
    model: LatencyModel,
    *,
    bound: Optional[npt.ArrayLike] = None,
    direction: str = "all",
) -> FloatArray:
    """Quantiles (each 0..1) of the latency, seconds, of the I/Os completed over a run.

    ``mean_latency_s[k]`` and ``completions[k]`` per step (steps that complete nothing, or have
    NaN latency, drop out; NaN for every quantile when nothing completed); ``model`` the
    :class:`LatencyModel`; ``bound[k]`` the step's Bound code (the ``bound`` series), which picks
    the instance's wait spread where the instance held the step (None: the volume's everywhere);
    ``direction`` ``"all"``, ``"read"`` or ``"write"``. A completion count is finite and >= 0, a
    mean latency NaN or finite and >= 0. Raises ValueError on bad input, naming the argument.
    """
    if not isinstance(model, LatencyModel):
        raise ValueError(f"model must be an ebssim.LatencyModel, got {type(model).__name__}")
    lat, done = _steps(mean_latency_s, completions)
    return _core.latency_quantiles(
        lat, done, _bound(bound, lat.size), model._native(), real_array(quantiles, "quantiles"), _direction(direction)
    )


def latency_moments(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    model: LatencyModel,
    *,
    bound: Optional[npt.ArrayLike] = None,
    direction: str = "all",
) -> Tuple[float, float]:
    """Mean and standard deviation, seconds, of the latency of the I/Os completed over a run.

    The same model and inputs as :func:`latency_quantiles` (exact: the spread of the step means
    plus each step's wait and service variance). ``(nan, nan)`` when nothing completed.
    """
    if not isinstance(model, LatencyModel):
        raise ValueError(f"model must be an ebssim.LatencyModel, got {type(model).__name__}")
    lat, done = _steps(mean_latency_s, completions)
    mean, std = _core.latency_moments(lat, done, _bound(bound, lat.size), model._native(), _direction(direction))
    return float(mean), float(std)


def _steps(mean_latency_s: npt.ArrayLike, completions: npt.ArrayLike) -> Tuple[FloatArray, FloatArray]:
    """The per-step arrays as the core takes them (their types checked here, naming each; their
    values, in the core)."""
    return real_array(mean_latency_s, "mean_latency_s"), real_array(completions, "completions")


def closed_loop_latency_s(volume: Volume, workload: ClosedLoop, iops: npt.ArrayLike) -> FloatArray:
    """Mean latency, seconds, of ``workload``'s I/Os on ``volume`` when it completes ``iops`` I/Os per second.

    Little's law over each user's cycle: ``in_flight / iops - think time``, never below the
    service time (the workload's, else the volume's model); NaN where ``iops`` is 0. The engine
    reports the same for a closed loop with nothing queued. Returns an array shaped like ``iops``,
    which must hold finite rates >= 0 (a ValueError names the first that is not).
    """
    if not isinstance(volume, Volume):
        raise ValueError(f"volume must be an ebssim.Volume, got {type(volume).__name__}")
    if not isinstance(workload, ClosedLoop):
        raise ValueError(f"closed_loop_latency_s takes a ClosedLoop workload, got {type(workload).__name__}")
    rate = real_array(iops, "iops")
    bad = ~(np.isfinite(rate) & (rate >= 0))
    if bad.any():
        at = np.unravel_index(int(np.argmax(bad)), rate.shape)
        where = "" if rate.ndim == 0 else f"[{', '.join(str(int(i)) for i in at)}]"
        raise ValueError(f"iops{where}={float(rate[at]):g} must be a finite number of I/Os per second >= 0")
    out = _core.closed_loop_latency_s(volume._params, workload._native, rate.ravel())
    return out.reshape(rate.shape)
