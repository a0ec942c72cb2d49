#!/usr/bin/env python3
"""Generate ebssim's EBS price file (``bindings/python/ebssim/data/ebs_prices.json``) from AWS's price list.

Inputs, one or more files of either shape (detected from their keys):

* **Price List API offer files** (``https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/
  AmazonEC2/current/<region>/index.json``, or ``aws pricing get-products`` output with its
  ``PriceList`` strings): ``products`` keyed by SKU with ``productFamily`` ``"Storage"``,
  ``"System Operation"`` or ``"Provisioned Throughput"``, ``attributes.volumeApiName``,
  ``attributes.usagetype``, ``attributes.regionCode`` (or ``location``); ``terms.OnDemand[sku]
  [offer].priceDimensions[...]`` with ``unit`` and ``pricePerUnit.USD``. Several region files
  may be given; their ``publicationDate`` is the price date.
* **The pricing pages' metered-unit map** (``meteredUnitMaps/ec2/USD/current/ebs-calculator.json``
  or ``ebs.json``): ``manifest.hawkFilePublicationDate`` and ``regions`` keyed by location name,
  each ``{"Storage General Purpose gp3 GB Mo": {"price": "0.08"}, ...}``.

Region codes and names come from botocore's ``endpoints.json`` (the ``aws`` partition: the
commercial regions); the price list writes ``EU (Ireland)`` where botocore writes ``Europe
(Ireland)``. Regions of that list without prices in the inputs are written out as such, so
``ebssim cost`` can say a region exists but is not priced.

    python scripts/make_prices.py scripts/data/ebs-calculator.2025-10-28.subset.json \
        -o bindings/python/ebssim/data/ebs_prices.json

The shipped file was generated from ``scripts/data/ebs-calculator.2025-10-28.subset.json``,
the part of AWS's document this script reads, itself made with ``--subset`` from the whole
document (see ``bindings/python/ebssim/data/README.md`` for where it comes from):

    python scripts/make_prices.py --subset ebs-calculator.2025-10-28.json \
        -o scripts/data/ebs-calculator.2025-10-28.subset.json
"""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

#: Price items, their unit, and what each is, in the order the file lists them.
ITEMS: Dict[str, Tuple[str, str]] = {
    "gp2.storage": ("GB-Mo", "gp2 storage"),
    "gp3.storage": ("GB-Mo", "gp3 storage"),
    "gp3.iops": ("IOPS-Mo", "gp3 IOPS above the 3,000 included"),
    "gp3.throughput": ("GiBps-Mo", "gp3 throughput above the 125 MiB/s included (AWS lists it per GiB/s-month)"),
    "io1.storage": ("GB-Mo", "io1 storage"),
    "io1.iops": ("IOPS-Mo", "io1 provisioned IOPS"),
    "io2.storage": ("GB-Mo", "io2 storage"),
    "io2.iops.tier1": ("IOPS-Mo", "io2 provisioned IOPS up to 32,000"),
    "io2.iops.tier2": ("IOPS-Mo", "io2 provisioned IOPS 32,001 to 64,000"),
    "io2.iops.tier3": ("IOPS-Mo", "io2 provisioned IOPS above 64,000"),
    "st1.storage": ("GB-Mo", "st1 storage"),
    "sc1.storage": ("GB-Mo", "sc1 storage"),
    "standard.storage": ("GB-Mo", "standard (magnetic) storage"),
    "standard.io_requests": ("IOs", "standard (magnetic) I/O requests, per request"),
}

