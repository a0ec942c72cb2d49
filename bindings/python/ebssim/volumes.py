"""EBS volumes: what a user configures, validated against AWS's rules by the C++ core."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _core, _pickle
from ._core import VolumeTypeInfo
from ._units import SizeLike, parse_size, real

__all__ = [
    "ServiceTime",
    "Volume",
    "gp2",
    "gp3",
    "io1",
    "io2",
    "st1",
    "sc1",
    "standard",
    "NITRO_OVERSHOOT_S",
    "VOLUME_TYPES",
    "VolumeTypeInfo",
    "volume_types",
    "volume_from_spec",
    "volume_spec",
]

# The C++ core's table of types is the one list of them; everything here reads it.
_TYPES: Mapping[str, VolumeTypeInfo] = MappingProxyType({t.name: t for t in _core.volume_types()})

#: The EBS volume types, in the order AWS lists them.
VOLUME_TYPES: Tuple[str, ...] = tuple(_TYPES)

#: Seconds of each limit the limiter saves on Nitro (overshoot, docs/model.md): what the fio front
#: end gives a volume that does not state ``overshoot_s``; the engine's own default is 0.
NITRO_OVERSHOOT_S: float = float(_core.nitro_overshoot_s)


def volume_types() -> Mapping[str, VolumeTypeInfo]:
    """Every EBS volume type by name, in the order AWS lists them, with what is known about it
    before a volume exists: media, counting unit, burst bucket, size range and the EC2 console's
    defaults for a new volume.

    Returns
    -------
    Mapping[str, VolumeTypeInfo]
        Read-only, keyed by the type's name (``"gp2"``).

    Examples
    --------
    >>> import ebssim
    >>> t = ebssim.volume_types()["io2"]
    >>> t.default_size_gib, t.default_iops, t.has_bucket
    (100.0, 3000.0, False)
    >>> [name for name, t in ebssim.volume_types().items() if t.bucket == "throughput_credits"]
    ['st1', 'sc1']
    """
    return _TYPES


def _opt(x: Optional[float], field: str) -> float:
    """None means "AWS's default" (NaN for the core); a NaN the caller passed is an error."""
    if x is None:
        return math.nan
    v = real(x, field)
    if math.isnan(v):
        raise ValueError(f"{field}=nan must be a finite number (omit it, or pass None, for the default)")
    return v


@dataclass(frozen=True)
class ServiceTime:
    """A volume's latency parameters in effect (:attr:`Volume.service`): the unloaded latency of
    a zero-byte read and write (ms), the per-I/O transfer rate (MiB/s), the service time's
    coefficient of variation, and that of the wait under the volume's limits."""

    read_latency_ms: float
    write_latency_ms: float
    transfer_mib_s: float
    latency_cv: float
    wait_cv: float


