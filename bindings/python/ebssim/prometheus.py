"""Prometheus: node_exporter's disk metrics from the HTTP API, as CloudWatch metrics (docs/prometheus.md).

:func:`read_query_range` reads the JSON of ``/api/v1/query_range`` (``resultType`` ``matrix``)
of node_exporter's disk counters, raw or as ``rate()``; :func:`device_volumes` maps devices to
EBS volume ids (an EBS NVMe device's serial, as ``node_disk_info`` has it, is its volume id
without the dash); :func:`to_metrics` turns the samples into the *metrics DataFrame* of
:mod:`ebssim.aws` (``ebssim.aws.COLUMNS``), one row per step, so that ``ebssim.aws.traces``,
``replay`` and ``compare`` replay and compare them as they do CloudWatch's. :func:`read_metrics`
does the three in one call (what ``ebssim check`` and ``ebssim advise --metrics`` use), and
:func:`is_answer` tells an HTTP API answer from CloudWatch's JSON.

>>> from ebssim import prometheus
>>> prometheus.METRICS["node_disk_reads_completed_total"]
('VolumeReadOps', 'Sum')
"""

from __future__ import annotations

import math
import os
import re
from os import PathLike
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._files import read_json, shown

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .volumes import Volume

__all__ = [
    "MAX_JSON_BYTES",
    "METRICS",
    "SAMPLE_COLUMNS",
    "read_query_range",
    "device_volumes",
    "volume_id_of_serial",
    "to_metrics",
    "read_metrics",
    "is_answer",
    "source_of",
]

#: Largest JSON file the readers read (a day of 10 s steps of 7 metrics of 100 devices is about
#: 300 MB as the API prints it). Read at each call.
MAX_JSON_BYTES = 512 << 20

#: node_exporter's disk counters (``/proc/diskstats``) ebssim reads, and the CloudWatch metric and
#: statistic each becomes: a counter's increase over a step is the step's ``Sum``;
#: ``node_disk_io_time_weighted_seconds_total`` increases by the I/Os outstanding times the
#: time, so its increase over a step divided by the step is the mean queue length
#: (``VolumeQueueLength``, ``Average``).
METRICS: Dict[str, Tuple[str, str]] = {
    "node_disk_reads_completed_total": ("VolumeReadOps", "Sum"),
    "node_disk_writes_completed_total": ("VolumeWriteOps", "Sum"),
    "node_disk_read_bytes_total": ("VolumeReadBytes", "Sum"),
    "node_disk_written_bytes_total": ("VolumeWriteBytes", "Sum"),
    "node_disk_read_time_seconds_total": ("VolumeTotalReadTime", "Sum"),
    "node_disk_write_time_seconds_total": ("VolumeTotalWriteTime", "Sum"),
    "node_disk_io_time_weighted_seconds_total": ("VolumeQueueLength", "Average"),
}
_UNITS = {"VolumeQueueLength": "Count", "VolumeTotalReadTime": "Seconds", "VolumeTotalWriteTime": "Seconds"}

#: Columns of the samples DataFrame :func:`read_query_range` returns, one row per sample.
SAMPLE_COLUMNS = ("timestamp", "instance", "device", "metric", "kind", "value")

_KINDS = ("counter", "rate")
_SERIAL = re.compile(r"^vol-?([0-9a-f]{8,17})$")
_VOLUME = re.compile(r"^vol-[0-9a-f]+$")

Source = Union[str, "PathLike[str]", Mapping[str, Any]]
DeviceKey = Union[str, Tuple[str, str]]


def _load(source: Any, what: str) -> Tuple[Any, str]:
    if isinstance(source, (str, PathLike)):
        path = os.fspath(source)
        return read_json(path, MAX_JSON_BYTES, what, "ebssim.prometheus.MAX_JSON_BYTES"), path
    if isinstance(source, Mapping):
        return source, "document"
    raise ValueError(f"{what}: expected a path or a parsed JSON document, not {type(source).__name__}")


