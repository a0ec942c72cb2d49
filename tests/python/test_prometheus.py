"""ebssim.prometheus against real Prometheus 2.42 / node_exporter 1.5.0 answers (tests/data/prometheus).

Every expected figure is worked out by hand from the values in the fixture JSON (quoted in the
comments); the fixtures were made by scripts/make_prometheus_fixtures.sh (see its README).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import ebssim.aws as aws
import pandas as pd
import pytest
from ebssim import prometheus

DATA = Path(__file__).resolve().parents[1] / "data" / "prometheus"
COUNTERS = DATA / "counters.json"
VOL = "vol-0123456789abcdef0"
T0 = pd.Timestamp(1796416880, unit="s", tz="UTC")  # the first sample of every series
STEP = pd.Timedelta(seconds=10)
NAMES = (
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_disk_read_bytes_total",
    "node_disk_written_bytes_total",
    "node_disk_io_time_weighted_seconds_total",
)


def _rates() -> pd.DataFrame:
    return pd.concat([prometheus.read_query_range(DATA / f"rate_{m}.json", metric=m) for m in NAMES])


def _value(metrics: pd.DataFrame, metric: str, t: pd.Timestamp) -> float:
    row = metrics[(metrics.metric == metric) & (metrics.timestamp == t)]
    assert row.shape[0] == 1, (metric, t)
    return float(row["value"].iloc[0])


def test_counter_samples() -> None:
    s = prometheus.read_query_range(COUNTERS)
    assert list(s.columns) == list(prometheus.SAMPLE_COLUMNS)
    assert set(s["metric"]) == set(NAMES) and set(s["kind"]) == {"counter"}
    assert set(s["device"]) == {"vda"} and set(s["instance"]) == {"127.0.0.1:9100"}
    reads = s[s.metric == "node_disk_reads_completed_total"]
    assert reads.shape[0] == 12  # 1796416880..1796416990 every 10 s
    assert reads["value"].iloc[0] == 934985.0 and reads["timestamp"].iloc[0] == T0


def test_counters_become_increases_per_step() -> None:
    m = prometheus.to_metrics(prometheus.read_query_range(COUNTERS), {"vda": VOL})
    assert list(m.columns) == list(aws.COLUMNS)
    assert set(m["period_s"]) == {10.0} and set(m["volume_id"]) == {VOL}
    # 12 samples -> 11 steps, stamped at the start of each: 880, 890, ..., 980.
    assert m[m.metric == "VolumeReadOps"].shape[0] == 11
    assert m["timestamp"].max() == T0 + 10 * STEP
    # reads 934985 -> 935577 -> 937247: 592, then 1670
    assert _value(m, "VolumeReadOps", T0) == 592.0
    assert _value(m, "VolumeReadOps", T0 + STEP) == 1670.0
    # writes 272554 -> 273706: 1152
    assert _value(m, "VolumeWriteOps", T0) == 1152.0
    # read bytes 14963373056 -> 14978323456: 14,950,400; written 57808084992 -> 58291625984: 483,540,992
    assert _value(m, "VolumeReadBytes", T0) == 14_950_400.0
    assert _value(m, "VolumeWriteBytes", T0) == 483_540_992.0
    # weighted I/O time 2124.293 -> 2130.506 s over 10 s: 0.6213 I/Os outstanding on average
    q = m[m.metric == "VolumeQueueLength"]
    assert set(q["stat"]) == {"Average"} and set(q["unit"]) == {"Count"}
    assert _value(m, "VolumeQueueLength", T0) == pytest.approx(0.6213, abs=1e-9)
    # the last step: reads 973683 at 990; the sample at 980 is read from the JSON
    doc = json.loads(COUNTERS.read_text())
    reads = next(r for r in doc["data"]["result"] if r["metric"]["__name__"] == "node_disk_reads_completed_total")
    assert reads["values"][-1] == [1796416990, "973683"]
    assert _value(m, "VolumeReadOps", T0 + 10 * STEP) == 973683.0 - float(reads["values"][-2][1])


def test_rates_times_the_step() -> None:
    s = _rates()
    assert set(s["kind"]) == {"rate"}
    m = prometheus.to_metrics(s, {"vda": VOL})
    # rate(reads[20s]) is 11.736422413793102/s at 880 and 42.68428063943162/s at 890: x 10 s,
    # the steps ending there, stamped 870 and 880
    assert _value(m, "VolumeReadOps", T0 - STEP) == pytest.approx(117.36422413793102, rel=1e-12)
    assert _value(m, "VolumeReadOps", T0) == pytest.approx(426.8428063943162, rel=1e-12)
    assert m[m.metric == "VolumeReadOps"].shape[0] == 12
    # the weighted I/O time's rate is already the mean queue length: not multiplied
    doc = json.loads((DATA / "rate_node_disk_io_time_weighted_seconds_total.json").read_text())
    first = float(doc["data"]["result"][0]["values"][0][1])
    assert _value(m, "VolumeQueueLength", T0 - STEP) == first


def test_counter_reset() -> None:
    # The real reads series with the counter restarted from 0 just after its 5th sample (index
    # 4): the samples from index 5 on read v[i] - v[4]. The increase over the reset step is the
    # new value, v[5] - v[4] (counted from 0), and the later ones are unchanged: the same metrics.
    doc = json.loads(COUNTERS.read_text())
    reset = copy.deepcopy(doc)
    for series in reset["data"]["result"]:
        if series["metric"]["__name__"] == "node_disk_reads_completed_total":
            v = [float(x[1]) for x in series["values"]]
            for i in range(5, len(v)):
                series["values"][i][1] = str(v[i] - v[4])
    a = prometheus.to_metrics(prometheus.read_query_range(doc), {"vda": VOL})
    b = prometheus.to_metrics(prometheus.read_query_range(reset), {"vda": VOL})
    pd.testing.assert_frame_equal(a, b)
    # samples joined in another order (pandas.concat of answers) give the same
    s = prometheus.read_query_range(doc)
    pd.testing.assert_frame_equal(prometheus.to_metrics(s.iloc[::-1], {"vda": VOL}), a)


def test_a_gap_in_the_counters_leaves_a_period_out() -> None:
    doc = json.loads(COUNTERS.read_text())
    for series in doc["data"]["result"]:
        del series["values"][3]  # no sample at 910: the steps 900-910 and 910-920 are unknown
    m = prometheus.to_metrics(prometheus.read_query_range(doc), {"vda": VOL}, step=10)
    stamps = set(m.loc[m.metric == "VolumeReadOps", "timestamp"])
    assert T0 + 2 * STEP not in stamps and T0 + 3 * STEP not in stamps and T0 + 4 * STEP in stamps
    with pytest.raises(ValueError, match="gaps"):
        aws.traces(m)
    ops = aws.traces(m, gaps="zero")[VOL].ops
    assert len(ops) == 11 and ops[2] == 0.0 and ops[3] == 0.0
    # the step 920-930: reads and writes of the samples at index 5 and 6 of the real series
    full = json.loads(COUNTERS.read_text())["data"]["result"]
    v = {r["metric"]["__name__"]: [float(x[1]) for x in r["values"]] for r in full}
    r, w = v["node_disk_reads_completed_total"], v["node_disk_writes_completed_total"]
    assert ops[4] == (r[5] - r[4]) + (w[5] - w[4])


def test_mapping() -> None:
    # node_disk_info of the fixture has no serial (a virtio disk): nothing maps
    assert prometheus.device_volumes(DATA / "disk_info.json") == {}
    # The same answer with vda's serial as a Nitro instance reports an EBS volume's
    doc = json.loads((DATA / "disk_info.json").read_text())
    doc["data"]["result"][0]["metric"]["serial"] = "vol0123456789abcdef0"
    assert prometheus.device_volumes(doc) == {("127.0.0.1:9100", "vda"): VOL}
    m = prometheus.to_metrics(prometheus.read_query_range(COUNTERS), prometheus.device_volumes(doc))
    assert set(m["volume_id"]) == {VOL}
    # an explicit mapping wins
    other = "vol-0fedcba9876543210"
    assert prometheus.device_volumes(doc, devices={("127.0.0.1:9100", "vda"): other}) == {
        ("127.0.0.1:9100", "vda"): other
    }
    assert prometheus.volume_id_of_serial("vol0123456789abcdef0") == VOL
    assert prometheus.volume_id_of_serial("QM00001") is None


def test_mapping_through_a_persistent_volume() -> None:
    from ebssim import k8s

    volumes = k8s.read_manifests(
        f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: gp3}}
provisioner: ebs.csi.aws.com
parameters: {{type: gp3}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv-data}}
spec:
  storageClassName: gp3
  capacity: {{storage: 100Gi}}
  csi: {{driver: ebs.csi.aws.com, volumeHandle: {VOL}}}
"""
    )
    assert list(volumes) == [VOL]
    m = prometheus.to_metrics(prometheus.read_query_range(COUNTERS), {"vda": VOL}, volumes=volumes)
    assert set(m["volume_id"]) == {VOL}
    with pytest.raises(ValueError, match=r"device='vda' is vol-0fedcba9876543210, which the volumes do not list"):
        prometheus.to_metrics(prometheus.read_query_range(COUNTERS), {"vda": "vol-0fedcba9876543210"}, volumes=volumes)


