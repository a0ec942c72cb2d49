"""EC2 instance types' EBS limits: the shipped catalog, the user's own describe-instance-types
output, and the burst-bucket assumption behind EBSIOBalance% and EBSByteBalance%."""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
import warnings
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

from . import _core
from ._files import read_json, read_text
from ._files import shown as _shown
from ._units import flag, real

__all__ = [
    "MAX_CATALOG_BYTES",
    "Instance",
    "Catalog",
    "instance",
    "load_catalog",
    "SHARE_POLICIES",
    "NoEbsLimitsWarning",
]

SHARE_POLICIES = ("proportional", "fair")


class NoEbsLimitsWarning(UserWarning):
    """An instance type for which AWS publishes no EBS limits (it is not EBS-optimized, e.g.
    t2.micro): ``simulate`` and ``Simulation`` simulate its volumes alone, without an instance
    limit, and say so with this warning."""


# Numeric fields of Instance, in order.
_NUMERIC = (
    "baseline_iops",
    "max_iops",
    "baseline_mb_s",
    "max_mb_s",
    "burst_s",
    "refill_s",
    "io_balance_pct",
    "byte_balance_pct",
)


@dataclass(frozen=True)
class Instance:
    """An instance type's EBS budget, shared by every volume attached to it.

    Limits are AWS's ``EbsOptimizedInfo``: IOPS, and throughput in **decimal MB/s** (volume limits
    are MiB/s). Types whose baseline is below their maximum hold the maximum for ``burst_s`` from a
    full bucket and refill an empty bucket in ``refill_s`` at idle (AWS: "30 minutes at least
    once every 24 hours"; the bucket itself is an assumption, docs/model.md).

    Parameters
    ----------
    name : str
    baseline_iops, max_iops : float
    baseline_mb_s, max_mb_s : float
        Decimal MB/s.
    nitro : bool
        Nitro (or bare metal) vs Xen; io1/io2 on a non-Nitro instance deliver at most 32,000 IOPS.
    burst_s : float
        Seconds a full bucket holds the maximum (default 1,800).
    refill_s : float
        Seconds for an empty bucket to fill at idle (default 84,600: the rest of 24 hours).
    io_balance_pct, byte_balance_pct : float
        Initial EBSIOBalance% and EBSByteBalance% (default 100).
    share : {"proportional", "fair"}
        How attached volumes share the budget when it binds: every volume keeps the same
        fraction of what it asks (default), or max-min fair (small demands met in full).
    wait_cv : float, optional
        Coefficient of variation of the wait of I/Os the instance's EBS limits hold back, 0 to 10
        (the latency model's ``instance_wait_cv``; default: the platform's at the I/Os in flight
        on the volume, :func:`ebssim.default_wait_spread`: on Nitro 0.2 up to 16, 0.65 from 256;
        0.1 on Xen). It shapes latency
        percentiles only, never the rates (docs/model.md, "Latency percentiles");
        ``ebssim fit --instance`` estimates it from jobs the instance held back.
    """

    name: str
    baseline_iops: float
    max_iops: float
    baseline_mb_s: float
    max_mb_s: float
    nitro: bool = True
    burst_s: float = 1800.0
    refill_s: float = 84600.0
    io_balance_pct: float = 100.0
    byte_balance_pct: float = 100.0
    share: str = "proportional"
    wait_cv: Optional[float] = None
    _params: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"name={self.name!r} must be a string")
        for f in _NUMERIC:
            # The core reads NaN as "not published"; a NaN given here is a mistake to name.
            if math.isnan(real(getattr(self, f), f)):
                raise ValueError(f"{f}=nan must be a finite number")
        flag(self.nitro, "nitro")
        if self.share not in SHARE_POLICIES:
            raise ValueError(f"share={self.share!r} must be one of {', '.join(SHARE_POLICIES)}")
        if self.wait_cv is not None and math.isnan(real(self.wait_cv, "wait_cv")):
            raise ValueError("wait_cv=nan must be a finite number (omit it, or pass None, for the platform's default)")
        object.__setattr__(self, "_params", _core.make_instance(self._spec()))

    def _spec(self) -> _core.InstanceSpec:
        return _core.InstanceSpec(
            self.name,
            float(self.baseline_iops),
            float(self.max_iops),
            float(self.baseline_mb_s),
            float(self.max_mb_s),
            nitro=bool(self.nitro),
            burst_s=float(self.burst_s),
            refill_s=float(self.refill_s),
            io_balance_pct=float(self.io_balance_pct),
            byte_balance_pct=float(self.byte_balance_pct),
            share=self.share,
            wait_cv=math.nan if self.wait_cv is None else float(self.wait_cv),
        )

    @property
    def burstable(self) -> bool:
        """True when the maximum exceeds the baseline (a burst bucket applies)."""
        return self.max_iops > self.baseline_iops or self.max_mb_s > self.baseline_mb_s

    def with_(self, **changes: Any) -> "Instance":
        """A copy with some fields changed, e.g. ``inst.with_(share="fair", burst_s=900)``."""
        return replace(self, **changes)

    def __str__(self) -> str:
        if self.burstable:
            return (
                f"{self.name} (EBS {self.max_iops:,.0f} IOPS / {self.max_mb_s:g} MB/s burst, "
                f"{self.baseline_iops:,.0f} IOPS / {self.baseline_mb_s:g} MB/s baseline)"
            )
        return f"{self.name} (EBS {self.max_iops:,.0f} IOPS / {self.max_mb_s:g} MB/s)"


