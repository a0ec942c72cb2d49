"""ebssim.aws: CloudWatch and EC2 documents into metrics, volumes, attachments, traces, replays
and comparisons.

The fixtures in tests/data/aws are boto3 responses from moto (scripts/make_aws_fixtures.py,
versions in aws-fixtures.versions.json) and the real aws-cli / botocore examples (README.md
there). The scenario, worked out by hand from AWS's gp2 rule (5.4e6 credits, 300 IOPS earned by
a 100 GiB volume): the ``data`` gp2 volume does 1,500 IOPS (72,000 reads + 18,000 writes a
minute) for an hour, spending 1,200 credits/s net: 1,200 x 3,600 = 4.32e6 = 80 % of its bucket,
so BurstBalance falls from 100 % to 20 % at 01:00; then 200 IOPS for an hour earn 100/s,
+6,000 credits (0.111 %) a minute, 26.67 % at 02:00. The ``logs`` gp3 volume does 2,000 IOPS of
16 KiB, with no datapoints at 01:30 and 01:31.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import ebssim
import ebssim.aws as aws
import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

DATA = Path(__file__).resolve().parents[1] / "data" / "aws"
IDS = json.loads((DATA / "aws-fixtures.versions.json").read_text())["volumes"]
DATA_VOL, LOGS_VOL = IDS["data"], IDS["logs"]
PAGES = DATA / "cloudwatch-get-metric-data.pages.moto.json"
QUERIES = DATA / "cloudwatch-get-metric-data.queries.json"
T0 = pd.Timestamp("2024-05-01 00:00", tz="UTC")


def load(name: str):
    return json.loads((DATA / name).read_text())


@pytest.fixture(scope="module")
def metrics() -> pd.DataFrame:
    return aws.read_metric_data(PAGES, queries=QUERIES)


def value(df: pd.DataFrame, vid: str, metric: str, minute: int) -> float:
    row = df[(df.volume_id == vid) & (df.metric == metric) & (df.timestamp == T0 + pd.Timedelta(minutes=minute))]
    assert row.shape[0] == 1
    return float(row["value"].iloc[0])


# --- CloudWatch readers -----------------------------------------------------------------------


def test_get_metric_data_pages_with_queries(metrics):
    assert list(metrics.columns) == list(aws.COLUMNS)
    counts = metrics.groupby(["volume_id", "metric"]).size()
    assert counts[(DATA_VOL, "VolumeReadOps")] == 120
    assert counts[(DATA_VOL, "BurstBalance")] == 120
    assert counts[(LOGS_VOL, "VolumeReadOps")] == 118  # two missing datapoints
    assert value(metrics, DATA_VOL, "VolumeReadOps", 0) == 72_000
    assert value(metrics, DATA_VOL, "VolumeWriteBytes", 0) == 18_000 * 16384
    assert value(metrics, DATA_VOL, "BurstBalance", 60) == pytest.approx(20.0)
    bb = metrics[(metrics.volume_id == DATA_VOL) & (metrics.metric == "BurstBalance")]
    assert bb["timestamp"].is_monotonic_increasing  # the pages came newest first
    assert set(metrics["period_s"]) == {60.0}
    assert set(metrics.loc[metrics.metric == "VolumeReadBytes", "unit"]) == {"Bytes"}
    assert set(metrics.loc[metrics.metric == "BurstBalance", "stat"]) == {"Average"}


def test_the_same_data_from_labels_csv_and_statistics(metrics):
    # Labels "vol-... VolumeReadOps Sum 60", oldest first, one request for the two hours.
    pd.testing.assert_frame_equal(aws.read_metric_data(DATA / "cloudwatch-get-metric-data.labels.moto.json"), metrics)
    pd.testing.assert_frame_equal(aws.read_metrics_csv(DATA / "cloudwatch-metrics.moto.csv"), metrics)
    s = aws.read_metric_statistics(
        DATA / "cloudwatch-get-metric-statistics.moto.json",
        request=DATA / "cloudwatch-get-metric-statistics.request.json",
    )
    mine = metrics[(metrics.volume_id == DATA_VOL) & (metrics.metric == "VolumeReadOps")].reset_index(drop=True)
    pd.testing.assert_frame_equal(s, mine)


def test_the_frame_reads_back_from_its_own_csv(metrics, tmp_path):
    metrics.to_csv(tmp_path / "m.csv", index=False)
    pd.testing.assert_frame_equal(aws.read_metrics_csv(tmp_path / "m.csv"), metrics)


def test_pages_as_several_sources_and_the_cli_merge(metrics):
    pages = load(PAGES.name)
    pd.testing.assert_frame_equal(aws.read_metric_data(*pages, queries=QUERIES), metrics)
    # The CLI's auto-pagination concatenates the pages' MetricDataResults into one document.
    merged = {"MetricDataResults": [r for p in pages for r in p["MetricDataResults"]], "Messages": []}
    pd.testing.assert_frame_equal(
        aws.read_metric_data(merged, queries=load(QUERIES.name)["MetricDataQueries"]), metrics
    )


def test_label_keywords_fill_what_labels_leave_out():
    page = load("cloudwatch-get-metric-data.labels.moto.json")
    for r in page["MetricDataResults"]:
        r["Label"] = r["Label"].rsplit(" ", 2)[0]  # "vol-... VolumeReadOps": no statistic, no period
    with pytest.raises(ValueError, match=r"nor a query says the stat: pass queries= .* or stat="):
        aws.read_metric_data(page)
    for r in page["MetricDataResults"]:
        r["Label"] = r["Label"] + " Sum"
    with pytest.raises(ValueError, match=r"nor a query says the period"):
        aws.read_metric_data(page)
    with pytest.raises(ValueError, match=r"says 'Sum', but stat='Average'"):
        aws.read_metric_data(page, stat="Average", period=60)


def test_real_aws_cli_examples_are_not_volume_metrics():
    # aws-cli's get-metric-data example: metric math over AWS/EC2 ("Avg Total IOPS").
    with pytest.raises(ValueError, match=r"the Label 'Avg Total IOPS' does not name one volume metric"):
        aws.read_metric_data(load("cloudwatch-get-metric-data.awscli-examples.json")[0])
    # aws-cli's get-metric-statistics example: CPUUtilization of an instance, unsorted.
    with pytest.raises(ValueError, match=r"'CPUUtilization' is not an EBS volume metric"):
        aws.read_metric_statistics(
            DATA / "cloudwatch-get-metric-statistics.awscli-example.json", volume_id="vol-0123abcd", period=3600
        )


# --- EC2 readers ------------------------------------------------------------------------------


def test_describe_volumes_from_moto():
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.moto.json")
    assert len(vols) == 8  # seven created, plus the instance's root volume
    data, logs = vols[DATA_VOL], vols[LOGS_VOL]
    assert (data.type, data.size_gib, data.baseline_iops) == ("gp2", 100.0, 300.0)  # 3 x 100
    assert (logs.type, logs.max_iops, logs.max_throughput_mib_s) == ("gp3", 4000.0, 250.0)
    assert vols[IDS["db"]].max_iops == 5000.0 and vols[IDS["db2"]].max_iops == 20000.0
    assert [vols[IDS[n]].type for n in ("scan", "cold", "old")] == ["st1", "sc1", "standard"]


def test_describe_volumes_real_examples():
    # aws-cli: two gp2 volumes reporting their baseline as Iops: 8 GiB -> max(24, 100) = 100, 100 GiB -> 300.
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.awscli-example.json")
    assert {k: (v.type, v.size_gib, v.baseline_iops) for k, v in vols.items()} == {
        "vol-049df61146c4d7901": ("gp2", 8.0, 100.0),
        "vol-1234567890abcdef0": ("gp2", 100.0, 300.0),
    }
    old = aws.read_volumes(DATA / "ec2-describe-volumes.botocore-example.json")  # 2016: no Iops at all
    assert old["vol-049df61146c4d7901"].type == "standard"


def test_describe_volumes_bad_input():
    doc = load("ec2-describe-volumes.awscli-example.json")
    bad = copy.deepcopy(doc)
    bad["Volumes"][1]["Iops"] = 3000  # gp2 reports its baseline, 300 for 100 GiB
    with pytest.raises(
        ValueError, match=r"Volumes\[1\] \(vol-1234567890abcdef0\): Iops=3000 but a 100 GiB gp2 .* 300 IOPS"
    ):
        aws.read_volumes(bad)
    moto_doc = load("ec2-describe-volumes.moto.json")
    io1 = copy.deepcopy(moto_doc)
    k = next(i for i, v in enumerate(io1["Volumes"]) if v["VolumeType"] == "io1")
    del io1["Volumes"][k]["Iops"]
    with pytest.raises(ValueError, match=r"no Iops: an io1 volume's provisioned IOPS are required"):
        aws.read_volumes(io1)
    gp3 = copy.deepcopy(moto_doc)
    k = next(i for i, v in enumerate(gp3["Volumes"]) if v["VolumeType"] == "gp3")
    gp3["Volumes"][k]["Size"] = 1  # 4,000 IOPS need at least 8 GiB (500 per GiB)
    with pytest.raises(ValueError, match=rf"\({LOGS_VOL}\): iops=4000 exceeds gp3's limit of 500 IOPS per GiB"):
        aws.read_volumes(gp3)
    with pytest.raises(ValueError, match=r"VolumeType='gp9' is not one of"):
        aws.read_volumes({"Volumes": [{"VolumeId": "vol-0a", "VolumeType": "gp9", "Size": 1}]})
    with pytest.raises(ValueError, match=r"the volume is listed twice"):
        aws.read_volumes(doc, doc)
    with pytest.raises(ValueError, match=r"Size=0 must be a positive whole number"):
        aws.read_volumes({"Volumes": [{"VolumeId": "vol-0a", "VolumeType": "gp2", "Size": 0}]})


def test_describe_instances():
    att = aws.read_instances(DATA / "ec2-describe-instances.moto.json")
    assert att[DATA_VOL].instance_type == "m5.large" and att[DATA_VOL].device == "/dev/sdf"
    assert att[LOGS_VOL].instance_id == att[DATA_VOL].instance_id
    doc = load("ec2-describe-instances.moto.json")
    other = copy.deepcopy(doc["Reservations"][0])
    other["Instances"][0]["InstanceId"] = "i-0other"
    doc["Reservations"].append(other)
    with pytest.raises(ValueError, match=r"is attached to i-0other and to .*Multi-Attach is not modelled"):
        aws.read_instances(doc)


# --- traces, replay, compare ------------------------------------------------------------------


def test_traces_gaps(metrics):
    with pytest.raises(
        ValueError,
        match=rf"{LOGS_VOL}: VolumeReadOps has no value for 2 of 120 periods of 60 s, the first at 2024-05-01 01:30",
    ):
        aws.traces(metrics)
    t = aws.traces(metrics, gaps="zero")
    assert list(t) == [DATA_VOL, LOGS_VOL]
    assert t[LOGS_VOL].ops[89:93].tolist() == [120_000, 0, 0, 120_000]
    assert aws.traces(metrics, gaps="interpolate")[LOGS_VOL].ops[90] == 120_000
    d = t[DATA_VOL]
    assert (d.dt, d.start, d.n_steps) == (60.0, T0, 120)
    assert d.ops[0] == 90_000 and d.read_ops[0] == 72_000 and d.ops[60] == 12_000
    fine = aws.traces(metrics, gaps="zero", dt=1)[DATA_VOL]
    assert fine.n_steps == 7200 and fine.ops[0] == 1500  # 90,000 / 60


def test_replay_and_compare_reproduce_the_measured_balance(metrics):
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.moto.json")
    att = aws.read_instances(DATA / "ec2-describe-instances.moto.json")
    res = aws.replay(metrics, vols, att, gaps="zero")
    data = res[DATA_VOL]
    assert data.dt_s == 60.0 and data.cliff_time_s is None
    pct = data.burst_balance_pct
    assert pct[59] == pytest.approx(20.0)  # end of 00:59
    assert pct[119] == pytest.approx(20.0 + 60 * 6000 / 54_000)  # 26.667
    assert set(data.bound) == {0}  # neither the volumes nor m5.large (3,500 of 3,600 IOPS) throttle
    df = data.to_pandas()
    assert df.index[0] == T0 and df["read_iops"].iloc[0] == pytest.approx(1200.0)
    assert df["write_mib_s"].iloc[0] == pytest.approx(300 * 16384 / 2**20)  # 4.6875
    c = aws.compare(data, metrics, DATA_VOL)
    assert c.burst_balance_rmse_pp == pytest.approx(0.0, abs=1e-9)
    assert c.errors.loc["burst_balance_pct", "periods"] == 120
    assert c.errors.loc["iops", "rmse"] == pytest.approx(0.0, abs=1e-9)
    assert c.frame["measured_iops"].iloc[0] == 1500.0 and c.frame["measured_idle_time_s"].iloc[60] == 30.0
    assert c.frame["measured_queue_length"].iloc[0] == pytest.approx(0.8)
    fig = c.plot()
    assert len(fig.axes) == 3
    logs = aws.compare(res[LOGS_VOL], metrics, LOGS_VOL)
    assert logs.burst_balance_rmse_pp is None  # gp3 has no bucket, CloudWatch no BurstBalance
    assert np.isnan(logs.frame["measured_iops"].iloc[90])  # the missing datapoint stays missing
    assert logs.errors.loc["iops", "periods"] == 118


def test_replay_from_a_given_balance(metrics):
    # Starting at 50 % (2.7e6 credits) the hour at 1,200 credits/s net runs dry at 2,250 s.
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.moto.json")
    res = aws.replay(metrics, vols, gaps="zero", initial_burst_balance=50)
    assert res[DATA_VOL].cliff_time_s == pytest.approx(2250.0)
    c = aws.compare(res[DATA_VOL], metrics, DATA_VOL)
    # measured 100 at 00:00 against 50 simulated: the comparison shows it
    assert c.frame["simulated_burst_balance_pct"].iloc[0] == pytest.approx(50.0)
    assert c.errors.loc["burst_balance_pct", "max_abs_error"] >= 50.0 - 1e-9


def test_compare_rmse_by_hand():
    # gp2 100 GiB at 1,500 IOPS: the balance at the start of minutes 0, 1, 2 is 100, 98.667,
    # 97.333 (1,200 x 60 = 72,000 credits = 1.333 % a minute). Measured 100, 98, 97: errors 0,
    # 0.667, 0.333; RMSE = sqrt((0 + 0.4444 + 0.1111) / 3) = 0.4303, bias 0.3333, max 0.6667.
    vid = "vol-0123abcd"
    rows = []
    for m in range(3):
        t = T0 + pd.Timedelta(minutes=m)
        for metric, unit, stat, v in (
            ("VolumeReadOps", "Count", "Sum", 90_000.0),
            ("VolumeWriteOps", "Count", "Sum", 0.0),
            ("VolumeReadBytes", "Bytes", "Sum", 90_000 * 4096.0),
            ("VolumeWriteBytes", "Bytes", "Sum", 0.0),
            ("BurstBalance", "Percent", "Average", [100.0, 98.0, 97.0][m]),
        ):
            rows.append((t, vid, metric, stat, 60.0, unit, v))
    metrics = aws.check_metrics(pd.DataFrame(rows, columns=list(aws.COLUMNS)))
    res = aws.replay(metrics, {vid: ebssim.gp2(100)})
    c = aws.compare(res[vid], metrics)
    assert list(c.frame["simulated_burst_balance_pct"]) == pytest.approx([100, 100 - 4 / 3, 100 - 8 / 3])
    e = c.errors.loc["burst_balance_pct"]
    assert e["rmse"] == pytest.approx(np.sqrt((0 + (2 / 3) ** 2 + (1 / 3) ** 2) / 3))  # 0.4303
    assert e["bias"] == pytest.approx(1 / 3) and e["max_abs_error"] == pytest.approx(2 / 3)
    # The same at one-second steps: the mean of each minute's 60 start-of-second balances,
    # 100 - 1,200 x (0 + ... + 59) / 60 / 54,000 = 100 - 0.6556 for the first minute.
    fine = aws.replay(metrics, {vid: ebssim.gp2(100)}, dt=1)[vid]
    c1 = aws.compare(fine, metrics)
    assert c1.frame["simulated_burst_balance_pct"].iloc[0] == pytest.approx(100 - 1200 * 29.5 / 54_000)
    assert "RMSE" in repr(c1)
    idle = metrics.iloc[:1].assign(metric="VolumeIdleTime", unit="Seconds", value=12.0)
    only_idle = aws.compare(res[vid], idle)
    assert list(only_idle.frame.columns) == ["measured_idle_time_s"] and only_idle.errors.shape[0] == 0
    with pytest.raises(ValueError, match=r"nothing to plot"):
        only_idle.plot()


def test_compare_needs_wall_clock_and_a_volume(metrics):
    plain = ebssim.simulate(ebssim.gp2(100), ebssim.OpenLoop.constant(10, "4k", 120))
    with pytest.raises(ValueError, match=r"no wall-clock time"):
        aws.compare(plain, metrics, DATA_VOL)
    with pytest.raises(ValueError, match=r"metrics hold 2 volumes .*: pass volume_id="):
        aws.compare(plain, metrics)
    with pytest.raises(ValueError, match=r"metrics hold nothing for 'vol-0ff'"):
        aws.compare(plain, metrics, "vol-0ff")


# --- bad input (issue 10, item 9) --------------------------------------------------------------


def page_with(edit):
    page = load("cloudwatch-get-metric-data.labels.moto.json")
    edit(page["MetricDataResults"][0])
    return page


def swap(r):
    r["Timestamps"][3], r["Timestamps"][4] = r["Timestamps"][4], r["Timestamps"][3]


def dup(r):
    r["Timestamps"][4] = r["Timestamps"][3]


def negative(r):
    r["Values"][5] = -1.0


def nan(r):
    r["Values"][5] = float("nan")


def text(r):
    r["Values"][5] = "12"


@pytest.mark.parametrize(
    "edit, message",
    [
        (swap, r"out of order \(neither oldest nor newest first\)"),
        (dup, r"the timestamp 2024-05-01 00:03:00\+00:00 appears twice"),
        (negative, r"at 2024-05-01 00:05:00\+00:00: VolumeReadOps is -1.0; .* finite number >= 0"),
        (nan, r"at 2024-05-01 00:05:00\+00:00: VolumeReadOps is nan"),
        (text, r"value '12' is not a number"),
    ],
)
def test_bad_datapoints(edit, message):
    with pytest.raises(ValueError, match=message):
        aws.read_metric_data(page_with(edit))


def test_bad_pages(metrics):
    pages = load(PAGES.name)
    with pytest.raises(ValueError, match=r"the timestamp 2024-05-01 00:39:00\+00:00 appears twice"):
        aws.read_metric_data(pages[0], pages[0], queries=QUERIES)  # the same page twice
    labelled = load("cloudwatch-get-metric-data.labels.moto.json")
    again = dict(labelled["MetricDataResults"][0], Id="again")
    labelled["MetricDataResults"].append(again)
    with pytest.raises(ValueError, match=rf"\(Id 'again'\): {DATA_VOL} VolumeReadOps Sum is also the result of"):
        aws.read_metric_data(labelled)
    last = copy.deepcopy(pages)
    last[-1]["NextToken"] = "more"
    with pytest.raises(ValueError, match=r"the last page has a NextToken"):
        aws.read_metric_data(last, queries=QUERIES)
    partial = copy.deepcopy(pages)
    partial[-1]["MetricDataResults"][0]["StatusCode"] = "PartialData"
    with pytest.raises(ValueError, match=r"its last result is 'PartialData', not Complete: a page is missing"):
        aws.read_metric_data(partial, queries=QUERIES)
    with pytest.raises(ValueError, match=r"not among the queries' Ids"):
        aws.read_metric_data(pages, queries=load(QUERIES.name)["MetricDataQueries"][:3])


def test_query_units_and_namespaces():
    q = load(QUERIES.name)
    q["MetricDataQueries"][2]["MetricStat"]["Unit"] = "Kilobytes"  # VolumeReadBytes is in Bytes
    with pytest.raises(ValueError, match=r"VolumeReadBytes is in 'Kilobytes', but CloudWatch reports it in 'Bytes'"):
        aws.read_metric_data(PAGES, queries=q)
    q = load(QUERIES.name)
    q["MetricDataQueries"][0]["MetricStat"]["Metric"]["Namespace"] = "AWS/EC2"
    with pytest.raises(ValueError, match=r"namespace 'AWS/EC2'; ebssim reads AWS/EBS"):
        aws.read_metric_data(PAGES, queries=q)
    q = load(QUERIES.name)
    del q["MetricDataQueries"][0]["MetricStat"]["Period"]
    with pytest.raises(ValueError, match=r"MetricStat has no Period"):
        aws.read_metric_data(PAGES, queries=q)


def test_statistics_without_unit_or_period():
    out = load("cloudwatch-get-metric-statistics.moto.json")
    req = DATA / "cloudwatch-get-metric-statistics.request.json"
    with pytest.raises(ValueError, match=r"has no period: pass period="):
        aws.read_metric_statistics(out, volume_id=DATA_VOL)
    with pytest.raises(ValueError, match=r"does not name the volume"):
        aws.read_metric_statistics(out, period=60)
    no_unit = copy.deepcopy(out)
    del no_unit["Datapoints"][7]["Unit"]
    with pytest.raises(ValueError, match=r"Datapoints\[7\]: VolumeReadOps has no unit; CloudWatch reports it in Count"):
        aws.read_metric_statistics(no_unit, request=req)
    twice = copy.deepcopy(out)
    twice["Datapoints"].append(twice["Datapoints"][0])
    with pytest.raises(ValueError, match=r"the timestamp 2024-05-01 00:00:00\+00:00 appears twice"):
        aws.read_metric_statistics(twice, request=req)
    # unsorted datapoints are fine (the aws-cli example is unsorted): sorted on reading
    shuffled = copy.deepcopy(out)
    shuffled["Datapoints"].reverse()
    assert aws.read_metric_statistics(shuffled, request=req)["timestamp"].is_monotonic_increasing


def test_csv_without_unit_or_period(tmp_path):
    lines = (DATA / "cloudwatch-metrics.moto.csv").read_text().splitlines()
    head, rows = lines[0], lines[1:]
    no_unit = tmp_path / "no_unit.csv"
    no_unit.write_text("\n".join([head, rows[0].replace(",Count,", ",,"), *rows[1:5]]) + "\n")
    with pytest.raises(ValueError, match=r"row 2 has no unit; every datapoint needs its unit and period"):
        aws.read_metrics_csv(no_unit)
    no_period = tmp_path / "no_period.csv"
    cols = head.split(",")
    keep = [i for i, c in enumerate(cols) if c != "Period"]
    no_period.write_text("\n".join(",".join(r.split(",")[i] for i in keep) for r in lines[:5]) + "\n")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['period_s'\]"):
        aws.read_metrics_csv(no_period)


def test_mixed_periods_missing_metrics_and_undescribed_volumes(metrics):
    five = metrics[metrics.volume_id == LOGS_VOL].assign(period_s=300.0)
    with pytest.raises(ValueError, match=r"metrics mix periods \(60 s: .*; 300 s: .*\)"):
        aws.traces(pd.concat([metrics[metrics.volume_id == DATA_VOL], five]))
    with pytest.raises(ValueError, match=rf"{DATA_VOL} has no VolumeWriteBytes \(Sum\)"):
        aws.traces(metrics[metrics.metric != "VolumeWriteBytes"])
    avg = metrics.copy()
    avg.loc[avg.metric == "VolumeReadOps", "stat"] = "Average"
    with pytest.raises(ValueError, match=r"VolumeReadOps has the statistic\(s\) \['Average'\] but not Sum"):
        aws.traces(avg)
    vols = aws.read_volumes(DATA / "ec2-describe-volumes.moto.json")
    del vols[LOGS_VOL]
    with pytest.raises(ValueError, match=rf"metrics of {LOGS_VOL}, which the described volumes do not list"):
        aws.replay(metrics, vols, gaps="zero")
    late = metrics[~((metrics.metric == "BurstBalance") & (metrics.timestamp == T0))]
    with pytest.raises(ValueError, match=r"BurstBalance \(Average\) has no datapoint at the trace's start"):
        aws.replay(late, aws.read_volumes(DATA / "ec2-describe-volumes.moto.json"), gaps="zero")
    with pytest.raises(ValueError, match=r"initial_burst_balance='half' must be"):
        aws.replay(metrics, vols, initial_burst_balance="half")


# --- the metrics DataFrame by hand: COLUMNS and a wide frame ------------------------------------


def test_columns_select_the_metrics_frame(metrics):
    # A list, as pandas takes a selection of columns (a tuple is one column's key).
    picked = metrics.assign(extra=1)[aws.COLUMNS]
    assert list(picked.columns) == list(metrics.columns)


def _wide(metrics: pd.DataFrame, vid: str) -> pd.DataFrame:
    """One volume's datapoints as a notebook holds them: a column per metric, rows by time."""
    mine = metrics[metrics.volume_id == vid]
    wide = mine.pivot(index="timestamp", columns="metric", values="value")
    wide.columns.name, wide.index.name = None, None
    return wide