def _result(source: Any, types: Sequence[str]) -> Tuple[List[Any], str, str]:
    """The ``data.result`` of an HTTP API answer, its ``resultType`` and a name for messages."""
    doc, where = _load(source, "a Prometheus HTTP API answer (JSON)")
    if not isinstance(doc, Mapping):
        raise ValueError(f"{where}: expected a JSON object with 'status' and 'data', not {type(doc).__name__}")
    status = doc.get("status")
    if status != "success":
        raise ValueError(
            f"{where}: status={shown(status)} ({shown(doc.get('errorType'))}: {shown(doc.get('error'))}): "
            f"the query failed, expected status='success'"
        )
    data = doc.get("data")
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: data={shown(data)} must be an object with 'resultType' and 'result'")
    rtype = data.get("resultType")
    if rtype not in types:
        raise ValueError(
            f"{where}: resultType={shown(rtype)} must be {' or '.join(repr(t) for t in types)}"
            + (
                " (the answer of /api/v1/query_range, not /api/v1/query)"
                if "matrix" in types and len(types) == 1
                else ""
            )
        )
    result = data.get("result")
    if not isinstance(result, list):
        raise ValueError(f"{where}: data.result={shown(result)} must be a list of series")
    return result, str(rtype), where


def _value(v: Any, where: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the value {shown(v)} is not a number") from None
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"{where}: the value {shown(v)} must be a finite number >= 0 (a disk counter or its rate)")
    return x


def read_query_range(
    *sources: Source,
    metric: Optional[str] = None,
    kind: Optional[str] = None,
) -> "pd.DataFrame":
    """The samples of ``/api/v1/query_range`` answers of node_exporter's disk metrics.

    Parameters
    ----------
    *sources : path or dict
        The JSON the API answers (``{"status": "success", "data": {"resultType": "matrix",
        "result": [...]}}``), as a file or parsed. Each series names its ``device`` (and
        ``instance``, if any); its metric is its ``__name__`` label, else ``metric=``.
    metric : str, optional
        The metric of series without a ``__name__`` (``rate()`` drops it): one of :data:`METRICS`.
    kind : {"counter", "rate"}, optional
        What the values are: the counter's own value (``counter``) or a per-second rate over the
        step (``rate``: ``rate(...[w])``; its window ``w`` should be the step, so that the rates
        tile time). Default: ``counter`` for a series that keeps its ``__name__`` (a plain
        selector), ``rate`` for one without (``rate()``, ``irate()`` drop it).

    Returns
    -------
    pandas.DataFrame
        :data:`SAMPLE_COLUMNS`: ``timestamp`` (UTC), ``instance`` ("" if the series has none),
        ``device``, ``metric``, ``kind`` and ``value``, sorted; :func:`to_metrics` takes it.
    """
    import pandas as pd

    if metric is not None and metric not in METRICS:
        raise ValueError(f"metric={shown(metric)} is not a disk metric ebssim reads: one of {', '.join(METRICS)}")
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind={shown(kind)} must be 'counter' (raw counter values) or 'rate' (per second)")
    if not sources:
        raise ValueError("no answer given: pass the JSON of /api/v1/query_range (a path or a parsed document)")
    rows: Dict[str, List[Any]] = {c: [] for c in SAMPLE_COLUMNS}
    for src in sources:
        result, _, where = _result(src, ("matrix",))
        for i, series in enumerate(result):
            w = f"{where} series {i}"
            labels = series.get("metric") if isinstance(series, Mapping) else None
            values = series.get("values") if isinstance(series, Mapping) else None
            if not isinstance(labels, Mapping) or not isinstance(values, list):
                raise ValueError(f"{w}: expected an object with 'metric' (labels) and 'values' ([time, value] pairs)")
            name = labels.get("__name__")
            if name is None:
                if metric is None:
                    raise ValueError(
                        f"{w}: the series has no __name__ label ({dict(labels)}; rate() drops it): give its metric "
                        f"(metric= in Python, METRIC=FILE in `ebssim advise --metrics` and check plans; one of "
                        f"{', '.join(METRICS)})"
                    )
                name = metric
            elif metric is not None and name != metric:
                raise ValueError(f"{w}: __name__={shown(name)} but metric={shown(metric)}")
            if name not in METRICS:
                raise ValueError(
                    f"{w}: __name__={shown(name)} is not a disk metric ebssim reads: one of {', '.join(METRICS)}"
                )
            device = labels.get("device")
            if not isinstance(device, str) or not device:
                raise ValueError(f"{w} ({name}): device={shown(device)}: the series needs a device label")
            k = kind or ("counter" if "__name__" in labels else "rate")
            instance = str(labels.get("instance", ""))
            last = -math.inf
            for j, pair in enumerate(values):
                wj = f"{w} ({name}, device {device}) value {j}"
                if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                    raise ValueError(f'{wj}: {shown(pair)} must be a [unix time, "value"] pair')
                t = _value(pair[0], f"{wj} time")
                if t <= last:
                    raise ValueError(f"{wj}: the time {pair[0]} is not after the one before ({last:g})")
                last = t
                rows["timestamp"].append(t)
                rows["instance"].append(instance)
                rows["device"].append(device)
                rows["metric"].append(name)
                rows["kind"].append(k)
                rows["value"].append(_value(pair[1], wj))
    df = pd.DataFrame(rows)
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="s", utc=True)
    df["value"] = df["value"].astype("float64")
    dup = df.duplicated(["instance", "device", "metric", "timestamp"])
    if dup.any():
        r = df[dup].iloc[0]
        raise ValueError(
            f"{r.metric} of device {r.device} ({r.instance or 'no instance'}) has the time {r.timestamp} twice"
        )
    return df.sort_values(["instance", "device", "metric", "timestamp"], kind="stable").reset_index(drop=True)


