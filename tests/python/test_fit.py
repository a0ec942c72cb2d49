"""ebssim.fit on real fio captures (tests/data/fit, fio 3.33) and on ebssim's own simulated logs.

Expected numbers come from the captures' job files and gp2's rules, never from the fitter:
fio held the jobs at rate_iops=3000 then 300 (a 100 GiB gp2, 3 IOPS/GiB, bursting at 3,000), so
the bucket must hold (3,000 - 300) x T credits to run dry at the switch T.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import ebssim
import ebssim.fio as fio
import ebssim.fit as fit
import numpy as np
import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "fit"
CREDITS = 5.4e6  # gp2's bucket


def _balance_pct(switch_s: float, burst: float = 3000, baseline: float = 300) -> float:
    return 100 * (burst - baseline) * switch_s / CREDITS


# ---- levels and change points (no type) ------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "switch_s", "window_s"),
    [("01_gp2_windowed", 30.0, 1.0), ("02_gp2_perio", 10.0, 0.1), ("03_gp2_invocations", 20.0, 0.5)],
)
def test_levels_recover_fio_rates_and_switch(case: str, switch_s: float, window_s: float) -> None:
    # rate_limits="volume": the captures imitate a gp2 with fio's throttles (by default, levels that
    # are the jobs' own caps fit a range of volumes: tests/python/test_fit_caps.py)
    f = fit.fit([DATA / case], rate_limits="volume")
    assert [p.job for p in f.phases] == ["burst", "baseline"]
    burst, base = f.phases
    # fio's rate_iops: within 1 %
    assert burst.iops == pytest.approx(3000, rel=0.01)
    assert base.iops == pytest.approx(300, rel=0.01)
    # the switch: the first job's runtime (job file), within one log window
    assert abs(burst.end_s - switch_s) <= window_s
    assert base.start_s >= burst.end_s
    assert f.volume is None and f.cliff_time_s is None
    gp2 = [c for c in f.consistent if c["type"] == "gp2"]
    assert gp2 and gp2[0]["size_gib"] == 100  # 300 IOPS / 3 per GiB


# ---- gp2 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "switch_s", "window_s"),
    [("01_gp2_windowed", 30.0, 1.0), ("02_gp2_perio", 10.0, 0.1)],
)
def test_gp2_fit_recovers_size_balance_and_cliff(case: str, switch_s: float, window_s: float) -> None:
    f = fit.fit([DATA / case], type="gp2", rate_limits="volume")
    assert f.volume is not None and f.volume.type == "gp2"
    assert f.parameter("size_gib").value == 100
    assert f.volume.size_gib == 100
    cliff = f.cliff_time_s
    assert cliff is not None and abs(cliff - switch_s) <= window_s
    # BurstBalance at the start: (3,000 - 300) x T / 5.4e6, T within one window
    bal = f.parameter("burst_balance_pct")
    assert bal.value is not None
    assert abs(bal.value - _balance_pct(switch_s)) <= _balance_pct(window_s)
    assert bal.stderr is not None and bal.stderr < _balance_pct(window_s)
    assert all(p.bound == "volume_iops" for p in f.phases)


def test_windowed_cliff_in_a_stretch_without_data_is_an_interval() -> None:
    # fio 3.33 drops the last partial window of the first job (its last row is at 29.146 s), so the
    # data say only that the cliff lies between that row and the second job's first window.
    f = fit.fit([DATA / "01_gp2_windowed"], type="gp2", rate_limits="volume")
    c = f.parameter("cliff_time_s")
    assert c.lower is not None and c.upper is not None
    assert 29.1 <= c.lower < c.upper <= 30.0
    assert c.value == pytest.approx((c.lower + c.upper) / 2)


def test_separate_invocations_placed_by_their_timestamps() -> None:
    f = fit.fit([DATA / "03_gp2_invocations"], type="gp2", size_gib=100, rate_limits="volume")
    a, b = f.phases
    # b_baseline.json's timestamp_ms - its 20.004 s runtime, against a_burst's
    ts_a = json.loads((DATA / "03_gp2_invocations" / "a_burst.json").read_text())["timestamp_ms"]
    ts_b = json.loads((DATA / "03_gp2_invocations" / "b_baseline.json").read_text())["timestamp_ms"]
    assert b.start_s == pytest.approx((ts_b - 20004) / 1e3 - (ts_a - 20000) / 1e3, abs=1e-6)
    cliff = f.cliff_time_s
    assert cliff is not None and abs(cliff - 20.0) <= 0.5  # one window (log_avg_msec=500)


def _simulated_capture(tmp_path: Path, runtime_s: int) -> Path:
    """A 100 GiB gp2 at queue depth 32, as ebssim fio predicts it: job file, JSON and iops log."""
    job = tmp_path / "cliff.fio"
    job.write_text(
        "[rr]\nfilename=/dev/nvme1n1\nrw=randread\nbs=4k\nioengine=libaio\niodepth=32\ntime_based\n"
        f"runtime={runtime_s}\nwrite_iops_log=rr\nlog_avg_msec=1000\n"
    )
    pred = fio.predict([str(job)], {"/dev/nvme1n1": ebssim.gp2(100)}, log_dir=str(tmp_path))
    (tmp_path / "cliff.json").write_text(json.dumps(pred.to_json()))
    return tmp_path


def test_cliff_inside_one_job(tmp_path: Path) -> None:
    # 5.4e6 credits / (3,000 - 300) IOPS = 2,000 s; a full bucket at the start.
    f = fit.fit([_simulated_capture(tmp_path, 2500)], type="gp2")
    assert [(p.job, round(p.start_s), round(p.end_s), round(p.iops)) for p in f.phases] == [
        ("rr", 0, 2000, 3000),
        ("rr", 2000, 2500, 300),
    ]
    assert f.cliff_time_s == pytest.approx(2000, abs=1.0)
    assert f.parameter("size_gib").value == 100
    assert f.parameter("burst_balance_pct").value == pytest.approx(100, abs=0.05)
    assert f.goodness["rms_residual_iops"] == pytest.approx(0, abs=1e-6)


def test_no_cliff_gives_a_partial_result(tmp_path: Path) -> None:
    f = fit.fit([_simulated_capture(tmp_path, 300)], type="gp2")
    size = f.parameter("size_gib")
    assert size.value is None and "no cliff" in size.note
    assert f.volume is None and f.cliff_time_s is None
    # with the size: the balance is bounded below by 300 s at 2,700 credits/s = 15 %
    g = fit.fit([tmp_path], type="gp2", size_gib=100)
    bal = g.parameter("burst_balance_pct")
    assert bal.value is None
    assert bal.lower == pytest.approx(100 * 2700 * 300 / CREDITS, abs=0.01)
    assert bal.upper == 100
    assert g.cliff_time_s is None
    assert any("at least" in n for n in g.notes)


# ---- predict and predict_cliff -------------------------------------------------------------


def test_predict_cliff_from_the_first_part_matches_held_back_data() -> None:
    # The first job of the per-I/O capture only (0..10 s, before the switch), balance 0.5 %:
    # 0.5 % x 5.4e6 / (3,000 - 300) = 10 s; the held-back second job shows the switch at 10.0 s.
    head = fio.read_log(DATA / "02_gp2_perio" / "perio_iops.1.log")
    p = fit.predict_cliff([head], type="gp2", size_gib=100, burst_balance_pct=0.5)
    assert p.cliff_time_s is not None and abs(p.cliff_time_s - 10.0) <= 0.1
    assert p.iops_after == pytest.approx(300, rel=0.01)
    whole = fit.fit([DATA / "02_gp2_perio"], type="gp2", rate_limits="volume")
    assert whole.cliff_time_s is not None and abs(p.cliff_time_s - whole.cliff_time_s) <= 0.1


def test_predict_cliff_refuses_a_capture_with_a_cliff() -> None:
    with pytest.raises(ValueError, match="already falls from"):
        fit.predict_cliff([DATA / "02_gp2_perio"], type="gp2", size_gib=100)


def test_predict_reports_another_job_on_the_fitted_volume(tmp_path: Path) -> None:
    f = fit.fit([DATA / "02_gp2_perio"], type="gp2", rate_limits="volume")
    # 4 KiB at QD 32 on the fitted 100 GiB gp2 with its 0.5 % left: 10 s at 3,000 then 300
    cmd = "fio --name=x --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 --runtime=20 "
    cmd += "--time_based"
    pred = f.predict(cmd)
    job = pred.jobs[0]
    assert job.cliff_time_s == pytest.approx(10.0, abs=0.1)
    assert job.iops == pytest.approx((10 * 3000 + 10 * 300) / 20, rel=0.01)


# ---- service time and its spread -------------------------------------------------------------


def test_service_time_separates_intercept_and_transfer() -> None:
    f = fit.fit([DATA / "04_service_time"])
    a = f.parameter("service_intercept_ms")
    k = f.parameter("service_per_mib_ms")
    assert a.value is not None and a.value > 0 and a.stderr is not None
    assert k.value is not None and k.value > 0 and k.stderr is not None
    # The fitted line against each job's measured mean latency (fio's clat mean, json+):
    rep = fio.read_json(DATA / "04_service_time" / "sizes.json").jobs
    sizes = {"r4k": 4096, "r16k": 16384, "r64k": 65536, "r256k": 262144, "r1m": 1048576}
    for name, b in sizes.items():
        measured = float(rep.loc[rep.jobname == name, "clat_mean_ns"].iloc[0]) / 1e6
        model = a.value + k.value * b / 2**20
        assert abs(model - measured) < 0.2 + 0.25 * measured, name
    # never double-counted: the volume's latency_ms is the intercept, its transfer term the slope
    v = fit.fit([DATA / "04_service_time"], type="gp3", size_gib=100)
    assert v.volume is not None and v.volume.latency_ms == pytest.approx(a.value)
    assert v.volume.service_time_s(2**20) * 1e3 == pytest.approx(a.value + k.value, rel=1e-9)


def test_one_io_size_leaves_the_transfer_term_to_the_default() -> None:
    f = fit.fit([DATA / "01_gp2_windowed"])  # both jobs 4 KiB, held by their rate caps
    k = f.parameter("service_per_mib_ms")
    assert k.value is None and "one I/O size" in k.note
    a = f.parameter("service_intercept_ms")
    rep = fio.read_json(DATA / "01_gp2_windowed" / "cliff.json").jobs
    mean_ms = float(np.average(rep.clat_mean_ns, weights=rep.total_ios)) / 1e6
    # intercept = measured mean - 4 KiB at the default 1,024 MiB/s
    assert a.value == pytest.approx(mean_ms - 4096 / (1024 * 2**20) * 1e3, rel=1e-6)


def test_latency_shape_from_json_plus_bins() -> None:
    f = fit.fit([DATA / "04_service_time"])
    k = f.parameter("latency_shape")
    assert k.value is not None and k.value > 0 and k.stderr is not None
    assert len(f.latency_fits) == 5


# ---- output --------------------------------------------------------------------------------


def test_to_dict_html_and_plot(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    f = fit.fit([DATA / "02_gp2_perio"], type="gp2", rate_limits="volume")
    d = f.to_dict()
    assert d["volume"].startswith("gp2:size=100,burst_balance=")
    target, vol = fio.parse_volume_spec("/dev/x=" + d["volume"])
    assert vol.size_gib == 100
    assert d["burst_iops"] == 3000 and d["baseline_iops"] == 300
    html = f._repr_html_()
    assert "burst_balance_pct" in html and "<table" in html
    fig = f.plot()
    fig.savefig(tmp_path / "fit.png")
    assert (tmp_path / "fit.png").stat().st_size > 10_000
    assert len(f.residuals) == 200  # 2 x 10 s in 0.1 s bins


# ---- bad input -----------------------------------------------------------------------------


def _copy(case: str, tmp_path: Path) -> Path:
    d = tmp_path / case
    d.mkdir()
    for p in (DATA / case).iterdir():
        (d / p.name).write_bytes(p.read_bytes())
    return d


def test_too_short_a_log(tmp_path: Path) -> None:
    d = _copy("01_gp2_windowed", tmp_path)
    log = d / "cliff_iops.2.log"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:2]))  # derived: 2 windows kept
    with pytest.raises(ValueError, match="too short to fit"):
        fit.fit([d])


def test_nan_and_negative_values_in_frames() -> None:
    df = fio.read_log(DATA / "02_gp2_perio" / "perio_iops.1.log")
    bad = df.copy()
    bad.loc[5, "iops"] = -1
    with pytest.raises(ValueError, match=r"row 5: iops=-1.0: expected a finite number >= 0"):
        fit.fit([bad])
    bad = df.astype({"time_ms": float})
    bad.loc[7, "time_ms"] = math.nan
    with pytest.raises(ValueError, match="row 7: time_ms=nan: expected a finite number >= 0"):
        fit.fit([bad])


def test_out_of_order_windowed_log(tmp_path: Path) -> None:
    d = _copy("01_gp2_windowed", tmp_path)
    log = d / "cliff_iops.1.log"
    lines = log.read_text().splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]  # derived: two rows swapped
    log.write_text("".join(lines))
    with pytest.raises(ValueError, match="rows go back in time"):
        fit.fit([d])


def test_logs_of_two_jobs_in_one_file(tmp_path: Path) -> None:
    d = _copy("01_gp2_windowed", tmp_path)
    one, two = d / "cliff_iops.1.log", d / "cliff_iops.2.log"
    one.write_text(one.read_text() + two.read_text())  # derived: as per_job_logs=0 would append
    with pytest.raises(ValueError, match="several jobs"):
        fit.fit([d])


def test_mixed_read_write_log(tmp_path: Path) -> None:
    d = _copy("01_gp2_windowed", tmp_path)
    log = d / "cliff_iops.2.log"
    rows = log.read_text().splitlines()
    rows[2] = rows[2].replace(", 0, 0, 0", ", 1, 0, 0")  # derived: one row marked as a write
    log.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match="write rows but the job only does reads"):
        fit.fit([d])


def test_log_whose_units_cannot_be_told(tmp_path: Path) -> None:
    frame = pd.DataFrame({"time_ms": [1000, 2000, 3000], "value": [1, 2, 3]})
    with pytest.raises(ValueError, match="cannot tell what this log measures"):
        fit.fit([frame])
    odd = tmp_path / "mystery.txt"
    odd.write_text("1000, 3000, 0, 0, 0\n")
    with pytest.raises(ValueError, match="not a fio job file, JSON report or log"):
        fit.fit([odd])


def test_several_logs_without_job_file_or_json(tmp_path: Path) -> None:
    d = _copy("01_gp2_windowed", tmp_path)
    (d / "cliff.json").unlink()
    (d / "cliff.fio").unlink()
    with pytest.raises(ValueError, match="cannot tell whether they ran one after another"):
        fit.fit([d])


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="type='gp9'"):
        fit.fit([DATA / "01_gp2_windowed"], type="gp9")
    with pytest.raises(ValueError, match="rate_limits='x'"):
        fit.fit([DATA / "01_gp2_windowed"], rate_limits="x")
    with pytest.raises(ValueError, match="size_gib=-3"):
        fit.fit([DATA / "01_gp2_windowed"], size_gib=-3)
    with pytest.raises(ValueError, match="no such file"):
        fit.fit([DATA / "nope"])


# ---- the offered load: one mapping for ebssim fio and the fit -------------------------------------


def test_thinktime_job_offers_the_same_load_to_fio_prediction_and_to_the_fit() -> None:
    # fio issues thinktime_blocks=8 I/Os, at most iodepth=4 at a time, then thinks 1 ms. On a gp3
    # (s = 0.5 ms + 16 KiB / 1,024 MiB/s = 0.515259 ms) a cycle moves 8 I/Os in 2 s + 1 ms =
    # 2.030518 ms: 3,939.88 IOPS a clone, 7,879.76 for numjobs=2, below the volume's 16,000 IOPS
    # and 500 MiB/s (123 MiB/s), so unthrottled. (The fit once took 1 ms / 8 per I/O: 6,248 a clone.)
    from ebssim.fit._inputs import JobData, _from_fio_job

    cmd = (
        "fio --name=t --filename=/dev/x --rw=randread --bs=16k --ioengine=libaio --iodepth=4 --thinktime=1000 "
        "--thinktime_blocks=8 --numjobs=2 --group_reporting --runtime=10 --time_based"
    )
    vol = ebssim.gp3(100, iops=16000, throughput_mib_s=500)
    s = 0.5e-3 + 16384 / (1024 * 2**20)
    expected = 2 * 8 / (2 * s + 1e-3)
    assert expected == pytest.approx(7879.76, abs=0.01)
    predicted = fio.predict([cmd], {"/dev/x": vol}, log_dir=None).jobs[0]
    assert predicted.iops == pytest.approx(expected, rel=1e-9)
    job = fio.parse_run(cmd).jobs[0]
    data = JobData(name="t", invocation=0, phase=0, thread=1)
    _from_fio_job(data, job)
    assert data.demand_iops(vol) == pytest.approx(expected, rel=1e-12)
    # Without thinktime the fit takes a job as asking for more than the volume gives (no rate cap).
    _from_fio_job(data, fio.parse_run(cmd.replace("--thinktime=1000 ", "")).jobs[0])
    assert data.demand_iops(vol) == math.inf


def test_rate_cap_of_a_mix_is_where_its_first_direction_reaches_its_cap() -> None:
    # rate_iops=100,600 on a 25 % read mix: reads reach 100/s at 400 I/Os a second, writes 600/s at 800.
    job = fio.parse_run("fio --name=m --filename=/dev/x --rw=randrw --rwmixread=25 --rate_iops=100,600").jobs[0]
    assert job.rate_cap_iops == pytest.approx(400.0)
    load = job.offered_load(ebssim.gp3(100))
    assert load.cap_iops == pytest.approx(400.0) and load.offered_iops == pytest.approx(400.0)
    assert job.offered_load(ebssim.gp3(100), share=0.5).cap_iops == pytest.approx(200.0)