def test_metrics_from_a_wide_frame_are_the_readers(metrics):
    stats = metrics.groupby("metric")["stat"].unique()
    assert all(len(s) == 1 for s in stats)  # one statistic per metric in the fixture
    for vid in (DATA_VOL, LOGS_VOL):
        # LOGS_VOL's two missing minutes are NaN in the wide frame, and left out again.
        back = aws.metrics_from_wide(_wide(metrics, vid), vid, stat={m: s[0] for m, s in stats.items()})
        pd.testing.assert_frame_equal(back, metrics[metrics.volume_id == vid].reset_index(drop=True))
    both = pd.concat([_wide(metrics, v).assign(volume_id=v) for v in (DATA_VOL, LOGS_VOL)])
    pd.testing.assert_frame_equal(aws.metrics_from_wide(both, stat={m: s[0] for m, s in stats.items()}), metrics)
    # What advise and replay take: the same traces as from the readers.
    for vid, t in aws.traces(aws.metrics_from_wide(both), gaps="zero").items():
        assert t.ops.tolist() == aws.traces(metrics, gaps="zero")[vid].ops.tolist()


def test_metrics_from_a_wide_frame_by_hand():
    # Two minutes, a naive index (taken as UTC): BurstBalance is a level (Average), the ops a Sum.
    idx = pd.date_range("2024-05-01 00:00", periods=2, freq="1min")
    wide = pd.DataFrame({"VolumeReadOps": [600.0, 60.0], "BurstBalance": [100.0, np.nan]}, index=idx)
    m = aws.metrics_from_wide(wide, "vol-0abc")
    assert m[["metric", "stat", "period_s", "unit", "value"]].values.tolist() == [
        ["BurstBalance", "Average", 60.0, "Percent", 100.0],
        ["VolumeReadOps", "Sum", 60.0, "Count", 600.0],
        ["VolumeReadOps", "Sum", 60.0, "Count", 60.0],
    ]
    assert m["timestamp"].iloc[0] == T0
    assert aws.metrics_from_wide(wide.iloc[:1], "vol-0abc", period="5min")["period_s"].iloc[0] == 300.0
    for kwargs, message in [
        ({}, r"wide has no 'volume_id' column: pass volume_id="),
        ({"volume_id": "db"}, r"'db' is not a volume id"),
        ({"volume_id": "vol-0abc", "stat": "Median"}, r"stat 'Median' is not a CloudWatch statistic"),
        ({"volume_id": "vol-0abc", "stat": {"ReadOps": "Sum"}}, r"stat= names \['ReadOps'\], which are not"),
    ]:
        with pytest.raises(ValueError, match=message):
            aws.metrics_from_wide(wide, **kwargs)
    with pytest.raises(ValueError, match=r"\['read_ops'\] are not CloudWatch EBS metrics: .*rename"):
        aws.metrics_from_wide(wide.rename(columns={"VolumeReadOps": "read_ops"}), "vol-0abc")
    with pytest.raises(ValueError, match=r"BurstBalance is 120.0, above 100 percent"):
        aws.metrics_from_wide(wide.assign(BurstBalance=120.0), "vol-0abc")
    with pytest.raises(ValueError, match=r"index is a RangeIndex: it must be a DatetimeIndex"):
        aws.metrics_from_wide(wide.reset_index(drop=True), "vol-0abc")
    with pytest.raises(ValueError, match=r"volume vol-0abc: one row cannot tell the period"):
        aws.metrics_from_wide(wide.iloc[:1], "vol-0abc")
