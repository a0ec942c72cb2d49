#!/usr/bin/env python3
"""Generate ebssim's instance catalog from public describe-instance-types data.

Input: a JSON document that is either the output of ``aws ec2 describe-instance-types``
(``{"InstanceTypes": [...]}``, pages concatenated or not) or getmoto/moto's
``moto/ec2/resources/instance_types.json`` (an object keyed by instance type whose values are
raw ``InstanceTypeInfo`` records). Output: a compact CSV, one row per instance type, with the
EBS limits the simulator needs.

    python scripts/make_catalog.py ../shared/data/aws/moto-instance_types.json \
        -o bindings/python/ebssim/data/instance_types.csv

The shipped CSV was generated from moto's snapshot 0af643a5 (2026-08-22, Apache-2.0), which
merges DescribeInstanceTypes results across all regions.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List

COLUMNS = [
    "instance_type",
    "hypervisor",
    "bare_metal",
    "ebs_optimized_support",
    "baseline_iops",
    "max_iops",
    "baseline_throughput_mb_s",
    "max_throughput_mb_s",
    "max_ebs_attachments",
]


def records(doc: Any) -> Iterable[Dict[str, Any]]:
    """InstanceTypeInfo records from either input shape."""
    if isinstance(doc, dict) and "InstanceTypes" in doc:
        yield from doc["InstanceTypes"]
    elif isinstance(doc, dict):
        yield from doc.values()
    elif isinstance(doc, list):  # several CLI pages
        for page in doc:
            yield from records(page)
    else:
        raise ValueError("expected describe-instance-types output or moto's instance_types.json")


def row(info: Dict[str, Any]) -> Dict[str, Any]:
    ebs = info.get("EbsInfo", {})
    opt = ebs.get("EbsOptimizedInfo")
    hv = info.get("Hypervisor", "")
    bare = bool(info.get("BareMetal", False))
    out: Dict[str, Any] = {
        "instance_type": info["InstanceType"],
        # Bare-metal types report no hypervisor but run on the Nitro system.
        "hypervisor": hv if hv else ("nitro" if bare else ""),
        "bare_metal": int(bare),
        "ebs_optimized_support": ebs.get("EbsOptimizedSupport", "unsupported"),
        "max_ebs_attachments": ebs.get("MaximumEbsAttachments", ""),
    }
    for col, key in [
        ("baseline_iops", "BaselineIops"),
        ("max_iops", "MaximumIops"),
        ("baseline_throughput_mb_s", "BaselineThroughputInMBps"),
        ("max_throughput_mb_s", "MaximumThroughputInMBps"),
    ]:
        # MB/s (decimal) is authoritative: the Mbps integers are truncated for some types.
        out[col] = opt[key] if opt else ""
    return out


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="describe-instance-types JSON, or moto's instance_types.json (.gz too)")
    ap.add_argument("-o", "--output", type=Path, default=Path("bindings/python/ebssim/data/instance_types.csv"))
    args = ap.parse_args(argv)
    raw = args.source.read_bytes()
    doc = json.loads(gzip.decompress(raw) if args.source.suffix == ".gz" else raw)
    rows = sorted((row(r) for r in records(doc)), key=lambda r: r["instance_type"])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {len(rows)} instance types to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
