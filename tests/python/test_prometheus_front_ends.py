"""Prometheus answers where CloudWatch metrics go: ``ebssim check`` (a ``prometheus`` workload)
and ``ebssim advise --metrics`` (told apart by content, devices mapped with ``--device`` and
``--disk-info``).

The answers are the real Prometheus 2.42 / node_exporter 1.5.0 ones of tests/data/prometheus
(scripts/make_prometheus_fixtures.sh). Their per-period increases (10 s steps), worked out from
the JSON's values, are the figures below:

    reads    592, 1670, 1535, 2540, 6652, 8017, 6760, 4308, 3295, 3309, 20
    writes  1152, 1770, 1743, 2988, 6413, 6299, 5897, 3123, 3065, 2781, 88
    I/Os    1744, 3440, 3278, 5528, 13065, 14316, 12657, 7431, 6360, 6090, 108   (74,017 in all)
    MiB/s   47.54, 29.26, 27.42, 23.94, 18.47, 24.09, 37.22, 10.35, 8.75, 18.37, 3.59
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from check_report import criterion_lines
from ebssim.check import PlanError, parse_plan, read_plan

ROOT = Path(__file__).resolve().parents[2]
PLANS = ROOT / "examples" / "plans"
DATA = ROOT / "tests" / "data" / "prometheus"
COUNTERS = DATA / "counters.json"
VOL = "vol-0123456789abcdef0"


# --- ebssim check --------------------------------------------------------------------------


def test_the_gp3_example_passes_with_status_0(cli):
    # The busiest 10 s ask for 14,316 / 10 = 1,431.6 IOPS and the busiest 47.5 MiB/s: below gp3's
    # 3,000 IOPS and 125 MiB/s, so nothing is held back and nothing waits.
    r = cli("check", str(PLANS / "prometheus-gp3.yaml"))
    assert r.returncode == 0, r.stderr
    got = criterion_lines(r.stdout)
    assert got["never throttled"] == "PASS never bound"
    assert got["backlog <= 0 I/Os"].startswith("PASS got 0 I/Os at most")
    assert "Prometheus metrics ../../tests/data/prometheus/counters.json" in r.stdout
    assert "11 steps of 10 s" in r.stdout and "7.402e+04 I/Os" in r.stdout  # 74,017


def test_the_io1_example_fails_with_status_1(cli):
    # io1 at 1,000 IOPS serves 10,000 I/Os a period. From period 4 (40 s) the demand exceeds it:
    # backlog 13,065 - 10,000 = 3,065; + 4,316 = 7,381; + 2,657 = 10,038; then it drains:
    # - 2,569 = 7,469 (period 7); - 3,640 = 3,829 (period 8); period 9 asks 6,090 + 3,829 =
    # 9,919 < 10,000. Bound in periods 4 to 8: 50 s of the 110 s (45 %), at 1,000 IOPS of
    # (13,065 + 14,316 + 12,657 + 7,431 + 6,360) / 50 = 1,077 arriving.
    r = cli("check", str(PLANS / "prometheus-io1-fails.yaml"))
    assert r.returncode == 1, r.stderr
    assert criterion_lines(r.stdout)["never throttled"] == "FAIL bound 50 s (45% of the run)"
    assert "the first from 40 s for 50 s, serving 1,000 IOPS of 1,077 arriving" in r.stdout


def _plan_text(workload: str, volumes: str = "data: gp3:size=100", criteria: str = "throttled_s: 0") -> str:
    return f"volumes:\n  {volumes}\nworkload:\n{workload}criteria:\n  {criteria}\n"


def test_devices_by_instance_by_id_and_by_serial(tmp_path):
    # The device of one node: INSTANCE: {DEVICE: VOLUME}.
    plan = parse_plan(
        _plan_text(f"  prometheus: {COUNTERS}\n  devices:\n    '127.0.0.1:9100': {{vda: data}}\n"),
        base_dir=tmp_path,
    )
    assert plan.run().exit_status == 0
    # A volume under its VolumeId, mapped by that id.
    plan = parse_plan(
        _plan_text(f"  prometheus: {COUNTERS}\n  devices: {{vda: {VOL}}}\n", volumes=f"{VOL}: gp3:size=100"),
        base_dir=tmp_path,
    )
    assert plan.run().exit_status == 0
    # node_disk_info with the serial a Nitro instance gives an EBS volume: its id without the dash.
    doc = json.loads((DATA / "disk_info.json").read_text())
    doc["data"]["result"][0]["metric"]["serial"] = VOL.replace("-", "")
    (tmp_path / "disk_info.json").write_text(json.dumps(doc))
    plan = parse_plan(
        _plan_text(
            f"  prometheus: [{COUNTERS}]\n  disk_info: disk_info.json\n", volumes=f"{VOL}: io1:size=100,iops=1000"
        ),
        base_dir=tmp_path,
    )
    o = plan.run()
    assert o.exit_status == 1  # io1 at 1,000 IOPS: bound 50 s, as in the example
    assert o.results[VOL].bound_s["volume_iops"] == pytest.approx(50.0)
    assert str(tmp_path / "disk_info.json") in plan.inputs


RATE_METRICS = (
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_disk_read_bytes_total",
    "node_disk_written_bytes_total",
)


def test_a_plan_takes_rate_answers_as_metric_equals_file(tmp_path):
    # rate() drops the metric name, so each answer comes as METRIC=FILE (as `advise --metrics`
    # takes it). The plan replays what ebssim.prometheus.read_metrics reads from the same pairs.
    from ebssim import prometheus

    pairs = [(m, str(DATA / f"rate_{m}.json")) for m in RATE_METRICS]
    listed = "".join(f"\n    - {m}={f}" for m, f in pairs)
    plan = parse_plan(_plan_text(f"  prometheus:{listed}\n  devices: {{vda: data}}\n"), base_dir=tmp_path)
    o = plan.run()
    assert o.exit_status == 0  # at most ~1,400 IOPS: below gp3's 3,000
    frame = prometheus.read_metrics(*pairs, devices={"vda": "data"})
    ops = frame[frame.metric.isin(["VolumeReadOps", "VolumeWriteOps"])].value.sum()
    r = o.results["data"]
    assert float((r.iops * r.dt_s).sum()) == pytest.approx(float(ops), rel=1e-9)
    assert set(plan.inputs) >= {f for _, f in pairs}
    # Without METRIC=, the error says how to give it.
    with pytest.raises(PlanError, match=r"METRIC=FILE in `ebssim advise --metrics` and check plans"):
        parse_plan(_plan_text(f"  prometheus: {pairs[0][1]}\n  devices: {{vda: data}}\n"), base_dir=tmp_path)


@pytest.mark.parametrize(
    "workload, volumes, expected",
    [
        (
            f"  prometheus: {COUNTERS}\n",
            "data: gp3:size=100",
            "workload: a prometheus workload maps its devices to the plan's volumes: give devices",
        ),
        (
            f"  prometheus: {COUNTERS}\n  devices: {{vda: nosuch}}\n",
            "data: gp3:size=100",
            "workload.devices.vda: 'nosuch' is not one of the plan's volumes (data)",
        ),
        (
            f"  prometheus: {COUNTERS}\n  devices: {{vda: 5}}\n",
            "data: gp3:size=100",
            "workload.devices.vda: 5 is a number: expected the plan volume's name or id",
        ),
        (
            f"  prometheus: {COUNTERS}\n  devices: {{vda: data}}\n  queries: q.json\n",
            "data: gp3:size=100",
            "workload.queries: is an option of metrics workloads, not of prometheus",
        ),
        (
            f"  metrics: {COUNTERS}\n  devices: {{vda: data}}\n",
            "data: gp3:size=100",
            "workload.devices: is an option of prometheus workloads, not of metrics",
        ),
        (
            f"  prometheus: {COUNTERS}\n  devices: {{nvme1n1: data}}\n",
            "data: gp3:size=100",
            "workload.prometheus: device='vda' (instance 127.0.0.1:9100, ",
        ),
        (
            f"  prometheus: {DATA / 'rate_node_disk_read_bytes_total.json'}\n  devices: {{vda: data}}\n",
            "data: gp3:size=100",
            "workload.prometheus: "
            + str(DATA / "rate_node_disk_read_bytes_total.json")
            + " series 0: the series has no __name__",
        ),
        (
            f"  prometheus: [{COUNTERS}, nosuch.json]\n  devices: {{vda: data}}\n",
            "data: gp3:size=100",
            "workload.prometheus[1]: ",
        ),
        (
            f"  prometheus: {COUNTERS}\n  devices: {{vda: data}}\n",
            "data: gp3:size=100\n  logs: gp3:size=100",
            "volumes.logs: the metrics hold no datapoint of volume 'logs' (they hold: data)",
        ),
    ],
)
def test_prometheus_plan_errors_name_the_key(cli, tmp_path, workload, volumes, expected):
    path = tmp_path / "plan.yaml"
    path.write_text(_plan_text(workload, volumes))
    with pytest.raises(PlanError) as e:
        read_plan(path)
    assert expected in str(e.value), str(e.value)
    r = cli("check", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"ebssim: error: {path}")


# --- ebssim advise --metrics -----------------------------------------------------------------


def test_advise_reads_a_prometheus_answer(cli):
    # gp2 100 GiB (300 IOPS baseline, burst 3,000, 128 MiB/s). Observed p99 over the 11 periods
    # (numpy's linear percentile: index 0.99 x 10 = 9.9 between the two largest):
    # IOPS 1,306.5 + 0.9 x (1,431.6 - 1,306.5) = 1,419.09; MiB/s 37.22 + 0.9 x (47.54 - 37.22) =
    # 46.51. Plus 20 %: 1,703 IOPS and 55.8 MiB/s, below gp3's included 3,000 and 125: the advice
    # is gp3 at its defaults, $8.00 a month against gp2's $10.00 (us-east-1: $0.08, $0.10 per GiB).
    args = ["advise", "--region", "us-east-1", "--metrics", str(COUNTERS), "--device", f"vda={VOL}"]
    r = cli(*args, "--output-format", "json", f"{VOL}=gp2:size=100")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)["volumes"][0]
    assert v["advice"] == "gp3:size=100,iops=3000,throughput=125"
    assert v["monthly_usd"] == {"current": 10.0, "defaults": 8.0, "advice": 8.0}
    assert "observed p99 1419 IOPS and 46.5 MiB/s, plus 20% headroom: 1703 IOPS, 55.8 MiB/s" in v["reason"]
    assert v["load"].startswith("metrics replayed (11 periods of 10 s)")
    # INSTANCE/DEVICE, and the serial of node_disk_info, map it the same way
    r2 = cli(*args[:-2], "--device", f"127.0.0.1:9100/vda={VOL}", "--output-format", "json", f"{VOL}=gp2:size=100")
    assert json.loads(r2.stdout)["volumes"][0]["reason"] == v["reason"]


def test_advise_reads_rate_answers_named_by_metric(cli):
    # rate(...[20s]) at step 10: each file names its metric (METRIC=FILE), as rate() drops it.
    names = [
        "node_disk_reads_completed_total",
        "node_disk_writes_completed_total",
        "node_disk_read_bytes_total",
        "node_disk_written_bytes_total",
    ]
    args = ["advise", "--region", "us-east-1", "--device", f"vda={VOL}", "--output-format", "json"]
    for n in names:
        args += ["--metrics", f"{n}={DATA / f'rate_{n}.json'}"]
    r = cli(*args, f"{VOL}=gp2:size=100")
    assert r.returncode == 0, r.stderr
    doc = json.loads((DATA / f"rate_{names[0]}.json").read_text())
    samples = len(doc["data"]["result"][0]["values"])  # each rate sample is one period's
    assert json.loads(r.stdout)["volumes"][0]["load"].startswith(f"metrics replayed ({samples} periods of 10 s)")


def test_advise_prometheus_errors(cli, tmp_path):
    base = ["advise", "--region", "us-east-1"]
    r = cli(*base, "--metrics", str(COUNTERS), f"{VOL}=gp2:size=100")
    assert r.returncode == 2 and "map them with --device DEVICE=ID or --disk-info FILE" in r.stderr
    r = cli(*base, "--device", f"vda={VOL}", f"{VOL}=gp2:size=100")
    assert r.returncode == 2 and "--device and --disk-info map the devices of Prometheus answers" in r.stderr
    r = cli(*base, "--metrics", str(COUNTERS), "--device", "vda", f"{VOL}=gp2:size=100")
    assert r.returncode == 2 and "--device 'vda': expected DEVICE=ID or INSTANCE/DEVICE=ID" in r.stderr
    r = cli(*base, "--metrics", str(COUNTERS), "--device", f"nvme1n1={VOL}", f"{VOL}=gp2:size=100")
    assert r.returncode == 2 and "device='vda' (instance 127.0.0.1:9100, " in r.stderr
    failed = tmp_path / "failed.json"
    failed.write_text('{"status": "error", "errorType": "bad_data", "error": "parse error"}')
    r = cli(*base, "--metrics", str(failed), "--device", f"vda={VOL}", f"{VOL}=gp2:size=100")
    assert r.returncode == 2 and "status='error' ('bad_data': 'parse error')" in r.stderr


def test_docs_prometheus_console_sample_prints_what_it_shows(capsys, monkeypatch, tmp_path):
    """The ``$ ebssim advise ...`` of docs/prometheus.md prints what the page shows (``...`` elides)."""
    import doctest
    import shlex

    from ebssim.cli import main

    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "docs" / "prometheus.md").read_text()
    blocks = re.findall(r"^```console\n\$ (ebssim .*?)\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) == 1
    line, expected = blocks[0]
    assert main(shlex.split(line)[1:]) == 0
    got = capsys.readouterr().out
    assert doctest.OutputChecker().check_output(expected, got, doctest.ELLIPSIS), got
