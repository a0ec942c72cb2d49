"""The latency model (docs/model.md, "Latency percentiles"), computed by the C++ core.

In a step whose mean latency is ``m``, an I/O waits ``max(0, m - s)`` and is then served in a
gamma-distributed time of mean ``s`` (the unloaded service time, shape
:data:`SERVICE_TIME_SHAPE`); over a run the distribution mixes the steps, weighted by the I/Os
each completes. These functions take per-step series, so callers that assemble their own (fio
predictions) use the same model as :meth:`VolumeResult.latency_percentiles`.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np
import numpy.typing as npt

from . import _core
from ._units import real, real_array
from .volumes import Volume
from .workloads import ClosedLoop

__all__ = ["SERVICE_TIME_SHAPE", "closed_loop_latency_s", "latency_moments", "latency_quantiles"]

FloatArray = npt.NDArray[np.float64]

#: Default gamma shape of the service-time distribution (4: coefficient of variation 0.5).
SERVICE_TIME_SHAPE: float = float(_core.default_service_shape)


def latency_quantiles(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    service_time_s: float,
    quantiles: npt.ArrayLike,
    *,
    shape: float = SERVICE_TIME_SHAPE,
) -> FloatArray:
    """Quantiles (each 0..1) of the latency, seconds, of the I/Os completed over a run.

    ``mean_latency_s[k]`` and ``completions[k]`` per step (steps that complete nothing, or have
    NaN latency, drop out; NaN for every quantile when nothing completed); ``service_time_s`` the
    unloaded service time. A completion count is finite and >= 0, a mean latency NaN or finite
    and >= 0. Raises ValueError on bad input, naming the argument (and the step).
    """
    return _core.latency_quantiles(
        *_steps(mean_latency_s, completions, service_time_s, shape)[:3],
        real_array(quantiles, "quantiles"),
        real(shape, "shape"),
    )


def latency_moments(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    service_time_s: float,
    *,
    shape: float = SERVICE_TIME_SHAPE,
) -> Tuple[float, float]:
    """Mean and standard deviation, seconds, of the latency of the I/Os completed over a run.

    The same model and inputs as :func:`latency_quantiles`: the spread of the step means plus the
    service time's variance ``s**2 / shape``. ``(nan, nan)`` when nothing completed.
    """
    mean, std = _core.latency_moments(*_steps(mean_latency_s, completions, service_time_s, shape))
    return float(mean), float(std)


def _steps(
    mean_latency_s: npt.ArrayLike, completions: npt.ArrayLike, service_time_s: float, shape: float
) -> Tuple[FloatArray, FloatArray, float, float]:
    """The per-step arguments of the latency model as the core takes them: arrays of numbers and
    numbers (their types checked here, naming each; their values, in the core)."""
    return (
        real_array(mean_latency_s, "mean_latency_s"),
        real_array(completions, "completions"),
        real(service_time_s, "service_time_s", "a number of seconds"),
        real(shape, "shape"),
    )


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
