"""CloudWatch metrics of EBS volumes (namespace ``AWS/EBS``) into one tidy DataFrame."""

from __future__ import annotations

import dataclasses
import io
import math
import os
import re
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy as np

from .. import aws as _aws  # the package: its MAX_*_BYTES limits, read at each call
from .._files import read_json, read_text
from .._files import shown as _shown

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "METRICS",
    "COLUMNS",
    "WIDE_STATS",
    "read_metric_data",
    "read_metric_statistics",
    "read_metrics_csv",
    "check_metrics",
    "metrics_from_wide",
    "INSTANCE_METRICS",
    "INSTANCE_COLUMNS",
    "read_instance_metric_data",
    "read_instance_metric_statistics",
    "check_instance_metrics",
    "NVME_METRICS",
    "NVME_INSTANCE_METRICS",
    "read_nvme_metric_data",
    "read_nvme_instance_metric_data",
]

Source = Union[str, "PathLike[str]", Mapping[str, Any], Sequence[Any]]

#: The AWS/EBS volume metrics ebssim reads, and the unit CloudWatch reports each in (EBS User
#: Guide, "Amazon CloudWatch metrics for Amazon EBS").
METRICS: Dict[str, str] = {
    "VolumeReadOps": "Count",
    "VolumeWriteOps": "Count",
    "VolumeReadBytes": "Bytes",
    "VolumeWriteBytes": "Bytes",
    "VolumeTotalReadTime": "Seconds",
    "VolumeTotalWriteTime": "Seconds",
    "VolumeIdleTime": "Seconds",
    "VolumeQueueLength": "Count",
    "VolumeThroughputPercentage": "Percent",
    "VolumeConsumedReadWriteOps": "Count",
    "BurstBalance": "Percent",
    # Added 2023-2024 (docs/replay.md, "Latency and exceeded checks", quotes the sources):
    # average latency of the period's completed I/Os, and 0/1 checks each minute.
    "VolumeAvgReadLatency": "Milliseconds",
    "VolumeAvgWriteLatency": "Milliseconds",
    "VolumeIOPSExceededCheck": "None",
    "VolumeThroughputExceededCheck": "None",
    "VolumeStalledIOCheck": "None",
}
#: Columns of the metrics DataFrame every reader returns, one row per datapoint: a list, so
#: that ``df[COLUMNS]`` selects them.
COLUMNS: List[str] = ["timestamp", "volume_id", "metric", "stat", "period_s", "unit", "value"]
#: The statistic :func:`metrics_from_wide` gives each metric unless told: ``Sum`` for what adds
#: up over a period (I/Os, bytes, seconds), ``Average`` for levels (a balance, a queue, a share).
WIDE_STATS: Dict[str, str] = {
    "VolumeReadOps": "Sum",
    "VolumeWriteOps": "Sum",
    "VolumeReadBytes": "Sum",
    "VolumeWriteBytes": "Sum",
    "VolumeTotalReadTime": "Sum",
    "VolumeTotalWriteTime": "Sum",
    "VolumeIdleTime": "Sum",
    "VolumeQueueLength": "Average",
    "VolumeThroughputPercentage": "Average",
    "VolumeConsumedReadWriteOps": "Sum",
    "BurstBalance": "Average",
}

#: The AWS/EC2 per-instance EBS metrics ebssim reads (dimension ``InstanceId``, Nitro
#: instances), and their unit: 0 or 1 each minute (1: the instance's EBS IOPS or throughput
#: limit was exceeded). They are read into a frame of their own (:data:`INSTANCE_COLUMNS`).
INSTANCE_METRICS: Dict[str, str] = {
    "InstanceEBSIOPSExceededCheck": "None",
    "InstanceEBSThroughputExceededCheck": "None",
}
#: Columns of the instance metrics DataFrame (:func:`read_instance_metric_data`,
#: :func:`read_instance_metric_statistics`): the metrics DataFrame's, with ``instance_id``
#: in place of ``volume_id``.
INSTANCE_COLUMNS: List[str] = ["timestamp", "instance_id", "metric", "stat", "period_s", "unit", "value"]

#: The CloudWatch agent's EBS NVMe counters of a volume (its ``diskio`` section with the EBS
#: NVMe driver metrics; namespace ``CWAgent`` by default, dimension ``VolumeId``: the agent
#: turns the device's NVMe serial ``vol0123...`` into ``vol-0123...``), their unit as
#: CloudWatch holds them (the agent's ``Count``, ``Bytes``, and ``Microseconds`` for the times),
#: and the AWS/EBS metric :func:`read_nvme_metric_data` turns each into (docs/replay.md, "EBS
#: NVMe counters from the CloudWatch agent").
NVME_METRICS: Dict[str, str] = {
    "diskio_ebs_total_read_ops": "Count",
    "diskio_ebs_total_write_ops": "Count",
    "diskio_ebs_total_read_bytes": "Bytes",
    "diskio_ebs_total_write_bytes": "Bytes",
    "diskio_ebs_total_read_time": "Microseconds",
    "diskio_ebs_total_write_time": "Microseconds",
    "diskio_ebs_volume_performance_exceeded_iops": "Microseconds",
    "diskio_ebs_volume_performance_exceeded_tp": "Microseconds",
    "diskio_ebs_volume_queue_length": "Count",
}
#: The agent's per-volume counters of time held back by the instance's EBS limits: read by
#: :func:`read_nvme_instance_metric_data` into the instance metrics frame.
NVME_INSTANCE_METRICS: Dict[str, str] = {
    "diskio_ebs_ec2_instance_performance_exceeded_iops": "Microseconds",
    "diskio_ebs_ec2_instance_performance_exceeded_tp": "Microseconds",
}
# Each NVMe counter as the AWS/EBS (or AWS/EC2) metric it is read as, and the factor to its unit.
_NVME_AS = {
    "diskio_ebs_total_read_ops": ("VolumeReadOps", 1.0),
    "diskio_ebs_total_write_ops": ("VolumeWriteOps", 1.0),
    "diskio_ebs_total_read_bytes": ("VolumeReadBytes", 1.0),
    "diskio_ebs_total_write_bytes": ("VolumeWriteBytes", 1.0),
    "diskio_ebs_total_read_time": ("VolumeTotalReadTime", 1e-6),
    "diskio_ebs_total_write_time": ("VolumeTotalWriteTime", 1e-6),
    "diskio_ebs_volume_queue_length": ("VolumeQueueLength", 1.0),
    "diskio_ebs_volume_performance_exceeded_iops": ("VolumeIOPSExceededCheck", None),
    "diskio_ebs_volume_performance_exceeded_tp": ("VolumeThroughputExceededCheck", None),
    "diskio_ebs_ec2_instance_performance_exceeded_iops": ("InstanceEBSIOPSExceededCheck", None),
    "diskio_ebs_ec2_instance_performance_exceeded_tp": ("InstanceEBSThroughputExceededCheck", None),
}


