"""ebssim.cost and ``ebssim cost``: AWS's list prices shipped with the package, and monthly costs
worked out by hand to the cent."""

from __future__ import annotations

import dataclasses
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
SOURCE = REPO / "scripts" / "data" / "ebs-calculator.2025-10-28.subset.json"
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


# botocore 1.43.11's partition "aws" (endpoints.json): every commercial region, 34.
COMMERCIAL = [
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
]


def test_coverage_and_date():
    assert cost.PRICES_AS_OF == "2025-10-28"
    assert cost.CURRENCY == "USD"
    assert len(COMMERCIAL) == 34
    assert sorted(cost.regions()) == COMMERCIAL
    doc = json.loads(SHIPPED.read_text())
    assert doc["regions_without_prices"] == {}
    # Every item in every region: io2's three tiers too (the 2023 list lacked io2 in five regions
    # and its third tier in three), and standard's storage and I/O requests.
    items = list(doc["units"])
    assert len(items) == 14
    for code in COMMERCIAL:
        assert list(cost.prices(code).items) == items, code


def test_new_regions_are_the_regions_not_their_local_zones():
    # The list also prices Local Zones named like the regions that opened after 2023: Taiwan
    # (Taipei) sells gp2 at 0.258 and has no gp3, the region Asia Pacific (Taipei) 0.108 and 0.0864.
    expected = {
        "ap-east-2": ("Asia Pacific (Taipei)", "0.108"),  # Local Zone Taiwan (Taipei): 0.258
        "ap-southeast-6": ("Asia Pacific (New Zealand)", "0.126"),  # New Zealand (Auckland): 0.228
        "ap-southeast-7": ("Asia Pacific (Thailand)", "0.108"),  # Thailand (Bangkok): 0.246
        "mx-central-1": ("Mexico (Central)", "0.105"),  # Mexico (Queretaro): 0.19
    }
    for code, (location, gp2) in expected.items():
        p = cost.prices(code)
        assert (p.location, format(p.items["gp2.storage"], "f")) == (location, gp2)
    locations = {cost.prices(code).location for code in COMMERCIAL}
    kept = set(json.loads(SOURCE.read_text())["regions"])
    for local_zone in ("Taiwan (Taipei)", "Thailand (Bangkok)", "New Zealand (Auckland)", "Mexico (Queretaro)"):
        assert local_zone not in locations and local_zone not in kept
    assert kept == locations
    # A Local Zone's code (Boston's) is not a region of the price list.
    with pytest.raises(ValueError, match=r"region 'us-east-1-bos-1' is not an AWS commercial region code"):
        cost.prices("us-east-1-bos-1")


def test_the_shipped_file_is_what_the_script_makes_of_its_source():
    spec = importlib.util.spec_from_file_location("make_prices", REPO / "scripts" / "make_prices.py")
    assert spec is not None and spec.loader is not None
    make_prices = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_prices)
    shipped = json.loads(SHIPPED.read_text())
    regions = {code: r["name"] for code, r in shipped["regions"].items()}
    regions.update(shipped["regions_without_prices"])
    assert make_prices.build([SOURCE], dict(sorted(regions.items()))) == shipped
    # AWS names io2's storage meter "... io2 GB month" since 2024 (the 2023 list also had "... GB Mo"):
    # both spellings are io2.storage, and two different prices for one item are an error.
    source = json.loads(SOURCE.read_text())
    # The kept part of the document is what --subset keeps of it (made so from the whole document).
    assert make_prices.subset(source, regions, "x.json") == source
    virginia = source["regions"]["US East (N. Virginia)"]
    assert "Storage Provisioned IOPS io2 GB month" in virginia and "Storage Provisioned IOPS io2 GB Mo" not in virginia
    virginia["Storage Provisioned IOPS io2 GB Mo"] = {"price": "0.2000000000"}
    with pytest.raises(ValueError, match=r"US East \(N. Virginia\): io2.storage: two prices, 0.125 and 0.2"):
        make_prices.from_metered(source, regions, "x.json")
    with pytest.raises(ValueError, match="expected an offer file"):
        make_prices.from_offer({"formatVersion": "v1.0"}, regions, "x.json")


