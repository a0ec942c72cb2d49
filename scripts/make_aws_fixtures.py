#!/usr/bin/env python3
"""Regenerate the AWS fixtures in tests/data/aws from moto's mock EC2 and CloudWatch, through boto3.

    .venv/bin/python scripts/requirements.py fixtures > /tmp/req.txt && .venv/bin/pip install -r /tmp/req.txt
    .venv/bin/python scripts/make_aws_fixtures.py [--out tests/data/aws]

Every document written is a boto3 response, as boto3 returned it from moto's implementation of
the AWS API (botocore parses the wire response with its own service model), with only
``ResponseMetadata`` dropped and timestamps written as ISO-8601 the way the AWS CLI prints them
(``2024-05-01T00:00:00+00:00``). The request documents are the requests the script sent. Nothing is
typed by hand; the workload values are the scenario below, put with ``put_metric_data``.

Scenario (moto's random ids seeded, so ids repeat from run to run; CreateTime and AttachTime are
the time of generation):

- an ``m5.large`` instance with two volumes attached: ``data`` (gp2, 100 GiB) and ``logs`` (gp3,
  200 GiB, 4,000 IOPS, 250 MiB/s); five more volumes, one of each other type, unattached;
- two hours of one-minute CloudWatch datapoints from 2024-05-01T00:00Z (namespace AWS/EBS):
  - ``data``: minutes 0-59 read 72,000 I/Os of 4 KiB and write 18,000 of 16 KiB per minute
    (1,500 IOPS); minutes 60-119 6,000 of each (200 IOPS). ``BurstBalance`` at the start of each
    minute follows AWS's gp2 rule (5.4 M credits, 300 IOPS earned): 100 - 1.333... x m percent
    for m <= 60 (20 % at minute 60), then 20 + 0.111... x (m - 60). ``VolumeQueueLength`` 0.8
    then 0.1 and ``VolumeIdleTime`` 0 then 30 s per minute (illustrative values);
  - ``logs``: 60,000 reads and 60,000 writes of 16 KiB per minute (2,000 IOPS), no datapoints
    at minutes 90 and 91 (missing datapoints), ``VolumeQueueLength`` 1.0.
- ``get_metric_data`` for those metrics, Period 60: three consecutive 40-minute requests
  (``...pages.moto.json``: one response each, newest first, CloudWatch's default), and one
  request for the two hours with each Label naming volume, metric, statistic and period, as the
  dynamic label ``${PROP('Dim.VolumeId')} ${PROP('MetricName')} ${PROP('Stat')} ${PROP('Period')}``
  reads on AWS (moto returns labels as given), oldest first (``...labels.moto.json``). moto does
  not paginate GetMetricData with NextToken (as of 5.2), so the pages are time windows.
- ``get_metric_statistics`` of data's VolumeReadOps (Sum), and every metric of both volumes
  as CSV (one row per datapoint: Timestamp, VolumeId, MetricName, Statistic, Period, Unit, Value).
- ``describe_volumes`` (moto's instance adds its 8 GiB root volume) and ``describe_instances``.
- The metrics AWS added (``cloudwatch-checks.*``), after the above (so their ids stay): a gp3
  volume ``checks`` (100 GiB, 3,000 IOPS, 125 MiB/s) attached to the instance at /dev/sdh, 30
  one-minute datapoints from 2024-05-02T00:00Z: reads of 4 KiB at 500 IOPS and writes of
  16 KiB at 500 IOPS, except minutes 10-19, when reads are 2,500 IOPS (the volume served its
  3,000 IOPS cap) and ``VolumeIOPSExceededCheck`` is 1 (0 otherwise);
  ``VolumeThroughputExceededCheck`` and ``VolumeStalledIOCheck`` 0 throughout;
  ``VolumeAvgReadLatency`` / ``VolumeAvgWriteLatency`` 0.5 / 1.0 ms, 2.0 / 3.0 ms in minutes
  10-19 (illustrative values); the instance's ``InstanceEBSIOPSExceededCheck`` and
  ``InstanceEBSThroughputExceededCheck`` (AWS/EC2, InstanceId) 0 throughout. One
  ``get_metric_data`` request holding the volume's and the instance's queries
  (``cloudwatch-checks.get-metric-data.moto.json`` and ``...queries.json``), and
  ``get_metric_statistics`` of VolumeIOPSExceededCheck and InstanceEBSIOPSExceededCheck (Maximum).
- The CloudWatch agent's EBS NVMe counters of the same volume and minutes
  (``cloudwatch-nvme.*``, namespace CWAgent, dimensions VolumeId and InstanceId as the agent
  publishes them with ``append_dimensions``), each minute's increase: the I/Os and bytes above,
  ``diskio_ebs_total_read_time`` / ``..._write_time`` their count times 0.5 / 1.0 ms (2.0 /
  3.0 ms in minutes 10-19) in microseconds, ``diskio_ebs_volume_performance_exceeded_iops``
  45 s of each of minutes 10-19 and 10 s of minute 20, ``..._tp`` and the instance's 0,
  ``diskio_ebs_volume_queue_length`` 0.5 (6.0 in minutes 10-19); one ``get_metric_data``.

The versions of moto, boto3, botocore and Python are written to ``aws-fixtures.versions.json``.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import platform
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import boto3
import botocore
import moto
from moto import mock_aws
from moto.moto_api._internal import mock_random

SEED = 20240501
REGION = "us-east-1"
T0 = dt.datetime(2024, 5, 1, 0, 0, tzinfo=dt.timezone.utc)
MINUTES = 120
KiB = 1024
PERIOD = 60

UNITS = {
    "VolumeReadOps": "Count",
    "VolumeWriteOps": "Count",
    "VolumeReadBytes": "Bytes",
    "VolumeWriteBytes": "Bytes",
    "VolumeQueueLength": "Count",
    "VolumeIdleTime": "Seconds",
    "BurstBalance": "Percent",
}
STAT = {"VolumeQueueLength": "Average", "BurstBalance": "Average"}  # others: Sum


def _clean(x: Any) -> Any:
    """The response as the CLI prints it: no ResponseMetadata, ISO-8601 timestamps."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if k != "ResponseMetadata"}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    if isinstance(x, dt.datetime):
        return x.isoformat()
    return x