# The metered-unit map's names for the items.
METERED: Dict[str, str] = {
    "Storage General Purpose gp2 GB Mo": "gp2.storage",
    "Storage General Purpose gp3 GB Mo": "gp3.storage",
    "Provisioned EBS IOPS gp3 Volumes per IOPS Mo": "gp3.iops",
    "Provisioned Throughput gp3 per GiBps mo": "gp3.throughput",
    "Storage Provisioned IOPS io1 GB Mo": "io1.storage",
    "Provisioned EBS IOPS io1 Volumes per IOPS Mo": "io1.iops",
    "Storage Provisioned IOPS io2 GB Mo": "io2.storage",
    # The same meter as AWS names it from 2024 on (the 2023 list had both spellings).
    "Storage Provisioned IOPS io2 GB month": "io2.storage",
    "Provisioned EBS IOPS io2 Volumes per IOPS Mo": "io2.iops.tier1",
    "Provisioned EBS IOPS Tier 2 io2 Volumes per IOPS Mo": "io2.iops.tier2",
    "Provisioned EBS IOPS Tier 3 io2 Volumes per IOPS Mo": "io2.iops.tier3",
    "Storage Throughput Optimized HDD st1 GB Mo": "st1.storage",
    "Storage Cold HDD sc1 GB Mo": "sc1.storage",
    "Storage Magnetic standard GB Mo": "standard.storage",
    "Provisioned EBS I O Requests standard Volumes per IOs": "standard.io_requests",
}

# Offer files: (productFamily, volumeApiName, usagetype suffix) -> item. The usagetype carries a
# region prefix ("EU-EBS:VolumeUsage.gp3"); us-east-1's has none.
OFFER: Dict[Tuple[str, str, str], str] = {
    ("Storage", "gp2", "EBS:VolumeUsage.gp2"): "gp2.storage",
    ("Storage", "gp3", "EBS:VolumeUsage.gp3"): "gp3.storage",
    ("System Operation", "gp3", "EBS:VolumeP-IOPS.gp3"): "gp3.iops",
    ("Provisioned Throughput", "gp3", "EBS:VolumeP-Throughput.gp3"): "gp3.throughput",
    ("Storage", "io1", "EBS:VolumeUsage.piops"): "io1.storage",
    ("System Operation", "io1", "EBS:VolumeP-IOPS.piops"): "io1.iops",
    ("Storage", "io2", "EBS:VolumeUsage.io2"): "io2.storage",
    ("System Operation", "io2", "EBS:VolumeP-IOPS.io2"): "io2.iops.tier1",
    ("System Operation", "io2", "EBS:VolumeP-IOPS.io2.tier2"): "io2.iops.tier2",
    ("System Operation", "io2", "EBS:VolumeP-IOPS.io2.tier3"): "io2.iops.tier3",
    ("Storage", "st1", "EBS:VolumeUsage.st1"): "st1.storage",
    ("Storage", "sc1", "EBS:VolumeUsage.sc1"): "sc1.storage",
    ("Storage", "standard", "EBS:VolumeUsage"): "standard.storage",
    ("System Operation", "standard", "EBS:VolumeIOUsage"): "standard.io_requests",
}
# Units the offer files use for the items (io2 storage says "GB-month", the rest "GB-Mo").
UNITS = {"GB-Mo": "GB-Mo", "GB-month": "GB-Mo", "IOPS-Mo": "IOPS-Mo", "GiBps-mo": "GiBps-Mo", "IOs": "IOs"}


def commercial_regions(endpoints: Path) -> Dict[str, str]:
    """Region code -> name of the ``aws`` partition in botocore's ``endpoints.json``."""
    doc = json.loads(endpoints.read_text())
    for partition in doc.get("partitions", []):
        if partition.get("partition") == "aws":
            return {code: info["description"] for code, info in sorted(partition["regions"].items())}
    raise ValueError(f"{endpoints}: no 'aws' partition")


def _location_names(name: str) -> List[str]:
    """The names the price list may use for a region botocore calls ``name``."""
    names = [name]
    if name.startswith("Europe ("):
        names.append("EU (" + name[len("Europe (") :])
    return names


def _decimal(text: Any, where: str) -> str:
    try:
        d = Decimal(str(text))
    except InvalidOperation:
        raise ValueError(f"{where}: price {text!r} is not a number") from None
    if not d.is_finite() or d < 0:
        raise ValueError(f"{where}: price {text!r} is not a finite number >= 0")
    return format(d.normalize(), "f")