def test_replay_end_to_end_on_a_stated_volume() -> None:
    metrics = prometheus.to_metrics(prometheus.read_query_range(COUNTERS), {"vda": VOL})
    volumes = aws.read_volumes(
        {"Volumes": [{"VolumeId": VOL, "VolumeType": "gp3", "Size": 100, "Iops": 3000, "Throughput": 125}]}
    )
    r = aws.replay(metrics, volumes)[VOL]
    c = aws.compare(r, metrics)
    # first step: (592 reads + 1152 writes) / 10 s = 174.4 IOPS measured; far below 3,000
    # IOPS and 125 MiB/s (483,540,992 + 14,950,400 B / 10 s = 47.5 MiB/s), so all is served
    assert c.frame["measured_iops"].iloc[0] == pytest.approx(174.4)
    assert c.frame["simulated_iops"].iloc[0] == pytest.approx(174.4)
    assert float(c.errors.loc["iops", "rmse"]) == pytest.approx(0.0, abs=1e-6)
    assert "measured_queue_length" in c.frame
    # On an io1 volume provisioned at 200 IOPS, the busiest steps (1,431.6 IOPS measured at 20:42:10)
    # wait: it serves at most 200 IOPS, runs on after the trace, and serves all the I/Os in the end,
    # (973683 - 934985) reads + (307873 - 272554) writes = 38,698 + 35,319 = 74,017
    small = aws.read_volumes({"Volumes": [{"VolumeId": VOL, "VolumeType": "io1", "Size": 100, "Iops": 200}]})
    slow = aws.replay(metrics, small)[VOL]
    assert float(slow.iops.max()) <= 200.0 + 1e-9
    assert float((slow.iops * slow.dt_s).sum()) == pytest.approx(74_017.0)
    assert slow.finish_s > 110.0 and slow.overrun_s is not None and slow.overrun_s > 0


