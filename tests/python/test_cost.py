"""ebssim.cost and ``ebssim cost``: AWS's list prices shipped with the package, and monthly costs
worked out by hand to the cent."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from decimal import Decimal
from pathlib import Path

import ebssim
import pytest
from ebssim import cost
from ebssim.fio import volume_from_spec, volume_spec

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "bindings" / "python" / "ebssim" / "data" / "ebs_prices.json"
SOURCE = REPO / "scripts" / "data" / "ebs-calculator.2023-02-16.subset.json"
README = REPO / "bindings" / "python" / "ebssim" / "data" / "README.md"


# --- the price data ---


def test_known_eu_west_1_prices():
    # The figures: gp2 $0.11/GB-month; gp3 $0.088/GB-month + $0.0055 per IOPS-month above
    # 3,000 + $0.044 per MiB/s-month above 125 (AWS lists $45.056 per GiB/s-month: / 1024).
    p = cost.prices("eu-west-1")
    assert p.items["gp2.storage"] == Decimal("0.11")
    assert p.items["gp3.storage"] == Decimal("0.088")
    assert p.items["gp3.iops"] == Decimal("0.0055")
    assert p.items["gp3.throughput"] / 1024 == Decimal("0.044")
    assert p.units["gp3.throughput"] == "GiBps-Mo"


def test_every_item_of_us_east_1():
    p = cost.prices("us-east-1")
    assert {k: format(v, "f") for k, v in p.items.items()} == {
        "gp2.storage": "0.1",
        "gp3.storage": "0.08",
        "gp3.iops": "0.005",
        "gp3.throughput": "40.96",
        "io1.storage": "0.125",
        "io1.iops": "0.065",
        "io2.storage": "0.125",
        "io2.iops.tier1": "0.065",
        "io2.iops.tier2": "0.0455",
        "io2.iops.tier3": "0.03185",
        "st1.storage": "0.045",
        "sc1.storage": "0.015",
        "standard.storage": "0.05",
        "standard.io_requests": "0.00000005",
    }


def test_coverage_and_date():
    assert cost.PRICES_AS_OF == "2023-02-16"
    assert cost.CURRENCY == "USD"
    assert len(cost.regions()) == 27
    doc = json.loads(SHIPPED.read_text())
    assert sorted(doc["regions_without_prices"]) == [
        "ap-east-2",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-west-1",
        "il-central-1",
        "mx-central-1",
    ]


def test_the_shipped_file_is_what_the_script_makes_of_its_source():
    spec = importlib.util.spec_from_file_location("make_prices", REPO / "scripts" / "make_prices.py")
    assert spec is not None and spec.loader is not None
    make_prices = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_prices)
    shipped = json.loads(SHIPPED.read_text())
    regions = {code: r["name"] for code, r in shipped["regions"].items()}
    regions.update(shipped["regions_without_prices"])
    assert make_prices.build([SOURCE], dict(sorted(regions.items()))) == shipped
    with pytest.raises(ValueError, match="expected an offer file"):
        make_prices.from_offer({"formatVersion": "v1.0"}, regions, "x.json")


def test_readme_states_where_the_prices_come_from():
    text = README.read_text()
    for path in (SHIPPED, SOURCE):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in text
    for fact in ("jimgarrett123/rosa-calculator", "3a214e4048b153275328a4ab10c0685d46fbf3c2", "2023-02-16T18:06:53Z"):
        assert fact in text


# --- monthly costs, by hand ---


@pytest.mark.parametrize(
    "region, spec, expected, breakdown",
    [
        # 2000 x 0.11
        ("eu-west-1", "gp2:size=2000", 220.00, (220.00, 0, 0, 0)),
        # 2000 x 0.088
        ("eu-west-1", "gp3:size=2000", 176.00, (176.00, 0, 0, 0)),
        # 176 + 3000 x 0.0055 + 125 x 0.044
        ("eu-west-1", "gp3:size=2000,iops=6000,throughput=250", 198.00, (176.00, 16.50, 5.50, 0)),
        # 176 + 4000 x 0.0055 + 175 x 0.044
        ("eu-west-1", "gp3:size=2000,iops=7000,throughput=300", 205.70, (176.00, 22.00, 7.70, 0)),
        # 1000 x 0.096 + 13000 x 0.006 + 875 x 49.152 / 1024 (= 0.048)
        ("ap-northeast-1", "gp3:size=1000,iops=16000,throughput=1000", 216.00, (96.00, 78.00, 42.00, 0)),
        # 100 x 0.0952 + 1 x 48.7424 / 1024 (= 0.0476): 9.5676 -> 9.57; throughput alone 0.05
        ("eu-central-1", "gp3:size=100,iops=3000,throughput=126", 9.57, (9.52, 0, 0.05, 0)),
        # 500 x 0.125 + 20000 x 0.065
        ("us-east-1", "io1:size=500,iops=20000", 1362.50, (62.50, 1300.00, 0, 0)),
        # 1000 x 0.125 + 32000 x 0.065 + 32000 x 0.0455 + 6000 x 0.03185
        ("us-east-1", "io2:size=1000,iops=70000", 3852.10, (125.00, 3727.10, 0, 0)),
        # exactly 32,000: tier 1 only
        ("us-east-1", "io2:size=100,iops=32000", 2092.50, (12.50, 2080.00, 0, 0)),
        ("us-east-1", "st1:size=500", 22.50, (22.50, 0, 0, 0)),
        ("us-east-1", "sc1:size=500", 7.50, (7.50, 0, 0, 0)),
    ],
)
def test_monthly_cost(region, spec, expected, breakdown):
    c = cost.monthly_cost(volume_from_spec(spec), region)
    assert c.monthly_usd == expected
    assert tuple(c.breakdown.values()) == breakdown
    assert list(c.breakdown) == ["storage", "iops", "throughput", "io_requests"]
    assert c.spec == volume_spec(volume_from_spec(spec))


def test_standard_io_requests():
    # 100 x 0.05 + 10,000,000 x $0.05 per million
    c = cost.monthly_cost(ebssim.standard(100), "us-east-1", io_requests_per_month=10_000_000)
    assert (c.monthly_usd, c.breakdown["io_requests"]) == (5.50, 0.50)
    with pytest.raises(ValueError, match="io_requests_per_month=-1"):
        cost.monthly_cost(ebssim.standard(100), "us-east-1", io_requests_per_month=-1)


# --- bad input ---


def test_unknown_region_suggests_close_names():
    with pytest.raises(
        ValueError, match=r"region 'us-east-3' is not an AWS commercial region code; did you mean .*us-east-1"
    ):
        cost.prices("us-east-3")


def test_region_opened_after_the_prices():
    with pytest.raises(ValueError, match=r"'ca-west-1' \(Canada West \(Calgary\)\) is not in the shipped price list"):
        cost.prices("ca-west-1")


def test_item_not_offered_in_a_region():
    # AWS's list of 2023-02-16 has no io2 in Cape Town.
    with pytest.raises(ValueError, match=r"af-south-1 \(Africa \(Cape Town\)\) has no price for io2.storage"):
        cost.monthly_cost(ebssim.io2(100, 1000), "af-south-1")


def test_not_a_volume():
    with pytest.raises(ValueError, match="must be an ebssim.Volume"):
        cost.monthly_cost("gp2:size=100", "us-east-1")  # type: ignore[arg-type]


# --- the spec helper the CLI shares with ebssim fio ---


def test_volume_from_spec_and_back():
    v = volume_from_spec("gp3:size=2000,iops=7000,throughput=300")
    assert (v.type, v.size_gib, v.baseline_iops, v.max_throughput_mib_s) == ("gp3", 2000, 7000, 300)
    assert volume_spec(v) == "gp3:size=2000,iops=7000,throughput=300"
    assert volume_spec(volume_from_spec("io1:size=100,iops=5000,latency_ms=1")) == "io1:size=100,iops=5000,latency_ms=1"
    with pytest.raises(ValueError, match=r"SPEC 'gp3:size=10,iops=6000': iops=6000 exceeds gp3's limit"):
        volume_from_spec("gp3:size=10,iops=6000")
    with pytest.raises(ValueError, match=r"SPEC 'gp3:sise=10': unknown key 'sise'"):
        volume_from_spec("gp3:sise=10")


# --- the command line ---


def test_cli_json(cli):
    r = cli(
        "cost",
        "--region",
        "eu-west-1",
        "--output-format",
        "json",
        "gp2:size=2000",
        "gp3:size=2000,iops=7000,throughput=300",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "region": "eu-west-1",
        "prices_as_of": "2023-02-16",
        "currency": "USD",
        "volumes": [
            {
                "spec": "gp2:size=2000",
                "monthly_usd": 220.0,
                "breakdown": {"storage": 220.0, "iops": 0.0, "throughput": 0.0, "io_requests": 0.0},
            },
            {
                "spec": "gp3:size=2000,iops=7000,throughput=300",
                "monthly_usd": 205.7,
                "breakdown": {"storage": 176.0, "iops": 22.0, "throughput": 7.7, "io_requests": 0.0},
            },
        ],
    }


def test_cli_normal(cli):
    r = cli("cost", "--region", "eu-west-1", "gp2:size=2000", "gp3:size=2000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "eu-west-1 (EU (Ireland)), AWS list prices of 2023-02-16, USD per month",
        "  gp2:size=2000      220.00  (storage 220.00)",
        "  gp3:size=2000      176.00  (storage 176.00)",
        "  total              396.00",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--region", "eu-wes-1", "gp2"], "region 'eu-wes-1' is not an AWS commercial region code; did you mean"),
        (["--region", "eu-west-1", "gp4:size=10"], "SPEC 'gp4:size=10': volume type 'gp4' is not one of"),
        (["--region", "eu-west-1", "gp3:size=ten"], "SPEC 'gp3:size=ten': size='ten' is not a number"),
    ],
)
def test_cli_errors(cli, args, message):
    r = cli("cost", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("ebssim: error: " + message)
    assert r.stderr.count("\n") == 1
