"""EBS volumes: what a user configures, validated against AWS's rules by the C++ core."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from . import _core

__all__ = ["Volume", "gp2", "gp3", "VOLUME_TYPES"]

VOLUME_TYPES = ("gp2", "gp3")


def _opt(x: Optional[float], field: str) -> float:
    """None means "AWS's default" (NaN for the core); a NaN the caller passed is an error."""
    if x is None:
        return math.nan
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{field}={x!r} must be a number") from None
    if math.isnan(v):
        raise ValueError(f"{field}=nan must be a finite number (omit it, or pass None, for the default)")
    return v


@dataclass(frozen=True)
class Volume:
    """An EBS volume as CreateVolume would describe it. Validated on construction.

    Parameters
    ----------
    type : str
        ``"gp2"`` or ``"gp3"``.
    size_gib : float
        Size in GiB.
    iops : float, optional
        Provisioned IOPS (gp3; default 3,000). gp2 rejects it: its IOPS follow its size.
    throughput_mib_s : float, optional
        Provisioned throughput in MiB/s (gp3; default 125).
    burst_balance_pct : float, optional
        Initial BurstBalance in percent (gp2; default 100, a new volume starts full).
    latency_ms : float, optional
        Unloaded latency of a small I/O in ms (default 0.5 for SSD types); service time is
        ``latency_ms + io_size / transfer_mib_s``.
    transfer_mib_s : float, optional
        Per-I/O transfer rate of the service-time model, MiB/s (default 1,024).
    """

    type: str
    size_gib: float
    iops: Optional[float] = None
    throughput_mib_s: Optional[float] = None
    burst_balance_pct: Optional[float] = None
    latency_ms: Optional[float] = None
    transfer_mib_s: Optional[float] = None
    _params: _core.VolumeParams = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.type not in VOLUME_TYPES:
            raise ValueError(f"type={self.type!r} is not a supported volume type; known: {', '.join(VOLUME_TYPES)}")
        object.__setattr__(self, "_params", _core.make_volume(self._spec()))

    def _spec(self) -> _core.VolumeSpec:
        return _core.VolumeSpec(
            self.type,
            _opt(self.size_gib, "size_gib"),
            iops=_opt(self.iops, "iops"),
            throughput_mib_s=_opt(self.throughput_mib_s, "throughput_mib_s"),
            burst_balance_pct=_opt(self.burst_balance_pct, "burst_balance_pct"),
            latency_ms=_opt(self.latency_ms, "latency_ms"),
            transfer_mib_s=_opt(self.transfer_mib_s, "transfer_mib_s"),
        )

    @property
    def baseline_iops(self) -> float:
        """IOPS the volume sustains forever (gp2: 3 per GiB within 100..16,000; gp3: provisioned)."""
        return float(self._params.baseline_iops)

    @property
    def max_iops(self) -> float:
        """IOPS while burst credits remain (gp2 below 1 TiB: 3,000)."""
        return float(self._params.burst_iops)

    @property
    def max_throughput_mib_s(self) -> float:
        """Throughput cap in MiB/s while credits remain."""
        return float(self._params.tput_burst_bytes_s) / 2**20

    @property
    def baseline_throughput_mib_s(self) -> float:
        """Throughput cap in MiB/s once credits are gone."""
        return float(self._params.tput_base_bytes_s) / 2**20

    @property
    def credit_capacity(self) -> float:
        """Size of the I/O credit bucket (0 for types without one)."""
        return float(self._params.credit_capacity)

    @property
    def initial_credits(self) -> float:
        return float(self._params.initial_credits)

    @property
    def io_unit_bytes(self) -> float:
        """EBS counts an I/O up to this size as one operation (256 KiB on SSD)."""
        return float(self._params.io_unit_bytes)

    def service_time_s(self, io_bytes: float) -> float:
        """Unloaded service time of one I/O of ``io_bytes``, seconds."""
        return float(self._params.service_time_s(float(io_bytes)))

    def __str__(self) -> str:
        if self.type == "gp2":
            return (
                f"gp2 {self.size_gib:g} GiB ({self.baseline_iops:g} IOPS baseline, "
                f"burst {self.max_iops:g}, {self.max_throughput_mib_s:g} MiB/s)"
            )
        return f"{self.type} {self.size_gib:g} GiB ({self.max_iops:g} IOPS, {self.max_throughput_mib_s:g} MiB/s)"

    def _repr_html_(self) -> str:
        return f"<code>{self!s}</code>"


def gp2(size_gib: float, *, burst_balance_pct: Optional[float] = None, latency_ms: Optional[float] = None) -> Volume:
    """A gp2 volume: 3 IOPS per GiB (100..16,000), bursting to 3,000 on a 5.4 M credit bucket."""
    return Volume("gp2", size_gib, burst_balance_pct=burst_balance_pct, latency_ms=latency_ms)


def gp3(
    size_gib: float,
    *,
    iops: Optional[float] = None,
    throughput_mib_s: Optional[float] = None,
    latency_ms: Optional[float] = None,
) -> Volume:
    """A gp3 volume: 3,000 IOPS and 125 MiB/s included, provisioned up to 80,000 and 2,000 MiB/s."""
    return Volume("gp3", size_gib, iops=iops, throughput_mib_s=throughput_mib_s, latency_ms=latency_ms)