def test_readme_states_where_the_prices_come_from():
    text = README.read_text()
    for path in (SHIPPED, SOURCE):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in text
    for fact in (
        "jimgarrett123/rosa-calculator",
        "78e72bb06fa2a6c03b04461d742a6b7bbffabdaa",
        "2025-10-28T17:54:55Z",
        # sha256 of the whole document the subset was cut from
        "022fcb976b65118a5e2c5f9395c2fed7c780b87679f29a39ca63351d2c43d80e",
    ):
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
        # Items new in the 2025-10-28 list. io2 in Cape Town (none in 2023): 1000 x 0.1642 = 164.20;
        # 32000 x 0.0856 = 2739.20 + 32000 x 0.0599 = 1916.80 + 6000 x 0.0419 = 251.40 -> 4907.40
        ("af-south-1", "io2:size=1000,iops=70000", 5071.60, (164.20, 4907.40, 0, 0)),
        # Cape Town's io1 and sc1, cut to 4 decimals since 2023 (0.16422, 0.08568, 0.019992):
        # 500 x 0.1642 = 82.10 + 20000 x 0.0856 = 1712.00; 500 x 0.0199 = 9.95
        ("af-south-1", "io1:size=500,iops=20000", 1794.10, (82.10, 1712.00, 0, 0)),
        ("af-south-1", "sc1:size=500", 9.95, (9.95, 0, 0, 0)),
        # Hyderabad's third io2 tier (none in 2023): 1000 x 0.131 = 131.00; 32000 x 0.068 = 2176.00
        # + 32000 x 0.0476 = 1523.20 + 6000 x 0.0333 = 199.80 -> 3899.00
        ("ap-south-2", "io2:size=1000,iops=70000", 4030.00, (131.00, 3899.00, 0, 0)),
        # UAE's tiers 2 and 3 (0.0554, 0.0388; 2023: 0.05544, 0.038808): 100 x 0.1518 = 15.18;
        # 32000 x 0.0792 = 2534.40 + 32000 x 0.0554 = 1772.80 + 6000 x 0.0388 = 232.80 -> 4540.00
        ("me-central-1", "io2:size=100,iops=70000", 4555.18, (15.18, 4540.00, 0, 0)),
        # Taipei (a region opened after 2023): 1000 x 0.0864 = 86.40 + 13000 x 0.0054 = 70.20
        # + 875 x 44.2368 / 1024 (= 0.0432) = 37.80
        ("ap-east-2", "gp3:size=1000,iops=16000,throughput=1000", 194.40, (86.40, 70.20, 37.80, 0)),
        # Mexico (Central) 100 x 0.105; Tel Aviv 500 x 0.06
        ("mx-central-1", "gp2:size=100", 10.50, (10.50, 0, 0, 0)),
        ("il-central-1", "st1:size=500", 30.00, (30.00, 0, 0, 0)),
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
    # Calgary (opened after 2023): 100 x 0.055 + 10,000,000 x 0.000000055
    c = cost.monthly_cost(ebssim.standard(100), "ca-west-1", io_requests_per_month=10_000_000)
    assert (c.monthly_usd, c.breakdown["storage"], c.breakdown["io_requests"]) == (6.05, 5.50, 0.55)
    with pytest.raises(ValueError, match="io_requests_per_month=-1"):
        cost.monthly_cost(ebssim.standard(100), "us-east-1", io_requests_per_month=-1)


# --- bad input ---


def test_unknown_region_suggests_close_names():
    with pytest.raises(
        ValueError, match=r"region 'us-east-3' is not an AWS commercial region code; did you mean .*us-east-1"
    ):
        cost.prices("us-east-3")


def test_region_opened_after_the_prices(monkeypatch):
    # The 2025-10-28 list prices every commercial region; a list that lacks one (as the 2023 list
    # lacked the seven regions opened since) names it in regions_without_prices.
    doc = dict(cost._document())
    regions = dict(doc["regions"])
    del regions["ca-west-1"]
    doc.update(regions=regions, regions_without_prices={"ca-west-1": "Canada West (Calgary)"})
    monkeypatch.setattr(cost, "_document", lambda: doc)
    with pytest.raises(ValueError, match=r"'ca-west-1' \(Canada West \(Calgary\)\) is not in the shipped price list"):
        cost.prices("ca-west-1")


def test_item_not_offered_in_a_region():
    # Every region has every item in the 2025-10-28 list; a region's prices without io2 (as Cape
    # Town's were in 2023) cannot price an io2 volume.
    p = cost.prices("af-south-1")
    without_io2 = dataclasses.replace(p, items={k: v for k, v in p.items.items() if not k.startswith("io2.")})
    with pytest.raises(ValueError, match=r"af-south-1 \(Africa \(Cape Town\)\) has no price for io2.storage"):
        cost.monthly_cost(ebssim.io2(100, 1000), without_io2)


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
        "prices_as_of": "2025-10-28",
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
        "eu-west-1 (EU (Ireland)), AWS list prices of 2025-10-28, USD per month",
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
