"""EC2 instance types' EBS limits: the shipped catalog, the user's own describe-instance-types
output, and the burst-bucket assumption behind EBSIOBalance% and EBSByteBalance%."""

from __future__ import annotations

import csv
import difflib
import json
import math
import warnings
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Union

from . import _core
from ._units import flag, real

__all__ = ["Instance", "Catalog", "instance", "load_catalog", "SHARE_POLICIES", "NoEbsLimitsWarning"]

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


def _num(x: Any) -> Optional[float]:
    return None if x in ("", None) else float(x)


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
    def from_csv(cls, path: Union[str, Path, None] = None) -> "Catalog":
        """The catalog shipped with ebssim (generated by scripts/make_catalog.py), or a CSV of the same shape."""
        if path is None:
            text = resources.files("ebssim").joinpath("data/instance_types.csv").read_text()
            source = "ebssim's shipped catalog"
        else:
            text = Path(path).read_text()
            source = str(path)
        rows: Dict[str, _Row] = {}
        for rec in csv.DictReader(text.splitlines()):
            rows[rec["instance_type"]] = _Row(
                hypervisor=rec["hypervisor"],
                bare_metal=rec["bare_metal"] == "1",
                ebs_optimized_support=rec["ebs_optimized_support"],
                baseline_iops=_num(rec["baseline_iops"]),
                max_iops=_num(rec["max_iops"]),
                baseline_mb_s=_num(rec["baseline_throughput_mb_s"]),
                max_mb_s=_num(rec["max_throughput_mb_s"]),
            )
        return cls(rows, source)

    @classmethod
    def from_describe_instance_types(cls, doc: Union[str, Path, Mapping[str, Any]]) -> "Catalog":
        """A catalog from ``aws ec2 describe-instance-types`` JSON output (a path or the parsed document)."""
        source = "describe-instance-types document"
        if isinstance(doc, (str, Path)):
            source = str(doc)
            try:
                doc = json.loads(Path(doc).read_text())
            except json.JSONDecodeError as e:
                raise ValueError(f"{source}: not valid JSON ({e.msg} at line {e.lineno})") from None
        if not isinstance(doc, Mapping) or not isinstance(doc.get("InstanceTypes"), list):
            raise ValueError(f"{source}: expected aws ec2 describe-instance-types output with an 'InstanceTypes' list")
        rows: Dict[str, _Row] = {}
        for i, info in enumerate(doc["InstanceTypes"]):
            try:
                name = info["InstanceType"]
                ebs = info.get("EbsInfo", {})
                opt = ebs.get("EbsOptimizedInfo") or {}
                hv = info.get("Hypervisor", "")
                bare = bool(info.get("BareMetal", False))
                rows[name] = _Row(
                    hypervisor=hv if hv else ("nitro" if bare else ""),
                    bare_metal=bare,
                    ebs_optimized_support=ebs.get("EbsOptimizedSupport", "unsupported"),
                    baseline_iops=_num(opt.get("BaselineIops")),
                    max_iops=_num(opt.get("MaximumIops")),
                    baseline_mb_s=_num(opt.get("BaselineThroughputInMBps")),
                    max_mb_s=_num(opt.get("MaximumThroughputInMBps")),
                )
            except (KeyError, TypeError, AttributeError) as e:
                raise ValueError(f"{source}: InstanceTypes[{i}] lacks {e} or is malformed") from None
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
