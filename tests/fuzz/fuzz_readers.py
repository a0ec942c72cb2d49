"""atheris fuzz targets for ebssim's other file readers: ebssim.aws, ebssim.k8s and the instance Catalog.

Usage (``make fuzz`` runs every target through tests/fuzz/run.py)::

    python tests/fuzz/fuzz_readers.py TARGET [libFuzzer options] [CORPUS_DIR ...]

Each target writes the input to a file and reads it as a user's file is read. A target fails only
when the reader raises something other than ValueError or OSError, or emits a warning (every
warning is turned into an error, so that a pandas deprecation or a numpy overflow shows up too).
Hangs are found by libFuzzer's ``-timeout``, runaway memory by ``-rss_limit_mb``.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Dict

import atheris
import harness

# The names are taken here, inside the block: ebssim's packages import a module on first use, and
# only modules imported inside it are instrumented.
with atheris.instrument_imports(include=["ebssim"]):
    from ebssim import Catalog
    from ebssim.aws import (
        read_instances,
        read_metric_data,
        read_metric_statistics,
        read_metrics_csv,
        read_volumes,
    )
    from ebssim.k8s import read_claims

EXPECTED = (ValueError, OSError)
AWS = Path(__file__).resolve().parents[1] / "data" / "aws"
# The other input of queries= and request=, parsed once (the fuzzed file is the only one read).
PAGES: Any = json.loads((AWS / "cloudwatch-get-metric-data.pages.moto.json").read_text())
STATS: Any = json.loads((AWS / "cloudwatch-get-metric-statistics.moto.json").read_text())

# Inputs are written to files (the readers' real entry point) in one private directory.
WORKDIR = tempfile.mkdtemp(prefix="ebssim-fuzz-readers-")


def _target(name: str, read: Callable[[str], object]) -> Callable[[bytes], None]:
    path = os.path.join(WORKDIR, name)

    def fuzz(data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                read(path)
            except EXPECTED:
                pass

    return fuzz


TARGETS: Dict[str, Callable[[bytes], None]] = {
    "volumes": _target("volumes.json", read_volumes),
    "instances": _target("instances.json", read_instances),
    "metric_data": _target("data.json", read_metric_data),
    "queries": _target("queries.json", lambda p: read_metric_data(PAGES, queries=p)),
    "statistics": _target("statistics.json", lambda p: read_metric_statistics(p, volume_id="vol-0123abcd", period=60)),
    "request": _target("request.json", lambda p: read_metric_statistics(STATS, request=p)),
    "metrics_csv": _target("metrics.csv", read_metrics_csv),
    "claims": _target("manifests.yaml", read_claims),
    "catalog_csv": _target("catalog.csv", Catalog.from_csv),
    "catalog_json": _target("types.json", Catalog.from_describe_instance_types),
}


if __name__ == "__main__":
    harness.main(TARGETS)