@dataclass(frozen=True)
class _Kind:
    """What tells volume metrics from instance metrics: namespace, dimension, id, metric names."""

    what: str  # "volume" or "instance"
    namespace: str
    dimension: str
    id_re: "re.Pattern[str]"
    id_text: str
    column: str

    @property
    def metrics(self) -> Dict[str, str]:
        return {
            "volume": METRICS,
            "instance": INSTANCE_METRICS,
            "nvme": NVME_METRICS,
            "nvme_instance": NVME_INSTANCE_METRICS,
        }[self.what]

    @property
    def other(self) -> "_Kind":
        if self.what.startswith("nvme"):
            return dataclasses.replace(_NVME_INSTANCE if self.what == "nvme" else _NVME, namespace=self.namespace)
        return _INSTANCE if self.what == "volume" else _VOLUME_KIND


_STATS = ("Sum", "Average", "Minimum", "Maximum", "SampleCount")
_STAT_RE = re.compile(r"^(Sum|Average|Minimum|Maximum|SampleCount|p\d+(\.\d+)?)$")
_VOLUME_RE = re.compile(r"^vol-[0-9a-f]+$")
_SPLIT_RE = re.compile(r"[\s,;|/]+")
_VOLUME_KIND = _Kind("volume", "AWS/EBS", "VolumeId", _VOLUME_RE, "a volume id (vol- and hex digits)", "volume_id")
_INSTANCE = _Kind(
    "instance",
    "AWS/EC2",
    "InstanceId",
    re.compile(r"^i-[0-9a-f]+$"),
    "an instance id (i- and hex digits)",
    "instance_id",
)


_NVME = _Kind("nvme", "CWAgent", "VolumeId", _VOLUME_RE, "a volume id (vol- and hex digits)", "volume_id")
_NVME_INSTANCE = dataclasses.replace(_NVME, what="nvme_instance")


def _unit_of(metric: str) -> str:
    for table in (METRICS, INSTANCE_METRICS, NVME_METRICS):
        if metric in table:
            return table[metric]
    return NVME_INSTANCE_METRICS[metric]


def _load(source: Any, expected: str) -> Tuple[Any, str]:
    """(parsed JSON, a name for messages) from a path or an already parsed document.

    A path is read as :func:`ebssim._files.read_json` reads it: a regular file of at most
    :data:`ebssim.aws.MAX_JSON_BYTES`, UTF-8, nested at most ``MAX_NESTING`` deep.
    """
    if isinstance(source, (str, PathLike)):
        path = os.fspath(source)
        return read_json(path, _aws.MAX_JSON_BYTES, expected, "ebssim.aws.MAX_JSON_BYTES"), str(path)
    if isinstance(source, (Mapping, list, tuple)):
        return source, "document"
    raise ValueError(f"{expected}: expected a path or a parsed JSON document, not {type(source).__name__}")


def _pages(sources: Iterable[Any], what: str, key: str) -> List[Tuple[Mapping[str, Any], str]]:
    """Every page of every source, in order: a source is one page or a list of pages."""
    out: List[Tuple[Mapping[str, Any], str]] = []
    for src in sources:
        doc, name = _load(src, f"the output of {what}")
        pages = doc if isinstance(doc, (list, tuple)) else [doc]
        for i, page in enumerate(pages):
            where = name if len(pages) == 1 else f"{name} page {i}"
            if not isinstance(page, Mapping) or key not in page:
                raise ValueError(f"{where}: expected the output of {what}, a JSON object with {key!r}")
            out.append((page, where))
    if not out:
        raise ValueError(f"no document given: pass the output of {what} (a path, or several pages)")
    return out


# The range of pandas' nanosecond timestamps, which the metrics DataFrame holds.
_TIME_RANGE = "1677-09-21 00:12:43 to 2262-04-11 23:47:16 UTC, the range of pandas' nanosecond timestamps"


def _timestamps(values: Sequence[Any], where: str, field: str) -> "pd.DatetimeIndex":
    """``values`` (ISO-8601 text) as UTC nanosecond timestamps; errors name ``field`` and the value."""
    import pandas as pd

    values = list(values)
    for v in values:
        if v is None:
            raise ValueError(f"{where}: {field}: a timestamp is missing (null)")
        if not isinstance(v, str):
            raise ValueError(f"{where}: {field} {_shown(v)} is not an ISO-8601 timestamp (text)")
    try:
        ts = pd.DatetimeIndex(pd.to_datetime(values, utc=True, format="ISO8601"))
        ts = ts.as_unit("ns") if hasattr(ts, "as_unit") else ts
    except pd.errors.OutOfBoundsDatetime:
        bad = next((v for v in values if not _in_range(v)), values[0])
        raise ValueError(f"{where}: {field} {_shown(bad)} is outside {_TIME_RANGE}") from None
    except (TypeError, ValueError, OverflowError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"{where}: {field}: a timestamp is not ISO-8601 ({reason})") from None
    if ts.hasnans:
        raise ValueError(f"{where}: {field}: a timestamp is missing (null)")
    return ts


def _in_range(value: str) -> bool:
    import pandas as pd

    try:
        pd.DatetimeIndex(pd.to_datetime([value], utc=True, format="ISO8601")).as_unit("ns")
    except pd.errors.OutOfBoundsDatetime:
        return False
    except (TypeError, ValueError, OverflowError):
        pass
    return True