@dataclass(frozen=True)
class _Row:
    hypervisor: str
    bare_metal: bool
    ebs_optimized_support: str
    baseline_iops: Optional[float]
    max_iops: Optional[float]
    baseline_mb_s: Optional[float]
    max_mb_s: Optional[float]


#: Largest catalog file :meth:`Catalog.from_csv` and :meth:`Catalog.from_describe_instance_types`
#: read (EC2's 1,373 instance types are about 4 MB as describe-instance-types JSON). Read at each call.
MAX_CATALOG_BYTES = 64 << 20

# The columns from_csv reads, and those scripts/make_catalog.py also writes that it does not.
_CSV_COLUMNS = (
    "instance_type",
    "hypervisor",
    "bare_metal",
    "ebs_optimized_support",
    "baseline_iops",
    "max_iops",
    "baseline_throughput_mb_s",
    "max_throughput_mb_s",
)
_CSV_UNREAD = ("max_ebs_attachments",)
_CSV_WHAT = f"an instance catalog CSV with the columns {', '.join(_CSV_COLUMNS + _CSV_UNREAD)}"
_JSON_WHAT = "aws ec2 describe-instance-types output"
# DescribeInstanceTypes' enumerations (EC2 API reference: InstanceTypeInfo, EbsInfo); "" where absent.
_HYPERVISORS = ("nitro", "xen", "")
_SUPPORT = ("default", "supported", "unsupported")


