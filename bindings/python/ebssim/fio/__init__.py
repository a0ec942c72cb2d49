"""fio in ebssim: parse job files and command lines, and read real fio output into pandas.

- :func:`parse_run`, :func:`parse_job_file`, :func:`parse_command_line`: fio jobs as
  :class:`FioJob` objects with fio's defaults and semantics resolved.
- :func:`read_json`, :func:`read_log`, :func:`read_logs`, :func:`read_hist_log`: fio's JSON/JSON+,
  iops/bw/lat/clat/slat logs and clat histogram logs, with units normalised and named.
"""

from __future__ import annotations

from .jobs import FioJob, FioJobError, FioJobSet, parse_command_line, parse_job_file, parse_run
from .readers import (
    FioResult,
    hist_buckets,
    hist_percentiles,
    parse_json,
    plat_idx_to_val,
    plat_val_to_idx,
    read_hist_log,
    read_json,
    read_log,
    read_logs,
)

__all__ = [
    "FioJob",
    "FioJobError",
    "FioJobSet",
    "FioResult",
    "hist_buckets",
    "hist_percentiles",
    "parse_command_line",
    "parse_job_file",
    "parse_json",
    "parse_run",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "read_hist_log",
    "read_json",
    "read_log",
    "read_logs",
]
