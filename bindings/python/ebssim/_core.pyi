"""Type stubs for ebssim's private compiled module."""

from typing import Any, overload

import numpy as np
import numpy.typing as npt

class VolumeSpec:
    def __init__(
        self,
        type: str,
        size_gib: float,
        iops: float = ...,
        throughput_mib_s: float = ...,
        burst_balance_pct: float = ...,
        latency_ms: float = ...,
        transfer_mib_s: float = ...,
    ) -> None: ...
    @property
    def type(self) -> str: ...
    @property
    def size_gib(self) -> float: ...
    @property
    def iops(self) -> float: ...
    @property
    def throughput_mib_s(self) -> float: ...
    @property
    def burst_balance_pct(self) -> float: ...
    @property
    def latency_ms(self) -> float: ...
    @property
    def transfer_mib_s(self) -> float: ...

class VolumeParams:
    @property
    def type(self) -> str: ...
    @property
    def size_gib(self) -> float: ...
    @property
    def nitro(self) -> bool: ...
    @property
    def io_unit_bytes(self) -> float: ...
    @property
    def merge_min_bytes(self) -> float: ...
    @property
    def baseline_iops(self) -> float: ...
    @property
    def burst_iops(self) -> float: ...
    @property
    def credit_capacity(self) -> float: ...
    @property
    def initial_credits(self) -> float: ...
    @property
    def tput_burst_bytes_s(self) -> float: ...
    @property
    def tput_base_bytes_s(self) -> float: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def transfer_bytes_s(self) -> float: ...
    def service_time_s(self, io_bytes: float) -> float: ...

def make_volume(spec: VolumeSpec, nitro: bool = ...) -> VolumeParams: ...
def burst_duration_s(params: VolumeParams, counted_iops: float, credits: float = ...) -> float: ...
def refill_time_s(params: VolumeParams, counted_iops: float = ..., credits: float = ...) -> float: ...

default_service_shape: float

def latency_quantiles(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    service_time_s: float,
    quantiles: npt.ArrayLike,
    shape: float = ...,
) -> npt.NDArray[np.float64]: ...
def latency_moments(
    mean_latency_s: npt.ArrayLike,
    completions: npt.ArrayLike,
    service_time_s: float,
    shape: float = ...,
) -> tuple[float, float]: ...
def counted_ops_per_io(params: VolumeParams, io_bytes: float, sequential: bool) -> float: ...

class ClosedLoopRate:
    @property
    def offered_iops(self) -> float: ...
    @property
    def iops(self) -> float: ...
    @property
    def counted_iops(self) -> float: ...
    @property
    def throughput_bytes_s(self) -> float: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def bound(self) -> int: ...

def closed_loop_rate(params: VolumeParams, workload: ClosedLoop, with_credits: bool = ...) -> ClosedLoopRate: ...
def cliff_time_s(params: VolumeParams, workload: ClosedLoop, credits: float = ...) -> float: ...
def closed_loop_service_time_s(params: VolumeParams, workload: ClosedLoop) -> float: ...
def closed_loop_latency_s(
    params: VolumeParams, workload: ClosedLoop, iops: npt.ArrayLike
) -> npt.NDArray[np.float64]: ...

class Idle:
    def __init__(self) -> None: ...

class ClosedLoop:
    def __init__(
        self,
        in_flight: float,
        io_bytes: float,
        read_fraction: float = ...,
        sequential: bool = ...,
        service_time_s: float = ...,
        think_time_s: float = ...,
        counted_per_io: float = ...,
    ) -> None: ...
    in_flight: float
    think_time_s: float
    counted_per_io: float
    io_bytes: float
    read_fraction: float
    sequential: bool
    service_time_s: float

class OpenLoop:
    def __init__(
        self,
        ops: npt.ArrayLike,
        bytes: npt.ArrayLike,
        read_fraction: float = ...,
        sequential: bool = ...,
        service_time_s: float = ...,
    ) -> None: ...
    ops: npt.NDArray[np.float64]
    bytes: npt.NDArray[np.float64]
    read_fraction: float
    sequential: bool
    service_time_s: float

class InstanceSpec:
    def __init__(
        self,
        name: str,
        baseline_iops: float,
        max_iops: float,
        baseline_mb_s: float,
        max_mb_s: float,
        nitro: bool = ...,
        burst_s: float = ...,
        refill_s: float = ...,
        io_balance_pct: float = ...,
        byte_balance_pct: float = ...,
        share: str = ...,
    ) -> None: ...
    name: str
    baseline_iops: float
    max_iops: float
    baseline_mb_s: float
    max_mb_s: float
    nitro: bool

class InstanceParams:
    name: str
    nitro: bool
    baseline_iops: float
    max_iops: float
    baseline_bytes_s: float
    max_bytes_s: float
    io_capacity: float
    bytes_capacity: float
    io_earn_idle: float
    bytes_earn_idle: float

def make_instance(spec: InstanceSpec) -> InstanceParams: ...

class LimitError(ValueError): ...

default_max_volume_steps: int
default_max_memory_bytes: int

class Simulation:
    @overload
    def __init__(self, volumes: list[VolumeSpec], dt_s: float = ...) -> None: ...
    @overload
    def __init__(self, volumes: list[VolumeSpec], instance: InstanceSpec, dt_s: float = ...) -> None: ...
    def run(
        self,
        workloads: list[Any],
        n_steps: int,
        record: bool = ...,
        max_volume_steps: int = ...,
        max_memory_bytes: int = ...,
    ) -> dict[str, Any]: ...
    @property
    def size(self) -> int: ...
    @property
    def dt_s(self) -> float: ...
    @property
    def time_s(self) -> float: ...
    def params(self, i: int) -> VolumeParams: ...
    def credits(self, i: int) -> float: ...
    def backlog_ops(self, i: int) -> float: ...
    @property
    def has_instance(self) -> bool: ...
    @property
    def instance_io_credits(self) -> float: ...
    @property
    def instance_bytes_credits(self) -> float: ...

# ---- ebssim.fit (bind_fit.cpp): the fitter, used through ebssim/fit/_native.py only ----

def fit_levels(
    start_s: Any,
    end_s: Any,
    value: Any,
    weight: Any,
    segments: list[tuple[float, float, int, int]],
    level0: list[float],
    change0: list[float],
) -> dict[str, Any]: ...
def fit_bucket_volume(
    type: str,
    size_gib: float,
    size_guess_gib: float,
    balance_guess_pct: float,
    phases: list[tuple[float, float, float, float, bool, float]],
    start_s: Any,
    end_s: Any,
    value: Any,
    weight: Any,
    dt_s: float,
    instance: InstanceSpec | None = ...,
) -> dict[str, Any]: ...
def simulate_windows(
    spec: VolumeSpec,
    phases: list[tuple[float, float, float, float, bool, float]],
    start_s: Any,
    end_s: Any,
    dt_s: float,
    instance: InstanceSpec | None = ...,
) -> dict[str, Any]: ...
def fit_service_time(io_bytes: Any, latency_s: Any, weight: Any, default_per_byte_s: float) -> dict[str, Any]: ...
def fit_gamma(lower_s: Any, upper_s: Any, counts: Any) -> dict[str, Any]: ...