def _float(v: Any, where: str, what: str) -> float:
    """A JSON number as a float: not a bool, not text, not an integer beyond a double's range."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}: {what} {_shown(v)} is not a number")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{where}: {what} {_shown(v)} is out of range (beyond a double's 1.8e308)") from None


def _number(v: Any, where: str) -> float:
    return _float(v, where, "value")


def _check_value(metric: str, value: float, where: str) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{where}: {metric} is {value!r}; CloudWatch's {metric} is a finite number >= 0")
    unit = _unit_of(metric)
    if unit == "Percent" and value > 100:
        raise ValueError(f"{where}: {metric} is {value!r}, above 100 percent")
    if metric.endswith("Check") and value > 1:
        raise ValueError(f"{where}: {metric} is {value!r}; a check is 0 or 1 (its Average over minutes at most 1)")


def _metric(name: Any, where: str, kind: _Kind = _VOLUME_KIND) -> str:
    if name not in kind.metrics:
        hint = (
            f"; {name} is an instance metric (namespace {kind.other.namespace}): read it with "
            f"ebssim.aws.read_{kind.other.what}_metric_data"
            if name in kind.other.metrics and kind.what == "volume"
            else f"; {name} is read by ebssim.aws.read_nvme{'_instance' * (kind.what == 'nvme')}_metric_data"
            if name in kind.other.metrics and kind.what.startswith("nvme")
            else (
                f"; {name} is a volume metric (namespace AWS/EBS): read it with ebssim.aws.read_metric_data"
                if name in kind.other.metrics
                else "; drop the others from the request"
            )
        )
        raise ValueError(
            f"{where}: {name!r} is not an EBS {kind.what} metric ebssim reads (namespace {kind.namespace}): "
            f"{', '.join(kind.metrics)}{hint}"
        )
    return str(name)


def _stat(stat: Any, where: str) -> str:
    if not isinstance(stat, str) or not _STAT_RE.match(stat):
        raise ValueError(f"{where}: stat {stat!r} is not a CloudWatch statistic ({', '.join(_STATS)}, or pNN)")
    return stat


def _period(period: Any, where: str) -> float:
    if isinstance(period, bool) or not isinstance(period, (int, float)):
        raise ValueError(f"{where}: period {_shown(period)} must be a number of seconds")
    p = _float(period, where, "period")
    if not (math.isfinite(p) and p > 0):
        raise ValueError(f"{where}: period {_shown(period)} must be a positive number of seconds")
    return p


def _unit(metric: str, unit: Any, where: str) -> str:
    want = _unit_of(metric)
    if unit is None or unit == "":
        raise ValueError(f"{where}: {metric} has no unit; CloudWatch reports it in {want}")
    if unit != want:
        raise ValueError(
            f"{where}: {metric} is in {unit!r}, but CloudWatch reports it in {want!r}: "
            f"query it without Unit, or in {want}"
        )
    return str(unit)


def _volume(volume_id: Any, where: str, kind: _Kind = _VOLUME_KIND) -> str:
    if not isinstance(volume_id, str) or not kind.id_re.match(volume_id):
        raise ValueError(f"{where}: {volume_id!r} is not {kind.id_text}")
    return volume_id


# --- get-metric-data ---------------------------------------------------------------------------


def _queries(queries: Any, kind: _Kind = _VOLUME_KIND) -> Dict[str, Optional[Dict[str, Any]]]:
    """Id -> {metric, volume_id, stat, period_s, unit} from a GetMetricData request's queries
    (``volume_id`` holds the instance id for instance metrics); None for a query of the other
    kind's metrics (AWS/EC2 instance checks beside volume metrics, or the reverse), which the
    other reader reads."""
    doc, name = _load(queries, "MetricDataQueries (aws cloudwatch get-metric-data --metric-data-queries)")
    qs = doc.get("MetricDataQueries") if isinstance(doc, Mapping) else doc
    if not isinstance(qs, (list, tuple)):
        raise ValueError(f"{name}: expected a list of MetricDataQueries, or a request holding 'MetricDataQueries'")
    out: Dict[str, Optional[Dict[str, Any]]] = {}
    for i, q in enumerate(qs):
        where = f"{name}: MetricDataQueries[{i}]"
        if not isinstance(q, Mapping) or not isinstance(q.get("Id"), str):
            raise ValueError(f"{where}: a query needs an Id")
        qid = q["Id"]
        where = f"{where} (Id {qid!r})"
        if qid in out:
            raise ValueError(f"{where}: the Id is used twice")
        if q.get("ReturnData") is False:
            continue
        ms = q.get("MetricStat")
        if not isinstance(ms, Mapping):
            raise ValueError(
                f"{where}: not a MetricStat query (an expression's result names no volume metric): "
                f"set ReturnData to false for it, or drop it"
            )
        metric: Any = ms.get("Metric") if isinstance(ms.get("Metric"), Mapping) else {}
        if metric.get("Namespace") == kind.other.namespace and metric.get("MetricName") in kind.other.metrics:
            out[qid] = None
            continue
        if metric.get("Namespace") != kind.namespace:
            raise ValueError(
                f"{where}: namespace {metric.get('Namespace')!r}; ebssim reads {kind.namespace} "
                f"{kind.what} metrics here"
            )
        name_ = _metric(metric.get("MetricName"), where, kind)
        dims = {d.get("Name"): d.get("Value") for d in metric.get("Dimensions", []) if isinstance(d, Mapping)}
        if kind.dimension not in dims:
            raise ValueError(f"{where}: {name_} has no {kind.dimension} dimension")
        if "Period" not in ms:
            raise ValueError(f"{where}: MetricStat has no Period")
        out[qid] = {
            "metric": name_,
            "volume_id": _volume(dims[kind.dimension], where, kind),
            "stat": _stat(ms.get("Stat"), where),
            "period_s": _period(ms["Period"], where),
            "unit": _unit_of(name_) if ms.get("Unit") is None else _unit(name_, ms.get("Unit"), where),
        }
    return out


def _from_label(label: Any, where: str, kind: _Kind = _VOLUME_KIND) -> Optional[Dict[str, Any]]:
    """What a result's Label says: volume id and metric (required), statistic and period
    (optional); None for a Label that names one of the other kind's metrics and its id."""
    tokens = [t for t in _SPLIT_RE.split(label if isinstance(label, str) else "") if t]
    vols = [t for t in tokens if kind.id_re.match(t)]
    metrics = [t for t in tokens if t in kind.metrics]
    if not metrics:
        others = [t for t in tokens if t in kind.other.metrics]
        if len(others) == 1 and any(kind.other.id_re.match(t) for t in tokens):
            return None
    stats = [t for t in tokens if _STAT_RE.match(t)]
    periods = [t for t in tokens if t.isdigit()]
    if len(metrics) != 1 or len(vols) > 1 or len(stats) > 1 or len(periods) > 1:
        raise ValueError(
            f"{where}: the Label {label!r} does not name one {kind.what} metric. Without the request's "
            f"MetricDataQueries (queries=), each Label must hold the {kind.what} id, the metric name and "
            f"optionally the statistic and period, e.g. the dynamic label "
            f"\"${{PROP('Dim.{kind.dimension}')}} ${{PROP('MetricName')}} ${{PROP('Stat')}} ${{PROP('Period')}}\""
        )
    return {
        "metric": metrics[0],
        "volume_id": vols[0] if vols else None,
        "stat": stats[0] if stats else None,
        "period_s": float(periods[0]) if periods else None,
    }


