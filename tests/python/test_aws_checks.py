"""The metrics AWS added (latency, exceeded checks, the instance's checks): read and compared.

The fixtures are boto3 responses from moto (scripts/make_aws_fixtures.py, ``cloudwatch-checks.*``;
tests/data/aws/README.md): a gp3 volume of 3,000 IOPS, 30 one-minute datapoints, reads of
4 KiB at 500 IOPS and writes of 16 KiB at 500 IOPS, except minutes 10-19 with reads at 2,500
IOPS (3,000 in all: its cap) and VolumeIOPSExceededCheck 1; its instance's checks 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import ebssim.aws as aws
import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "aws"
VERSIONS = json.loads((DATA / "aws-fixtures.versions.json").read_text())
VOL, INSTANCE = VERSIONS["volumes"]["checks"], VERSIONS["instance"]
DOC = DATA / "cloudwatch-checks.get-metric-data.moto.json"
QUERIES = DATA / "cloudwatch-checks.get-metric-data.queries.json"


@pytest.fixture(scope="module")
def metrics() -> pd.DataFrame:
    return aws.read_metric_data(DOC, queries=QUERIES)


@pytest.fixture(scope="module")
def instance_metrics() -> pd.DataFrame:
    return aws.read_instance_metric_data(DOC, queries=QUERIES)


def test_volume_metrics_read_with_their_units(metrics: pd.DataFrame) -> None:
    # One document holds the volume's 9 queries and the instance's 2: the volume reader takes 9.
    assert sorted(metrics["metric"].unique()) == sorted(
        [
            "VolumeReadOps",
            "VolumeWriteOps",
            "VolumeReadBytes",
            "VolumeWriteBytes",
            "VolumeAvgReadLatency",
            "VolumeAvgWriteLatency",
            "VolumeIOPSExceededCheck",
            "VolumeThroughputExceededCheck",
            "VolumeStalledIOCheck",
        ]
    )
    assert metrics.shape[0] == 9 * 30
    units = metrics.groupby("metric")["unit"].first()
    assert units["VolumeAvgReadLatency"] == "Milliseconds"
    assert units["VolumeIOPSExceededCheck"] == "None"
    check = metrics[metrics["metric"] == "VolumeIOPSExceededCheck"].set_index("timestamp")["value"]
    # 1 in minutes 10-19 only: 10 minutes.
    assert check.sum() == 10
    assert check[pd.Timestamp("2024-05-02T00:10:00Z")] == 1 and check[pd.Timestamp("2024-05-02T00:20:00Z")] == 0
    lat = metrics[metrics["metric"] == "VolumeAvgReadLatency"].set_index("timestamp")["value"]
    assert lat[pd.Timestamp("2024-05-02T00:00:00Z")] == 0.5 and lat[pd.Timestamp("2024-05-02T00:15:00Z")] == 2.0


def test_instance_metrics_in_a_frame_of_their_own(instance_metrics: pd.DataFrame) -> None:
    assert list(instance_metrics.columns) == list(aws.INSTANCE_COLUMNS)
    assert set(instance_metrics["instance_id"]) == {INSTANCE}
    assert sorted(instance_metrics["metric"].unique()) == sorted(aws.INSTANCE_METRICS)
    assert instance_metrics.shape[0] == 2 * 30
    assert (instance_metrics["value"] == 0).all() and (instance_metrics["unit"] == "None").all()


def test_get_metric_statistics_of_both() -> None:
    vol = aws.read_metric_statistics(
        DATA / "cloudwatch-checks.get-metric-statistics.volume.moto.json",
        request=DATA / "cloudwatch-checks.get-metric-statistics.volume.request.json",
    )
    assert set(vol["volume_id"]) == {VOL} and set(vol["stat"]) == {"Maximum"}
    assert vol.shape[0] == 30 and vol["value"].sum() == 10
    inst = aws.read_instance_metric_statistics(
        DATA / "cloudwatch-checks.get-metric-statistics.instance.moto.json",
        request=DATA / "cloudwatch-checks.get-metric-statistics.instance.request.json",
    )
    assert set(inst["instance_id"]) == {INSTANCE} and inst.shape[0] == 30
    assert set(inst["metric"]) == {"InstanceEBSIOPSExceededCheck"}


def test_bad_check_values_and_units_are_refused() -> None:
    page = {
        "MetricDataResults": [
            {
                "Id": "r",
                "Label": "vol-0123abcd VolumeIOPSExceededCheck Maximum 60",
                "Timestamps": ["2024-05-01T00:00:00Z"],
                "Values": [2.0],
                "StatusCode": "Complete",
            }
        ]
    }
    with pytest.raises(ValueError, match=r"VolumeIOPSExceededCheck is 2\.0; a check is 0 or 1"):
        aws.read_metric_data(page)
    out = {
        "Label": "VolumeAvgReadLatency",
        "Datapoints": [{"Timestamp": "2024-05-01T00:00:00Z", "Average": 1.0, "Unit": "Seconds"}],
    }
    with pytest.raises(
        ValueError, match="VolumeAvgReadLatency is in 'Seconds', but CloudWatch reports it in 'Milliseconds'"
    ):
        aws.read_metric_statistics(out, volume_id="vol-0123abcd", period=60)
    # An instance check given to the volume reader names the reader to use.
    inst = {"Label": "InstanceEBSIOPSExceededCheck", "Datapoints": []}
    with pytest.raises(ValueError, match="read it with ebssim.aws.read_instance_metric_data"):
        aws.read_metric_statistics(inst, volume_id="vol-0123abcd", period=60)
    with pytest.raises(ValueError, match="'vol-0123abcd' is not an instance id"):
        aws.read_instance_metric_statistics(inst, instance_id="vol-0123abcd", period=60)
    # A document of volume metrics only holds no instance metric.
    vol_only = {"MetricDataResults": [dict(page["MetricDataResults"][0], Values=[1.0])]}
    with pytest.raises(ValueError, match="holds no instance metric"):
        aws.read_instance_metric_data(vol_only)


def test_labels_split_between_the_readers() -> None:
    # Without queries, each reader takes the results whose Label names its own kind.
    page = {
        "MetricDataResults": [
            {
                "Id": "v",
                "Label": "vol-0123abcd VolumeStalledIOCheck Maximum 60",
                "Timestamps": ["2024-05-01T00:00:00Z"],
                "Values": [0.0],
                "StatusCode": "Complete",
            },
            {
                "Id": "i",
                "Label": "i-0123abcd InstanceEBSThroughputExceededCheck Maximum 60",
                "Timestamps": ["2024-05-01T00:00:00Z"],
                "Values": [1.0],
                "StatusCode": "Complete",
            },
        ]
    }
    vol = aws.read_metric_data(page)
    inst = aws.read_instance_metric_data(page)
    assert list(vol["metric"]) == ["VolumeStalledIOCheck"]
    assert list(inst["metric"]) == ["InstanceEBSThroughputExceededCheck"] and list(inst["instance_id"]) == [
        "i-0123abcd"
    ]
