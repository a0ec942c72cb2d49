"""RDS storage as AWS documents it: the EBS volumes behind a DB instance's allocated storage
(per engine and storage type) as a :class:`~ebssim.StripedSet`, and the DB instance
class's EBS limits (docs/model.md, "RDS storage", which quotes the sources).

>>> import ebssim
>>> small = ebssim.rds("postgres", "gp3", 300)        # below PostgreSQL's 400 GiB threshold
>>> small.baseline_iops, small.max_throughput_mib_s    # one gp3 volume: 3,000 IOPS / 125 MiB/s
(3000.0, 125.0)
>>> big = ebssim.rds("postgres", "gp3", 400)          # at the threshold: striped over 4 volumes
>>> big.baseline_iops, big.max_throughput_mib_s        # 12,000 IOPS / 500 MiB/s
(12000.0, 500.0)
>>> print(big.volumes)
RAID-0 of 4 x gp3 100 GiB (3000 IOPS, 125 MiB/s), 512 KiB chunks
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple, Union

from ._units import real
from .instances import Instance, load_catalog
from .instances import instance as _instance
from .stripes import DEFAULT_CHUNK_KIB, StripedResult, StripedSet
from .volumes import Volume
from .workloads import ClosedLoop, Idle

__all__ = ["RdsStorage", "rds", "rds_from_spec", "db_instance", "RDS_ENGINES", "RDS_STORAGE_TYPES"]

#: The engines, as the RDS API names them (``Engine``), by family.
RDS_ENGINES: Dict[str, str] = {
    "mariadb": "mysql-like",
    "mysql": "mysql-like",
    "postgres": "mysql-like",
    "db2-se": "mysql-like",
    "db2-ae": "mysql-like",
    "oracle-ee": "oracle",
    "oracle-ee-cdb": "oracle",
    "oracle-se2": "oracle",
    "oracle-se2-cdb": "oracle",
    "sqlserver-ee": "sqlserver",
    "sqlserver-se": "sqlserver",
    "sqlserver-ex": "sqlserver",
    "sqlserver-web": "sqlserver",
}
_ALIASES = {"postgresql": "postgres", "oracle": "oracle-ee", "sqlserver": "sqlserver-ee", "db2": "db2-se"}
RDS_STORAGE_TYPES = ("gp2", "gp3", "io1", "io2")

# The allocated storage at and above which RDS stripes over four volumes, GiB, per engine family.
# AWS RDS User Guide, "Amazon RDS DB instance storage", gp3 storage: "For every RDS DB engine
# except RDS for SQL Server, when the storage size for gp3 volumes reaches a certain threshold,
# the baseline storage performance increases to 12,000 IOPS and 500 MiBps. This is because of
# volume striping, where the storage uses four logical volumes instead of one. RDS for SQL Server
# doesn't support volume striping, and therefore doesn't have a threshold value." Its table: Db2,
# MariaDB, MySQL and PostgreSQL "Less than 400 GiB | 3,000 IOPS/125 MiBps", "400 GiB and higher |
# 12,000 IOPS/500 MiBps | 12,000-64,000 IOPS | 500-4,000 MiBps"; Oracle the same at 200 GiB; SQL
# Server "20 GiB-16 TiB | 3,000 IOPS/125 MiBps | 3,000-16,000 IOPS | 125-1,000 MiBps".
_STRIPE_THRESHOLD_GIB = {"mysql-like": 400.0, "oracle": 200.0, "sqlserver": math.inf}
_STRIPES = 4
# gp3's provisioned range at and above the threshold (the table above) and SQL Server's.
_GP3_STRIPED = {"iops": (12000.0, 64000.0), "throughput_mib_s": (500.0, 4000.0)}
_GP3_SQLSERVER = {"iops": (3000.0, 16000.0), "throughput_mib_s": (125.0, 1000.0)}
# Allocated storage (the RDS API's AllocatedStorage constraints): gp2/gp3 20-65,536 GiB, io1/io2
# 100-65,536 GiB; SQL Server at most 16,384 GiB.
_SIZE = {"gp2": 20.0, "gp3": 20.0, "io1": 100.0, "io2": 100.0}
_MAX_GIB = 65536.0
_MAX_GIB_SQLSERVER = 16384.0


def db_instance(instance_class: str) -> Instance:
    """The EBS limits of a DB instance class: ``db.FAMILY.SIZE`` is the EC2 instance type
    ``FAMILY.SIZE`` of ebssim's catalog (``db.r5b.large`` -> ``r5b.large``). Classes with more
    parts (``db.r5.large.tpc1.mem2x``, Oracle's extra-memory classes) have no documented EC2
    counterpart and are a ValueError.

    >>> from ebssim import db_instance
    >>> print(db_instance("db.r5b.large"))
    r5b.large (EBS 43,333 IOPS / 1250 MB/s burst, 5,417 IOPS / 156.25 MB/s baseline)
    """
    if not isinstance(instance_class, str) or not instance_class.startswith("db."):
        raise ValueError(f"instance_class={instance_class!r} must be a DB instance class such as 'db.r5b.large'")
    ec2 = instance_class[3:]
    if not re.fullmatch(r"[a-z0-9-]+\.[a-z0-9-]+", ec2):
        raise ValueError(
            f"instance_class={instance_class!r}: only db.FAMILY.SIZE classes map to an EC2 instance type "
            f"(e.g. db.r5b.large -> r5b.large); this one has no documented EC2 counterpart"
        )
    if ec2 not in load_catalog():
        raise ValueError(f"instance_class={instance_class!r}: its EC2 counterpart {ec2!r} is not in the catalog")
    return _instance(ec2)


@dataclass(frozen=True)
class RdsStorage:
    """The storage of an RDS DB instance: its EBS volumes as a striped set, and the class's limits."""

    engine: str
    storage_type: str
    allocated_gib: float
    iops: Optional[float]
    throughput_mib_s: Optional[float]
    volumes: StripedSet
    instance: Optional[Instance]

    @property
    def baseline_iops(self) -> float:
        """The volumes' baseline IOPS summed (gp2: 3 per GiB; gp3: 3,000 or, striped, 12,000 by default)."""
        return self.volumes.baseline_iops

    @property
    def max_iops(self) -> float:
        return self.volumes.max_iops

    @property
    def max_throughput_mib_s(self) -> float:
        return self.volumes.max_throughput_mib_s

    def simulate(
        self, workload: Union[ClosedLoop, Idle], duration_s: float, *, dt: float = 1.0, record: bool = True
    ) -> StripedResult:
        """Run ``workload`` on the storage, the volumes sharing the DB instance class's EBS budget."""
        return self.volumes.simulate(workload, duration_s, dt=dt, instance=self.instance, record=record)


def _family(engine: str) -> Tuple[str, str]:
    if not isinstance(engine, str):
        raise ValueError(f"engine={engine!r} must be an RDS engine name such as 'postgres'")
    name = _ALIASES.get(engine, engine)
    if name not in RDS_ENGINES:
        raise ValueError(f"engine={engine!r} is not one of {', '.join(RDS_ENGINES)} (or {', '.join(_ALIASES)})")
    return name, RDS_ENGINES[name]


def rds(
    engine: str,
    storage_type: str,
    allocated_gib: float,
    *,
    iops: Optional[float] = None,
    throughput_mib_s: Optional[float] = None,
    instance_class: Optional[str] = None,
    chunk_kib: float = DEFAULT_CHUNK_KIB,
) -> RdsStorage:
    """The EBS layout behind an RDS DB instance's storage (docs/model.md, "RDS storage").

    - gp3: one volume of 3,000 IOPS / 125 MiB/s below the engine's threshold (400 GiB for Db2,
      MariaDB, MySQL, PostgreSQL; 200 GiB for Oracle), where IOPS and throughput cannot be
      provisioned; at and above it four alike volumes of a quarter of the storage, 12,000 IOPS /
      500 MiB/s in all by default, provisioned 12,000-64,000 IOPS and 500-4,000 MiB/s. SQL Server
      never stripes: one volume, 3,000-16,000 IOPS, 125-1,000 MiB/s.
    - gp2 (not on Db2): the same layout, each volume earning 3 IOPS per GiB of its quarter (AWS
      documents four-volume striping of gp2 for storage above 1 TiB, "burst performance of up to
      12,000 IOPS"; the 400/200 GiB thresholds are gp3's, an assumption for gp2).
    - io1, io2: ``iops`` required, split evenly over the same layout (an assumption: AWS does not
      document the volumes behind Provisioned IOPS storage).

    ``instance_class`` (``db.r5b.large``) adds the class's EBS limits (:func:`db_instance`). The
    stripe's chunk is not documented by AWS: ``chunk_kib`` (default 512, mdadm's).
    """
    name, family = _family(engine)
    if storage_type not in RDS_STORAGE_TYPES:
        raise ValueError(f"storage_type={storage_type!r} is not one of {', '.join(RDS_STORAGE_TYPES)}")
    if storage_type == "gp2" and name.startswith("db2"):
        raise ValueError(f"storage_type='gp2' with engine={engine!r}: RDS for Db2 doesn't support gp2 storage")
    size = real(allocated_gib, "allocated_gib", "a size in GiB")
    top = _MAX_GIB_SQLSERVER if family == "sqlserver" else _MAX_GIB
    if not (math.isfinite(size) and _SIZE[storage_type] <= size <= top and size == int(size)):
        raise ValueError(
            f"allocated_gib={allocated_gib!r} must be a whole number of GiB from {_SIZE[storage_type]:g} to {top:g} "
            f"for {storage_type} on {name}"
        )
    given = {"iops": iops, "throughput_mib_s": throughput_mib_s}
    values: Dict[str, Optional[float]] = {k: (None if v is None else real(v, k, "a number")) for k, v in given.items()}
    striped = size >= _STRIPE_THRESHOLD_GIB[family]
    n = _STRIPES if striped else 1
    if storage_type == "gp3":
        if not striped and family != "sqlserver":
            for k, v in values.items():
                if v is not None:
                    raise ValueError(
                        f"{k}={v:g}: RDS provisions no gp3 IOPS or throughput below {name}'s threshold of "
                        f"{_STRIPE_THRESHOLD_GIB[family]:g} GiB (allocated_gib={size:g}: 3,000 IOPS / 125 MiB/s)"
                    )
            ranges = {"iops": (3000.0, 3000.0), "throughput_mib_s": (125.0, 125.0)}
        else:
            ranges = _GP3_STRIPED if striped else _GP3_SQLSERVER
        chosen = {}
        for k, (lo, hi) in ranges.items():
            v = values[k]
            v = lo if v is None else v
            if not lo <= v <= hi:
                raise ValueError(f"{k}={v:g} is outside RDS's gp3 range {lo:g}-{hi:g} for {name} at {size:g} GiB")
            chosen[k] = v
        member = Volume("gp3", size / n, iops=chosen["iops"] / n, throughput_mib_s=chosen["throughput_mib_s"] / n)
        values = {k: chosen[k] for k in chosen}
    elif storage_type == "gp2":
        for k, v in values.items():
            if v is not None:
                raise ValueError(f"{k}={v:g}: gp2 storage provisions no IOPS or throughput (they follow its size)")
        member = Volume("gp2", size / n)
    else:
        if values["throughput_mib_s"] is not None:
            raise ValueError(f"throughput_mib_s={values['throughput_mib_s']:g}: {storage_type} follows its IOPS")
        if values["iops"] is None:
            raise ValueError(f"iops is required for {storage_type} storage (Provisioned IOPS)")
        member = Volume(storage_type, size / n, iops=values["iops"] / n)
    inst = None if instance_class is None else db_instance(instance_class)
    return RdsStorage(
        engine=name,
        storage_type=storage_type,
        allocated_gib=size,
        iops=values.get("iops"),
        throughput_mib_s=values.get("throughput_mib_s"),
        volumes=StripedSet((member,) * n, chunk_kib),
        instance=inst,
    )


_RDS_KEYS = {"engine": "", "type": "", "size": "GiB", "iops": "", "throughput": "MiB/s", "chunk": "KiB"}
RDS_SPEC_FORM = (
    "rds:engine=ENGINE,type=TYPE,size=GIB[,iops=N,throughput=MIBS,chunk=KIB], "
    "e.g. rds:engine=postgres,type=gp3,size=500"
)


def rds_from_spec(spec: str) -> RdsStorage:
    """An :class:`RdsStorage` from a SPEC ``rds:engine=ENGINE,type=TYPE,size=GIB[,iops=,throughput=,chunk=]``
    (``ebssim fio --volume TARGET=rds:...``; the DB instance class goes to ``--instance`` as its EC2 type).

    >>> from ebssim import rds_from_spec
    >>> print(rds_from_spec("rds:engine=mysql,type=gp3,size=1000,iops=16000").volumes)
    RAID-0 of 4 x gp3 250 GiB (4000 IOPS, 125 MiB/s), 512 KiB chunks
    """
    label = f"SPEC {spec!r}"
    if not isinstance(spec, str) or not spec.startswith("rds:"):
        raise ValueError(f"{label}: expected {RDS_SPEC_FORM}")
    out: Dict[str, str] = {}
    for item in spec[4:].split(","):
        key, eq, value = item.partition("=")
        if not eq or key not in _RDS_KEYS:
            raise ValueError(f"{label}: {item[:64]!r} is not one of {', '.join(k + '=' for k in _RDS_KEYS)}")
        if key in out:
            raise ValueError(f"{label}: key {key!r} is given twice; give each key once")
        out[key] = value
    for key in ("engine", "type", "size"):
        if key not in out:
            raise ValueError(f"{label}: {key}= is required: expected {RDS_SPEC_FORM}")

    def number(key: str) -> Optional[float]:
        if key not in out:
            return None
        m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(.*)", out[key], re.ASCII)
        if not m or m.group(2) not in ("", _RDS_KEYS[key]):
            raise ValueError(f"{label}: {key}={out[key][:64]!r} is not a number of ASCII digits, e.g. {key}=100")
        return float(m.group(1))

    try:
        return rds(
            out["engine"],
            out["type"],
            number("size") or 0.0,
            iops=number("iops"),
            throughput_mib_s=number("throughput"),
            chunk_kib=number("chunk") or DEFAULT_CHUNK_KIB,
        )
    except ValueError as e:
        raise ValueError(f"{label}: {e}") from None