def read_metric_data(
    *sources: Source,
    queries: Optional[Source] = None,
    volume_id: Optional[str] = None,
    stat: Optional[str] = None,
    period: Optional[float] = None,
) -> "pd.DataFrame":
    """Read ``aws cloudwatch get-metric-data`` output into a metrics DataFrame.

    Parameters
    ----------
    *sources : path, dict or list
        The output: one JSON document (``MetricDataResults``, as the CLI prints it, its pages
        merged or not), or a list of pages (``[page1, page2, ...]``, e.g. boto3 responses or
        ``--no-paginate`` runs), or several paths. A query's results are joined across pages by
        Id; each Id's last result must be ``Complete`` (``PartialData`` there: a page is
        missing), and the last page may not hold a ``NextToken``. A path (here and for every
        reader) must be a regular file, not a FIFO or device, of at most
        :data:`ebssim.aws.MAX_JSON_BYTES`, UTF-8 JSON nested at most 100 levels deep.
    queries : path, dict or list, optional
        The request's ``MetricDataQueries`` (a list, or the request holding them, as given to
        ``--metric-data-queries`` or ``--cli-input-json``): each result's Id then names the
        metric (AWS/EBS ``MetricStat``), its VolumeId, Stat, Period and Unit.
    volume_id, stat, period
        Without ``queries``, each result's Label must name the volume id and the metric, and may
        name the statistic and the period (a dynamic label such as
        ``${PROP('Dim.VolumeId')} ${PROP('MetricName')} ${PROP('Stat')} ${PROP('Period')}``);
        these keywords supply what the labels leave out (a label that disagrees: error).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`: ``timestamp`` (UTC, the start of the period), ``volume_id``,
        ``metric``, ``stat``, ``period_s``, ``unit`` (from :data:`METRICS`: get-metric-data
        output carries none), ``value``; sorted by volume, metric, statistic and time.

    Datapoints may come newest first (CloudWatch's default) or oldest first, but each result
    in one order; missing datapoints stay missing (:func:`ebssim.aws.traces` says how to fill
    them). Errors name the page, the Id and the rule: a timestamp twice, out of order, a
    negative, NaN or non-numeric value, a metric other than the EBS volume metrics
    (:data:`METRICS`), a result without volume, statistic or period, mixed periods.

    Examples
    --------
    >>> import ebssim.aws as aws
    >>> page = {"MetricDataResults": [{"Id": "r", "Label": "vol-0123abcd VolumeReadOps Sum 60",
    ...         "Timestamps": ["2024-05-01T00:01:00+00:00", "2024-05-01T00:00:00+00:00"],
    ...         "Values": [6000.0, 3000.0], "StatusCode": "Complete"}]}
    >>> aws.read_metric_data(page)[["timestamp", "metric", "stat", "period_s", "value"]]
                      timestamp         metric stat  period_s   value
    0 2024-05-01 00:00:00+00:00  VolumeReadOps  Sum      60.0  3000.0
    1 2024-05-01 00:01:00+00:00  VolumeReadOps  Sum      60.0  6000.0
    """
    return _read_metric_data(_VOLUME_KIND, sources, queries, volume_id, stat, period)


def read_instance_metric_data(
    *sources: Source,
    queries: Optional[Source] = None,
    instance_id: Optional[str] = None,
    stat: Optional[str] = None,
    period: Optional[float] = None,
) -> "pd.DataFrame":
    """Read the per-instance EBS checks (:data:`INSTANCE_METRICS`, namespace AWS/EC2, dimension
    ``InstanceId``) of ``aws cloudwatch get-metric-data`` output into an instance metrics
    DataFrame (:data:`INSTANCE_COLUMNS`: ``instance_id`` in place of ``volume_id``).

    As :func:`read_metric_data`, whose rules it follows; one document may hold both: each reader
    takes its own namespace's metrics and leaves the other's (queries of AWS/EC2 instance
    checks, or Labels naming an instance id and an instance check) to the other reader. Pass
    the frame to :func:`compare` as ``instance_metrics=``.
    """
    return _read_metric_data(_INSTANCE, sources, queries, instance_id, stat, period)


def _read_metric_data(
    kind: _Kind,
    sources: Sequence[Source],
    queries: Optional[Source],
    volume_id: Optional[str],
    stat: Optional[str],
    period: Optional[float],
) -> "pd.DataFrame":
    import pandas as pd

    what = "aws cloudwatch get-metric-data"
    pages = _pages(sources, what, "MetricDataResults")
    qmap = _queries(queries, kind) if queries is not None else None
    if pages[-1][0].get("NextToken"):
        raise ValueError(
            f"{pages[-1][1]}: the last page has a NextToken: the data goes on; fetch the remaining pages "
            f"(the CLI does when not given --no-paginate) and pass them all"
        )
    chunks: Dict[str, List[Tuple[Mapping[str, Any], str]]] = {}
    for page, where in pages:
        results = page["MetricDataResults"]
        if not isinstance(results, (list, tuple)):
            raise ValueError(f"{where}: MetricDataResults must be a list")
        for i, r in enumerate(results):
            w = f"{where}: MetricDataResults[{i}]"
            if not isinstance(r, Mapping) or not isinstance(r.get("Id"), str):
                raise ValueError(f"{w}: a result needs an Id")
            chunks.setdefault(r["Id"], []).append((r, f"{w} (Id {r['Id']!r})"))
    frames = []
    seen: Dict[Tuple[str, str, str], str] = {}
    for rid, parts in chunks.items():
        last, where = parts[-1]
        for r, w in parts:
            status = r.get("StatusCode", "Complete")
            if status in ("InternalError", "Forbidden"):
                raise ValueError(f"{w}: StatusCode {status}: {r.get('Messages', [])}")
        if last.get("StatusCode", "Complete") != "Complete":
            raise ValueError(
                f"{where}: its last result is {last.get('StatusCode')!r}, not Complete: a page is missing "
                f"(pass every page, in the order fetched)"
            )
        if qmap is not None:
            if rid not in qmap:
                raise ValueError(f"{where}: the Id is not among the queries' Ids ({', '.join(qmap)})")
            q = qmap[rid]
            if q is None:
                continue  # the other reader's
            info = dict(q)
        else:
            found = _from_label(last.get("Label"), where, kind)
            if found is None:
                continue  # the other reader's
            info = found
            info["unit"] = _unit_of(info["metric"])
            for key, given in (("volume_id", volume_id), ("stat", stat), ("period_s", period)):
                if given is None:
                    continue
                value = _period(given, "period=") if key == "period_s" else given
                if info[key] is not None and info[key] != value:
                    raise ValueError(
                        f"{where}: the Label {last.get('Label')!r} says {info[key]!r}, but {key}={given!r}"
                    )
                info[key] = value
            for key, kw in (("volume_id", "volume_id"), ("stat", "stat"), ("period_s", "period")):
                if info[key] is None:
                    raise ValueError(
                        f"{where}: neither the Label {last.get('Label')!r} nor a query says the {kw}: pass "
                        f"queries= (the request's MetricDataQueries) or {kw}="
                    )
            _volume(info["volume_id"], where, kind)
            _stat(info["stat"], where)
        key3 = (info["volume_id"], info["metric"], info["stat"])
        if key3 in seen:
            raise ValueError(f"{where}: {' '.join(key3)} is also the result of {seen[key3]}: one result each")
        seen[key3] = where
        times: List["pd.DatetimeIndex"] = []
        values: List[float] = []
        for r, w in parts:
            ts_raw, vs = r.get("Timestamps", []), r.get("Values", [])
            if not isinstance(ts_raw, (list, tuple)) or not isinstance(vs, (list, tuple)) or len(ts_raw) != len(vs):
                raise ValueError(f"{w}: Timestamps and Values must be lists of the same length")
            ts = _timestamps(ts_raw, w, "Timestamps")
            d = ts.asi8[1:] - ts.asi8[:-1]
            if (d == 0).any():
                raise ValueError(f"{w}: the timestamp {ts[int((d == 0).argmax()) + 1]} appears twice")
            if not ((d > 0).all() or (d < 0).all()):
                raise ValueError(
                    f"{w}: the timestamps are out of order (neither oldest nor newest first), e.g. "
                    f"{', '.join(str(t) for t in ts[:3])}"
                )
            for t, v in zip(ts, vs):
                x = _number(v, f"{w} at {t}")
                _check_value(info["metric"], x, f"{w} at {t}")
                values.append(x)
            times.append(ts)
        frames.append(_frame(info, pd.DatetimeIndex([t for ts in times for t in ts]), values, where))
    if not frames and kind.what != "volume":
        raise ValueError(f"the output of {what} holds no {kind.what} metric ({', '.join(kind.metrics)})")
    return _finish(frames, kind)


