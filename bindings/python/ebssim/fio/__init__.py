"""fio in ebssim: parse job files and command lines, read real fio output into pandas, and
predict what fio would report on simulated EBS volumes.

- :func:`parse_run`, :func:`parse_job_file`, :func:`parse_command_line`: fio jobs as
  :class:`FioJob` objects with fio's defaults and semantics resolved.
- :func:`read_json`, :func:`read_log`, :func:`read_logs`, :func:`read_hist_log`: fio's JSON/JSON+,
  iops/bw/lat/clat/slat logs and clat histogram logs, with units normalised and named.
- :func:`predict`: fio runs simulated back to back on :class:`ebssim.Volume` objects, as a
  :class:`FioPrediction` (fio's JSON shape, its normal report, or the columns of
  ``read_json(...).jobs``); :func:`parse_volume_spec` reads ``ebssim fio``'s ``--volume`` specs.
"""

from __future__ import annotations

from .jobs import FioJob, FioJobError, FioJobSet, parse_command_line, parse_job_file, parse_run
from .readers import (
    FioLogOrderWarning,
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
from .simulate import FIO_PERCENTILES, FioPrediction, JobPrediction, parse_volume_spec, predict

__all__ = [
    "FIO_PERCENTILES",
    "FioJob",
    "FioJobError",
    "FioJobSet",
    "FioLogOrderWarning",
    "FioPrediction",
    "FioResult",
    "JobPrediction",
    "hist_buckets",
    "hist_percentiles",
    "parse_command_line",
    "parse_job_file",
    "parse_json",
    "parse_run",
    "parse_volume_spec",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "predict",
    "read_hist_log",
    "read_json",
    "read_log",
    "read_logs",
]