def _write(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(_clean(doc), indent=2) + "\n")
    print(f"wrote {path}")


def _data_minute(m: int) -> Dict[str, float]:
    """The gp2 volume's datapoints for minute m."""
    if m < 60:
        reads, writes = 72_000.0, 18_000.0
    else:
        reads, writes = 6_000.0, 6_000.0
    # gp2: 5.4e6 credits, earns 300/s; 1,500 IOPS spend 1,200/s net, 200 IOPS earn 100/s.
    balance = 100.0 - 1200.0 * 60 * m / 54_000 if m <= 60 else 20.0 + 100.0 * 60 * (m - 60) / 54_000
    return {
        "VolumeReadOps": reads,
        "VolumeWriteOps": writes,
        "VolumeReadBytes": reads * 4 * KiB,
        "VolumeWriteBytes": writes * 16 * KiB,
        "BurstBalance": balance,
        "VolumeQueueLength": 0.8 if m < 60 else 0.1,
        "VolumeIdleTime": 0.0 if m < 60 else 30.0,
    }


def _logs_minute(m: int) -> Dict[str, float]:
    """The gp3 volume's datapoints for minute m (none at minutes 90 and 91)."""
    if m in (90, 91):
        return {"VolumeQueueLength": 1.0}
    return {
        "VolumeReadOps": 60_000.0,
        "VolumeWriteOps": 60_000.0,
        "VolumeReadBytes": 60_000.0 * 16 * KiB,
        "VolumeWriteBytes": 60_000.0 * 16 * KiB,
        "VolumeQueueLength": 1.0,
    }


def _queries(volumes: List[Tuple[str, List[str]]], labels: bool) -> List[Dict[str, Any]]:
    out = []
    for j, (vid, metrics) in enumerate(volumes):
        for i, m in enumerate(metrics):
            stat = STAT.get(m, "Sum")
            q: Dict[str, Any] = {
                "Id": f"v{j}m{i}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/EBS",
                        "MetricName": m,
                        "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                    },
                    "Period": PERIOD,
                    "Stat": stat,
                },
            }
            if labels:
                q["Label"] = f"{vid} {m} {stat} {PERIOD}"
            out.append(q)
    return out


CHECK_T0 = dt.datetime(2024, 5, 2, 0, 0, tzinfo=dt.timezone.utc)
CHECK_MINUTES = 30
CHECK_UNITS = {
    "VolumeReadOps": "Count",
    "VolumeWriteOps": "Count",
    "VolumeReadBytes": "Bytes",
    "VolumeWriteBytes": "Bytes",
    "VolumeAvgReadLatency": "Milliseconds",
    "VolumeAvgWriteLatency": "Milliseconds",
    "VolumeIOPSExceededCheck": "None",
    "VolumeThroughputExceededCheck": "None",
    "VolumeStalledIOCheck": "None",
    "InstanceEBSIOPSExceededCheck": "None",
    "InstanceEBSThroughputExceededCheck": "None",
}


