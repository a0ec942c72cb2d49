"""What EBS volumes cost per month, from AWS's price list shipped with the package (docs/advise.md).

The prices (``ebssim/data/ebs_prices.json``, USD, on-demand list prices) are AWS's public price
list for every commercial region it covered on the date in :data:`PRICES_AS_OF`; where they
come from and how to refresh them: ``ebssim/data/README.md`` and ``scripts/make_prices.py``.

A volume is billed for what it provisions, all month (AWS's examples use 30-day months and
bill per second, so a volume kept all month costs the monthly price):

- ``gp2``, ``st1``, ``sc1``: storage, per GB-month;
- ``gp3``: storage, plus IOPS above the 3,000 included and throughput above the 125 MiB/s
  included (AWS lists throughput per GiB/s-month: 1,024 MiB/s);
- ``io1``: storage and provisioned IOPS; ``io2``: storage and provisioned IOPS in three tiers
  (up to 32,000; 32,001 to 64,000; above 64,000);
- ``standard``: storage, plus I/O requests (give the month's count).

Snapshots are not priced. Amounts are computed exactly (decimal) and rounded to the cent.

>>> import ebssim
>>> from ebssim import cost
>>> c = cost.monthly_cost(ebssim.gp3(2000, iops=7000, throughput_mib_s=300), "eu-west-1")
>>> c.monthly_usd       # 2000 x 0.088 + 4000 x 0.0055 + 175 x 45.056 / 1024
205.7
>>> c.breakdown
{'storage': 176.0, 'iops': 22.0, 'throughput': 7.7, 'io_requests': 0.0}
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _repr
from ._units import real
from .volumes import Volume, volume_spec

__all__ = [
    "PRICES_AS_OF",
    "CURRENCY",
    "MAX_IO_REQUESTS_PER_MONTH",
    "Cost",
    "RegionPrices",
    "monthly_cost",
    "prices",
    "regions",
]

# Included in gp3's storage price (AWS: "3,000 IOPS and 125 MiB/s"); the limits themselves are
# the core's, these are billing terms.
_GP3_FREE_IOPS = Decimal(3000)
_GP3_FREE_MIB_S = Decimal(125)
# io2's IOPS price tiers (upper bounds, IOPS).
_IO2_TIERS = (Decimal(32000), Decimal(64000))
_MIB_PER_GIB = Decimal(1024)
_CENT = Decimal("0.01")

#: The most I/O requests in a month that :func:`monthly_cost` prices: 1e15, 385 million IOPS all
#: month, far beyond any EBS volume (a standard volume serves about a hundred); it keeps the exact
#: decimal amounts within their precision (28 digits), which far larger counts overflow.
MAX_IO_REQUESTS_PER_MONTH = 1e15


@lru_cache(maxsize=1)
def _document() -> Mapping[str, Any]:
    doc: Mapping[str, Any] = json.loads(resources.files("ebssim").joinpath("data/ebs_prices.json").read_text())
    return doc


#: The date AWS published the shipped prices (ISO, ``YYYY-MM-DD``).
PRICES_AS_OF: str = str(_document()["prices_as_of"])
#: The currency of every amount.
CURRENCY: str = str(_document()["currency"])


@dataclass(frozen=True)
class RegionPrices:
    """One region's list prices (USD), as AWS lists them.

    ``name`` is the region's name (botocore's), ``location`` the price list's name for it.
    ``items`` maps ``"gp2.storage"``, ``"gp3.iops"``, ... to the price per unit (``units``):
    GB-Mo for storage, IOPS-Mo for IOPS, GiBps-Mo for gp3 throughput, IOs (one request) for
    ``standard.io_requests``. An item AWS does not offer in the region is absent.
    """

    region: str
    name: str
    location: str
    prices_as_of: str
    items: Mapping[str, Decimal]
    units: Mapping[str, str]

    def __repr__(self) -> str:
        items = [f"{k} {v} per {self.units.get(k, '')}".rstrip() for k, v in self.items.items()]
        return _repr.short_repr(
            "RegionPrices", [f"{self.region} ({self.location}), list of {self.prices_as_of}", *items]
        )

    def _repr_html_(self) -> str:
        rows = [(k, f"${v} per {self.units.get(k, '')}") for k, v in self.items.items()]
        return _repr.html_table(
            f"RegionPrices: {self.region} ({self.location}), USD, list of {self.prices_as_of}", rows
        )

    def price(self, item: str) -> Decimal:
        """The price of ``item``; a ValueError naming the region when AWS lists none there."""
        if item not in self.units:
            raise ValueError(f"price item {item!r} is not one of {', '.join(self.units)}")
        if item not in self.items:
            raise ValueError(
                f"region {self.region} ({self.name}) has no price for {item} in the shipped price list "
                f"(AWS's list of {self.prices_as_of} has none: the type or tier was not offered there); "
                f"regenerate the prices from a newer offer file with scripts/make_prices.py"
            )
        return self.items[item]


def regions() -> List[str]:
    """Region codes with shipped prices.

    >>> from ebssim import cost
    >>> "eu-west-1" in cost.regions(), len(cost.regions())
    (True, 34)
    """
    return list(_document()["regions"])


def prices(region: str) -> RegionPrices:
    """The list prices of ``region`` (e.g. ``"eu-west-1"``).

    An unknown code is a ValueError suggesting close names; a commercial region the shipped
    list does not cover (opened after the prices were taken) says so.

    >>> from ebssim import cost
    >>> p = cost.prices("eu-west-1")
    >>> p.location, p.items["gp2.storage"], p.items["gp3.throughput"], p.units["gp3.throughput"]
    ('EU (Ireland)', Decimal('0.11'), Decimal('45.056'), 'GiBps-Mo')
    >>> cost.prices("eu-west-7")
    Traceback (most recent call last):
    ...
    ValueError: region 'eu-west-7' is not an AWS commercial region code; did you mean eu-west-1, eu-west-2, eu-west-3?
    """
    doc = _document()
    if not isinstance(region, str):
        raise ValueError(f"region={region!r} must be a region code such as 'us-east-1'")
    if region not in doc["regions"]:
        unpriced = doc["regions_without_prices"]
        if region in unpriced:
            raise ValueError(
                f"region {region!r} ({unpriced[region]}) is not in the shipped price list of {doc['prices_as_of']} "
                f"(it opened later); regenerate the prices from its offer file with scripts/make_prices.py"
            )
        known = sorted(set(doc["regions"]) | set(unpriced))
        close = sorted(difflib.get_close_matches(region, known, n=3, cutoff=0.6))
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
        raise ValueError(f"region {region!r} is not an AWS commercial region code{hint}")
    entry = doc["regions"][region]
    return RegionPrices(
        region=region,
        name=str(entry["name"]),
        location=str(entry["location"]),
        prices_as_of=str(doc["prices_as_of"]),
        items={k: Decimal(v) for k, v in entry["prices"].items()},
        units={k: str(v["unit"]) for k, v in doc["units"].items()},
    )


@dataclass(frozen=True)
class Cost:
    """A volume's monthly list price in one region, in USD, and what it is made of.

    ``breakdown`` holds ``storage``, ``iops``, ``throughput`` and ``io_requests``, each rounded
    to the cent; ``monthly_usd`` is their exact sum rounded to the cent.
    """

    region: str
    spec: str
    monthly_usd: float
    breakdown: Mapping[str, float]
    prices_as_of: str

    def _rows(self) -> List[Tuple[str, str]]:
        parts = [(k, _repr.usd(v)) for k, v in self.breakdown.items() if v]
        return [
            ("a month", _repr.usd(self.monthly_usd)),
            *parts,
            ("list prices of", f"{self.prices_as_of}, {self.region}"),
        ]

    def __repr__(self) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in self._rows()[1:-1])
        return _repr.short_repr(
            "Cost",
            [
                f"{self.spec} in {self.region}: {_repr.usd(self.monthly_usd)} a month"
                + (f" ({parts})" if parts else ""),
                f"list prices of {self.prices_as_of}",
            ],
        )

    def _repr_html_(self) -> str:
        return _repr.html_table(f"Cost: {self.spec}", self._rows())

    def to_dict(self) -> Dict[str, Any]:
        """The ``ebssim cost --output-format json`` entry of this volume."""
        return {"spec": self.spec, "monthly_usd": self.monthly_usd, "breakdown": dict(self.breakdown)}


def _cents(x: Decimal) -> float:
    return float(x.quantize(_CENT, rounding=ROUND_HALF_UP))


def _parts(volume: Volume, p: RegionPrices, io_requests: Decimal) -> Tuple[Decimal, Decimal, Decimal, Decimal]:
    """(storage, iops, throughput, io_requests) in USD per month, exact."""
    size = Decimal(repr(float(volume.size_gib)))
    t = volume.type
    storage = size * p.price(f"{t}.storage")
    iops = tput = ios = Decimal(0)
    if t == "gp3":
        extra_iops = max(Decimal(repr(volume.baseline_iops)) - _GP3_FREE_IOPS, Decimal(0))
        extra_mib_s = max(Decimal(repr(volume.max_throughput_mib_s)) - _GP3_FREE_MIB_S, Decimal(0))
        iops = extra_iops * p.price("gp3.iops") if extra_iops else Decimal(0)
        tput = extra_mib_s * p.price("gp3.throughput") / _MIB_PER_GIB if extra_mib_s else Decimal(0)
    elif t == "io1":
        iops = Decimal(repr(volume.baseline_iops)) * p.price("io1.iops")
    elif t == "io2":
        n = Decimal(repr(volume.baseline_iops))
        tier1 = min(n, _IO2_TIERS[0])
        tier2 = min(max(n - _IO2_TIERS[0], Decimal(0)), _IO2_TIERS[1] - _IO2_TIERS[0])
        tier3 = max(n - _IO2_TIERS[1], Decimal(0))
        iops = tier1 * p.price("io2.iops.tier1")
        if tier2:
            iops += tier2 * p.price("io2.iops.tier2")
        if tier3:
            iops += tier3 * p.price("io2.iops.tier3")
    elif t == "standard" and io_requests:
        ios = io_requests * p.price("standard.io_requests")
    return storage, iops, tput, ios


def io_requests_of(value: Any, field: str = "io_requests_per_month") -> float:
    """``value`` as a month's I/O requests: a number from 0 to :data:`MAX_IO_REQUESTS_PER_MONTH`
    (``field`` names it in the ValueError: the CLI's ``--io-requests-per-month``)."""
    n = real(value, field, "a number of I/O requests")
    if not 0 <= n <= MAX_IO_REQUESTS_PER_MONTH:  # NaN fails both
        raise ValueError(
            f"{field}={value!r} must be a number of requests from 0 to {MAX_IO_REQUESTS_PER_MONTH:g} "
            f"(ebssim.cost.MAX_IO_REQUESTS_PER_MONTH)"
        )
    return n


def monthly_cost(
    volume: Volume,
    region: Union[str, RegionPrices],
    *,
    io_requests_per_month: float = 0.0,
    spec: Optional[str] = None,
) -> Cost:
    """Monthly list price of ``volume`` kept all month in ``region``.

    Parameters
    ----------
    volume : Volume
        The configuration (``ebssim.gp3(...)``, :func:`ebssim.fio.volume_from_spec`, ...).
    region : str or RegionPrices
        A region code, or :func:`prices` of one.
    io_requests_per_month : float
        I/O requests in the month, 0 to :data:`MAX_IO_REQUESTS_PER_MONTH`; billed for
        ``standard`` volumes only (default 0).
    spec : str, optional
        How to name the volume in the result (default: its SPEC, :func:`ebssim.fio.volume_spec`).

    Examples
    --------
    >>> import ebssim
    >>> from ebssim import cost
    >>> cost.monthly_cost(ebssim.gp2(2000), "eu-west-1").monthly_usd                  # 2000 x 0.11
    220.0
    >>> cost.monthly_cost(ebssim.gp3(2000), "eu-west-1").monthly_usd                  # 2000 x 0.088
    176.0
    >>> c = cost.monthly_cost(ebssim.io2(1000, 70000), "us-east-1")
    >>> c.breakdown["iops"]      # 32,000 x 0.065 + 32,000 x 0.0455 + 6,000 x 0.03185
    3727.1
    """
    if not isinstance(volume, Volume):
        raise ValueError(f"volume={volume!r} must be an ebssim.Volume")
    p = region if isinstance(region, RegionPrices) else prices(region)
    n_ios = io_requests_of(io_requests_per_month)
    parts = _parts(volume, p, Decimal(repr(n_ios)))
    if spec is None:
        spec = volume_spec(volume)
    names = ("storage", "iops", "throughput", "io_requests")
    return Cost(
        region=p.region,
        spec=spec,
        monthly_usd=_cents(sum(parts, Decimal(0))),
        breakdown={name: _cents(x) for name, x in zip(names, parts)},
        prices_as_of=p.prices_as_of,
    )
