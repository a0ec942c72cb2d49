"""Readers for real fio output (JSON/JSON+, iops/bw/lat logs, clat histogram logs) into pandas."""

from __future__ import annotations

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
    "FioResult",
    "hist_buckets",
    "hist_percentiles",
    "parse_json",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "read_hist_log",
    "read_json",
    "read_log",
    "read_logs",
]