def _frame(info: Mapping[str, Any], times: "pd.DatetimeIndex", values: Sequence[float], where: str) -> "pd.DataFrame":
    import pandas as pd

    if times.has_duplicates:
        raise ValueError(f"{where}: the timestamp {times[times.duplicated()][0]} appears twice")
    n = len(values)
    return pd.DataFrame(
        {
            "timestamp": times,
            "volume_id": [info["volume_id"]] * n,
            "metric": [info["metric"]] * n,
            "stat": [info["stat"]] * n,
            "period_s": [float(info["period_s"])] * n,
            "unit": [info["unit"]] * n,
            "value": pd.array(values, dtype="float64"),
        }
    )


def _finish(frames: List["pd.DataFrame"], kind: _Kind = _VOLUME_KIND) -> "pd.DataFrame":
    import pandas as pd

    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in COLUMNS})
    df = df.sort_values(["volume_id", "metric", "stat", "timestamp"], kind="stable").reset_index(drop=True)
    if kind.what == "instance":
        return check_instance_metrics(df.rename(columns={"volume_id": "instance_id"}))
    if kind.what.startswith("nvme"):
        return df  # in the agent's names: read_nvme_* turn them into AWS/EBS terms
    return check_metrics(df)


def check_metrics(metrics: "pd.DataFrame") -> "pd.DataFrame":
    """Check a metrics DataFrame (e.g. frames of several readers joined with ``pandas.concat``):
    the columns :data:`COLUMNS`, known metrics and units, values, one period, no datapoint twice.

    Returns the frame; raises ValueError naming the volume, metric, time and rule.
    """
    return _check(metrics, _VOLUME_KIND)


def check_instance_metrics(metrics: "pd.DataFrame") -> "pd.DataFrame":
    """Check an instance metrics DataFrame (:data:`INSTANCE_COLUMNS`) as :func:`check_metrics`
    checks a volume's."""
    return _check(metrics, _INSTANCE)


def _check(metrics: "pd.DataFrame", kind: _Kind) -> "pd.DataFrame":
    import pandas as pd

    columns = COLUMNS if kind.what == "volume" else INSTANCE_COLUMNS
    name_ = "metrics" if kind.what == "volume" else "instance_metrics"
    if not isinstance(metrics, pd.DataFrame):
        raise ValueError(f"{name_} must be a DataFrame from ebssim.aws.read_*, not {type(metrics).__name__}")
    missing = [c for c in columns if c not in metrics.columns]
    if missing:
        raise ValueError(f"{name_} has no column(s) {missing}: expected {list(columns)} (ebssim.aws.read_*)")
    if metrics.shape[0] == 0:
        raise ValueError(f"{name_} has no datapoints")
    metrics = metrics.rename(columns={kind.column: "volume_id"}) if kind.what == "instance" else metrics
    _check_rows(metrics, kind)
    return metrics.rename(columns={"volume_id": kind.column}) if kind.what == "instance" else metrics


def _check_rows(metrics: "pd.DataFrame", kind: _Kind) -> None:
    import pandas as pd

    for name in metrics["metric"].unique():
        _metric(name, "metrics", kind)
    for (metric, unit), _ in metrics.groupby(["metric", "unit"], sort=False):
        _unit(str(metric), unit, f"metrics ({metric})")
    if not pd.api.types.is_datetime64_any_dtype(metrics["timestamp"]) or metrics["timestamp"].dt.tz is None:
        raise ValueError("metrics' timestamp column must hold timezone-aware datetimes (UTC)")
    v = metrics["value"].to_numpy(dtype=float)
    bad = ~(pd.notna(v) & (v >= 0) & (v < math.inf))
    if bad.any():
        row = metrics[bad].iloc[0]
        raise ValueError(f"metrics: {row.volume_id} {row.metric} at {row.timestamp} is {row.value!r}: must be >= 0")
    periods = sorted(metrics["period_s"].unique())
    if len(periods) > 1:
        per = metrics.groupby("period_s")[["volume_id", "metric"]].first()
        examples = "; ".join(f"{p:g} s: {r.volume_id} {r.metric}" for p, r in per.iterrows())
        raise ValueError(
            f"metrics mix periods ({examples}): query every metric at one period (the replay's step "
            f"comes from it), or resample them to one before joining"
        )
    dup = metrics.duplicated(["volume_id", "metric", "stat", "timestamp"])
    if dup.any():
        row = metrics[dup].iloc[0]
        raise ValueError(f"metrics: {row.volume_id} {row.metric} {row.stat} has the timestamp {row.timestamp} twice")


# --- the CloudWatch agent's EBS NVMe counters -------------------------------------------------


def read_nvme_metric_data(
    *sources: Source,
    queries: Optional[Source] = None,
    volume_id: Optional[str] = None,
    stat: Optional[str] = None,
    period: Optional[float] = None,
    namespace: str = "CWAgent",
) -> "pd.DataFrame":
    """Read the CloudWatch agent's EBS NVMe counters (:data:`NVME_METRICS`) of
    ``aws cloudwatch get-metric-data`` output into a metrics DataFrame in AWS/EBS terms, so that
    :func:`traces`, :func:`replay` and :func:`compare` take it as they take AWS/EBS metrics.

    Each counter is fetched with the statistic ``Sum`` (what the agent counted in the period),
    except the queue length (``Average``, or any). ``diskio_ebs_total_read_ops`` becomes
    ``VolumeReadOps``, ``..._write_ops`` ``VolumeWriteOps``, ``..._read_bytes`` /
    ``..._write_bytes`` ``VolumeReadBytes`` / ``VolumeWriteBytes``, ``..._read_time`` /
    ``..._write_time`` (microseconds) ``VolumeTotalReadTime`` / ``VolumeTotalWriteTime``
    (seconds), ``diskio_ebs_volume_queue_length`` ``VolumeQueueLength``, and the time the demand
    exceeded the volume's IOPS (throughput), ``diskio_ebs_volume_performance_exceeded_iops``
    (``_tp``), ``VolumeIOPSExceededCheck`` (``VolumeThroughputExceededCheck``): 1 in a period
    exceeded at least half of its length, else 0 (the rule :func:`compare` applies to the
    model's steps). ``namespace`` is the agent's (``CWAgent`` unless its configuration names
    another). The per-volume instance counters are left to :func:`read_nvme_instance_metric_data`.
    Errors as :func:`read_metric_data`'s.
    """
    kind = dataclasses.replace(_NVME, namespace=namespace)
    raw = _read_metric_data(kind, sources, queries, volume_id, stat, period)
    return check_metrics(_as_aws(raw))


