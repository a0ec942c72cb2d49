"""The instance catalog: the shipped CSV, the user's own describe-instance-types JSON, and
scripts/make_catalog.py that generates the CSV.

Documented values: shared docs/ebs-model.md §6 (table of examples, from AWS's user guide and
moto's DescribeInstanceTypes snapshot) and shared data/aws/README.md (counts).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ebssim import (
    Catalog,
    ClosedLoop,
    Instance,
    NoEbsLimitsWarning,
    Simulation,
    gp2,
    gp3,
    instance,
    load_catalog,
    simulate,
)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "aws"
M5_JSON = DATA / "ec2-describe-instance-types.m5.large.from-moto.json"
T2_JSON = DATA / "ec2-describe-instance-types.awscli-example.json"
SHIPPED_CSV = REPO / "bindings" / "python" / "ebssim" / "data" / "instance_types.csv"
MAKE_CATALOG = REPO / "scripts" / "make_catalog.py"
MOTO_JSON = DATA / "moto-instance_types.json.gz"  # moto 5.x snapshot, from shared data/aws


# --------------------------------------------------------------------------------------------
# The shipped catalog
# --------------------------------------------------------------------------------------------


def test_shipped_catalog_size():
    cat = load_catalog()
    assert load_catalog() is cat  # loaded once
    # moto's snapshot: 1,373 instance types, 1,354 with EbsOptimizedInfo, 19 "unsupported"
    assert len(cat) == 1373
    assert len(list(cat.names())) == 1354
    assert len(list(cat.names(ebs_optimized=False))) == 1373
    unsupported = {n for n in cat if cat[n].ebs_optimized_support == "unsupported"}
    assert len(unsupported) == 19
    assert {"t1.micro", "t2.micro", "m1.small", "c3.large", "i2.8xlarge"} <= unsupported
    # Hypervisor: xen 74; nitro 1,147 + 152 bare-metal types that report none (Nitro system)
    hv = [cat[n].hypervisor for n in cat]
    assert hv.count("xen") == 74
    assert hv.count("nitro") == 1147 + 152
    # 532 types have baseline < maximum (instance-level EBS burst)
    burst = [n for n in cat.names() if cat[n].baseline_iops < cat[n].max_iops or cat[n].baseline_mb_s < cat[n].max_mb_s]
    assert len(burst) == 532
    assert "shipped" in cat.source


# ebs-model.md §6: name, baseline MB/s, baseline IOPS, maximum MB/s, maximum IOPS, bursts
DOCUMENTED = [
    ("m5.large", 81.25, 3600, 593.75, 18750, True),  # 650 / 4,750 Mbps
    ("m5.xlarge", 143.75, 6000, 593.75, 18750, True),  # 1,150 / 4,750 Mbps
    ("c7g.16xlarge", 2500.0, 80000, 2500.0, 80000, False),  # 20,000 Mbps, same
    ("t3.micro", 10.875, 500, 260.625, 11800, True),  # 87 / 2,085 Mbps
    ("t3.medium", 43.375, 2000, 260.625, 11800, True),  # 347 / 2,085 Mbps
    ("m7i.large", 81.25, 3600, 1250.0, 40000, True),  # 650 / 10,000 Mbps
    ("c7g.large", 78.75, 3600, 1250.0, 40000, True),  # 630 / 10,000 Mbps
]


@pytest.mark.parametrize("name, base_mb_s, base_iops, max_mb_s, max_iops, bursts", DOCUMENTED)
def test_documented_rows(name, base_mb_s, base_iops, max_mb_s, max_iops, bursts):
    row = load_catalog()[name]
    assert row.hypervisor == "nitro"
    assert row.bare_metal is False
    assert row.ebs_optimized_support == "default"
    assert (row.baseline_iops, row.max_iops) == (base_iops, max_iops)
    assert (row.baseline_mb_s, row.max_mb_s) == (base_mb_s, max_mb_s)
    # MB/s are Mbps / 8 (decimal), e.g. 4,750 / 8 = 593.75
    inst = instance(name)
    assert isinstance(inst, Instance)
    assert (inst.name, inst.baseline_iops, inst.max_iops) == (name, base_iops, max_iops)
    assert (inst.baseline_mb_s, inst.max_mb_s) == (base_mb_s, max_mb_s)
    assert inst.nitro is True
    assert inst.burstable is bursts
    assert (inst.burst_s, inst.refill_s, inst.share) == (1800.0, 84600.0, "proportional")
    assert (inst.io_balance_pct, inst.byte_balance_pct) == (100.0, 100.0)


def test_documented_bandwidth_is_mb_s_times_8():
    # ebs-model.md §6 Mbps column: m5.large 650 / 4,750, t3.micro 87 / 2,085
    for name, base_mbps, max_mbps in (("m5.large", 650, 4750), ("t3.micro", 87, 2085), ("c7g.16xlarge", 20000, 20000)):
        row = load_catalog()[name]
        assert row.baseline_mb_s * 8 == base_mbps
        assert row.max_mb_s * 8 == max_mbps


def test_bare_metal_is_nitro():
    cat = load_catalog()
    metal = [n for n in cat if cat[n].bare_metal]
    assert len(metal) > 100  # 152 bare-metal types report no hypervisor
    assert all(cat[n].hypervisor == "nitro" for n in metal)
    assert instance("m5.metal").nitro is True


def test_shipped_csv_columns():
    with SHIPPED_CSV.open() as f:
        header = next(csv.reader(f))
    assert header == [
        "instance_type",
        "hypervisor",
        "bare_metal",
        "ebs_optimized_support",
        "baseline_iops",
        "max_iops",
        "baseline_throughput_mb_s",
        "max_throughput_mb_s",
        "max_ebs_attachments",
    ]
    # from_csv on the file's path reads the same catalog
    cat = Catalog.from_csv(SHIPPED_CSV)
    assert len(cat) == 1373
    assert cat["m5.large"] == load_catalog()["m5.large"]
    assert cat.source == str(SHIPPED_CSV)


# --------------------------------------------------------------------------------------------
# Unknown and non-EBS-optimized types
# --------------------------------------------------------------------------------------------


def test_unknown_type_suggests_close_names():
    with pytest.raises(ValueError, match=r"'m5\.lrage' is not in the catalog.*did you mean m5\.large"):
        instance("m5.lrage")
    with pytest.raises(ValueError, match=r"did you mean.*m7i\.large"):
        instance("m7i.lareg")
    with pytest.raises(ValueError, match=r"m5\.lrage"):
        Simulation([gp3(100)], instance="m5.lrage")
    with pytest.raises(KeyError, match=r"did you mean m5\.large"):
        load_catalog()["m5.lrage"]


def test_unknown_type_without_close_names():
    with pytest.raises(ValueError, match=r"'zzzzzzzz' is not in the catalog") as e:
        instance("zzzzzzzz")
    assert "did you mean" not in str(e.value)


def test_not_ebs_optimized():
    # The catalog has no limits for t2.micro, so there is no Instance to give ...
    assert load_catalog()["t2.micro"].ebs_optimized_support == "unsupported"
    with pytest.raises(ValueError, match=r"'t2\.micro' is not EBS-optimized.*unsupported.*simulate the volumes alone"):
        instance("t2.micro")
    # ... but a Simulation on it runs its volumes alone, and says so once.
    with pytest.warns(NoEbsLimitsWarning, match=r"'t2\.micro'.*no EBS limits.*simulated alone") as caught:
        sim = Simulation([gp3(100)], instance="t2.micro")
    assert len(caught) == 1
    assert sim.instance is None


# Every type in the shipped catalog without EbsOptimizedInfo (moto's snapshot): t1.micro,
# t2.*, m1.*, c3.*, i2.8xlarge, ...
UNSUPPORTED = sorted(n for n, r in load_catalog().items() if r.ebs_optimized_support == "unsupported")


def test_no_ebs_limits_warning_is_a_public_user_warning():
    import ebssim

    assert ebssim.NoEbsLimitsWarning is NoEbsLimitsWarning
    assert "NoEbsLimitsWarning" in ebssim.__all__
    assert issubclass(NoEbsLimitsWarning, UserWarning)


@pytest.mark.parametrize("name", ["t2.micro", "t1.micro", "m1.small", "c3.large", "i2.8xlarge"])
def test_unsupported_types_simulate_the_volume_alone(name):
    assert name in UNSUPPORTED
    # 100 GiB gp2 at queue depth 32 for 2,700 s, as without an instance: 3,000 IOPS until the
    # bucket empties at 5.4e6 / (3,000 - 300) = 2,000 s, then the 300 IOPS baseline.
    with pytest.warns(NoEbsLimitsWarning, match=re.escape(repr(name))) as caught:
        r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2700, instance=name)
    assert len(caught) == 1
    # The warning points at the caller's line, not into ebssim.
    assert caught[0].filename == __file__
    assert r.cliff_time_s == pytest.approx(2000.0)
    assert r.iops[0] == pytest.approx(3000.0)
    assert r.iops[-1] == pytest.approx(300.0)


def test_unsupported_type_run_has_no_instance_result():
    with pytest.warns(NoEbsLimitsWarning):
        sim = Simulation([gp3(100), gp3(100)], instance="t2.micro")
    # Two gp3 volumes at 3,000 IOPS each: no instance limit applies (a t2.micro has none published).
    run = sim.run([ClosedLoop(64, "16k")] * 2, 10)
    assert run.instance is None
    assert [float(r.mean_iops) for r in run] == pytest.approx([3000.0, 3000.0])


def test_every_unsupported_type_is_accepted_with_one_warning():
    assert len(UNSUPPORTED) == 19
    for name in UNSUPPORTED:
        with pytest.warns(NoEbsLimitsWarning) as caught:
            Simulation([gp3(100)], instance=name)
        assert len(caught) == 1, name


def test_unknown_type_is_still_an_error_not_a_warning():
    with pytest.raises(ValueError, match=r"'t2\.mikro' is not in the catalog.*did you mean t2\.micro"):
        Simulation([gp3(100)], instance="t2.mikro")


# --------------------------------------------------------------------------------------------
# The user's own describe-instance-types output
# --------------------------------------------------------------------------------------------


def test_from_describe_instance_types_m5_large():
    cat = Catalog.from_describe_instance_types(M5_JSON)
    assert list(cat) == ["m5.large"]
    assert cat.source == str(M5_JSON)
    assert cat["m5.large"] == load_catalog()["m5.large"]
    mine = cat.instance("m5.large")
    assert mine == instance("m5.large")
    # and it simulates like the shipped one: 18,750 IOPS while the balance lasts
    r = Simulation([gp3(100, iops=16000, throughput_mib_s=1000)] * 2, instance=mine).run(
        [ClosedLoop(256, "16k")] * 2, 5
    )
    assert r.instance.iops[0] == pytest.approx(18750.0)
    # overrides work as with instance()
    assert cat.instance("m5.large", burst_s=900).burst_s == 900


def test_from_describe_instance_types_accepts_parsed_document():
    doc = json.loads(M5_JSON.read_text())
    cat = Catalog.from_describe_instance_types(doc)
    assert cat["m5.large"] == load_catalog()["m5.large"]
    assert "describe-instance-types" in cat.source


def test_from_describe_instance_types_t2_micro():
    cat = Catalog.from_describe_instance_types(T2_JSON)
    assert list(cat) == ["t2.micro"]
    row = cat["t2.micro"]
    assert row.hypervisor == "xen"
    assert row.ebs_optimized_support == "unsupported"
    assert row.max_iops is None
    assert list(cat.names()) == []
    with pytest.raises(ValueError, match=r"'t2\.micro' is not EBS-optimized"):
        cat.instance("t2.micro")
    with pytest.raises(ValueError, match=rf"not in the catalog \({re.escape(str(T2_JSON))}\).*t2\.micro"):
        cat.instance("t2.micr")


def test_from_describe_instance_types_bare_metal_without_hypervisor():
    rec = json.loads(M5_JSON.read_text())["InstanceTypes"][0]
    rec = dict(rec, InstanceType="m5.metal", BareMetal=True)
    rec.pop("Hypervisor")
    cat = Catalog.from_describe_instance_types({"InstanceTypes": [rec]})
    assert cat["m5.metal"].hypervisor == "nitro"
    assert cat.instance("m5.metal").nitro is True


def test_truncated_json_names_the_file(tmp_path):
    bad = tmp_path / "describe.json"
    text = M5_JSON.read_text()
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=rf"{re.escape(str(bad))}: not valid JSON"):
        Catalog.from_describe_instance_types(bad)
    with pytest.raises(ValueError, match=re.escape(str(bad))):
        Catalog.from_describe_instance_types(str(bad))


def test_wrong_shape_names_the_file(tmp_path):
    other = tmp_path / "volumes.json"
    other.write_text(json.dumps({"Volumes": []}))
    with pytest.raises(ValueError, match=rf"{re.escape(str(other))}: expected aws ec2 describe-instance-types output"):
        Catalog.from_describe_instance_types(other)
    nameless = tmp_path / "nameless.json"
    nameless.write_text(json.dumps({"InstanceTypes": [{"EbsInfo": {}}]}))
    with pytest.raises(ValueError, match=rf"{re.escape(str(nameless))}: InstanceTypes\[0\]"):
        Catalog.from_describe_instance_types(nameless)
    with pytest.raises(ValueError, match="InstanceTypes"):
        Catalog.from_describe_instance_types({"InstanceTypes": "m5.large"})


# --------------------------------------------------------------------------------------------
# scripts/make_catalog.py
# --------------------------------------------------------------------------------------------


def _make_catalog(source: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(MAKE_CATALOG), str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


def _shipped_line(name: str) -> str:
    for line in SHIPPED_CSV.read_text().splitlines():
        if line.startswith(name + ","):
            return line
    raise AssertionError(f"{name} not in the shipped CSV")


def test_make_catalog_on_describe_output(tmp_path):
    out = tmp_path / "sub" / "instance_types.csv"
    p = _make_catalog(M5_JSON, out)
    assert "wrote 1 instance types" in p.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == SHIPPED_CSV.read_text().splitlines()[0]
    assert lines[1:] == [_shipped_line("m5.large")]
    assert Catalog.from_csv(out)["m5.large"] == load_catalog()["m5.large"]


def test_make_catalog_on_unsupported_type(tmp_path):
    out = tmp_path / "t2.csv"
    _make_catalog(T2_JSON, out)
    (row,) = list(csv.DictReader(out.read_text().splitlines()))
    assert row["instance_type"] == "t2.micro"
    assert row["hypervisor"] == "xen"
    assert row["ebs_optimized_support"] == "unsupported"
    assert row["max_iops"] == row["baseline_iops"] == ""
    cat = Catalog.from_csv(out)
    with pytest.raises(ValueError, match="not EBS-optimized"):
        cat.instance("t2.micro")


def test_make_catalog_reproduces_the_shipped_csv(tmp_path):
    out = tmp_path / "instance_types.csv"
    p = _make_catalog(MOTO_JSON, out)
    assert "wrote 1373 instance types" in p.stderr
    assert out.read_bytes() == SHIPPED_CSV.read_bytes()