def test_errors() -> None:
    doc = json.loads(COUNTERS.read_text())
    vector = copy.deepcopy(doc)
    vector["data"]["resultType"] = "vector"
    with pytest.raises(ValueError, match=r"resultType='vector' must be 'matrix'"):
        prometheus.read_query_range(vector)
    with pytest.raises(ValueError, match=r"no __name__ label .*give its metric \(metric= in Python"):
        prometheus.read_query_range(DATA / "rate_node_disk_read_bytes_total.json")
    with pytest.raises(ValueError, match=r"metric='node_disk_io_now' is not a disk metric"):
        prometheus.read_query_range(COUNTERS, metric="node_disk_io_now")
    other = copy.deepcopy(doc)
    other["data"]["result"][0]["metric"]["__name__"] = "node_disk_io_now"
    with pytest.raises(ValueError, match=r"series 0: __name__='node_disk_io_now' is not a disk metric"):
        prometheus.read_query_range(other)
    failed = {"status": "error", "errorType": "bad_data", "error": "parse error"}
    with pytest.raises(ValueError, match=r"status='error' \('bad_data': 'parse error'\)"):
        prometheus.read_query_range(failed)
    bad = copy.deepcopy(doc)
    bad["data"]["result"][0]["values"][2][1] = "NaN"
    with pytest.raises(ValueError, match=r"series 0 \(.*device vda\) value 2: the value 'NaN' must be a finite"):
        prometheus.read_query_range(bad)
    s = prometheus.read_query_range(COUNTERS)
    with pytest.raises(ValueError, match=r"device='vda' \(instance 127.0.0.1:9100, .*\) has no volume"):
        prometheus.to_metrics(s, {})
    with pytest.raises(ValueError, match=r"devices\['vda'\]='vda0' must be an EBS volume id"):
        prometheus.device_volumes(devices={"vda": "vda0"})
    with pytest.raises(ValueError, match=r"devices\['vda'\]='pv/data' must be an EBS volume id"):
        prometheus.to_metrics(s, {"vda": "pv/data"})
    # a missing metric: the written bytes left out of the answer
    with pytest.raises(
        ValueError, match=r"device='vda' \(instance 127.0.0.1:9100\) has no node_disk_written_bytes_total"
    ):
        prometheus.to_metrics(s[s.metric != "node_disk_written_bytes_total"], {"vda": VOL})
    # the queue length alone is no demand, and aws.traces says which metrics a trace needs
    queue = prometheus.to_metrics(s[s.metric == "node_disk_io_time_weighted_seconds_total"], {"vda": VOL})
    with pytest.raises(ValueError, match=r"metrics hold none of VolumeReadOps"):
        aws.traces(queue)