def volume_id_of_serial(serial: str) -> Optional[str]:
    """The EBS volume id an NVMe serial names (``vol0123...`` -> ``vol-0123...``), or None."""
    m = _SERIAL.match(serial.strip())
    return f"vol-{m.group(1)}" if m else None


def device_volumes(
    disk_info: Optional[Source] = None,
    *,
    devices: Optional[Mapping[DeviceKey, str]] = None,
) -> Dict[DeviceKey, str]:
    """Which EBS volume each device is: ``{device or (instance, device): VolumeId}``.

    Parameters
    ----------
    disk_info : path or dict, optional
        An answer of ``/api/v1/query?query=node_disk_info`` (or ``query_range``): each device
        whose ``serial`` label (node_exporter 1.4 and later, from udev) is an EBS NVMe serial,
        ``vol`` and the id's hex digits, is that volume. Other devices are left out.
    devices : dict, optional
        Explicit ``{device: VolumeId}`` (or ``{(instance, device): VolumeId}`` where devices of
        several instances share a name), e.g. from a Kubernetes PersistentVolume's
        ``csi.volumeHandle`` (``ebssim.k8s.read_claims``); it wins over ``disk_info``.
    """
    out: Dict[DeviceKey, str] = {}
    if disk_info is not None:
        result, _, where = _result(disk_info, ("vector", "matrix"))
        for i, series in enumerate(result):
            labels = series.get("metric") if isinstance(series, Mapping) else None
            if not isinstance(labels, Mapping):
                raise ValueError(f"{where} series {i}: expected an object with 'metric' (labels)")
            device, serial = labels.get("device"), labels.get("serial")
            if not isinstance(device, str) or not isinstance(serial, str):
                continue
            vid = volume_id_of_serial(serial)
            if vid is not None:
                instance = labels.get("instance")
                out[(str(instance), device) if instance else device] = vid
    for key, vid in (devices or {}).items():
        if not isinstance(vid, str) or not _VOLUME.match(vid):
            raise ValueError(f"devices[{key!r}]={shown(vid)} must be an EBS volume id, 'vol-' and hex digits")
        if not (isinstance(key, str) or (isinstance(key, tuple) and len(key) == 2)):
            raise ValueError(f"devices: the key {key!r} must be a device name or an (instance, device) pair")
        out[key] = vid
    return out


