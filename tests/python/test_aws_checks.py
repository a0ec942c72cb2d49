"""The metrics AWS added (latency, exceeded checks, the instance's checks): read and compared.

The fixtures are boto3 responses from moto (scripts/make_aws_fixtures.py, ``cloudwatch-checks.*``;
tests/data/aws/README.md): a gp3 volume of 3,000 IOPS, 30 one-minute datapoints, reads of
4 KiB at 500 IOPS and writes of 16 KiB at 500 IOPS, except minutes 10-19 with reads at 2,500
IOPS (3,000 in all: its cap) and VolumeIOPSExceededCheck 1; its instance's checks 0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import ebssim
import ebssim.aws as aws
import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

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


@pytest.fixture(scope="module")
def comparison(metrics: pd.DataFrame, instance_metrics: pd.DataFrame) -> aws.Comparison:
    # What-if: the measured demand replayed on an io1 volume of 2,500 IOPS, one-second steps.
    vol = ebssim.Volume("io1", 100, iops=2500)
    result = aws.replay(metrics, {VOL: vol}, dt=1.0)[VOL]
    return aws.compare(result, metrics, instance_metrics=instance_metrics)


def test_exceeded_minutes_against_the_minutes_the_model_was_bound(comparison: aws.Comparison) -> None:
    # Minutes 10-19 demand 150,000 + 30,000 I/Os a minute = 3,000 IOPS on a 2,500 IOPS volume:
    # bound by volume_iops, 500 I/Os a second left over, 500 x 600 s = 300,000 at minute 20.
    # From then 60,000 a minute (1,000 IOPS) arrive and 2,500 are served: the backlog drains at
    # 1,500/s, in 200 s: minutes 20, 21 and 22 bound throughout, minute 23 for 20 of its 60 s
    # (under half: not bound). The model is bound in minutes 10-22 (13), AWS says 10-19 (10):
    # agreement (30 - 3) / 30 = 0.9, precision 10 / 13, recall 10 / 10.
    a = comparison.agreement
    assert a is not None
    row = a.loc["iops_exceeded"]
    assert (row.periods, row.measured, row.simulated, row.both) == (30, 10, 13, 10)
    assert row.agreement == pytest.approx(0.9)
    assert row.precision == pytest.approx(10 / 13)
    assert row.recall == 1.0
    sim = comparison.frame["simulated_iops_exceeded"].to_numpy()
    assert list(np.flatnonzero(sim)) == list(range(10, 23))
    # Throughput: 2,500 x 4 KiB + 500 x 16 KiB = 17.6 MiB/s, far below io1's; never exceeded
    # by either: agreement 1, precision and recall undefined (no positives).
    t = a.loc["throughput_exceeded"]
    assert (t.measured, t.simulated, t.agreement) == (0, 0, 1.0)
    assert math.isnan(t.precision) and math.isnan(t.recall)
    # The instance's checks (no instance in this replay: never bound by one), 0 on AWS too.
    for c in ("instance_iops_exceeded", "instance_throughput_exceeded"):
        assert a.loc[c, "agreement"] == 1.0 and a.loc[c, "periods"] == 30
    assert (comparison.frame["measured_stalled_io"] == 0).all()


def test_latency_per_direction(comparison: aws.Comparison, metrics: pd.DataFrame) -> None:
    f = comparison.frame
    assert f["measured_avg_read_latency_ms"].iloc[0] == 0.5 and f["measured_avg_write_latency_ms"].iloc[15] == 3.0
    # A read and a write wait alike in a step and differ by their service times
    # (docs/model.md, "Latency percentiles"): in every minute that completed I/O, simulated write
    # minus read is the write service time minus the read's.
    vol = ebssim.Volume("io1", 100, iops=2500)
    r = aws.replay(metrics, {VOL: vol}, dt=1.0)[VOL]
    m = r.latency_model
    diff = (f["simulated_avg_write_latency_ms"] - f["simulated_avg_read_latency_ms"]).to_numpy()
    assert diff == pytest.approx(np.full(30, (m.write_service_s - m.read_service_s) * 1e3), rel=1e-9)
    # Bound minutes wait longer: minute 15 (backlog growing) is slower than minute 5 (none).
    assert f["simulated_avg_read_latency_ms"].iloc[15] > 10 * f["simulated_avg_read_latency_ms"].iloc[5]
    assert (
        "avg_read_latency_ms" in comparison.errors.index
        and comparison.errors.loc["avg_read_latency_ms", "periods"] == 30
    )


def test_repr_html_and_plot_show_the_agreement(comparison: aws.Comparison) -> None:
    assert "iops_exceeded agreement 0.9" in repr(comparison)
    html = comparison._repr_html_()
    assert "exceeded (AWS) vs bound (ebssim)" in html and "0.769" in html
    fig = comparison.plot()
    titles = [ax.get_title(loc="right") for ax in fig.axes]
    assert "agreement 0.9" in titles


def test_instance_metrics_errors(metrics: pd.DataFrame, instance_metrics: pd.DataFrame) -> None:
    vol = ebssim.Volume("io1", 100, iops=2500)
    result = aws.replay(metrics, {VOL: vol}, dt=1.0)[VOL]
    with pytest.raises(ValueError, match="instance_metrics hold nothing for 'i-00'"):
        aws.compare(result, metrics, instance_metrics=instance_metrics, instance_id="i-00")
    with pytest.raises(ValueError, match="instance_id='i-00' without instance_metrics="):
        aws.compare(result, metrics, instance_id="i-00")
    with pytest.raises(ValueError, match=r"instance_metrics has no column\(s\) \['instance_id'\]"):
        aws.compare(result, metrics, instance_metrics=metrics)


# --- the CloudWatch agent's EBS NVMe counters (cloudwatch-nvme.*: the same volume and minutes) ---

NVME = DATA / "cloudwatch-nvme.get-metric-data.moto.json"
NVME_QUERIES = DATA / "cloudwatch-nvme.get-metric-data.queries.json"


def test_nvme_counters_in_aws_ebs_terms() -> None:
    m = aws.read_nvme_metric_data(NVME, queries=NVME_QUERIES)
    assert set(m["volume_id"]) == {VOL}
    wide = m.pivot(index="timestamp", columns="metric", values="value")
    # Minute 0: 30,000 reads at 0.5 ms = 15 s (15,000,000 us); writes 30,000 at 1 ms = 30 s.
    assert wide["VolumeTotalReadTime"].iloc[0] == pytest.approx(15.0)
    assert wide["VolumeTotalWriteTime"].iloc[0] == pytest.approx(30.0)
    # Minute 15: 150,000 reads at 2 ms = 300 s.
    assert wide["VolumeTotalReadTime"].iloc[15] == pytest.approx(300.0)
    assert wide["VolumeReadOps"].iloc[15] == 150_000 and wide["VolumeReadBytes"].iloc[0] == 30_000 * 4096
    assert wide["VolumeQueueLength"].iloc[15] == 6.0
    # Exceeded 45 s of minutes 10-19 (>= 30 s, half: 1) and 10 s of minute 20 (< 30 s: 0).
    iops = wide["VolumeIOPSExceededCheck"].to_numpy()
    assert list(np.flatnonzero(iops)) == list(range(10, 20))
    assert (wide["VolumeThroughputExceededCheck"] == 0).all()
    units = m.groupby("metric")["unit"].first()
    assert units["VolumeTotalReadTime"] == "Seconds" and units["VolumeIOPSExceededCheck"] == "None"


def test_nvme_counters_replay_and_compare_like_the_aws_ebs_ones() -> None:
    m = aws.read_nvme_metric_data(NVME, queries=NVME_QUERIES)
    inst = aws.read_nvme_instance_metric_data(NVME, queries=NVME_QUERIES, instance_id=INSTANCE)
    assert set(inst["instance_id"]) == {INSTANCE} and (inst["value"] == 0).all() and inst.shape[0] == 2 * 30
    r = aws.replay(m, {VOL: ebssim.Volume("io1", 100, iops=2500)}, dt=1.0)[VOL]
    c = aws.compare(r, m, instance_metrics=inst)
    assert c.agreement is not None
    # As from the AWS/EBS checks: AWS says minutes 10-19, the model 10-22: 27 of 30 agree.
    row = c.agreement.loc["iops_exceeded"]
    assert (row.measured, row.simulated, row.both) == (10, 13, 10) and row.agreement == pytest.approx(0.9)
    assert c.agreement.loc["instance_iops_exceeded", "agreement"] == 1.0
    # 15 s over 30,000 reads: 0.5 ms a read, measured.
    assert c.frame["measured_read_latency_ms"].iloc[0] == pytest.approx(0.5)


def test_nvme_errors() -> None:
    with pytest.raises(ValueError, match="is not a volume id|is not an instance id"):
        aws.read_nvme_instance_metric_data(NVME, queries=NVME_QUERIES, instance_id="vol-0123")
    with pytest.raises(ValueError, match="namespace 'CWAgent'; ebssim reads Custom nvme metrics here"):
        aws.read_nvme_metric_data(NVME, queries=NVME_QUERIES, namespace="Custom")
    q = json.loads(NVME_QUERIES.read_text())
    q["MetricDataQueries"][0]["MetricStat"]["Stat"] = "Average"
    with pytest.raises(
        ValueError, match=r"diskio_ebs_total_read_ops has the statistic\(s\) \['Average'\]: fetch it with Sum"
    ):
        aws.read_nvme_metric_data(NVME, queries=q)