def from_metered(doc: Mapping[str, Any], regions: Mapping[str, str], where: str) -> Dict[str, Dict[str, str]]:
    """Prices by region code from a metered-unit map (``ebs-calculator.json``); the price
    list's name of the region under the key ``"location"``."""
    by_location = doc.get("regions")
    if not isinstance(by_location, dict):
        raise ValueError(f"{where}: no 'regions' object")
    out: Dict[str, Dict[str, str]] = {}
    for code, name in regions.items():
        found = [n for n in _location_names(name) if n in by_location]
        if not found:
            continue
        prices: Dict[str, str] = {}
        for key, entry in by_location[found[0]].items():
            if key in METERED:
                item, price = METERED[key], _decimal(entry.get("price"), f"{where}: {found[0]}: {key}")
                if prices.setdefault(item, price) != price:
                    raise ValueError(f"{where}: {found[0]}: {item}: two prices, {prices[item]} and {price}")
        if prices:
            out[code] = {"location": found[0], **prices}
    return out


def subset(doc: Mapping[str, Any], regions: Mapping[str, str], where: str) -> Dict[str, Any]:
    """The part of a metered-unit map that :func:`from_metered` reads: its manifest and, for
    each commercial region it covers (sorted by location), the entries of :data:`METERED` in
    that order, each copied as published (``rateCode``, ``price``, ...). Local Zones, Wavelength
    Zones, GovCloud and the other meters are left out."""
    by_location = doc.get("regions")
    if not isinstance(by_location, dict) or "manifest" not in doc:
        raise ValueError(f"{where}: not a metered-unit map (no 'manifest' and 'regions')")
    kept: Dict[str, Dict[str, Any]] = {}
    for name in regions.values():
        found = [n for n in _location_names(name) if n in by_location]
        if found:
            entries = by_location[found[0]]
            kept[found[0]] = {key: entries[key] for key in METERED if key in entries}
    return {"manifest": doc["manifest"], "sets": doc.get("sets", {}), "regions": dict(sorted(kept.items()))}


