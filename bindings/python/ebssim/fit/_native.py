"""The one module of ebssim.fit that calls the compiled core (its fitter, ``ebssim/fit.hpp``).

The fitter's results are the core's read-only classes (``_core.LevelsFit``, ``_core.BucketFit``,
``_core.SimulatedWindows``, ``_core.ServiceTimeFit``, ``_core.GammaFit``; parameters as
``_core.ParamFit``), returned as they are.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from .. import _core
from ..instances import Instance
from ..volumes import Volume

FloatArray = npt.NDArray[np.float64]
#: (start_s, end_s, io_bytes, read_fraction, sequential, demand_iops): one phase of load.
PhaseTuple = Tuple[float, float, float, float, bool, float]
#: (start_s, end_s, start change index or -1, end change index or -1): one segment of constant level.
SegmentTuple = Tuple[float, float, int, int]


def fit_levels(
    start_s: FloatArray,
    end_s: FloatArray,
    value: FloatArray,
    weight: FloatArray,
    segments: Sequence[SegmentTuple],
    level0: Sequence[float],
    change0: Sequence[float],
) -> _core.LevelsFit:
    return _core.fit_levels(start_s, end_s, value, weight, list(segments), list(level0), list(change0))


def fit_bucket_volume(
    vtype: str,
    size_gib: Optional[float],
    size_guess_gib: Optional[float],
    balance_guess_pct: float,
    phases: Sequence[PhaseTuple],
    start_s: FloatArray,
    end_s: FloatArray,
    value: FloatArray,
    weight: FloatArray,
    dt_s: float,
    instance: Optional[Instance] = None,
) -> _core.BucketFit:
    return _core.fit_bucket_volume(
        vtype,
        math.nan if size_gib is None else float(size_gib),
        math.nan if size_guess_gib is None else float(size_guess_gib),
        float(balance_guess_pct),
        list(phases),
        start_s,
        end_s,
        value,
        weight,
        float(dt_s),
        _instance_spec(instance),
    )


def _instance_spec(instance: Optional[Instance]) -> Optional[_core.InstanceSpec]:
    """The instance's limits for the forward model (None: the volume alone): the spec the
    instance itself is built from (``Instance._spec``)."""
    return None if instance is None else instance._spec()


def simulate_windows(
    volume: Volume,
    phases: Sequence[PhaseTuple],
    start_s: FloatArray,
    end_s: FloatArray,
    dt_s: float,
    instance: Optional[Instance] = None,
) -> _core.SimulatedWindows:
    """The fitter's forward model: the engine runs ``phases`` on ``volume`` (attached to
    ``instance``, if any); mean served IOPS per window. The volume and instance go to the core
    as the specs they are built from (each phase's offered rate sets its own service time)."""
    return _core.simulate_windows(volume._spec(), list(phases), start_s, end_s, float(dt_s), _instance_spec(instance))


def fit_service_time(
    io_bytes: FloatArray, latency_s: FloatArray, weight: FloatArray, default_per_byte_s: float
) -> _core.ServiceTimeFit:
    return _core.fit_service_time(io_bytes, latency_s, weight, float(default_per_byte_s))


def fit_gamma(lower_s: FloatArray, upper_s: FloatArray, counts: FloatArray) -> _core.GammaFit:
    return _core.fit_gamma(lower_s, upper_s, counts)


def bound_names() -> List[str]:
    from ..recording import BOUND_NAMES

    return list(BOUND_NAMES)