def read_nvme_instance_metric_data(
    *sources: Source,
    instance_id: str,
    queries: Optional[Source] = None,
    volume_id: Optional[str] = None,
    stat: Optional[str] = None,
    period: Optional[float] = None,
    namespace: str = "CWAgent",
) -> "pd.DataFrame":
    """Read the agent's ``diskio_ebs_ec2_instance_performance_exceeded_iops`` (``_tp``) counters
    (:data:`NVME_INSTANCE_METRICS`: per volume, the time it was held back by the instance's EBS
    IOPS or throughput limit) into an instance metrics frame (:data:`INSTANCE_COLUMNS`) of
    ``instance_id`` (the agent's documents need not name it), as ``InstanceEBSIOPSExceededCheck``
    (``...Throughput...``): 1 in a period in which some volume was held back at least half of
    its length. Pass it to :func:`compare` as ``instance_metrics=``.
    """
    _volume(instance_id, "instance_id=", _INSTANCE)
    kind = dataclasses.replace(_NVME_INSTANCE, namespace=namespace)
    raw = _read_metric_data(kind, sources, queries, volume_id, stat, period)
    keys = ["timestamp", "metric", "stat", "period_s", "unit"]
    out = _as_aws(raw).groupby(keys, sort=True)["value"].max().reset_index()  # any volume held back
    out.insert(1, "instance_id", instance_id)
    return check_instance_metrics(out[list(INSTANCE_COLUMNS)])


def _as_aws(raw: "pd.DataFrame") -> "pd.DataFrame":
    """The agent's counters as the AWS/EBS (AWS/EC2) metrics they stand for."""
    import numpy as np

    out = raw.copy()
    for name in raw["metric"].unique():
        rows = raw["metric"] == name
        as_, factor = _NVME_AS[name]
        stats = set(raw.loc[rows, "stat"])
        if name != "diskio_ebs_volume_queue_length" and stats != {"Sum"}:
            raise ValueError(
                f"{name} has the statistic(s) {sorted(stats)}: fetch it with Sum (what the agent counted in each "
                f"period)"
            )
        value = raw.loc[rows, "value"].to_numpy(dtype=float)
        if factor is None:  # microseconds exceeded: 1 when at least half the period
            half_us = raw.loc[rows, "period_s"].to_numpy(dtype=float) * 1e6 / 2
            value = np.where(value >= half_us, 1.0, 0.0)
            out.loc[rows, "stat"] = "Maximum"
        else:
            value = value * factor
        out.loc[rows, "value"] = value
        out.loc[rows, "metric"] = as_
        out.loc[rows, "unit"] = _unit_of(as_)
    return out.sort_values(["volume_id", "metric", "stat", "timestamp"], kind="stable").reset_index(drop=True)


# --- get-metric-statistics ---------------------------------------------------------------------


def read_metric_statistics(
    source: Source,
    *,
    request: Optional[Source] = None,
    volume_id: Optional[str] = None,
    metric: Optional[str] = None,
    period: Optional[float] = None,
) -> "pd.DataFrame":
    """Read ``aws cloudwatch get-metric-statistics`` output (one metric of one volume).

    The output holds only a Label (the metric's name) and Datapoints, in no particular order,
    each with its ``Unit`` and the statistics requested (``Sum``, ``Average``, ...,
    ``ExtendedStatistics``): one row per statistic. It names neither the volume nor the
    period: they come from ``request`` (the request as given to ``--cli-input-json``, or boto3's
    keyword arguments: ``MetricName``, ``Dimensions``, ``Period``) or the keywords. A datapoint
    without ``Unit``, or in another unit than CloudWatch's for the metric, is an error.

    Returns the metrics DataFrame described in :func:`read_metric_data`.

    >>> import ebssim.aws as aws
    >>> out = {"Label": "BurstBalance", "Datapoints": [
    ...     {"Timestamp": "2024-05-01T00:05:00Z", "Average": 97.5, "Unit": "Percent"},
    ...     {"Timestamp": "2024-05-01T00:00:00Z", "Average": 100.0, "Unit": "Percent"}]}
    >>> aws.read_metric_statistics(out, volume_id="vol-0123abcd", period=300)[["timestamp", "stat", "value"]]
                      timestamp     stat  value
    0 2024-05-01 00:00:00+00:00  Average  100.0
    1 2024-05-01 00:05:00+00:00  Average   97.5
    """
    return _read_metric_statistics(_VOLUME_KIND, source, request, volume_id, metric, period)


def read_instance_metric_statistics(
    source: Source,
    *,
    request: Optional[Source] = None,
    instance_id: Optional[str] = None,
    metric: Optional[str] = None,
    period: Optional[float] = None,
) -> "pd.DataFrame":
    """Read ``aws cloudwatch get-metric-statistics`` output of one instance check
    (:data:`INSTANCE_METRICS`, namespace AWS/EC2, dimension ``InstanceId``) into an instance
    metrics DataFrame (:data:`INSTANCE_COLUMNS`), as :func:`read_metric_statistics` reads a
    volume's."""
    return _read_metric_statistics(_INSTANCE, source, request, instance_id, metric, period)


