"""Run examples/fio_phases.fio through `ebssim fio` and print what fio would report.

The job file has four stonewall phases on two volumes: A (/dev/nvme1n1) and B (/dev/nvme2n1).
By default A is a gp2 100 GiB volume and B a gp3 100 GiB volume, so the same load tells two
stories: B serves 3,000 IOPS whenever asked, while A spends its 5.4 M burst credits in phase 1,
a little more in phases 2 and 3, earns 300 a second whenever it rests, and runs out early in
phase 4.

    python examples/fio_phases.py [--volume-a gp2:size=100] [--volume-b gp3:size=100]

This prints the fio-like report (``--output-format normal``), then one line per reported job
from the JSON prediction: IOPS, mean latency, the cliff if one occurred, and BurstBalance at the
job's end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

JOB_FILE = Path(__file__).resolve().with_suffix(".fio")


def ebssim_command() -> List[str]:
    """The `ebssim` console script installed next to this Python, else on PATH, else the module."""
    here = Path(sys.executable).with_name("ebssim")
    if here.exists():
        return [str(here)]
    found = shutil.which("ebssim")
    return [found] if found else [sys.executable, "-m", "ebssim.cli"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--volume-a", default="gp2:size=100", help="SPEC of /dev/nvme1n1 (default gp2:size=100)")
    ap.add_argument("--volume-b", default="gp3:size=100", help="SPEC of /dev/nvme2n1 (default gp3:size=100)")
    args = ap.parse_args()

    cmd = ebssim_command() + [
        "fio",
        "--volume",
        f"/dev/nvme1n1={args.volume_a}",
        "--volume",
        f"/dev/nvme2n1={args.volume_b}",
    ]
    print("$ ebssim " + " ".join(cmd[len(ebssim_command()) :] + [str(JOB_FILE)]))
    print()
    normal = subprocess.run(cmd + [str(JOB_FILE)], capture_output=True, text=True)
    if normal.returncode != 0:
        sys.stderr.write(normal.stderr)
        return normal.returncode
    print(normal.stdout)

    js = subprocess.run(cmd + ["--output-format", "json", str(JOB_FILE)], capture_output=True, text=True)
    if js.returncode != 0:
        sys.stderr.write(js.stderr)
        return js.returncode
    doc = json.loads(js.stdout)
    print(f"Summary (A = /dev/nvme1n1 {args.volume_a}, B = /dev/nvme2n1 {args.volume_b}):")
    for job in doc["jobs"]:
        r, w = job["read"], job["write"]
        iops = r["iops"] + w["iops"]
        n = r["total_ios"] + w["total_ios"]
        lat_ms = (r["lat_ns"]["mean"] * r["total_ios"] + w["lat_ns"]["mean"] * w["total_ios"]) / n / 1e6 if n else 0.0
        eb = job["ebssim"]
        cliff = f"cliff at {eb['cliff_time_s']:.1f} s" if eb["cliff_time_s"] is not None else "no cliff"
        bb = eb["burst_balance_end_pct"]
        bb_text = f"BurstBalance {bb:.2f} % at end" if bb is not None else "no burst bucket"
        print(
            f"  {job['jobname']:<11} group {job['groupid']}: {iops:8,.1f} IOPS, mean latency {lat_ms:8.3f} ms, "
            f"{cliff}, {bb_text}, bound by {eb['bound']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