def _checks_minute(m: int) -> Dict[str, float]:
    """The checks volume's datapoints for minute m: at its 3,000 IOPS cap in minutes 10-19."""
    busy = 10 <= m < 20
    reads, writes = (150_000.0 if busy else 30_000.0), 30_000.0
    return {
        "VolumeReadOps": reads,
        "VolumeWriteOps": writes,
        "VolumeReadBytes": reads * 4 * KiB,
        "VolumeWriteBytes": writes * 16 * KiB,
        "VolumeAvgReadLatency": 2.0 if busy else 0.5,
        "VolumeAvgWriteLatency": 3.0 if busy else 1.0,
        "VolumeIOPSExceededCheck": 1.0 if busy else 0.0,
        "VolumeThroughputExceededCheck": 0.0,
        "VolumeStalledIOCheck": 0.0,
    }


def _checks_fixtures(ec2: Any, cw: Any, iid: str, out: Path) -> str:
    """The metrics AWS added: one volume's and its instance's (see the module's docstring)."""
    v = ec2.create_volume(
        AvailabilityZone=f"{REGION}a",
        VolumeType="gp3",
        Size=100,
        Iops=3000,
        Throughput=125,
        TagSpecifications=[{"ResourceType": "volume", "Tags": [{"Key": "Name", "Value": "checks"}]}],
    )
    vid = v["VolumeId"]
    ec2.attach_volume(VolumeId=vid, InstanceId=iid, Device="/dev/sdh")
    vol_dim = [{"Name": "VolumeId", "Value": vid}]
    inst_dim = [{"Name": "InstanceId", "Value": iid}]
    vol_data, inst_data = [], []
    for m in range(CHECK_MINUTES):
        when = CHECK_T0 + dt.timedelta(minutes=m)
        for metric, value in _checks_minute(m).items():
            vol_data.append(
                {
                    "MetricName": metric,
                    "Dimensions": vol_dim,
                    "Timestamp": when,
                    "Value": value,
                    "Unit": CHECK_UNITS[metric],
                }
            )
        for metric in ("InstanceEBSIOPSExceededCheck", "InstanceEBSThroughputExceededCheck"):
            inst_data.append(
                {"MetricName": metric, "Dimensions": inst_dim, "Timestamp": when, "Value": 0.0, "Unit": "None"}
            )
    for i in range(0, len(vol_data), 500):
        cw.put_metric_data(Namespace="AWS/EBS", MetricData=vol_data[i : i + 500])
    cw.put_metric_data(Namespace="AWS/EC2", MetricData=inst_data)

    queries: List[Dict[str, Any]] = []
    for i, metric in enumerate(_checks_minute(0)):
        stat = "Sum" if metric.endswith(("Ops", "Bytes")) else "Average" if "Latency" in metric else "Maximum"
        queries.append(
            {
                "Id": f"v{i}",
                "MetricStat": {
                    "Metric": {"Namespace": "AWS/EBS", "MetricName": metric, "Dimensions": vol_dim},
                    "Period": PERIOD,
                    "Stat": stat,
                },
            }
        )
    for i, metric in enumerate(("InstanceEBSIOPSExceededCheck", "InstanceEBSThroughputExceededCheck")):
        queries.append(
            {
                "Id": f"i{i}",
                "MetricStat": {
                    "Metric": {"Namespace": "AWS/EC2", "MetricName": metric, "Dimensions": inst_dim},
                    "Period": PERIOD,
                    "Stat": "Maximum",
                },
            }
        )
    end = CHECK_T0 + dt.timedelta(minutes=CHECK_MINUTES)
    request = {"MetricDataQueries": queries, "StartTime": CHECK_T0, "EndTime": end}
    _write(out / "cloudwatch-checks.get-metric-data.queries.json", request)
    _write(
        out / "cloudwatch-checks.get-metric-data.moto.json",
        cw.get_metric_data(MetricDataQueries=queries, StartTime=CHECK_T0, EndTime=end),
    )
    for name, namespace, metric, dims in (
        ("volume", "AWS/EBS", "VolumeIOPSExceededCheck", vol_dim),
        ("instance", "AWS/EC2", "InstanceEBSIOPSExceededCheck", inst_dim),
    ):
        req = {
            "Namespace": namespace,
            "MetricName": metric,
            "Dimensions": dims,
            "StartTime": CHECK_T0,
            "EndTime": end,
            "Period": PERIOD,
            "Statistics": ["Maximum"],
        }
        _write(out / f"cloudwatch-checks.get-metric-statistics.{name}.request.json", req)
        _write(out / f"cloudwatch-checks.get-metric-statistics.{name}.moto.json", cw.get_metric_statistics(**req))
    return str(vid)