def _read_metric_statistics(
    kind: _Kind,
    source: Source,
    request: Optional[Source],
    volume_id: Optional[str],
    metric: Optional[str],
    period: Optional[float],
) -> "pd.DataFrame":
    what = "aws cloudwatch get-metric-statistics"
    doc, name = _load(source, f"the output of {what}")
    if not isinstance(doc, Mapping) or not isinstance(doc.get("Datapoints"), (list, tuple)):
        raise ValueError(f"{name}: expected the output of {what}, a JSON object with a 'Datapoints' list")
    req: Mapping[str, Any] = {}
    rname = name
    if request is not None:
        req, rname = _load(request, "the GetMetricStatistics request")
        if not isinstance(req, Mapping):
            raise ValueError(f"{rname}: the request must be a JSON object (MetricName, Dimensions, Period, ...)")
        if req.get("Namespace", kind.namespace) != kind.namespace:
            raise ValueError(
                f"{rname}: namespace {req.get('Namespace')!r}; ebssim reads {kind.namespace} {kind.what} metrics here"
            )
    dims = {d.get("Name"): d.get("Value") for d in req.get("Dimensions", []) if isinstance(d, Mapping)}
    found = {
        "metric": req.get("MetricName"),
        "volume_id": dims.get(kind.dimension),
        "period_s": req.get("Period"),
    }
    for key, kw, given in (
        ("metric", "metric", metric),
        ("volume_id", kind.column, volume_id),
        ("period_s", "period", period),
    ):
        if given is not None:
            if found[key] is not None and found[key] != given:
                raise ValueError(f"{name}: the request says {kw}={found[key]!r}, but {kw}={given!r}")
            found[key] = given
    label = doc.get("Label")
    if found["metric"] is None:
        found["metric"] = label
    elif label is not None and label != found["metric"]:
        raise ValueError(f"{name}: the output's Label {label!r} is not the metric {found['metric']!r}")
    m = _metric(found["metric"], name, kind)
    if found["volume_id"] is None:
        raise ValueError(
            f"{name}: get-metric-statistics output does not name the {kind.what}: pass {kind.column}= or request="
        )
    if found["period_s"] is None:
        raise ValueError(
            f"{name}: get-metric-statistics output has no period: pass period= (the request's --period) or request="
        )
    # A value taken from the request file is named by that file.
    vid = _volume(found["volume_id"], rname if volume_id is None and request is not None else name, kind)
    p = _period(found["period_s"], rname if period is None and request is not None else name)
    per_stat: Dict[str, Tuple[List[Any], List[float]]] = {}
    for i, dp in enumerate(doc["Datapoints"]):
        w = f"{name}: Datapoints[{i}]"
        if not isinstance(dp, Mapping) or "Timestamp" not in dp:
            raise ValueError(f"{w}: a datapoint needs a Timestamp")
        _unit(m, dp.get("Unit"), w)
        stats = {k: dp[k] for k in _STATS if k in dp}
        ext = dp.get("ExtendedStatistics") or {}
        if not isinstance(ext, Mapping):
            raise ValueError(f"{w}: ExtendedStatistics must be an object")
        stats.update({_stat(k, w): v for k, v in ext.items()})
        if not stats:
            raise ValueError(f"{w}: the datapoint holds no statistic ({', '.join(_STATS)}, ExtendedStatistics)")
        for s, v in stats.items():
            x = _number(v, f"{w} ({s})")
            _check_value(m, x, f"{w} ({s}) at {dp['Timestamp']}")
            per_stat.setdefault(s, ([], []))[0].append(dp["Timestamp"])
            per_stat[s][1].append(x)
    frames = []
    for s, (ts_raw, vs) in per_stat.items():
        info = {"metric": m, "volume_id": vid, "stat": s, "period_s": p, "unit": _unit_of(m)}
        frames.append(_frame(info, _timestamps(ts_raw, name, "Datapoints[].Timestamp"), vs, f"{name} ({m} {s})"))
    if not frames:
        raise ValueError(f"{name}: no datapoints")
    return _finish(frames, kind)


# --- CSV ---------------------------------------------------------------------------------------

_CSV_NAMES = {
    "timestamp": "timestamp",
    "volumeid": "volume_id",
    "volume_id": "volume_id",
    "metricname": "metric",
    "metric": "metric",
    "stat": "stat",
    "statistic": "stat",
    "period": "period_s",
    "period_s": "period_s",
    "unit": "unit",
    "value": "value",
}


def read_metrics_csv(path: Union[str, "PathLike[str]"], *, volume_id: Optional[str] = None) -> "pd.DataFrame":
    """Read CloudWatch datapoints from a CSV file, one datapoint per row.

    Columns (any order, names case-insensitive): ``Timestamp`` (ISO-8601), ``VolumeId``
    (or pass ``volume_id=`` for a file of one volume), ``MetricName``, ``Statistic`` (or
    ``Stat``), ``Period`` (seconds), ``Unit``, ``Value``; the metrics DataFrame's own names
    (``metric``, ``period_s``, ...) work too, so ``metrics.to_csv(path, index=False)`` reads
    back. Every row needs every field: a row without unit or period is an error, as are the
    checks of :func:`check_metrics`. The file must be a regular file (not a FIFO or device) of
    at most :data:`ebssim.aws.MAX_CSV_BYTES`, UTF-8.
    """
    import pandas as pd

    p = os.fspath(path)
    what = "CloudWatch datapoints as CSV (Timestamp, VolumeId, MetricName, Statistic, Period, Unit, Value)"
    text = read_text(p, _aws.MAX_CSV_BYTES, what, "ebssim.aws.MAX_CSV_BYTES")
    try:
        raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as e:
        raise ValueError(f"{p}: not CSV ({' '.join(str(e).split())}); expected {what}") from None
    cols: Dict[str, str] = {}
    for c in raw.columns:
        key = _CSV_NAMES.get(str(c).strip().lower())
        if key is None:
            raise ValueError(
                f"{p}: unknown column {c!r}; expected Timestamp, VolumeId, MetricName, Statistic, Period, Unit, Value"
            )
        if key in cols.values():
            raise ValueError(f"{p}: two columns for {key}")
        cols[str(c)] = key
    raw = raw.rename(columns=cols)
    if "volume_id" not in raw.columns:
        if volume_id is None:
            raise ValueError(f"{p}: no VolumeId column: pass volume_id= for a file of one volume")
        raw["volume_id"] = _volume(volume_id, "volume_id=")
    need = [c for c in COLUMNS if c not in raw.columns]
    if need:
        raise ValueError(f"{p}: missing column(s) {need}; every datapoint needs its unit and period")
    if raw.shape[0] == 0:
        raise ValueError(f"{p}: no datapoints")
    for c in COLUMNS:
        empty = raw[c].str.strip() == ""
        if empty.any():
            i = int(empty.to_numpy().argmax())
            raise ValueError(
                f"{p}: row {i + 2} has no {c}"
                + ("; every datapoint needs its unit and period" if c in ("unit", "period_s") else "")
            )
    frames = []
    for (vid, m, s, per), g in raw.groupby(["volume_id", "metric", "stat", "period_s"], sort=False):
        where = f"{p} ({vid} {m} {s})"
        metric_ = _metric(m, where)
        try:
            period_s = float(str(per))
        except ValueError:
            raise ValueError(f"{where}: period {per!r} is not a number of seconds") from None
        info = {
            "metric": metric_,
            "volume_id": _volume(vid, where),
            "stat": _stat(s, where),
            "period_s": _period(period_s, where),
            "unit": None,
        }
        units = g["unit"].unique()
        for u in units:
            _unit(metric_, u, where)
        info["unit"] = _unit_of(metric_)
        values = []
        for t, v in zip(g["timestamp"], g["value"]):
            try:
                x = float(v)
            except ValueError:
                raise ValueError(f"{where} at {t}: value {v!r} is not a number") from None
            _check_value(metric_, x, f"{where} at {t}")
            values.append(x)
        frames.append(_frame(info, _timestamps(list(g["timestamp"]), where, "Timestamp"), values, where))
    return _finish(frames)


# --- a wide frame ------------------------------------------------------------------------------