def test_is_answer_tells_prometheus_from_cloudwatch(tmp_path: Path) -> None:
    assert prometheus.is_answer(COUNTERS) and prometheus.is_answer(DATA / "disk_info.json")
    assert prometheus.is_answer({"status": "error", "errorType": "bad_data", "error": "x"})  # a failed query
    aws_data = Path(__file__).resolve().parents[1] / "data" / "aws"
    assert not any(prometheus.is_answer(p) for p in aws_data.glob("*.json"))  # CloudWatch's, EC2's JSON
    assert not prometheus.is_answer(aws_data / "cloudwatch-metrics.moto.csv")
    assert not prometheus.is_answer(tmp_path / "nosuch.json")
    (tmp_path / "broken.json").write_text("{")
    assert not prometheus.is_answer(tmp_path / "broken.json")


def test_read_metrics_in_one_call() -> None:
    # The same datapoints as read_query_range + to_metrics, under any name: reads 934985 -> 935577
    m = prometheus.read_metrics(COUNTERS, devices={"vda": "data"})
    assert set(m["volume_id"]) == {"data"} and _value(m, "VolumeReadOps", T0) == 592.0
    assert prometheus.read_metrics(COUNTERS, devices={"vda": VOL}).equals(
        prometheus.to_metrics(prometheus.read_query_range(COUNTERS), {"vda": VOL})
    )
    # rate() answers as (metric, answer) pairs: the first rate sample, stamped a step earlier,
    # times the step
    rates = [(n, DATA / f"rate_{n}.json") for n in NAMES]
    r = prometheus.read_metrics(*rates, devices={("127.0.0.1:9100", "vda"): "data"})
    doc = json.loads((DATA / "rate_node_disk_reads_completed_total.json").read_text())
    t, v = doc["data"]["result"][0]["values"][0]
    assert _value(r, "VolumeReadOps", pd.Timestamp(t - 10, unit="s", tz="UTC")) == pytest.approx(float(v) * 10)
    with pytest.raises(ValueError, match=r"the devices are 'data', which the volumes do not list \(other\)"):
        prometheus.read_metrics(COUNTERS, devices={"vda": "data"}, volumes={"other": None})
    with pytest.raises(ValueError, match=r"devices\['vda'\]='' must be a volume id or name"):
        prometheus.read_metrics(COUNTERS, devices={"vda": ""})
    with pytest.raises(ValueError, match=r"a pair is \(metric, answer\)"):
        prometheus.read_metrics((COUNTERS,), devices={"vda": "data"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"no answer given"):
        prometheus.read_metrics(devices={"vda": "data"})
