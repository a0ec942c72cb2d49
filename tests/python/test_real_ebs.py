"""ebssim against real fio runs on real EBS volumes (issue 21; tests/data/real-ebs, scripts/accuracy.py).

One test per headline figure of the three PROVENANCE.md tables: the measured value read from the
raw file, ebssim's prediction through its fio front end, within the tolerance of the figure's class.
Figures that miss under today's model are ``xfail(strict=True)`` with their reason
(``KNOWN_MISSES`` in scripts/accuracy.py), so that one that starts to pass is noticed. Plus: the
fixtures are the unedited copies their checksums say, the measured values are PROVENANCE's
figures, every figure is compared or excluded with a reason, and docs/accuracy.md is up to date.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import ebssim
import ebssim.fio
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "real-ebs"


def _load_accuracy():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("accuracy", REPO / "scripts" / "accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["accuracy"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


accuracy = _load_accuracy()


def _param(fig):  # type: ignore[no-untyped-def]
    reason = accuracy.KNOWN_MISSES.get(fig.key)
    # the reason's title (before its first colon): the whole reason is in docs/accuracy.md
    marks = [pytest.mark.xfail(strict=True, reason=reason.split(":")[0])] if reason is not None else []
    return pytest.param(fig, id=fig.key, marks=marks)


@pytest.mark.parametrize("fig", [_param(f) for f in accuracy.FIGURES])
def test_figure_within_tolerance(fig) -> None:  # type: ignore[no-untyped-def]
    measured, predicted = accuracy.measured(fig), accuracy.predicted(fig)
    error = (predicted - measured) / measured
    tolerance = accuracy.TOLERANCE[fig.cls]
    assert abs(error) <= tolerance, (
        f"{fig.key} ({fig.label}): measured {measured:.6g}, predicted {predicted:.6g}, error {error:+.1%}, "
        f"tolerance {tolerance:.0%} ({accuracy.CLASS_NAMES[fig.cls]})"
    )


def test_accuracy_md_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "accuracy.md"
    assert accuracy.main(["--output", str(out)]) == 0
    assert out.read_text() == (REPO / "docs" / "accuracy.md").read_text(), (
        "docs/accuracy.md is out of date: run `make accuracy`"
    )


def test_fixtures_are_the_unedited_copies() -> None:
    lines = (DATA / "SHA256SUMS").read_text().splitlines()
    assert len(lines) == 37  # 3 PROVENANCE.md; 01: 3 files; 03: 2; 05: 28 JSON + setup-excerpts.txt
    for line in lines:
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


def test_every_headline_figure_is_compared_or_excluded() -> None:
    keys = [f.key for f in accuracy.FIGURES]
    assert len(keys) == len(set(keys))
    # 01: 24 runs, 8 of each rw. randwrite: IOPS, MiB/s, clat and lat means, p50/p90/p99 = 7;
    # randread: the device rate only = 1; randrw: the write direction's 7 + the device total = 8.
    # 03: 7 runs x 8 (with p99.9). 05: 28 runs (md0's 7 with them since issue 23) x 7 (p50, p99,
    # p99.9): 128 + 56 + 196 = 380.
    assert len(keys) == 8 * 7 + 8 * 1 + 8 * 8 + 7 * 8 + 28 * 7 == 380
    # Excluded: the 7 read figures of each 01 run that reads (8 randread + 8 randrw runs).
    assert len(accuracy.EXCLUDED) == 16 * 7
    assert not set(accuracy.EXCLUDED) & set(keys)
    assert all("read artefact of unwritten extents" in r for r in accuracy.EXCLUDED.values())
    # Every run is predicted: 05's md0 (a RAID-0 of two gp3) is a striped target since issue 23.
    assert accuracy.EXCLUDED_RUNS == {}
    assert {f.run.key for f in accuracy.FIGURES if f.run.key.startswith("05/md0/")} == {
        f"05/md0/{k}k-randwrite" for k in (4, 8, 16, 32, 64, 128, 256)
    }


def test_known_misses_are_figures_with_reasons() -> None:
    keys = {f.key for f in accuracy.FIGURES}
    assert set(accuracy.KNOWN_MISSES) <= keys
    assert all(reason.strip() for reason in accuracy.KNOWN_MISSES.values())


def test_tolerances_are_issue_21s() -> None:
    assert accuracy.TOLERANCE == {"rate": 0.10, "mean": 0.15, "pct": 0.30, "tail": 0.50}
    cls = {f.metric: f.cls for f in accuracy.FIGURES}
    assert cls["iops"] == cls["mib_s"] == cls["device_iops"] == cls["device_mib_s"] == "rate"
    assert cls["clat_mean"] == cls["lat_mean"] == "mean"
    assert cls["clat_p50"] == cls["clat_p90"] == "pct"
    assert cls["clat_p99"] == cls["clat_p99_9"] == "tail"


def _measured(key: str) -> float:
    return float(accuracy.measured(accuracy._figure(key)))


@pytest.mark.parametrize(
    "key, value, tol",
    [
        # PROVENANCE 01: `iops=3077` (fio floors 1000 x 554106 / 180054 = 3077.4)
        ("01/gp2-100/16k-randwrite/write/iops", 3077, 1),
        ("01/gp2-100/16k-randwrite/write/mib_s", 49239 / 1024, 1e-9),  # bw=49239KB/s
        ("01/gp2-100/16k-randwrite/write/lat_mean", 166.34, 1e-9),  # lat avg 166.34 msec
        ("01/gp2-100/16k-randwrite/write/clat_p99", 192, 1e-9),  # p99 192 msec
        # device IOPS (DERIVED): 553658 / 180.060 s = 3,075; (185098 + 370697) / 180.052 s = 3,087
        ("01/gp2-100/16k-randread/read/device_iops", 3075, 0.5),
        ("01/gp2-100/16k-randrw/total/device_iops", 3087, 0.5),
        # 1 MiB reads: 129567 x 128 KiB / 180.359 s = 89.8 MiB/s; randrw: 189159 x 128 KiB / 180.260 s = 131.2
        ("01/gp2-100/1m-randread/read/device_mib_s", 89.8, 0.05),
        ("01/gp2-100/1m-randrw/total/device_mib_s", 131.2, 0.05),
        ("01/io1-600/4k-randwrite/write/iops", 615, 1),  # iops=615
        # PROVENANCE 03: IOPS=40.1k, BW=626MiB/s, clat avg 398.38 usec, p99.9 1123 usec
        ("03/c6a/16k-randwrite/write/iops", 40100, 50),
        ("03/c6a/16k-randwrite/write/mib_s", 626, 1e-9),
        ("03/c6a/16k-randwrite/write/clat_mean", 0.39838, 1e-9),
        ("03/c6a/16k-randwrite/write/clat_p99_9", 1.123, 1e-9),
        ("03/m5a/16k-randread/read/clat_mean", 0.99472227, 1e-9),  # 994722.27 nsec
        # PROVENANCE 05: iops 4394.579590, MiB/s 17.2, lat.mean 58193.4, clat p99.9 218112 (usec)
        ("05/gp3-4000/4k-randwrite/write/iops", 4394.579590, 1e-6),
        ("05/gp3-4000/4k-randwrite/write/mib_s", 17.2, 0.05),
        ("05/gp3-4000/4k-randwrite/write/lat_mean", 58.1934, 1e-4),
        ("05/gp3-4000/4k-randwrite/write/clat_p99_9", 218.112, 1e-9),
        ("05/io2-16000/128k-randwrite/write/mib_s", 1319.7, 0.05),  # above r5b.large's 1,192 MiB/s
        # PROVENANCE 05, md0: iops 8780.27 at 4 KiB; 1316.7 MiB/s and lat.mean 48470.2 usec at 256 KiB
        ("05/md0/4k-randwrite/write/iops", 8780.27, 0.005),
        ("05/md0/256k-randwrite/write/mib_s", 1316.7, 0.05),
        ("05/md0/256k-randwrite/write/lat_mean", 48.4702, 1e-4),
    ],
)
def test_measured_values_are_provenances_figures(key: str, value: float, tol: float) -> None:
    assert _measured(key) == pytest.approx(value, abs=tol)


def test_setups_match_the_raw_files() -> None:
    """Every run's result is found at its line, and where the file shows the command, it is RUNS' command
    (measured_result raises otherwise); 05's commands are the JSON's job options."""
    for run in accuracy.RUNS:
        result = accuracy.measured_result(run)
        assert len(result.jobs) >= 1
    c6a = next(r for r in accuracy.RUNS if r.key == "03/c6a/16k-randwrite")
    # the published command, typographic dashes and all, is the one RUNS holds
    preamble = accuracy.measured_result(c6a).preamble
    assert "sudo fio \u2014directory=/mnt \u2014ioengine=psync" in preamble[-1] and "\u2014size=16K" in preamble[-1]
    assert "--size=16K" in c6a.cmd


def test_instances_hypervisors_in_the_catalog() -> None:
    assert ebssim.instance("c4.xlarge").nitro is False  # 01: Xen (devices xvdb, xvdc)
    for name in ("m5a.xlarge", "c6a.xlarge", "m6a.xlarge", "r6a.xlarge", "r5b.large"):
        assert ebssim.instance(name).nitro is True
    c4 = ebssim.instance("c4.xlarge")
    assert (c4.max_iops, c4.max_mb_s) == (6000, 93.75)  # PROVENANCE 01: 750 Mbps = 93.75 MB/s, 6,000 IOPS


def test_the_fio_front_end_applies_xen_limits() -> None:
    """io1 at 64,000 IOPS (1,280 GiB: 50 IOPS per GiB) on a Xen instance whose own budget is larger
    (m4.16xlarge: 65,000 IOPS, 1,250 MB/s) delivers 32,000, AWS's non-Nitro limit; 4 KiB x 32,000 =
    125 MiB/s binds nothing else."""
    run = "fio --name=x --filename=/dev/xvdf --rw=randread --bs=4k --ioengine=libaio --iodepth=64 --numjobs=4 --runtime=60 --time_based --group_reporting"  # noqa: E501
    assert ebssim.instance("m4.16xlarge").nitro is False
    volumes = dict([ebssim.fio.parse_volume_spec("/dev/xvdf=io1:size=1280,iops=64000")])
    job = ebssim.fio.predict([run], volumes, instance="m4.16xlarge", log_dir=None).jobs[0]
    assert job.iops == pytest.approx(32000, rel=1e-9)
    # the same on a Nitro instance with room for it (m5.24xlarge: 80,000 IOPS): the provisioned 64,000
    assert ebssim.instance("m5.24xlarge").nitro is True
    job = ebssim.fio.predict([run], volumes, instance="m5.24xlarge", log_dir=None).jobs[0]
    assert job.iops == pytest.approx(64000, rel=1e-9)
