"""fit and advise for a striped set (issue 23 item 1): the levels are the set's, split into each
member's by the set's rule; the advice keeps N and the chunk and prices the members' sum."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import ebssim
import ebssim.fit
import pytest
from ebssim.advise import BatchJob, advise, modify_volume_plan
from ebssim.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real-ebs"
MD0 = next(REAL.glob("05_*")) / "raw" / "fio_results"
# The runs the members' limits hold: 4 ... 128 KiB. The 256 KiB run is held by the r5b.large's
# ceiling (~1,317 MiB/s for the set, PROVENANCE.md "How to read it"), not by the members.
MEMBER_BOUND = [MD0 / f"miztiik-automation-apps-{k}kb_16threads_md0_randwrite.log" for k in (4, 8, 16, 32, 64, 128)]


def test_fit_md0_gives_each_members_provisioned_iops() -> None:
    # PROVENANCE.md: md0 is mdadm RAID-0 (default chunk, 512 KiB) of two gp3 202 GiB, 4,000 IOPS,
    # 1,000 MiB/s. Every run's I/O (4 ... 128 KiB, aligned to its size) lies in one 512 KiB chunk:
    # 1 piece per set I/O, each member serves 1/2 of the set's I/Os. The reports' IOPS
    # (jobs[0].write.iops) 8,780.27, 8,272.82, 8,348.51, 8,301.35, 8,333.90, 8,313.87 are per
    # member 4,390.1, 4,136.4, 4,174.3, 4,150.7, 4,167.0, 4,156.9. The fit (reports only: one level
    # per run) takes the member's IOPS limit at the highest level, the 4 KiB run's 8,780.27 / 2 =
    # 4,390.1: (4,390.1 - 4,000) / 4,000 = 9.75 % above the provisioned 4,000, within
    # scripts/accuracy.py's 10 % for rates (the single gp3 of the same data set overshoots alike:
    # 4,394.6 at 4 KiB). Had the fit not split the levels, the member would be 8,780 IOPS (+120 %).
    # Throughput is not checked: no run reaches a member's 1,000 MiB/s (128 KiB: 4,156.9 x 128 KiB
    # = 519.6 MiB/s per member), so the fit can only say "at least 519.6".
    fit = ebssim.fit.fit(MEMBER_BOUND, type="gp3", size_gib=202, members=2, chunk_kib=512)
    assert fit.stripe is not None and fit.volume is not None
    assert fit.stripe.n == 2 and fit.stripe.chunk_kib == 512
    member_iops = fit.volume.baseline_iops
    assert member_iops == pytest.approx(8780.27 / 2, rel=1e-4)
    assert abs(member_iops - 4000) / 4000 <= 0.10
    # The set's figures are the members' sums: 2 x the member's IOPS.
    assert fit.stripe.max_iops == pytest.approx(2 * member_iops)
    # The result names the set in raid0 form, and the SPEC reads back as a striped set.
    spec = fit.spec()
    assert spec is not None and spec.startswith("raid0:chunk=512,members=2+gp3:size=202,")
    back = ebssim.stripes.target_from_spec(spec)
    assert isinstance(back, ebssim.StripedSet) and back.n == 2
    assert fit.to_dict()["members"] == 2 and fit.to_dict()["chunk_kib"] == 512
    assert "RAID-0 of 2 x gp3 202 GiB" in str(fit)


def test_fit_md0_predicts_with_the_set(tmp_path: Path) -> None:
    # The 64 KiB job of data set 05 on the fitted set: 256 set I/Os in flight, each 1 piece in
    # a 512 KiB chunk -> 128 on each member, each at the member's IOPS limit (64 KiB x ~4,196 =
    # 262 MiB/s, below 1,000): the set does 2 x the member's IOPS, 8,334 measured.
    fit = ebssim.fit.fit(MEMBER_BOUND, type="gp3", size_gib=202, members=2)
    assert fit.volume is not None
    job = tmp_path / "md0.fio"
    job.write_text(
        "[64kb_16threads]\nfilename=/dev/md0\ndirect=1\nioengine=libaio\niodepth=16\nrw=randwrite\nbs=64k\n"
        "size=1G\nnumjobs=16\ntime_based=1\nruntime=10\nnorandommap=1\ngroup_reporting=1\n"
    )
    pred = fit.predict(str(job), log_dir=str(tmp_path))
    iops = pred.to_json()["jobs"][0]["write"]["iops"]
    assert iops == pytest.approx(2 * fit.volume.baseline_iops, rel=0.02)
    assert abs(iops - 8333.90) / 8333.90 <= 0.10


def test_fit_splits_ios_larger_than_a_chunk() -> None:
    # With 64 KiB chunks, a 128 KiB I/O is 2 pieces of 64 KiB, one on each member: each member
    # serves 2 / 2 = 1 piece per set I/O, so its IOPS equal the set's: 8,313.87 (the 128 KiB
    # run) rather than 4,156.9 with 512 KiB chunks.
    one = [MD0 / "miztiik-automation-apps-128kb_16threads_md0_randwrite.log"]
    big = ebssim.fit.fit(one, type="gp3", size_gib=202, members=2, chunk_kib=512)
    small = ebssim.fit.fit(one, type="gp3", size_gib=202, members=2, chunk_kib=64)
    assert big.phases[0].iops == pytest.approx(8313.87 / 2, rel=1e-3)
    assert small.phases[0].iops == pytest.approx(8313.87, rel=1e-3)


@pytest.mark.parametrize("vtype", ["io1", "io2", "gp2"])
def test_fit_striped_other_types_split_alike(vtype: str) -> None:
    # The split depends on N and the chunk only: the 4 KiB run's 8,780.27 set IOPS are 4,390.1 on
    # each of 2 members, whatever their type.
    f = ebssim.fit.fit(MEMBER_BOUND[:1], type=vtype, members=2)
    assert f.phases[0].iops == pytest.approx(8780.27 / 2, rel=1e-4)


def test_fit_cli_members(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fit", "--type", "gp3", "--size", "202", "--members", "2", "--chunk", "512", "--output-format", "json"]
    assert main([*args, *map(str, MEMBER_BOUND)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["members"] == 2 and d["volume"].startswith("raid0:chunk=512,members=2+gp3:size=202,")


def test_fit_cli_chunk_without_members(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "--type", "gp3", "--chunk", "64", str(MEMBER_BOUND[0])]) == 2
    assert "--chunk 64 is for a striped set: give --members N too" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"type": "gp3", "members": 0}, "members=0 must be a whole number >= 1"),
        ({"type": "gp3", "members": 2.5}, "members=2.5 must be a whole number >= 1"),
        ({"members": 2}, "members=2: a striped set's fit needs its members' type="),
        ({"type": "gp3", "chunk_kib": 64}, "chunk_kib=64 is for a striped set: give members=N too"),
        ({"type": "gp3", "members": 2, "chunk_kib": 6}, "chunk_kib=6: chunk_bytes=6144 must be a multiple of 4 KiB"),
    ],
)
def test_fit_striped_bad_arguments(kw: dict, words: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        ebssim.fit.fit(MEMBER_BOUND[:1], **kw)


# ---- advise -----------------------------------------------------------------------------------


def test_advise_striped_gp2_set_keeps_n_and_chunk_and_prices_the_members() -> None:
    # 2 x gp2 500 GiB (1,500 IOPS baseline, 3,000 burst, 250 MiB/s) in RAID-0, 64 KiB chunks.
    # The job: 60 minutes of 256 KiB random reads at the set's peak rate. Each 256 KiB I/O is 4
    # pieces of 64 KiB, 2 on each member: each member runs 64 KiB reads at its own peak rate,
    # 3,000 IOPS (burst; 3,000 x 64 KiB = 187.5 MiB/s < 250), for 60 minutes.
    # Member advice (no metrics: all it can do): gp3 500 GiB at max(3,000, 1,500) = 3,000 IOPS and
    # 250 MiB/s. us-east-1 prices (ebssim.cost): gp2 $0.10/GiB, gp3 $0.08/GiB, $0.04 per MiB/s above
    # 125. Per member: gp2 500 x 0.10 = $50; gp3 defaults 500 x 0.08 = $40; advice 40 + 125 x 0.04
    # = $45. The set (2 members): $100 now, $80 with defaults, $90 advised.
    # Job on gp3 defaults: 187.5 MiB/s asked, 125 given: 60 x 187.5 / 125 = 90 minutes; on the
    # advice (250 MiB/s) 60 minutes.
    p = ebssim.cost.prices("us-east-1")
    # gp3 throughput is listed per GiBps-month: 40.96 = 0.04 x 1,024 per MiB/s.
    assert [p.price(k) for k in ("gp2.storage", "gp3.storage", "gp3.throughput")] == [
        Decimal("0.10"),
        Decimal("0.08"),
        Decimal("40.96"),
    ]
    md = ebssim.striped([ebssim.gp2(500)] * 2, chunk_kib=64)
    fleet = advise({"md0": md}, "us-east-1", job=BatchJob(minutes=60, io_size="256k"))
    a = fleet["md0"]
    assert a.current.spec == "raid0:chunk=64,members=2+gp2:size=500"
    assert a.defaults.spec == "raid0:chunk=64,members=2+gp3:size=500,iops=3000,throughput=125"
    assert a.advice.spec == "raid0:chunk=64,members=2+gp3:size=500,iops=3000,throughput=250"
    assert (a.current.monthly_usd, a.defaults.monthly_usd, a.advice.monthly_usd) == (100.0, 80.0, 90.0)
    assert a.defaults.job_minutes == pytest.approx(90.0, rel=0.01)
    assert a.advice.job_minutes == pytest.approx(60.0, rel=0.01)
    assert a.advice.stripe is not None and a.advice.stripe.n == 2 and a.advice.stripe.chunk_kib == 64
    assert "RAID-0 of 2 members, 64 KiB chunks" in a.reason
    # The plan: one command, to run once per member.
    plan = modify_volume_plan(fleet)
    assert len(plan.commands) == 1 and "--volume-type gp3" in plan.commands[0]
    assert any("md0 is a striped set" in w for w in plan.warnings)


def test_advise_cli_raid0_spec(capsys: pytest.CaptureFixture[str]) -> None:
    # The same set as a SPEC, with a plain volume beside it (advised as before: gp2 100 GiB ->
    # gp3 at 3,000 IOPS, 128 MiB/s, the docs' example).
    spec = "md0=raid0:chunk=64,members=2+gp2:size=500"
    args = ["advise", "--region", "us-east-1", "--job-io-size", "256k", "--output-format", "json"]
    assert main([*args, spec, "vol-1=gp2:size=100"]) == 0
    d = json.loads(capsys.readouterr().out)
    by = {v["volume_id"]: v for v in d["volumes"]}
    assert by["md0"]["advice"] == "raid0:chunk=64,members=2+gp3:size=500,iops=3000,throughput=250"
    assert by["md0"]["monthly_usd"] == {"current": 100.0, "defaults": 80.0, "advice": 90.0}
    assert by["vol-1"]["advice"] == "gp3:size=100,iops=3000,throughput=128"


def test_advise_striped_set_with_metrics_needs_its_own_or_its_members() -> None:
    # Metrics of a striped set (tests/python/test_stripes_advise_metrics.py): a frame that is not
    # ebssim.aws's is refused as for a volume; one without the set's own or its members' says so.
    md = ebssim.striped([ebssim.gp2(500)] * 2)
    import ebssim.aws as aws
    import pandas as pd

    with pytest.raises(ValueError, match=r"metrics has no column\(s\)"):
        advise({"md0": md}, "us-east-1", metrics=pd.DataFrame({"volume_id": []}))
    idx = pd.date_range("2024-05-01", periods=2, freq="1min", tz="UTC")
    wide = pd.DataFrame(
        {"VolumeReadOps": 1.0, "VolumeWriteOps": 0.0, "VolumeReadBytes": 4096.0, "VolumeWriteBytes": 0.0}, index=idx
    )
    with pytest.raises(ValueError, match=r"volumes\['md0'\] is a striped set and the metrics hold neither"):
        advise({"md0": md}, "us-east-1", metrics=aws.metrics_from_wide(wide, "vol-0123456789abcdef0"))