def metrics_from_wide(
    wide: "pd.DataFrame",
    volume_id: Optional[str] = None,
    *,
    id_column: str = "volume_id",
    period: Union[float, str, "pd.Timedelta", None] = None,
    stat: Union[str, Mapping[str, str], None] = None,
) -> "pd.DataFrame":
    """A metrics DataFrame (:data:`COLUMNS`, one row per datapoint, as the readers return) from a
    wide one: one column per CloudWatch metric, one row per period, indexed by time.

    Parameters
    ----------
    wide : pandas.DataFrame
        Columns named by the metrics (:data:`METRICS`: ``VolumeReadOps``, ``BurstBalance``, ...),
        each in CloudWatch's unit (counts, bytes, seconds, percent), and a ``DatetimeIndex``: the
        start of each period, in UTC (a naive index is taken as UTC). A NaN is a period without a
        datapoint (CloudWatch leaves those out), and is left out.
    volume_id : str, optional
        The volume all rows are of; without it, the column ``id_column`` says each row's.
    id_column : str
        The column of volume ids when ``volume_id`` is not given (default ``"volume_id"``).
    period : float (seconds), str or pandas.Timedelta, optional
        Length of a period. Default: the index's ``freq``, else the spacing of each volume's rows
        (all equally spaced), as :func:`ebssim.trace.from_pandas` finds it.
    stat : str or mapping of metric to str, optional
        The statistic each column holds: one for all, or by metric; default :data:`WIDE_STATS`
        (``Sum`` for I/Os, bytes and seconds, ``Average`` for BurstBalance, the queue length and
        the throughput percentage). A trace needs the ``Sum`` of the four demand metrics.

    Returns
    -------
    pandas.DataFrame
        Checked by :func:`check_metrics`, sorted by volume, metric, statistic and time: what
        :func:`traces`, :func:`replay`, :func:`compare` and ``ebssim.advise(metrics=)`` take.

    Examples
    --------
    Three one-minute periods of one volume, as a notebook might hold them:

    >>> import pandas as pd, ebssim.aws as aws
    >>> idx = pd.date_range("2024-05-01", periods=3, freq="1min", tz="UTC")
    >>> wide = pd.DataFrame({"VolumeReadOps": [60_000.0, 30_000.0, 0.0],
    ...                      "VolumeWriteOps": [6_000.0, 0.0, 6_000.0],
    ...                      "VolumeReadBytes": [60_000 * 4096.0, 30_000 * 4096.0, 0.0],
    ...                      "VolumeWriteBytes": [6_000 * 16384.0, 0.0, 6_000 * 16384.0],
    ...                      "BurstBalance": [100.0, 99.0, None]}, index=idx)
    >>> m = aws.metrics_from_wide(wide, "vol-0abc")
    >>> m[m.metric == "BurstBalance"][["timestamp", "metric", "stat", "period_s", "value"]]
                      timestamp        metric     stat  period_s  value
    0 2024-05-01 00:00:00+00:00  BurstBalance  Average      60.0  100.0
    1 2024-05-01 00:01:00+00:00  BurstBalance  Average      60.0   99.0
    >>> aws.traces(m)["vol-0abc"].ops           # the Sums: (60,000 + 6,000) I/Os in the first minute
    array([66000., 30000.,  6000.])
    """
    import pandas as pd

    from .._frames import _grid, _period_seconds

    if not isinstance(wide, pd.DataFrame):
        raise ValueError(f"wide must be a pandas DataFrame (one column per metric), not {type(wide).__name__}")
    index = wide.index
    if not isinstance(index, pd.DatetimeIndex):
        raise ValueError(
            f"wide's index is a {type(index).__name__}: it must be a DatetimeIndex, the start of each period "
            f"(e.g. wide.set_index('timestamp'), or pd.to_datetime(...) first)"
        )
    if index.hasnans:
        raise ValueError("wide's index has missing times (NaT): drop those rows")
    frame = wide
    if volume_id is not None:
        if id_column in wide.columns:
            raise ValueError(
                f"volume_id={volume_id!r} is given but wide has a {id_column!r} column too: give one or the other"
            )
        _volume(volume_id, "volume_id=")
        ids = pd.Series([volume_id] * len(wide), index=index)
    elif id_column in wide.columns:
        ids = wide[id_column]
        for vid in ids.unique():
            _volume(vid, f"wide's {id_column} column")
        frame = wide.drop(columns=[id_column])
    else:
        raise ValueError(
            f"wide has no {id_column!r} column: pass volume_id= (the volume its rows are of) or id_column="
        )
    names = [str(c) for c in frame.columns]
    unknown = [c for c in names if c not in METRICS]
    if unknown or not names:
        raise ValueError(
            f"wide's column(s) {unknown or '(none)'} are not CloudWatch EBS metrics: name each column by its metric "
            f"({', '.join(METRICS)}), e.g. wide.rename(columns={{'read_ops': 'VolumeReadOps'}}), and drop the others"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"wide has repeated columns {names}: each metric once")
    stats: Dict[str, str] = {}
    for m in names:
        s = stat if isinstance(stat, str) else (stat or {}).get(m, WIDE_STATS[m])
        stats[m] = _stat(s, f"stat for {m}")
    if isinstance(stat, Mapping):
        extra = [k for k in stat if k not in METRICS]
        if extra:
            raise ValueError(f"stat= names {extra}, which are not CloudWatch EBS metrics ({', '.join(METRICS)})")
    # The period: one for all volumes (a metrics DataFrame has one), found as from_pandas finds it.
    times = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    times = times.as_unit("ns") if hasattr(times, "as_unit") else times
    found = None if period is None else _period_seconds(period)
    for key, rows in pd.Series(np.arange(len(ids)), index=ids.to_numpy()).groupby(level=0, sort=False):
        try:
            p, _, _, _ = _grid(times[rows.to_numpy()], found if found is not None else period)
        except ValueError as e:
            raise ValueError(f"wide, volume {key!s}: {e}") from None
        if found is not None and abs(p - found) > 1e-9 * found:
            raise ValueError(f"wide, volume {key!s}: its rows are {p:g} s apart, the others' {found:g} s: one period")
        found = p
    parts = []
    for m in names:
        col = frame[m]
        raw = col.to_numpy()
        if raw.dtype.kind not in "iuf":
            raise ValueError(f"wide's {m} must hold numbers (integers or floats), got dtype {raw.dtype}")
        v = raw.astype(np.float64)
        keep = ~np.isnan(v)
        bad = keep & ~(np.isfinite(v) & (v >= 0) & ((v <= 100) | (METRICS[m] != "Percent")))
        if bad.any():
            i = int(np.argmax(bad))
            _check_value(m, float(v[i]), f"wide, {ids.iloc[i]} at {times[i]}")
        n = int(keep.sum())
        parts.append(
            pd.DataFrame(
                {
                    "timestamp": times[keep],
                    "volume_id": ids.to_numpy()[keep],
                    "metric": [m] * n,
                    "stat": [stats[m]] * n,
                    "period_s": np.full(n, float(cast(float, found))),
                    "unit": [METRICS[m]] * n,
                    "value": v[keep],
                }
            )
        )
    out = _finish(parts)
    return out
