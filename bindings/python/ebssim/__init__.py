"""ebssim: simulate Amazon EBS volume performance over time.

>>> import ebssim
>>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(in_flight=32, io_size="4k"), duration_s=2700)
>>> r.cliff_time_s
2000.0
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from . import _lazy

# Every public name is imported on first use (ebssim._lazy), so that `import ebssim` and
# `ebssim --help` stay fast; the imports below are what mypy and IDEs see.
if TYPE_CHECKING:
    # Submodules with their own namespace: ebssim.trace (pandas traces), ebssim.aws (AWS input),
    # ebssim.analysis (cliffs, bound time, latency spans), ebssim.testing (capacity plans as tests),
    # ebssim.cost (prices), ebssim.advise (migration advice), ebssim.k8s (Kubernetes manifests),
    # ebssim.fleet (many volumes in one call, on every core or a Dask cluster), ebssim.check
    # (capacity plans in YAML: ebssim check).
    from . import advise, analysis, aws, check, cost, fleet, k8s, testing, trace
    from ._limits import LimitError, Limits, limits
    from ._rds import RdsStorage, db_instance, rds, rds_from_spec
    from .analysis import Cliff
    from .burst import ClosedLoopRate, burst_duration_s, cliff_time_s, closed_loop_rate, counted_iops, refill_time_s
    from .instances import SHARE_POLICIES, Catalog, Instance, NoEbsLimitsWarning, instance, load_catalog
    from .latency import (
        LatencyModel,
        closed_loop_latency_s,
        default_wait_spread,
        held_in_flight,
        latency_moments,
        latency_quantiles,
        submission_share,
    )
    from .plot import plot
    from .recording import BOUND_NAMES, INSTANCE_SERIES, VOLUME_SERIES, Recording
    from .results import InstanceResult, LatencyPercentiles, RunResult, VolumeResult, VolumeSummary, WindowStats
    from .simulation import (
        CliffEpisode,
        InstanceSeries,
        InstanceTotals,
        Simulation,
        VolumeSeries,
        VolumeTotals,
        simulate,
    )
    from .stripes import StripedResult, StripedSet, striped, target_from_spec
    from .volumes import (
        NITRO_OVERSHOOT_S,
        VOLUME_TYPES,
        Volume,
        VolumeTypeInfo,
        gp2,
        gp3,
        io1,
        io2,
        sc1,
        st1,
        standard,
        volume_types,
    )
    from .workloads import (
        ClosedLoop,
        Idle,
        LoopResult,
        OpenLoop,
        PhasedClosedLoop,
        PiecewiseOpenLoop,
        SharedClosedLoops,
        Workload,
    )

__version__ = "0.1.0"

__all__ = [
    "BOUND_NAMES",
    "NITRO_OVERSHOOT_S",
    "INSTANCE_SERIES",
    "LatencyModel",
    "LatencyPercentiles",
    "SHARE_POLICIES",
    "VOLUME_SERIES",
    "VOLUME_TYPES",
    "Catalog",
    "Cliff",
    "CliffEpisode",
    "Instance",
    "InstanceResult",
    "InstanceSeries",
    "InstanceTotals",
    "ClosedLoop",
    "ClosedLoopRate",
    "Idle",
    "LimitError",
    "Limits",
    "LoopResult",
    "NoEbsLimitsWarning",
    "OpenLoop",
    "PhasedClosedLoop",
    "PiecewiseOpenLoop",
    "Recording",
    "RdsStorage",
    "RunResult",
    "SharedClosedLoops",
    "Simulation",
    "StripedResult",
    "StripedSet",
    "Volume",
    "VolumeResult",
    "VolumeSeries",
    "VolumeSummary",
    "VolumeTotals",
    "VolumeTypeInfo",
    "WindowStats",
    "Workload",
    "advise",
    "aws",
    "analysis",
    "check",
    "cost",
    "fleet",
    "burst_duration_s",
    "cliff_time_s",
    "closed_loop_latency_s",
    "closed_loop_rate",
    "counted_iops",
    "db_instance",
    "gp2",
    "gp3",
    "instance",
    "io1",
    "io2",
    "k8s",
    "default_wait_spread",
    "held_in_flight",
    "latency_moments",
    "latency_quantiles",
    "submission_share",
    "limits",
    "load_catalog",
    "sc1",
    "st1",
    "standard",
    "plot",
    "rds",
    "rds_from_spec",
    "refill_time_s",
    "simulate",
    "striped",
    "target_from_spec",
    "testing",
    "volume_types",
    "trace",
]

_EXPORTS = {
    "._limits": ("LimitError", "Limits", "limits"),
    ".analysis": ("Cliff",),
    ".burst": (
        "ClosedLoopRate",
        "burst_duration_s",
        "cliff_time_s",
        "closed_loop_rate",
        "counted_iops",
        "refill_time_s",
    ),
    ".instances": ("SHARE_POLICIES", "Catalog", "Instance", "NoEbsLimitsWarning", "instance", "load_catalog"),
    ".latency": (
        "LatencyModel",
        "closed_loop_latency_s",
        "default_wait_spread",
        "held_in_flight",
        "latency_moments",
        "latency_quantiles",
        "submission_share",
    ),
    ".plot": ("plot",),
    ".recording": ("BOUND_NAMES", "INSTANCE_SERIES", "VOLUME_SERIES", "Recording"),
    "._rds": ("RdsStorage", "db_instance", "rds", "rds_from_spec"),
    ".stripes": ("StripedResult", "StripedSet", "striped", "target_from_spec"),
    ".results": ("InstanceResult", "LatencyPercentiles", "RunResult", "VolumeResult", "VolumeSummary", "WindowStats"),
    ".simulation": (
        "CliffEpisode",
        "InstanceSeries",
        "InstanceTotals",
        "Simulation",
        "VolumeSeries",
        "VolumeTotals",
        "simulate",
    ),
    ".volumes": (
        "NITRO_OVERSHOOT_S",
        "VOLUME_TYPES",
        "Volume",
        "VolumeTypeInfo",
        "gp2",
        "gp3",
        "io1",
        "io2",
        "sc1",
        "st1",
        "standard",
        "volume_types",
    ),
    ".workloads": (
        "ClosedLoop",
        "Idle",
        "LoopResult",
        "OpenLoop",
        "PhasedClosedLoop",
        "PiecewiseOpenLoop",
        "SharedClosedLoops",
        "Workload",
    ),
}

if not TYPE_CHECKING:  # mypy sees the imports above, not a catch-all __getattr__
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)

    class _Package(type(sys.modules[__name__])):
        def __setattr__(self, name, value):
            # `import ebssim.plot` sets ebssim.plot to the submodule; ebssim.plot stays the function.
            if name == "plot" and getattr(value, "__name__", None) == f"{__name__}.plot":
                value = value.plot
            super().__setattr__(name, value)

        def __reduce__(self):
            # Pickled by name, as a plain module is (cloudpickle, Dask: a function that uses ebssim.gp2).
            return importlib.import_module, (self.__name__,)

    sys.modules[__name__].__class__ = _Package