def _num(x: Any, where: str, key: str, text: bool = True) -> Optional[float]:
    """An EBS limit: absent (None, or "" in a CSV) or a finite number >= 0 (text in a CSV, a JSON
    number in describe-instance-types output)."""
    if x is None or (text and x == ""):
        return None
    try:
        if text and isinstance(x, str):
            v = float(x)
        elif not text and isinstance(x, (int, float)) and not isinstance(x, bool):
            v = float(x)
        else:
            v = math.nan
    except (ValueError, OverflowError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{where}: {key}={_shown(x)} must be a number >= 0" + (" or empty" if text else ""))
    return v


def _choice(x: Any, allowed: Tuple[str, ...], where: str, key: str) -> str:
    if x not in allowed:
        raise ValueError(f"{where}: {key}={_shown(x)} is not one of {', '.join(repr(a) for a in allowed)}")
    return str(x)


def _object(doc: Mapping[str, Any], key: str, where: str, prefix: str = "") -> Mapping[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: {prefix}{key} must be a JSON object, not {type(value).__name__}")
    return value


def _publishes_limits(r: _Row) -> bool:
    """Whether AWS publishes EBS limits for the type (EbsOptimizedInfo)."""
    return r.ebs_optimized_support != "unsupported" and r.max_iops is not None


class Catalog(Mapping[str, _Row]):
    """Instance types by name. ``catalog["m5.large"]`` is a raw row; :meth:`instance` builds an
    :class:`Instance` and explains unknown or non-EBS-optimized types."""

    def __init__(self, rows: Dict[str, _Row], source: str) -> None:
        self._rows = rows
        self.source = source

    def __getitem__(self, name: str) -> _Row:
        try:
            return self._rows[name]
        except KeyError:
            raise KeyError(self._unknown(name)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def _unknown(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._rows), n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"instance type {name!r} is not in the catalog ({self.source}){hint}"

    def instance(self, name: str, **overrides: Any) -> Instance:
        """The :class:`Instance` for ``name``; keyword arguments override its fields."""
        if not isinstance(name, str) or name not in self._rows:
            raise ValueError(self._unknown(str(name)))
        r = self._rows[name]
        if not _publishes_limits(r):
            raise ValueError(
                f"instance type {name!r} is not EBS-optimized (EbsOptimizedSupport: "
                f"{r.ebs_optimized_support}): AWS publishes no EBS limits for it, so there is no Instance; "
                f"simulate(..., instance={name!r}) and Simulation(..., instance={name!r}) simulate the "
                f"volumes alone"
            )
        assert r.baseline_iops is not None and r.baseline_mb_s is not None and r.max_mb_s is not None
        fields: Dict[str, Any] = {
            "name": name,
            "baseline_iops": r.baseline_iops,
            "max_iops": r.max_iops,
            "baseline_mb_s": r.baseline_mb_s,
            "max_mb_s": r.max_mb_s,
            "nitro": r.hypervisor == "nitro",
        }
        fields.update(overrides)  # the caller's values win, catalog fields included
        try:
            return Instance(**fields)
        except TypeError as e:  # an unknown keyword
            raise ValueError(f"instance {name!r}: {e}; Instance fields are {', '.join(_FIELDS)}") from None

    @classmethod
    def from_csv(cls, path: Union[str, "os.PathLike[str]", None] = None) -> "Catalog":
        """The catalog shipped with ebssim (generated by scripts/make_catalog.py), or a CSV of the same shape.

        ``path``: a regular file of at most :data:`MAX_CATALOG_BYTES`, UTF-8, with the shipped
        catalog's columns (``instance_type``, ``hypervisor``, ``bare_metal`` (0 or 1),
        ``ebs_optimized_support``, ``baseline_iops``, ``max_iops``, ``baseline_throughput_mb_s``,
        ``max_throughput_mb_s``, optionally ``max_ebs_attachments``); the limits are numbers
        >= 0, or empty where AWS publishes none. Anything else is a ValueError naming the file,
        the line and the column.
        """
        if path is None:
            text = resources.files("ebssim").joinpath("data/instance_types.csv").read_text()
            source = "ebssim's shipped catalog"
        else:
            source = os.fspath(path)
            text = read_text(source, MAX_CATALOG_BYTES, _CSV_WHAT, f"{__name__}.MAX_CATALOG_BYTES")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows: Dict[str, _Row] = {}
        try:
            header = reader.fieldnames or []
            missing = [c for c in _CSV_COLUMNS if c not in header]
            unknown = [c for c in header if c not in _CSV_COLUMNS + _CSV_UNREAD]
            if missing or unknown or len(set(header)) != len(header):
                raise ValueError(
                    f"{source}, line 1: the columns are {', '.join(header) or 'missing'}; expected {_CSV_WHAT}"
                )
            for rec in reader:
                w = f"{source}, line {reader.line_num}"
                if None in rec or None in rec.values():
                    raise ValueError(f"{w}: {len(header)} comma-separated fields expected, like the header")
                name = rec["instance_type"]
                if not name or name in rows:
                    raise ValueError(f"{w}: instance_type {name!r} is " + ("listed twice" if name else "empty"))
                if rec["bare_metal"] not in ("0", "1"):
                    raise ValueError(f"{w}: bare_metal={rec['bare_metal']!r} must be 0 or 1")
                rows[name] = _Row(
                    hypervisor=_choice(rec["hypervisor"], _HYPERVISORS, w, "hypervisor"),
                    bare_metal=rec["bare_metal"] == "1",
                    ebs_optimized_support=_choice(rec["ebs_optimized_support"], _SUPPORT, w, "ebs_optimized_support"),
                    baseline_iops=_num(rec["baseline_iops"], w, "baseline_iops"),
                    max_iops=_num(rec["max_iops"], w, "max_iops"),
                    baseline_mb_s=_num(rec["baseline_throughput_mb_s"], w, "baseline_throughput_mb_s"),
                    max_mb_s=_num(rec["max_throughput_mb_s"], w, "max_throughput_mb_s"),
                )
        except csv.Error as e:
            raise ValueError(f"{source}, line {reader.line_num}: not CSV ({e}); expected {_CSV_WHAT}") from None
        if not rows:
            raise ValueError(f"{source}: no instance types; expected {_CSV_WHAT}")
        return cls(rows, source)

    @classmethod
    def from_describe_instance_types(cls, doc: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> "Catalog":
        """A catalog from ``aws ec2 describe-instance-types`` JSON output (a path or the parsed document).

        A path is a regular file of at most :data:`MAX_CATALOG_BYTES`, UTF-8 JSON nested at most
        100 deep (``ebssim._files.MAX_NESTING``). Each of ``InstanceTypes`` needs its
        ``InstanceType``; ``EbsInfo.EbsOptimizedInfo``'s limits, where given, are numbers >= 0;
        ``BareMetal`` is true or false. Anything else is a ValueError naming the file, the entry
        and the field.
        """
        source = "describe-instance-types document"
        if isinstance(doc, (str, os.PathLike)):
            source = os.fspath(doc)
            doc = read_json(source, MAX_CATALOG_BYTES, _JSON_WHAT, f"{__name__}.MAX_CATALOG_BYTES")
        if not isinstance(doc, Mapping) or not isinstance(doc.get("InstanceTypes"), list):
            raise ValueError(f"{source}: expected aws ec2 describe-instance-types output with an 'InstanceTypes' list")
        rows: Dict[str, _Row] = {}
        for i, info in enumerate(doc["InstanceTypes"]):
            w = f"{source}: InstanceTypes[{i}]"
            if not isinstance(info, Mapping):
                raise ValueError(f"{w}: an instance type must be a JSON object, not {type(info).__name__}")
            name = info.get("InstanceType")
            if not isinstance(name, str) or not name:
                raise ValueError(f"{w}: lacks its InstanceType (a name)")
            w = f"{w} ({name})"
            if name in rows:
                raise ValueError(f"{w}: the instance type is listed twice")
            ebs = _object(info, "EbsInfo", w)
            opt = _object(ebs, "EbsOptimizedInfo", w, "EbsInfo.")
            hv = info.get("Hypervisor", "")
            bare = info.get("BareMetal", False)
            if not isinstance(bare, bool):
                raise ValueError(f"{w}: BareMetal={_shown(bare)} must be true or false")
            f = "EbsInfo.EbsOptimizedInfo."
            rows[name] = _Row(
                hypervisor=_choice(hv, _HYPERVISORS, w, "Hypervisor") or ("nitro" if bare else ""),
                bare_metal=bare,
                ebs_optimized_support=_choice(
                    ebs.get("EbsOptimizedSupport", "unsupported"), _SUPPORT, w, "EbsInfo.EbsOptimizedSupport"
                ),
                baseline_iops=_num(opt.get("BaselineIops"), w, f + "BaselineIops", text=False),
                max_iops=_num(opt.get("MaximumIops"), w, f + "MaximumIops", text=False),
                baseline_mb_s=_num(opt.get("BaselineThroughputInMBps"), w, f + "BaselineThroughputInMBps", text=False),
                max_mb_s=_num(opt.get("MaximumThroughputInMBps"), w, f + "MaximumThroughputInMBps", text=False),
            )
        return cls(rows, source)

    def names(self, *, ebs_optimized: bool = True) -> Iterable[str]:
        return [n for n, r in self._rows.items() if not ebs_optimized or r.max_iops is not None]


_FIELDS = [f for f in Instance.__dataclass_fields__ if not f.startswith("_")]

_default: Optional[Catalog] = None


def load_catalog() -> Catalog:
    """The shipped catalog (loaded once)."""
    global _default
    if _default is None:
        _default = Catalog.from_csv()
    return _default


def instance(name: str, **overrides: Any) -> Instance:
    """The :class:`Instance` for an instance type from the shipped catalog, e.g. ``instance("m5.large")``.

    Keyword arguments override its fields (``burst_s``, ``refill_s``, ``share``, balances, ...).
    An unknown name is a ValueError that suggests the closest names; so is a type for which AWS
    publishes no EBS limits (pass its name to ``simulate`` or ``Simulation`` instead).

    >>> print(instance("m5.large"))
    m5.large (EBS 18,750 IOPS / 593.75 MB/s burst, 3,600 IOPS / 81.25 MB/s baseline)
    """
    return load_catalog().instance(name, **overrides)


def _resolve_instance(instance: Union[Instance, str, None], stacklevel: int = 1) -> Optional[Instance]:
    """What ``instance=`` of simulate and Simulation means: an Instance, a catalog name, or None.

    A catalog type without published EBS limits gives None (the volumes run alone) and one
    NoEbsLimitsWarning, attributed ``stacklevel`` frames above the caller, as warnings.warn counts.
    """
    if instance is None or isinstance(instance, Instance):
        return instance
    if not isinstance(instance, str):
        raise ValueError(
            f"instance={instance!r} must be an ebssim.Instance or an instance type name, got {type(instance).__name__}"
        )
    cat = load_catalog()
    row = cat._rows.get(instance)
    if row is not None and not _publishes_limits(row):
        warnings.warn(
            f"instance type {instance!r} is not EBS-optimized (EbsOptimizedSupport: {row.ebs_optimized_support}): "
            f"AWS publishes no EBS limits for it, so its volumes are simulated alone, without an instance limit",
            NoEbsLimitsWarning,
            stacklevel=stacklevel + 1,
        )
        return None
    return cat.instance(instance)