@dataclass(frozen=True)
class Volume:
    """An EBS volume as CreateVolume would describe it. Validated on construction.

    Parameters
    ----------
    type : str
        One of ``gp2 gp3 io1 io2 st1 sc1 standard`` (io2 is Block Express, as all io2 is since 2025).
    size_gib : float
        Size in GiB. Numeric fields take Python or numpy numbers; bools and strings are a
        ValueError (``gp2(True)`` is not a 1 GiB volume).
    iops : float, optional
        Provisioned IOPS: gp3 (default 3,000), io1 and io2 (required). The other types reject
        it: their IOPS follow their size.
    throughput_mib_s : float, optional
        Provisioned throughput in MiB/s (gp3 only; default 125).
    burst_balance_pct : float, optional
        Initial BurstBalance in percent (gp2, st1, sc1, standard; default 100: a new volume
        starts full).
    latency_ms : float, optional
        Unloaded latency of a small I/O in ms, reads and writes alike (give it or the two
        below, not both); service time is ``latency + io_size / transfer_mib_s``.
    transfer_mib_s : float, optional
        Per-I/O transfer rate of the service-time model, MiB/s (default 1,024 SSD, 250 HDD).
    read_latency_ms, write_latency_ms : float, optional
        Unloaded latency of a read, of a write, in ms. Defaults per family (docs/model.md,
        "Service time"): gp2, gp3, io1 0.5 and 0.5; io2 (Block Express) 0.44 and 0.335;
        st1, sc1, standard 5 and 5.
    latency_cv : float, optional
        Coefficient of variation of the service time (its spread), 0.001 to 10: 0.5 for gp2,
        gp3, io1 and the HDD types, 0.12 for io2.
    wait_cv : float, optional
        Coefficient of variation of the wait of I/Os the volume's limits hold back, 0 (first come,
        first served: every I/O waits the mean) to 10: by default the platform's, 0.65 on Nitro
        and 0.1 on Xen (docs/model.md, "Latency percentiles").
    overshoot_s : float, optional
        Seconds of each of its rate limits (IOPS, throughput) the volume saves while it runs below
        the limit and may spend above it, 0 to 10: the depth of the limiter's token bucket
        (docs/model.md, "Overshoot"). Default 0: the limits hold from the first step.
    overshoot_balance_s : float, optional
        Seconds of each limit saved at the start, 0 (default: as after a stretch held at the
        limits) to ``overshoot_s`` (after a second or more of idle).
    """

    type: str
    size_gib: float
    iops: Optional[float] = None
    throughput_mib_s: Optional[float] = None
    burst_balance_pct: Optional[float] = None
    latency_ms: Optional[float] = None
    transfer_mib_s: Optional[float] = None
    read_latency_ms: Optional[float] = None
    write_latency_ms: Optional[float] = None
    latency_cv: Optional[float] = None
    wait_cv: Optional[float] = None
    overshoot_s: Optional[float] = None
    overshoot_balance_s: Optional[float] = None
    _params: _core.VolumeParams = field(init=False, repr=False, compare=False)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # the compiled part is rebuilt (ebssim._pickle)
        return _pickle.reduce(self, _pickle.init_fields(self))

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"type={self.type!r} is not a supported volume type; known: {', '.join(_TYPES)}")
        object.__setattr__(self, "_params", _core.make_volume(self._spec()))

    def _spec(self) -> _core.VolumeSpec:
        return _core.VolumeSpec(
            self.type,
            real(self.size_gib, "size_gib", "a size in GiB"),
            iops=_opt(self.iops, "iops"),
            throughput_mib_s=_opt(self.throughput_mib_s, "throughput_mib_s"),
            burst_balance_pct=_opt(self.burst_balance_pct, "burst_balance_pct"),
            latency_ms=_opt(self.latency_ms, "latency_ms"),
            transfer_mib_s=_opt(self.transfer_mib_s, "transfer_mib_s"),
            read_latency_ms=_opt(self.read_latency_ms, "read_latency_ms"),
            write_latency_ms=_opt(self.write_latency_ms, "write_latency_ms"),
            latency_cv=_opt(self.latency_cv, "latency_cv"),
            wait_cv=_opt(self.wait_cv, "wait_cv"),
            overshoot_s=_opt(self.overshoot_s, "overshoot_s"),
            overshoot_balance_s=_opt(self.overshoot_balance_s, "overshoot_balance_s"),
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
        """EBS counts an I/O up to this size as one operation (256 KiB on SSD, 1 MiB on HDD)."""
        return float(self._params.io_unit_bytes)

    @property
    def merge_min_bytes(self) -> float:
        """Sequential I/Os of at least this size merge up to :attr:`io_unit_bytes`; smaller ones
        count one operation each, sequential or not (32 KiB, AWS's rule)."""
        return float(self._params.merge_min_bytes)

    def counted_ops_per_io(self, io_size: SizeLike, pattern: str = "random") -> float:
        """EBS-counted operations per I/O of ``io_size`` (bytes or e.g. ``"4k"``) on this volume.

        AWS's rule (docs/model.md): an I/O up to the counting unit, or under 32 KiB, is one
        operation; sequential I/Os from 32 KiB merge (``size / unit``: 8 contiguous 32 KiB I/Os
        are 1); larger random I/Os split (``ceil(size / unit)``). The rule the engine counts with.
        """
        from .workloads import _check_pattern  # workloads does not import volumes: no cycle

        sequential = _check_pattern(pattern)
        return float(_core.counted_ops_per_io(self._params, parse_size(io_size), sequential))

    def service_time_s(self, io_bytes: float, read_fraction: Optional[float] = None) -> float:
        """Mean unloaded service time of one I/O of ``io_bytes``, seconds, in a mix with this
        share of reads (1: a read, 0: a write). ``read_fraction`` may be omitted when reads and
        writes take the same time on this volume; otherwise it is required (a ValueError)."""
        size = real(io_bytes, "io_bytes", "a number of bytes")
        p = self._params
        if read_fraction is None:
            if p.read_latency_s != p.write_latency_s:
                raise ValueError(
                    f"read_fraction is required: reads ({p.read_latency_s * 1e3:g} ms) and writes "
                    f"({p.write_latency_s * 1e3:g} ms) take different times on {self}"
                )
            rf = 1.0
        else:
            rf = real(read_fraction, "read_fraction", "a share of reads from 0 to 1")
            if not 0.0 <= rf <= 1.0:
                raise ValueError(f"read_fraction={rf:g} must be between 0 and 1")
        return float(p.service_time_s(size, rf))

    @property
    def service(self) -> "ServiceTime":
        """The service-time and wait-spread parameters in effect (the given ones or the family's
        and platform's defaults)."""
        p = self._params
        return ServiceTime(
            read_latency_ms=float(p.read_latency_s) * 1e3,
            write_latency_ms=float(p.write_latency_s) * 1e3,
            transfer_mib_s=float(p.transfer_bytes_s) / 2**20,
            latency_cv=float(p.latency_cv),
            wait_cv=float(p.wait_cv),
        )

    @property
    def overshoot(self) -> float:
        """Seconds of each rate limit the volume may save and spend above it (``overshoot_s`` in
        effect; 0: none)."""
        return float(self._params.overshoot_s)

    @property
    def has_bucket(self) -> bool:
        """True for the types with a burst bucket (gp2, st1, sc1, standard)."""
        return self.credit_capacity > 0

    def __str__(self) -> str:
        # What limits a type is shown by follows what its bucket holds (the core's type table).
        bucket = _TYPES[self.type].bucket
        if bucket == "throughput_credits":
            limits = f"{self.baseline_throughput_mib_s:g} MiB/s baseline, burst {self.max_throughput_mib_s:g} MiB/s"
        elif bucket == "io_credits":
            limits = (
                f"{self.baseline_iops:g} IOPS baseline, burst {self.max_iops:g}, {self.max_throughput_mib_s:g} MiB/s"
            )
        else:
            limits = f"{self.max_iops:g} IOPS, {self.max_throughput_mib_s:g} MiB/s"
        return f"{self.type} {self.size_gib:g} GiB ({limits})"

    def _repr_html_(self) -> str:
        from . import _repr

        return _repr.volume_html(self)


def gp2(
    size_gib: float,
    *,
    burst_balance_pct: Optional[float] = None,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """A gp2 volume: 3 IOPS per GiB (100..16,000), bursting to 3,000 on a 5.4 M credit bucket."""
    return Volume(
        "gp2",
        size_gib,
        burst_balance_pct=burst_balance_pct,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def gp3(
    size_gib: float,
    *,
    iops: Optional[float] = None,
    throughput_mib_s: Optional[float] = None,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """A gp3 volume: 3,000 IOPS and 125 MiB/s included, provisioned up to 80,000 and 2,000 MiB/s."""
    return Volume(
        "gp3",
        size_gib,
        iops=iops,
        throughput_mib_s=throughput_mib_s,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def io1(
    size_gib: float,
    iops: float,
    *,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """An io1 volume: 100..64,000 provisioned IOPS, at most 50 per GiB; 256 KiB per IOPS up to
    500 MiB/s, 16 KiB per IOPS above 32,000 IOPS, 1,000 MiB/s at most."""
    return Volume(
        "io1",
        size_gib,
        iops=iops,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def io2(
    size_gib: float,
    iops: float,
    *,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """An io2 (Block Express) volume: 100..256,000 IOPS, at most 1,000 per GiB; 0.25 MiB/s per
    IOPS (one 256 KiB operation each; AWS quotes 0.256) up to 4,000 MiB/s, reached at 16,000 IOPS."""
    return Volume(
        "io2",
        size_gib,
        iops=iops,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def st1(
    size_gib: float,
    *,
    burst_balance_pct: Optional[float] = None,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """An st1 (throughput-optimized HDD) volume: 40 MiB/s per TiB baseline, bursts to 250 MiB/s
    per TiB (both capped at 500), on a bucket worth the volume's size; every I/O up to 1 MiB
    costs 1 MiB."""
    return Volume(
        "st1",
        size_gib,
        burst_balance_pct=burst_balance_pct,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def sc1(
    size_gib: float,
    *,
    burst_balance_pct: Optional[float] = None,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """An sc1 (cold HDD) volume: 12 MiB/s per TiB baseline (cap 192), bursts to 80 MiB/s per TiB
    (cap 250)."""
    return Volume(
        "sc1",
        size_gib,
        burst_balance_pct=burst_balance_pct,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


def standard(
    size_gib: float,
    *,
    burst_balance_pct: Optional[float] = None,
    latency_ms: Optional[float] = None,
    read_latency_ms: Optional[float] = None,
    write_latency_ms: Optional[float] = None,
    latency_cv: Optional[float] = None,
    wait_cv: Optional[float] = None,
    overshoot_s: Optional[float] = None,
    overshoot_balance_s: Optional[float] = None,
) -> Volume:
    """A standard (magnetic, previous generation) volume; a simple assumed model: 100 IOPS
    baseline, bursts to 200 (docs/model.md)."""
    return Volume(
        "standard",
        size_gib,
        burst_balance_pct=burst_balance_pct,
        latency_ms=latency_ms,
        read_latency_ms=read_latency_ms,
        write_latency_ms=write_latency_ms,
        latency_cv=latency_cv,
        wait_cv=wait_cv,
        overshoot_s=overshoot_s,
        overshoot_balance_s=overshoot_balance_s,
    )


# The SPEC grammar (ebssim fio --volume, ebssim advise, Cost.spec), in this one place:
# TYPE[:key=value,...], each value a number of ASCII digits with an optional decimal part,
# optionally followed by its key's own unit. No sign, exponent, digit separator or non-ASCII
# digit: float() would take "1_000", "+100", "1e3" and full-width digits, and a SPEC that prices
# 1,000 GiB when 100 was meant must not pass.
# SPEC keys -> (Volume field, the unit a value may carry).
_SPEC_KEYS = {
    "size": ("size_gib", "GiB"),
    "iops": ("iops", ""),
    "throughput": ("throughput_mib_s", "MiB/s"),
    "burst_balance": ("burst_balance_pct", "%"),
    "latency_ms": ("latency_ms", "ms"),
    "read_latency_ms": ("read_latency_ms", "ms"),
    "write_latency_ms": ("write_latency_ms", "ms"),
    "latency_cv": ("latency_cv", ""),
    "wait_cv": ("wait_cv", ""),
    "overshoot": ("overshoot_s", "s"),
    "overshoot_balance": ("overshoot_balance_s", "s"),
}
_SPEC_NUMBER = re.compile(r"([0-9]+(?:\.[0-9]+)?)(.*)", re.ASCII | re.DOTALL)
_SPEC_FORM = "TYPE[:key=value,...], e.g. gp3:size=100,iops=3000"


def volume_from_spec(spec: str) -> Volume:
    """A volume from a SPEC ``TYPE[:key=value,...]``, as ``ebssim fio --volume TARGET=SPEC`` reads it.

    Keys: ``size`` (GiB), ``iops``, ``throughput`` (MiB/s), ``burst_balance`` (percent),
    ``latency_ms`` (reads and writes alike) or ``read_latency_ms`` and ``write_latency_ms``,
    ``latency_cv`` (the service time's spread), ``wait_cv`` (the wait's under the volume's
    limits), ``overshoot`` and ``overshoot_balance`` (seconds: ``overshoot_s`` and
    ``overshoot_balance_s``), as :class:`Volume` takes them. A value is ASCII digits with an
    optional decimal part, optionally followed by its key's unit (``size=100GiB``,
    ``throughput=250MiB/s``, ``burst_balance=50%``, ``latency_ms=0.5ms``, ``overshoot=1s``);
    signs, exponents, ``_`` and non-ASCII digits are refused, and so are empty items
    (``gp2:,``). Omitted keys take the EC2 console's defaults for a new volume (the C++ type
    table); configurations AWS would reject are ValueErrors naming the SPEC and the rule.

    Examples
    --------
    >>> from ebssim.fio import volume_from_spec
    >>> print(volume_from_spec("gp3:size=2000,iops=7000,throughput=300"))
    gp3 2000 GiB (7000 IOPS, 300 MiB/s)
    >>> volume_from_spec("gp4:size=10")
    Traceback (most recent call last):
    ...
    ValueError: SPEC 'gp4:size=10': volume type 'gp4' is not one of gp2, gp3, io1, io2, st1, sc1, standard
    >>> volume_from_spec("gp2:size=1_000")
    Traceback (most recent call last):
    ...
    ValueError: SPEC 'gp2:size=1_000': size='1_000' is not a number: expected a finite number of ASCII digits ...
    """
    if not isinstance(spec, str):
        raise ValueError(f"SPEC {spec!r}: expected a string TYPE[:key=value,...], e.g. gp3:size=100")
    return _from_spec(spec, f"SPEC {spec!r}")


def volume_spec(volume: Volume) -> str:
    """The SPEC (``TYPE:key=value,...``) that :func:`volume_from_spec` reads back as ``volume``.

    Size always; IOPS for the types that provision it (gp3, io1, io2); throughput for gp3; the
    initial BurstBalance and the latency parameters only when they were set.

    Examples
    --------
    >>> import ebssim
    >>> from ebssim.fio import volume_spec
    >>> volume_spec(ebssim.gp3(2000, iops=6000, throughput_mib_s=250))
    'gp3:size=2000,iops=6000,throughput=250'
    >>> volume_spec(ebssim.gp2(100))
    'gp2:size=100'
    """
    if not isinstance(volume, Volume):
        raise ValueError(f"volume={volume!r} must be an ebssim.Volume")
    parts = [f"size={volume.size_gib:g}"]
    if volume.type in ("gp3", "io1", "io2"):
        parts.append(f"iops={volume.baseline_iops:g}")
    if volume.type == "gp3":
        parts.append(f"throughput={volume.max_throughput_mib_s:g}")
    if volume.burst_balance_pct is not None:
        parts.append(f"burst_balance={volume.burst_balance_pct:g}")
    for key in ("latency_ms", "read_latency_ms", "write_latency_ms", "latency_cv", "wait_cv"):
        value = getattr(volume, key)
        if value is not None:
            parts.append(f"{key}={value:g}")
    for key, name in (("overshoot", "overshoot_s"), ("overshoot_balance", "overshoot_balance_s")):
        value = getattr(volume, name)
        if value is not None:
            parts.append(f"{key}={value:g}")
    return f"{volume.type}:{','.join(parts)}"


def _spec_number(label: str, key: str, value: str) -> float:
    """A SPEC value: ASCII digits, an optional decimal part, optionally the key's unit (size=100GiB)."""
    unit = _SPEC_KEYS[key][1]
    m = _SPEC_NUMBER.fullmatch(value)
    number = float(m.group(1)) if m and m.group(2) in ("", unit) and len(m.group(1)) <= 64 else math.nan
    if not math.isfinite(number):
        shown = repr(value) if len(value) <= 64 else f"{value[:40]!r}... ({len(value)} characters)"
        example = f"{key}=100" + (f" or {key}=100{unit}" if unit else "")
        raise ValueError(
            f"{label}: {key}={shown} is not a number: expected a finite number of ASCII digits with an optional "
            f"decimal part{f' and optionally the unit {unit}' if unit else ''} (no sign, exponent or '_'), "
            f"e.g. {example}"
        )
    return number


def _from_spec(spec: str, label: str) -> Volume:
    vtype, colon, rest = spec.partition(":")
    if vtype not in VOLUME_TYPES:
        raise ValueError(f"{label}: volume type {vtype!r} is not one of {', '.join(VOLUME_TYPES)}")
    kwargs: Dict[str, Any] = {}
    for item in rest.split(",") if colon else []:
        key, eq, value = item.partition("=")
        if not item:
            raise ValueError(
                f"{label}: an empty key=value item (a ',' or ':' with nothing after it): expected {_SPEC_FORM}"
            )
        if not eq:
            raise ValueError(f"{label}: {item[:64]!r} is not key=value: expected {_SPEC_FORM}")
        if not key:
            raise ValueError(f"{label}: {item[:64]!r} has an empty key before '=': expected {_SPEC_FORM}")
        if key not in _SPEC_KEYS:
            raise ValueError(f"{label}: unknown key {key[:64]!r}; expected one of {', '.join(_SPEC_KEYS)}")
        field_name = _SPEC_KEYS[key][0]
        if field_name in kwargs:
            raise ValueError(f"{label}: key {key!r} is given twice; give each key once")
        kwargs[field_name] = _spec_number(label, key, value)
    # Omitted size and IOPS: the EC2 console's defaults for a new volume (the C++ type table).
    info = volume_types()[vtype]
    kwargs.setdefault("size_gib", info.default_size_gib)
    if info.default_iops is not None:
        kwargs.setdefault("iops", info.default_iops)
    try:
        return Volume(vtype, **kwargs)
    except ValueError as e:
        raise ValueError(f"{label}: {e}") from None
