"""AWS input: CloudWatch metrics and EC2 descriptions, replayed and compared (docs/replay.md).

Readers (each gives plain Python or pandas; errors name the document, the item and the rule):

- :func:`read_metric_data` — ``aws cloudwatch get-metric-data`` output (pages, newest first or
  not, several volumes and metrics), mapped through the request's queries or the result labels;
- :func:`read_metric_statistics` — ``aws cloudwatch get-metric-statistics`` output;
- :func:`read_metrics_csv` — the same datapoints as CSV;
- :func:`metrics_from_wide` — a DataFrame of your own, one column per metric, indexed by time;
- :func:`read_instance_metric_data`, :func:`read_instance_metric_statistics` — the instance's
  EBS checks (AWS/EC2 ``InstanceEBSIOPSExceededCheck``, ...) into a frame of their own
  (:data:`INSTANCE_COLUMNS`);
- :func:`read_nvme_metric_data`, :func:`read_nvme_instance_metric_data` — the CloudWatch
  agent's EBS NVMe counters (``diskio_ebs_*``, namespace CWAgent) in AWS/EBS terms;
- :func:`read_volumes` — ``aws ec2 describe-volumes`` into :class:`~ebssim.Volume` configurations;
- :func:`read_instances` — ``aws ec2 describe-instances`` into attachments.

A path is read only if it is a regular file (a device or FIFO is refused before it can block)
of at most :data:`MAX_JSON_BYTES` (JSON) or :data:`MAX_CSV_BYTES` (CSV), UTF-8, and a JSON
document nested at most 100 levels deep (``ebssim._files.MAX_NESTING``); each is a ValueError
naming the file and the limit.

The metric readers return one *metrics DataFrame* (:data:`COLUMNS`, one row per
datapoint); :func:`check_metrics` checks one joined from several. Then:

- :func:`traces` — per-volume :class:`~ebssim.OpenLoop` traces from the I/O and byte Sums;
- :func:`replay` — those traces on the described volumes and instances;
- :func:`compare` — measured BurstBalance, IOPS, queue length and latency per direction beside
  the simulation's, and the exceeded checks against the minutes the model was bound, with error
  figures, an agreement table and a plot (:class:`Comparison`).

>>> import ebssim.aws as aws
>>> sorted(aws.DEMAND_METRICS)
['VolumeReadBytes', 'VolumeReadOps', 'VolumeWriteBytes', 'VolumeWriteOps']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:  # imported on first use (ebssim._lazy); these are what mypy and IDEs see
    from ._cloudwatch import (
        COLUMNS,
        INSTANCE_COLUMNS,
        INSTANCE_METRICS,
        METRICS,
        NVME_INSTANCE_METRICS,
        NVME_METRICS,
        WIDE_STATS,
        check_instance_metrics,
        check_metrics,
        metrics_from_wide,
        read_instance_metric_data,
        read_instance_metric_statistics,
        read_metric_data,
        read_metric_statistics,
        read_metrics_csv,
        read_nvme_instance_metric_data,
        read_nvme_metric_data,
    )
    from ._ec2 import Attachment, read_instances, read_volumes
    from ._replay import DEMAND_METRICS, Comparison, compare, replay, traces

#: Largest JSON file the readers read (AWS CLI output: a day of one-minute datapoints of all 11
#: metrics of 100 volumes is about 60 MB as ``get-metric-data`` prints it; decoded, a file takes
#: about three times its size in memory). Read at each call: set ``ebssim.aws.MAX_JSON_BYTES``
#: for a larger file.
MAX_JSON_BYTES = 256 << 20
#: Largest CSV file :func:`read_metrics_csv` reads (about 80 bytes a datapoint); read at each call.
MAX_CSV_BYTES = 256 << 20

__all__ = [
    "MAX_CSV_BYTES",
    "MAX_JSON_BYTES",
    "COLUMNS",
    "METRICS",
    "WIDE_STATS",
    "DEMAND_METRICS",
    "Attachment",
    "Comparison",
    "INSTANCE_COLUMNS",
    "INSTANCE_METRICS",
    "check_instance_metrics",
    "read_instance_metric_data",
    "read_instance_metric_statistics",
    "NVME_METRICS",
    "NVME_INSTANCE_METRICS",
    "read_nvme_metric_data",
    "read_nvme_instance_metric_data",
    "check_metrics",
    "compare",
    "metrics_from_wide",
    "read_instances",
    "read_metric_data",
    "read_metric_statistics",
    "read_metrics_csv",
    "read_volumes",
    "replay",
    "traces",
]

_EXPORTS = {
    "._cloudwatch": (
        "COLUMNS",
        "METRICS",
        "WIDE_STATS",
        "check_metrics",
        "metrics_from_wide",
        "read_metric_data",
        "read_metric_statistics",
        "read_metrics_csv",
        "INSTANCE_COLUMNS",
        "INSTANCE_METRICS",
        "check_instance_metrics",
        "read_instance_metric_data",
        "read_instance_metric_statistics",
        "NVME_METRICS",
        "NVME_INSTANCE_METRICS",
        "read_nvme_metric_data",
        "read_nvme_instance_metric_data",
    ),
    "._ec2": ("Attachment", "read_instances", "read_volumes"),
    "._replay": ("DEMAND_METRICS", "Comparison", "compare", "replay", "traces"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)