def _nvme_minute(m: int) -> Dict[str, float]:
    """The agent's counters of the checks volume for minute m (each the minute's increase)."""
    c = _checks_minute(m)
    us = 1e6
    return {
        "diskio_ebs_total_read_ops": c["VolumeReadOps"],
        "diskio_ebs_total_write_ops": c["VolumeWriteOps"],
        "diskio_ebs_total_read_bytes": c["VolumeReadBytes"],
        "diskio_ebs_total_write_bytes": c["VolumeWriteBytes"],
        "diskio_ebs_total_read_time": c["VolumeReadOps"] * c["VolumeAvgReadLatency"] * 1e-3 * us,
        "diskio_ebs_total_write_time": c["VolumeWriteOps"] * c["VolumeAvgWriteLatency"] * 1e-3 * us,
        "diskio_ebs_volume_performance_exceeded_iops": 45 * us if 10 <= m < 20 else 10 * us if m == 20 else 0.0,
        "diskio_ebs_volume_performance_exceeded_tp": 0.0,
        "diskio_ebs_ec2_instance_performance_exceeded_iops": 0.0,
        "diskio_ebs_ec2_instance_performance_exceeded_tp": 0.0,
        "diskio_ebs_volume_queue_length": 6.0 if 10 <= m < 20 else 0.5,
    }


NVME_UNITS = {"ops": "Count", "bytes": "Bytes", "time": "Microseconds", "iops": "Microseconds", "_tp": "Microseconds"}


def _nvme_unit(metric: str) -> str:
    if metric.endswith("queue_length"):
        return "Count"
    return next(u for k, u in NVME_UNITS.items() if metric.endswith(k))