def _lookup(mapping: Mapping[DeviceKey, str], instance: str, device: str) -> Optional[str]:
    return mapping.get((instance, device)) or mapping.get(device)


def to_metrics(
    samples: "pd.DataFrame",
    devices: Mapping[DeviceKey, str],
    *,
    step: Optional[float] = None,
    volumes: Optional[Mapping[str, "Volume"]] = None,
) -> "pd.DataFrame":
    """The samples of :func:`read_query_range` as ebssim.aws's metrics DataFrame, one row per step.

    Parameters
    ----------
    samples : pandas.DataFrame
        From :func:`read_query_range` (several joined with ``pandas.concat``).
    devices : dict
        ``{device or (instance, device): VolumeId}`` (:func:`device_volumes`): every device in
        ``samples`` must have one.
    step : float, optional
        The query's step in seconds; default the least spacing of the samples (which a
        ``query_range`` answer has wherever the series has data).
    volumes : dict of str to Volume, optional
        The volumes (``ebssim.aws.read_volumes``, ``ebssim.k8s.read_manifests``): each mapped
        volume id must be among them.

    A counter's datapoint stamped ``T`` is its increase from the sample at ``T`` to the one at
    ``T + step`` (a decrease is a reset: the increase is then the later value, counted from 0,
    as Prometheus's ``increase()`` counts it); samples further apart than the step leave a gap.
    A rate's sample at ``T + step`` (the rate over the window ending there) times the step is the
    datapoint stamped ``T``. ``node_disk_io_time_weighted_seconds_total`` becomes
    ``VolumeQueueLength`` (``Average``): its increase over the step divided by the step, or its
    rate. Returns the metrics DataFrame (``ebssim.aws.COLUMNS``), checked by
    ``ebssim.aws.check_metrics``.
    """
    import numpy as np
    import pandas as pd

    from .aws import COLUMNS, check_metrics

    if not isinstance(samples, pd.DataFrame) or any(c not in samples.columns for c in SAMPLE_COLUMNS):
        raise ValueError(f"samples must be a DataFrame with the columns {list(SAMPLE_COLUMNS)} (read_query_range)")
    if samples.shape[0] == 0:
        raise ValueError("samples has no rows: the query matched no series")
    samples = samples.sort_values(["instance", "device", "metric", "kind", "timestamp"], kind="stable")
    if step is None:
        gaps = samples.groupby(["instance", "device", "metric"])["timestamp"].diff().dropna()
        if gaps.shape[0] == 0:
            raise ValueError("samples hold one time per series: pass step= (the query's step, s)")
        period = gaps.min().total_seconds()
    else:
        period = float(step)
    if not (math.isfinite(period) and period > 0):
        raise ValueError(f"step={step!r} must be a positive number of seconds")
    dstep = pd.Timedelta(seconds=period)
    devices = device_volumes(devices=devices)  # checks the ids
    demand = [m for m, (_, stat) in METRICS.items() if stat == "Sum" and "time" not in m]
    for (instance, device), g in samples.groupby(["instance", "device"], sort=False):
        have = set(g["metric"])
        lack = [m for m in demand if m not in have]
        if lack and len(lack) < len(demand):
            raise ValueError(
                f"device={device!r} ({'instance ' + str(instance) if instance else 'no instance'}) has no "
                f"{', '.join(lack)}: a replay needs all four of {', '.join(demand)} (query them together, or "
                f"join the samples of several answers with pandas.concat before to_metrics)"
            )
    frames = []
    for (instance, device, name, kind), g in samples.groupby(["instance", "device", "metric", "kind"], sort=False):
        vid = _lookup(devices, str(instance), str(device))
        if vid is None:
            raise ValueError(
                f"device={device!r} ({'instance ' + str(instance) if instance else 'no instance'}, {name}) has no "
                f"volume: map it with devices={{{device!r}: 'vol-...'}} or give node_disk_info with its serial"
            )
        if volumes is not None and vid not in volumes:
            raise ValueError(
                f"device={device!r} is {vid}, which the volumes do not list ({', '.join(volumes) or 'none'})"
            )
        cw, stat = METRICS[str(name)]
        t = g["timestamp"].reset_index(drop=True)
        v = g["value"].to_numpy(dtype=float)
        if kind == "counter":
            inc = np.diff(v)
            reset = inc < 0
            inc[reset] = v[1:][reset]
            whole = (t.diff().iloc[1:] == dstep).to_numpy()
            stamps = t.iloc[:-1][whole]
            vals = inc[whole] / (period if stat == "Average" else 1.0)
        elif kind == "rate":
            stamps = t - dstep
            vals = v * (1.0 if stat == "Average" else period)
        else:
            raise ValueError(f"samples: kind={kind!r} must be 'counter' or 'rate'")
        frames.append(
            pd.DataFrame(
                {
                    "timestamp": pd.DatetimeIndex(stamps),
                    "volume_id": vid,
                    "metric": cw,
                    "stat": stat,
                    "period_s": period,
                    "unit": _UNITS.get(cw, "Bytes" if "Bytes" in cw else "Count"),
                    "value": np.asarray(vals, dtype="float64"),
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)[list(COLUMNS)]
    dup = df.duplicated(["volume_id", "metric", "stat", "timestamp"])
    if dup.any():
        r = df[dup].iloc[0]
        raise ValueError(
            f"{r.volume_id} {r.metric} at {r.timestamp} comes from two devices or kinds: map one device per volume"
        )
    df = df.sort_values(["volume_id", "metric", "stat", "timestamp"], kind="stable").reset_index(drop=True)
    return check_metrics(df)


def source_of(text: str) -> Union[str, Tuple[str, str]]:
    """A source as ``ebssim advise --metrics`` and ``ebssim check`` plans write it: ``METRIC=FILE``
    (``METRIC`` one of :data:`METRICS`) is the pair ``(METRIC, FILE)``, an answer whose series
    have no ``__name__`` (``rate()`` drops it); anything else is a path, as given.

    >>> source_of("node_disk_reads_completed_total=r.json"), source_of("counters.json")
    (('node_disk_reads_completed_total', 'r.json'), 'counters.json')
    >>> source_of("a=b.json")   # not a metric: a file whose name holds '='
    'a=b.json'
    """
    metric, eq, file = text.partition("=")
    return (metric, file) if eq and metric in METRICS else text


def is_answer(source: Source) -> bool:
    """True when ``source`` (a path or a parsed JSON document) is an answer of Prometheus's HTTP
    API: a JSON object with ``status`` and ``data`` (or ``errorType``, a failed query), as
    ``/api/v1/query_range`` gives it; False for anything else (CloudWatch's JSON, CSV, YAML).
    A path that cannot be read or parsed is False: the reader it then goes to says why."""
    doc: Any = source
    if isinstance(source, (str, PathLike)):
        path = os.fspath(source)
        if path.endswith((".csv", ".yaml", ".yml")):
            return False
        try:
            doc = read_json(
                path, MAX_JSON_BYTES, "a Prometheus HTTP API answer (JSON)", "ebssim.prometheus.MAX_JSON_BYTES"
            )
        except (ValueError, OSError):
            return False
    return isinstance(doc, Mapping) and "status" in doc and ("data" in doc or "errorType" in doc)


def read_metrics(
    *sources: Union[Source, Tuple[str, Source], "pd.DataFrame"],
    devices: Optional[Mapping[DeviceKey, str]] = None,
    disk_info: Optional[Source] = None,
    step: Optional[float] = None,
    volumes: Optional[Mapping[str, Any]] = None,
) -> "pd.DataFrame":
    """:func:`read_query_range`, :func:`device_volumes` and :func:`to_metrics` in one call: the
    metrics DataFrame of ``query_range`` answers.

    Parameters
    ----------
    *sources : path, dict, (metric, path or dict), or DataFrame
        The answers; an answer whose series have no ``__name__`` (``rate()``) comes as a pair
        with its metric, e.g. ``("node_disk_reads_completed_total", "r.json")``; or the samples
        :func:`read_query_range` already read from one (a caller that reads each answer itself,
        to say which one is wrong, need not have it read twice).
    devices : dict, optional
        ``{device or (instance, device): name}``. A name is the ``volume_id`` the metrics get:
        an EBS volume id, or any other name the caller matches them by (a capacity plan's volume
        name, the id of a striped set whose md device this is); it wins over ``disk_info``.
    disk_info : path or dict, optional
        ``node_disk_info``'s answer: devices with an EBS NVMe serial are their volume.
    step, volumes
        As for :func:`to_metrics` (``volumes``: each name must be among them).

    >>> from ebssim import prometheus
    >>> def series(name, values):   # two samples 10 s apart of each of node_exporter's counters
    ...     return {"metric": {"__name__": name, "device": "md0"}, "values": [[0, values[0]], [10, values[1]]]}
    >>> answer = {"status": "success", "data": {"resultType": "matrix", "result": [
    ...     series("node_disk_reads_completed_total", ["100", "600"]),
    ...     series("node_disk_writes_completed_total", ["0", "0"]),
    ...     series("node_disk_read_bytes_total", ["0", "2048000"]),
    ...     series("node_disk_written_bytes_total", ["0", "0"])]}}
    >>> prometheus.is_answer(answer)
    True
    >>> m = prometheus.read_metrics(answer, devices={"md0": "data"})   # 600 - 100 reads in 10 s
    >>> m[m.metric == "VolumeReadOps"][["volume_id", "period_s", "value"]].to_dict("records")
    [{'volume_id': 'data', 'period_s': 10.0, 'value': 500.0}]
    """
    import pandas as pd

    if not sources:
        raise ValueError("no answer given: pass the JSON of /api/v1/query_range (a path or a parsed document)")
    frames = []
    for src in sources:
        if isinstance(src, tuple):
            if len(src) != 2 or not isinstance(src[0], str):
                raise ValueError(
                    f"{src!r}: a pair is (metric, answer), e.g. ('node_disk_reads_completed_total', 'r.json')"
                )
            frames.append(read_query_range(src[1], metric=src[0]))
        elif isinstance(src, pd.DataFrame):
            frames.append(src)
        else:
            frames.append(read_query_range(src))
    samples = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    # Names that are not EBS volume ids stand in as ids no volume has (24 hex digits; EBS's have
    # 8 or 17) through to_metrics, and are put back after.
    ids: Dict[DeviceKey, str] = {}
    names: Dict[str, str] = {}
    for key, name in (devices or {}).items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"devices[{key!r}]={shown(name)} must be a volume id or name (a non-empty string)")
        if _VOLUME.match(name):
            ids[key] = name
        else:
            stand_in = names.setdefault(name, f"vol-{len(names):024x}")
            ids[key] = stand_in
    mapping = device_volumes(disk_info, devices=ids)
    df = to_metrics(samples, mapping, step=step)
    if names:
        back = {v: k for k, v in names.items()}
        df["volume_id"] = df["volume_id"].map(lambda v: back.get(v, v))
    if volumes is not None:
        unknown = [v for v in dict.fromkeys(df["volume_id"]) if v not in volumes]
        if unknown:
            raise ValueError(
                f"the devices are {', '.join(map(repr, unknown))}, which the volumes do not list "
                f"({', '.join(volumes) or 'none'})"
            )
    return df