def _offer_products(doc: Mapping[str, Any], where: str) -> Iterable[Tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(product, on-demand terms of its SKU) pairs of an offer file or of get-products output."""
    if "PriceList" in doc:  # aws pricing get-products: one JSON string per product
        for text in doc["PriceList"]:
            item = json.loads(text) if isinstance(text, str) else text
            yield item["product"], item.get("terms", {}).get("OnDemand", {})
        return
    products = doc.get("products")
    terms = doc.get("terms", {}).get("OnDemand")
    if not isinstance(products, dict) or not isinstance(terms, dict):
        raise ValueError(f"{where}: expected an offer file ('products' and 'terms.OnDemand') or get-products output")
    for sku, product in products.items():
        yield product, terms.get(sku, {})


def from_offer(doc: Mapping[str, Any], regions: Mapping[str, str], where: str) -> Dict[str, Dict[str, str]]:
    """Prices by region code from a Price List API offer file (or ``aws pricing get-products`` output)."""
    by_name = {n: code for code, name in regions.items() for n in _location_names(name)}
    out: Dict[str, Dict[str, str]] = {}
    for product, terms in _offer_products(doc, where):
        attrs = product.get("attributes", {})
        if attrs.get("locationType", "AWS Region") != "AWS Region":
            continue  # Local Zones, Wavelength Zones, Outposts
        usage = str(attrs.get("usagetype", ""))
        suffix = usage.split("-", 1)[1] if "-EBS:" in usage else usage
        item = OFFER.get((str(product.get("productFamily")), str(attrs.get("volumeApiName")), suffix))
        if item is None:
            continue
        code = attrs.get("regionCode") or by_name.get(str(attrs.get("location")))
        if code not in regions:
            continue
        dims = [d for term in terms.values() for d in term.get("priceDimensions", {}).values()]
        if len(dims) != 1:
            raise ValueError(f"{where}: {code} {item}: expected one on-demand price dimension, found {len(dims)}")
        unit = UNITS.get(str(dims[0].get("unit")))
        if unit != ITEMS[item][0]:
            raise ValueError(f"{where}: {code} {item}: unit {dims[0].get('unit')!r}, expected {ITEMS[item][0]!r}")
        price = _decimal(dims[0].get("pricePerUnit", {}).get("USD"), f"{where}: {code} {item}")
        known = out.setdefault(str(code), {"location": str(attrs.get("location", regions[code]))})
        if known.get(item, price) != price:
            raise ValueError(f"{where}: {code} {item}: two prices, {known[item]} and {price}")
        known[item] = price
    return out


def build(inputs: List[Path], regions: Mapping[str, str]) -> Dict[str, Any]:
    """The price file's document from the input files."""
    prices: Dict[str, Dict[str, str]] = {}
    dates = set()
    for path in inputs:
        doc = json.loads(path.read_text())
        if "manifest" in doc and "regions" in doc:
            dates.add(str(doc["manifest"]["hawkFilePublicationDate"])[:10])
            found = from_metered(doc, regions, str(path))
        else:
            if "publicationDate" in doc:
                dates.add(str(doc["publicationDate"])[:10])
            found = from_offer(doc, regions, str(path))
        for code, items in found.items():
            for item, price in items.items():
                if prices.setdefault(code, {}).get(item, price) != price:
                    earlier = prices[code][item]
                    raise ValueError(f"{path}: {code} {item}: {price} differs from an earlier input's {earlier}")
                prices[code][item] = price
    if len(dates) != 1:
        raise ValueError(f"expected inputs published on one date, found {sorted(dates) or 'none'}")
    return {
        "currency": "USD",
        "prices_as_of": dates.pop(),
        "units": {item: {"unit": unit, "what": what} for item, (unit, what) in ITEMS.items()},
        "regions": {
            code: {
                "name": regions[code],
                "location": prices[code]["location"],
                "prices": {item: prices[code][item] for item in ITEMS if item in prices[code]},
            }
            for code in sorted(prices)
        },
        "regions_without_prices": {code: name for code, name in regions.items() if code not in prices},
    }


def _botocore_endpoints() -> Optional[Path]:
    try:
        import botocore  # type: ignore[import-untyped]
    except ImportError:
        return None
    return Path(botocore.__file__).parent / "data" / "endpoints.json"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("inputs", nargs="+", type=Path, help="offer files or metered-unit maps (JSON)")
    ap.add_argument("--endpoints", type=Path, help="botocore's endpoints.json (default: the installed botocore's)")
    ap.add_argument("-o", "--output", type=Path, help="write here (default: standard output)")
    ap.add_argument(
        "--subset",
        action="store_true",
        help="write the part of one metered-unit map this script reads (the file kept in scripts/data) "
        "instead of the price file",
    )
    args = ap.parse_args(argv)
    endpoints = args.endpoints or _botocore_endpoints()
    if endpoints is None:
        ap.error("botocore is not installed: give --endpoints PATH/TO/botocore/data/endpoints.json")
    if args.subset:
        if len(args.inputs) != 1:
            ap.error("--subset takes one metered-unit map")
        part = subset(json.loads(args.inputs[0].read_text()), commercial_regions(endpoints), str(args.inputs[0]))
        text = json.dumps(part, indent=2) + "\n"
        if args.output:
            args.output.write_text(text)
        else:
            sys.stdout.write(text)
        print(f"{len(part['regions'])} regions kept", file=sys.stderr)
        return 0
    doc = build(args.inputs, commercial_regions(endpoints))
    text = json.dumps(doc, indent=1) + "\n"
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    missing = ", ".join(doc["regions_without_prices"]) or "none"
    priced = f"{len(doc['regions'])} regions priced as of {doc['prices_as_of']}"
    print(f"{priced}; without prices: {missing}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