def _nvme_fixtures(cw: Any, vid: str, iid: str, out: Path) -> None:
    """The CloudWatch agent's EBS NVMe counters (see the module's docstring)."""
    dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "VolumeId", "Value": vid}]
    data = []
    for m in range(CHECK_MINUTES):
        when = CHECK_T0 + dt.timedelta(minutes=m)
        for metric, value in _nvme_minute(m).items():
            data.append(
                {
                    "MetricName": metric,
                    "Dimensions": dims,
                    "Timestamp": when,
                    "Value": value,
                    "Unit": _nvme_unit(metric),
                }
            )
    for i in range(0, len(data), 500):
        cw.put_metric_data(Namespace="CWAgent", MetricData=data[i : i + 500])
    queries = [
        {
            "Id": f"n{i}",
            "MetricStat": {
                "Metric": {"Namespace": "CWAgent", "MetricName": metric, "Dimensions": dims},
                "Period": PERIOD,
                "Stat": "Average" if metric.endswith("queue_length") else "Sum",
            },
        }
        for i, metric in enumerate(_nvme_minute(0))
    ]
    end = CHECK_T0 + dt.timedelta(minutes=CHECK_MINUTES)
    _write(
        out / "cloudwatch-nvme.get-metric-data.queries.json",
        {"MetricDataQueries": queries, "StartTime": CHECK_T0, "EndTime": end},
    )
    _write(
        out / "cloudwatch-nvme.get-metric-data.moto.json",
        cw.get_metric_data(MetricDataQueries=queries, StartTime=CHECK_T0, EndTime=end),
    )


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data" / "aws")
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    mock_random.seed(SEED)
    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        cw = boto3.client("cloudwatch", region_name=REGION)
        inst = ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large")
        iid = inst["Instances"][0]["InstanceId"]
        specs: List[Tuple[str, Dict[str, Any]]] = [
            ("data", {"VolumeType": "gp2", "Size": 100}),
            ("logs", {"VolumeType": "gp3", "Size": 200, "Iops": 4000, "Throughput": 250}),
            ("db", {"VolumeType": "io1", "Size": 100, "Iops": 5000}),
            ("db2", {"VolumeType": "io2", "Size": 100, "Iops": 20000}),
            ("scan", {"VolumeType": "st1", "Size": 500}),
            ("cold", {"VolumeType": "sc1", "Size": 500}),
            ("old", {"VolumeType": "standard", "Size": 50}),
        ]
        ids: Dict[str, str] = {}
        for name, kw in specs:
            v = ec2.create_volume(
                AvailabilityZone=f"{REGION}a",
                TagSpecifications=[{"ResourceType": "volume", "Tags": [{"Key": "Name", "Value": name}]}],
                **kw,
            )
            ids[name] = v["VolumeId"]
        ec2.attach_volume(VolumeId=ids["data"], InstanceId=iid, Device="/dev/sdf")
        ec2.attach_volume(VolumeId=ids["logs"], InstanceId=iid, Device="/dev/sdg")

        _write(out / "ec2-describe-volumes.moto.json", ec2.describe_volumes())
        _write(out / "ec2-describe-instances.moto.json", ec2.describe_instances())

        datums = []
        for m in range(MINUTES):
            when = T0 + dt.timedelta(minutes=m)
            for vid, values in ((ids["data"], _data_minute(m)), (ids["logs"], _logs_minute(m))):
                for metric, value in values.items():
                    datums.append(
                        {
                            "MetricName": metric,
                            "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                            "Timestamp": when,
                            "Value": value,
                            "Unit": UNITS[metric],
                        }
                    )
        for i in range(0, len(datums), 500):
            cw.put_metric_data(Namespace="AWS/EBS", MetricData=datums[i : i + 500])

        data_metrics = list(_data_minute(0))
        logs_metrics = list(_logs_minute(0))
        vols = [(ids["data"], data_metrics), (ids["logs"], logs_metrics)]
        queries = _queries(vols, labels=False)
        end = T0 + dt.timedelta(minutes=MINUTES)
        request = {"MetricDataQueries": queries, "StartTime": T0, "EndTime": end}
        _write(out / "cloudwatch-get-metric-data.queries.json", request)
        pages = []
        for w in range(3):
            a, b = T0 + dt.timedelta(minutes=40 * w), T0 + dt.timedelta(minutes=40 * (w + 1))
            pages.append(cw.get_metric_data(MetricDataQueries=queries, StartTime=a, EndTime=b))
        _write(out / "cloudwatch-get-metric-data.pages.moto.json", pages)
        labelled = _queries(vols, labels=True)
        _write(
            out / "cloudwatch-get-metric-data.labels.moto.json",
            cw.get_metric_data(MetricDataQueries=labelled, StartTime=T0, EndTime=end, ScanBy="TimestampAscending"),
        )

        stats_request = {
            "Namespace": "AWS/EBS",
            "MetricName": "VolumeReadOps",
            "Dimensions": [{"Name": "VolumeId", "Value": ids["data"]}],
            "StartTime": T0,
            "EndTime": end,
            "Period": PERIOD,
            "Statistics": ["Sum"],
        }
        _write(out / "cloudwatch-get-metric-statistics.request.json", stats_request)
        _write(out / "cloudwatch-get-metric-statistics.moto.json", cw.get_metric_statistics(**stats_request))

        csv_path = out / "cloudwatch-metrics.moto.csv"
        with csv_path.open("w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["Timestamp", "VolumeId", "MetricName", "Statistic", "Period", "Unit", "Value"])
            for vid, metrics in vols:
                for metric in metrics:
                    stat = STAT.get(metric, "Sum")
                    r = cw.get_metric_statistics(
                        Namespace="AWS/EBS",
                        MetricName=metric,
                        Dimensions=[{"Name": "VolumeId", "Value": vid}],
                        StartTime=T0,
                        EndTime=end,
                        Period=PERIOD,
                        Statistics=[stat],
                    )
                    for dp in r["Datapoints"]:
                        wr.writerow(
                            [dp["Timestamp"].isoformat(), vid, metric, stat, PERIOD, dp["Unit"], repr(dp[stat])]
                        )
        print(f"wrote {csv_path}")

        ids["checks"] = _checks_fixtures(ec2, cw, iid, out)
        _nvme_fixtures(cw, ids["checks"], iid, out)

    versions = {
        "moto": moto.__version__,
        "boto3": boto3.__version__,
        "botocore": botocore.__version__,
        "python": platform.python_version(),
        "seed": SEED,
        "volumes": ids,
        "instance": iid,
    }
    (out / "aws-fixtures.versions.json").write_text(json.dumps(versions, indent=2) + "\n")
    print(f"wrote {out / 'aws-fixtures.versions.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
