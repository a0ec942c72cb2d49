"""ebssim.fio readers against real fio 3.33 output (tests/data/fio, see its README)."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ebssim.fio import FIO_PERCENTILES as DEFAULT_PERCENTILES
from ebssim.fio import (
    FioResult,
    hist_buckets,
    hist_percentiles,
    parse_json,
    plat_idx_to_val,
    plat_val_to_idx,
    read_hist_log,
    read_json,
    read_log,
    read_logs,
)
from ebssim.fio.histograms import FIO_IO_U_PLAT_NR

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"

PSYNC = DATA / "02a_randread16k_psync_nj4"
LIBAIO = DATA / "02b_randread16k_libaio_qd64_nj4"
SEQREAD = DATA / "03a_seqread_1m_qd8"
SEQWRITE = DATA / "03b_seqwrite_1m_qd8"
GROUP = DATA / "04_groupreport_libaio_qd64_nj4"
STDOUT = DATA / "05_stdout_note_prefix" / "stdout.txt"
HIST = DATA / "06_clat_hist_log"
PERIO = DATA / "10_perio_log_offset"
JSONPLUS = DATA / "11_jsonplus_hist"
MIX = DATA / "12_randrw_mix70"
UNIFIED = DATA / "13_unified_rw_reporting"

ALL_JSON = sorted(DATA.glob("*/*.json")) + [STDOUT]


def raw_json(path: Path) -> dict:
    return json.loads(path.read_text())


# --------------------------------------------------------------------------------------------
# JSON: values as written by fio
# --------------------------------------------------------------------------------------------


def test_psync_numjobs4_values_as_in_the_json():
    r = read_json(PSYNC / "02a_randread16k_psync_nj4.json")
    assert isinstance(r, FioResult)
    assert r.fio_version == "fio-3.33" and r.version == (3, 33)
    jobs = r.jobs
    assert len(jobs) == 4  # numjobs=4, one read row each
    assert list(jobs["job"]) == [0, 1, 2, 3]
    assert set(jobs["jobname"]) == {"rr16k_psync"} and set(jobs["direction"]) == {"read"}
    j0 = jobs.iloc[0]
    assert j0["iops"] == pytest.approx(6264.347131)
    assert j0["bw_kib_s"] == 100229
    assert j0["bw_bytes_s"] == 102635063
    assert j0["io_bytes"] == 513277952
    assert j0["runtime_ms"] == 5001
    assert j0["total_ios"] == 31328
    assert j0["job_runtime_ms"] == 5000
    assert j0["clat_mean_ns"] == pytest.approx(158319.161166)
    assert j0["clat_p50_ns"] == 132096
    assert j0["clat_p99_ns"] == 485376
    assert j0["clat_p99_9_ns"] == 8159232
    assert j0["clat_p99_99_ns"] == 14483456
    assert j0["lat_mean_ns"] == pytest.approx(158432.160304)
    assert j0["clat_n"] == 31328
    # psync has no submission latency: N == 0, statistics are NaN rather than fio's zeros
    assert j0["slat_n"] == 0 and math.isnan(j0["slat_mean_ns"])
    # window statistics keep their own names
    assert j0["iops_win_mean"] == pytest.approx(6499.75) and j0["bw_win_samples"] == 4
    assert r.global_options["bs"] == "16k" and r.global_options["log_avg_msec"] == "1000"
    assert r.job_options[0] == {"ioengine": "psync", "numjobs": "4"}
    assert r.options(2)["ioengine"] == "psync" and r.options(2)["rw"] == "randread"
    assert not r.is_json_plus and r.bins.empty
    assert list(r.disk_util["name"]) == ["vda"]
    assert r.preamble == []


@pytest.mark.parametrize("path", ALL_JSON, ids=lambda p: p.parent.name)
def test_throughput_is_total_over_runtime(path):
    """bw_bytes = 1000 * io_bytes // runtime, bw = bw_bytes // 1024, iops = 1000 * total_ios / runtime."""
    jobs = read_json(path).jobs
    assert len(jobs) > 0
    for _, row in jobs.iterrows():
        assert row["bw_bytes_s"] == 1000 * row["io_bytes"] // row["runtime_ms"]
        assert row["bw_kib_s"] == row["bw_bytes_s"] // 1024
        assert row["iops"] == pytest.approx(1000 * row["total_ios"] / row["runtime_ms"], rel=1e-6)
        assert row["clat_n"] == row["total_ios"]


def test_iops_comes_from_iops_not_from_window_mean():
    """With per-I/O logs fio's iops_mean is 1.0 (per-I/O samples): throughput must come from read.iops."""
    r = read_json(PERIO / "10_perio_log_offset.json")
    read = r.jobs[r.jobs["direction"] == "read"].iloc[0]
    assert read["jobname"] == "perio"
    assert read["iops"] == pytest.approx(21333.333333)
    assert read["bw_bytes_s"] == 87381333 and read["runtime_ms"] == 12 and read["total_ios"] == 256
    assert read["iops_win_mean"] == 1.0 and read["iops_win_samples"] == 256
    write = r.jobs[r.jobs["direction"] == "write"].iloc[0]
    assert write["jobname"] == "perio_prio" and write["iops"] == 12800.0 and write["total_ios"] == 128


def test_group_reporting_gives_one_row():
    r = read_json(GROUP / "04_groupreport_libaio_qd64_nj4.json")
    assert len(r.jobs) == 1
    row = r.jobs.iloc[0]
    assert row["jobname"] == "rr16k_libaio_qd64_grp"
    assert row["iops"] == pytest.approx(56750.249418)
    assert row["total_ios"] == 170648 and row["runtime_ms"] == 3007
    assert r.global_options["group_reporting"] == "1"
    assert r.job_options[0]["numjobs"] == "4"


def test_write_job_reports_write_direction():
    r = read_json(SEQWRITE / "03b_seqwrite_1m_qd8.json")
    assert list(r.jobs["direction"]) == ["write"]
    assert r.jobs.iloc[0]["io_bytes"] % (1 << 20) == 0


def test_mixed_randrw_has_read_and_write_rows():
    r = read_json(MIX / "12_randrw_mix70.json")
    assert list(r.jobs["direction"]) == ["read", "write"]
    read, write = r.jobs.iloc[0], r.jobs.iloc[1]
    assert read["iops"] == pytest.approx(16558.72064) and read["total_ios"] == 33134
    assert write["iops"] == pytest.approx(7089.955022) and write["total_ios"] == 14187
    assert read["bw_kib_s"] == 66234 and write["bw_kib_s"] == 28359
    share = read["total_ios"] / (read["total_ios"] + write["total_ios"])
    assert share == pytest.approx(0.70, abs=0.01)  # rwmixread=70
    assert r.options(0)["rwmixread"] == "70"


def test_all_directions_keeps_idle_directions():
    r = read_json(MIX / "12_randrw_mix70.json", all_directions=True)
    assert list(r.jobs["direction"]) == ["read", "write", "trim"]
    trim = r.jobs.iloc[2]
    assert trim["total_ios"] == 0 and trim["iops"] == 0.0 and math.isnan(trim["clat_mean_ns"])


def test_unified_rw_reporting_both_and_mixed():
    r = read_json(UNIFIED / "13_unified_rw_reporting.json")
    both = r.jobs[r.jobs["jobname"] == "uni_both"]
    assert list(both["direction"]) == ["read", "write", "mixed"]
    totals = dict(zip(both["direction"], both["total_ios"]))
    assert totals["mixed"] == totals["read"] + totals["write"] == 1024
    mixed_only = r.jobs[r.jobs["jobname"] == "uni_mixed"]
    assert list(mixed_only["direction"]) == ["mixed"]
    assert mixed_only.iloc[0]["total_ios"] == 1024 and mixed_only.iloc[0]["io_bytes"] == 4 << 20
    assert mixed_only.iloc[0]["iops"] == pytest.approx(18962.962963)


# --------------------------------------------------------------------------------------------
# JSON on stdout after fio's note: line; other inputs
# --------------------------------------------------------------------------------------------


def test_stdout_with_note_prefix_from_file_and_text():
    for src in (STDOUT, str(STDOUT), STDOUT.read_text(), STDOUT.read_bytes()):
        r = read_json(src)
        assert r.preamble == [
            "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1"
        ]
        row = r.jobs.iloc[0]
        assert row["jobname"] == "psync_qd4"
        assert row["iops"] == pytest.approx(12445.777111)
        assert row["runtime_ms"] == 2001 and row["total_ios"] == 24904
        assert row["clat_p99_ns"] == 160768
    assert "global options" not in r.raw and r.global_options == {}
    assert r.job_options[0]["iodepth"] == "4"
    assert read_json(str(STDOUT)).source == str(STDOUT)
    assert read_json(STDOUT.read_text()).source == "<text>"


def test_parse_json_from_dict():
    r = parse_json(raw_json(SEQREAD / "03a_seqread_1m_qd8.json"))
    assert r.source == "<dict>" and list(r.jobs["direction"]) == ["read"]


# --------------------------------------------------------------------------------------------
# Older fio versions (documents derived from a real fio 3.33 file by applying the documented differences)
# --------------------------------------------------------------------------------------------


def _as_fio_3_0(doc: dict) -> dict:
    """fio 3.0/3.1: no bw_bytes (3.2), job_runtime (3.8), N (3.18), iodepth_submit (3.9)."""
    doc = copy.deepcopy(doc)
    doc["fio version"] = "fio-3.0"
    for job in doc["jobs"]:
        job.pop("job_runtime", None)
        for ddir in ("read", "write", "trim"):
            job[ddir].pop("bw_bytes")
            for m in ("slat_ns", "clat_ns", "lat_ns"):
                job[ddir][m].pop("N")
    return doc


def _as_fio_2(doc: dict) -> dict:
    """fio 2.x: io_bytes in KiB (no io_kbytes), latency objects slat/clat/lat in microseconds."""
    doc = copy.deepcopy(doc)
    doc["fio version"] = "fio-2.21"
    for job in doc["jobs"]:
        job.pop("job_runtime", None)
        for ddir in ("read", "write", "trim"):
            d = job[ddir]
            d["io_bytes"] = d.pop("io_kbytes")
            d.pop("bw_bytes")
            for m in ("slat", "clat", "lat"):
                lat = d.pop(f"{m}_ns")
                lat.pop("N")
                us = {k: v / 1000.0 for k, v in lat.items() if k != "percentile"}
                if "percentile" in lat:
                    us["percentile"] = {k: v // 1000 for k, v in lat["percentile"].items()}
                d[m] = us
    return doc


def test_fio_3_0_document_without_bw_bytes_job_runtime_and_n():
    orig = raw_json(PSYNC / "02a_randread16k_psync_nj4.json")
    new = parse_json(_as_fio_3_0(orig)).jobs
    ref = parse_json(orig).jobs
    assert list(new["bw_bytes_s"]) == list(ref["bw_bytes_s"])  # recomputed as fio does
    assert list(new["iops"]) == list(ref["iops"])
    assert new["job_runtime_ms"].isna().all() and new["clat_n"].isna().all()
    assert list(new["clat_p99_ns"]) == list(ref["clat_p99_ns"])


def test_fio_2_document_in_microseconds():
    orig = raw_json(SEQREAD / "03a_seqread_1m_qd8.json")
    r = parse_json(_as_fio_2(orig))
    ref = parse_json(orig).jobs.iloc[0]
    row = r.jobs.iloc[0]
    assert r.version == (2, 21)
    assert row["io_bytes"] == ref["io_bytes"]  # KiB converted back to bytes
    assert row["clat_mean_ns"] == pytest.approx(ref["clat_mean_ns"])
    assert row["lat_max_ns"] == pytest.approx(ref["lat_max_ns"])
    assert row["clat_p50_ns"] == pytest.approx(ref["clat_p50_ns"], abs=1000)
    assert row["bw_bytes_s"] == pytest.approx(ref["bw_bytes_s"], rel=1e-3)


REAL_05 = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "real-ebs"
    / "05_r5blarge_gp3-4000-1000_gp3-16000_io2-16000_libaio-qd16x16_bs-sweep_json"
    / "raw"
    / "fio_results"
)


def test_fio_2_14_json_from_a_real_run():
    """fio-2.14 JSON as published (tests/data/real-ebs/05, PROVENANCE.md): latencies in usec under
    clat/lat/slat, io_bytes in KiB, and the percentile list padded with three '"0.00" : 0' keys."""
    r = read_json(REAL_05 / "miztiik-automation-apps-4kb_16threads_nvme1n1_randwrite.log")
    assert r.version == (2, 14)
    row = r.jobs.iloc[0]
    assert list(r.jobs["direction"]) == ["write"]
    assert row["io_bytes"] == 176416 * 1024  # "io_bytes" : 176416 (KiB): bw 17578 KiB/s x 10.036 s
    assert row["bw_kib_s"] == 17578 and row["iops"] == pytest.approx(4394.579590)
    assert row["runtime_ms"] == 10036 and row["total_ios"] == 44104
    assert row["clat_mean_ns"] == pytest.approx(55094.664062e3)  # usec -> ns
    assert row["lat_mean_ns"] == pytest.approx(58193.367188e3)
    assert row["slat_mean_ns"] == pytest.approx(3098.567871e3)
    assert row["clat_min_ns"] == 523e3 and row["clat_max_ns"] == 300599e3
    assert row["clat_p50_ns"] == 46848e3 and row["clat_p99_9_ns"] == 218112e3 and row["clat_p99_99_ns"] == 261120e3
    # the padding is no percentile: fio has no 0th
    assert not [c for c in r.jobs.columns if c.startswith("clat_p0")]
    assert r.disk_util.iloc[0]["write_ios"] == 43548


def test_bare_nan_from_fio_is_accepted(tmp_path):
    text = (PSYNC / "02a_randread16k_psync_nj4.json").read_text()
    text = text.replace('"bw_agg" : 26.116674', '"bw_agg" : -nan', 1)
    assert "-nan" in text
    r = read_json(text)
    assert math.isnan(r.jobs.iloc[0]["bw_agg_pct"]) and r.jobs.iloc[0]["iops"] == pytest.approx(6264.347131)


# --------------------------------------------------------------------------------------------
# JSON+ bins and histograms
# --------------------------------------------------------------------------------------------


def test_jsonplus_bins_reproduce_json_percentiles_exactly():
    r = read_json(JSONPLUS / "11_jsonplus_hist.json")
    assert r.is_json_plus
    clat = r.clat_bins
    assert set(clat["metric"]) == {"clat"} and set(clat["direction"]) == {"read"}
    row = r.jobs.iloc[0]
    assert clat["count"].sum() == row["total_ios"] == row["clat_n"] == 32178
    assert len(clat) == 333  # non-zero buckets as written by fio
    got = hist_percentiles(clat)
    want = r.raw["jobs"][0]["read"]["clat_ns"]["percentile"]
    assert [float(k) for k in want] == list(got.index)
    assert list(got.values) == [float(v) for v in want.values()]
    # bucket bounds contain fio's value, and fio's value maps back to its bucket
    assert ((clat["lower_ns"] <= clat["latency_ns"]) & (clat["latency_ns"] < clat["upper_ns"])).all()
    assert all(plat_idx_to_val(b) == v for b, v in zip(clat["bucket"], clat["latency_ns"]))


@pytest.mark.parametrize("path", [PSYNC / "02a_randread16k_psync_nj4.json", STDOUT], ids=["psync", "stdout"])
def test_plain_json_percentiles_are_bucket_values(path):
    """Every JSON percentile is a value plat_idx_to_val produces (a bucket midpoint)."""
    r = read_json(path)
    cols = [c for c in r.jobs.columns if c.startswith("clat_p")]
    assert len(cols) == len(DEFAULT_PERCENTILES)
    for v in r.jobs[cols].to_numpy().ravel():
        assert plat_idx_to_val(plat_val_to_idx(int(v))) == v


def test_hist_log_06_matches_json():
    h = read_hist_log(HIST / "hist_clat_hist.1.log")
    assert h.attrs["coarseness"] == 0 and h.attrs["nbuckets"] == FIO_IO_U_PLAT_NR and h.attrs["intervals"] == 2
    per = h.groupby("time_ms")["count"].sum()
    assert list(per.index) == [1001, 2001] and list(per) == [37256, 32248]
    assert set(h["direction"]) == {"read"} and set(h["bs"]) == {4096}
    j = read_json(HIST / "06_clat_hist_log.json")
    assert per.sum() < j.jobs.iloc[0]["total_ios"] == 109656  # the last partial interval is not logged
    got = hist_percentiles(h)
    want = j.raw["jobs"][0]["read"]["clat_ns"]["percentile"]
    for key, value in want.items():
        if float(key) <= 99.0:
            assert got[float(key)] == pytest.approx(value, rel=0.15), key
    assert got[50.0] == want["50.000000"]


def test_hist_log_11_is_a_subset_of_the_jsonplus_bins():
    h = read_hist_log(JSONPLUS / "jp_clat_hist.1.log")
    assert h.attrs["intervals"] == 4
    assert list(h.groupby("time_ms")["count"].sum().index) == [251, 501, 751, 1001]
    r = read_json(JSONPLUS / "11_jsonplus_hist.json")
    bins = r.clat_bins.set_index("bucket")["count"]
    hist = h.groupby("bucket")["count"].sum()
    assert set(hist.index) <= set(bins.index)
    assert (hist <= bins.reindex(hist.index)).all()
    assert 0 < bins.sum() - hist.sum() < 100  # only the last, unlogged partial interval is missing
    got = hist_percentiles(h)
    for p, v in hist_percentiles(r.clat_bins).items():
        assert got[p] == pytest.approx(v, rel=0.02)


def test_hist_include_zero():
    h = read_hist_log(HIST / "hist_clat_hist.1.log", include_zero=True)
    assert len(h) == 2 * FIO_IO_U_PLAT_NR
    assert h["count"].sum() == 37256 + 32248


def test_hist_buckets_follow_fio():
    b = hist_buckets()
    assert len(b) == FIO_IO_U_PLAT_NR
    assert (b["upper_ns"].to_numpy()[:-1] == b["lower_ns"].to_numpy()[1:]).all()  # contiguous
    for i in (0, 1, 64, 127, 128, 129, 191, 192, 500, 1000, FIO_IO_U_PLAT_NR - 1):
        assert b.loc[i, "latency_ns"] == plat_idx_to_val(i)
        assert plat_val_to_idx(b.loc[i, "lower_ns"]) == i
        assert plat_val_to_idx(b.loc[i, "upper_ns"] - 1) == i
    assert plat_idx_to_val(127) == 127 and plat_idx_to_val(128) == 129
    assert plat_val_to_idx(63744) == 700 and plat_idx_to_val(700) == 63744  # p1 of the stdout case
    assert plat_val_to_idx(10**15) == FIO_IO_U_PLAT_NR - 1
    coarse = hist_buckets(3)
    assert len(coarse) == FIO_IO_U_PLAT_NR // 8
    assert coarse["lower_ns"].iloc[0] == 0 and coarse["upper_ns"].iloc[-1] == b["upper_ns"].iloc[-1]
    assert ((coarse["lower_ns"] <= coarse["latency_ns"]) & (coarse["latency_ns"] < coarse["upper_ns"])).all()
    fio2 = hist_buckets(nbuckets=1216)
    assert fio2.loc[200, "latency_ns"] == plat_idx_to_val(200) * 1000  # microsecond buckets


def test_hist_percentiles_edge_cases():
    empty = pd.DataFrame({"latency_ns": pd.Series(dtype=np.int64), "count": pd.Series(dtype=np.int64)})
    assert hist_percentiles(empty, [50]).isna().all()
    one = pd.DataFrame({"latency_ns": [100, 200, 300], "count": [1, 1, 2]})
    assert list(hist_percentiles(one, [0, 25, 50, 51, 100])) == [100, 100, 200, 300, 300]
    r = read_json(JSONPLUS / "11_jsonplus_hist.json")
    with pytest.raises(ValueError, match="missing column"):
        hist_percentiles(r.jobs)
    with pytest.raises(ValueError, match=r"outside \[0, 100\]"):
        hist_percentiles(one, [101])
    two = pd.concat([r.clat_bins, r.clat_bins.assign(metric="lat")])
    with pytest.raises(ValueError, match="mix metrics"):
        hist_percentiles(two)


# --------------------------------------------------------------------------------------------
# iops / bw / lat / clat / slat logs
# --------------------------------------------------------------------------------------------


def test_windowed_bw_log():
    df = read_log(PSYNC / "rr16k_psync_bw.1.log")
    assert list(df.columns) == ["time_ms", "bw_kib_s", "direction", "bs", "prio"]
    assert list(df["time_ms"]) == [1001, 2002, 3002, 4003]
    assert list(df["bw_kib_s"]) == [108675, 94864, 107792, 104656]
    assert set(df["direction"]) == {"read"} and (df["bs"] == 0).all() and (df["prio"] == 0).all()
    assert df.attrs["kind"] == "bw" and df.attrs["per_io"] is False
    # the JSON bw_min/bw_max are the extremes of these windows
    row = read_json(PSYNC / "02a_randread16k_psync_nj4.json").jobs.iloc[0]
    assert df["bw_kib_s"].min() == row["bw_win_min_kib_s"] and df["bw_kib_s"].max() == row["bw_win_max_kib_s"]


def test_windowed_latency_logs_are_ns():
    clat = read_log(LIBAIO / "rr16k_libaio_clat.1.log")
    assert list(clat.columns) == ["time_ms", "clat_ns", "direction", "bs", "prio"]
    assert clat["clat_ns"].iloc[0] == 3287208 and clat["time_ms"].iloc[-1] == 5003  # final flush row
    slat = read_log(LIBAIO / "rr16k_libaio_slat.1.log", "slat")
    assert list(slat["slat_ns"]) == [11998, 14863, 16202, 12275, 11009]
    lat = read_log(SEQREAD / "seq1m_read_lat.1.log")
    assert lat.columns[1] == "lat_ns" and lat["lat_ns"].iloc[0] == 2323869


def test_read_logs_numbered_files_get_job_column():
    iops = read_logs(PSYNC, prefix="rr16k_psync", kind="iops")
    assert list(iops.columns[:2]) == ["prefix", "job"]
    assert sorted(iops["job"].unique()) == [1, 2, 3, 4]
    assert iops.groupby("job").size().to_dict() == {1: 4, 2: 4, 3: 5, 4: 4}  # last window often missing
    assert iops.iloc[0]["iops"] == 6792 and iops[iops["job"] == 3].iloc[-1]["time_ms"] == 5003
    bw = read_logs(str(PSYNC / "rr16k_psync_bw.*.log"))
    assert sorted(bw["job"].unique()) == [1, 2, 3, 4]
    # windowed bw (KiB/s) and iops share their timestamps: bw ~= 16 KiB * iops
    assert (bw["time_ms"].to_numpy() == iops["time_ms"].to_numpy()).all()
    assert (bw["bw_kib_s"] - 16 * iops["iops"]).abs().max() < 16


def test_read_logs_orders_jobs_numerically(tmp_path):
    for n in (1, 2, 10):
        shutil.copy(PSYNC / "rr16k_psync_iops.1.log", tmp_path / f"x_iops.{n}.log")
    df = read_logs(tmp_path)
    assert list(df["job"].unique()) == [1, 2, 10]


def test_empty_slat_logs():
    df = read_log(PSYNC / "rr16k_psync_slat.1.log")
    assert df.empty and list(df.columns) == ["time_ms", "slat_ns", "direction", "bs", "prio"]
    assert df["time_ms"].dtype == np.int64
    all4 = read_logs(PSYNC, kind="slat")
    assert all4.empty and list(all4.columns) == ["prefix", "job", "time_ms", "slat_ns", "direction", "bs", "prio"]


def test_per_io_logs_with_offset():
    bw = read_log(PERIO / "perio_bw.1.log")
    clat = read_log(PERIO / "perio_clat.1.log")
    iops = read_log(PERIO / "perio_iops.1.log")
    assert list(bw.columns) == ["time_ms", "bw_bytes_s", "direction", "bs", "offset", "prio"]
    assert bw.attrs["per_io"] is True
    total = read_json(PERIO / "10_perio_log_offset.json").jobs.iloc[0]["total_ios"]
    assert len(bw) == len(clat) == len(iops) == total == 256
    assert (iops["iops"] == 1).all() and (bw["bs"] == 4096).all() and set(bw["direction"]) == {"read"}
    # per-I/O bw = bs * 1e6 / clat_ns in 1000 B/s units (fio-formats.md 2.4), converted to B/s
    assert (bw["bw_bytes_s"] == (bw["bs"] * 10**6 // clat["clat_ns"]) * 1000).all()
    assert bw["bw_bytes_s"].iloc[0] == 18166000 and clat["clat_ns"].iloc[0] == 225465
    # randread over 1 MiB without repeats: every 4 KiB block exactly once
    assert sorted(bw["offset"]) == list(range(0, 1 << 20, 4096))


def test_per_io_lat_is_slat_plus_clat_joined_on_offset():
    """slat rows are logged at submission, lat/clat at completion: join on offset, not on row number."""
    lat = read_log(PERIO / "perio_lat.1.log").set_index("offset")
    clat = read_log(PERIO / "perio_clat.1.log").set_index("offset")
    slat = read_log(PERIO / "perio_slat.1.log").set_index("offset")
    joined = lat.join(clat["clat_ns"]).join(slat["slat_ns"])
    assert len(joined) == 256
    assert (joined["lat_ns"] == joined["slat_ns"] + joined["clat_ns"]).all()


def test_per_io_hex_prio_without_offset():
    df = read_log(PERIO / "perio_prio_clat.2.log")
    assert list(df.columns) == ["time_ms", "clat_ns", "direction", "bs", "prio"]
    assert len(df) == 128 and set(df["direction"]) == {"write"} and (df["prio"] == 0).all()
    assert df["clat_ns"].iloc[0] == 239586
    both = read_logs(PERIO, kind="bw")
    assert both.groupby(["prefix", "job"]).size().to_dict() == {("perio", 1): 256, ("perio_prio", 2): 128}


def test_windowed_mixed_logs_have_both_directions():
    bw = read_log(MIX / "mix70_bw.1.log")
    iops = read_log(MIX / "mix70_iops.1.log")
    assert list(bw["direction"]) == ["read", "write"] * 3
    assert (bw["bw_kib_s"] - 4 * iops["iops"]).abs().max() < 4  # 4 KiB I/Os
    clat = read_log(MIX / "mix70_clat.1.log")
    assert set(clat["direction"]) == {"read", "write"}
    jobs = read_json(MIX / "12_randrw_mix70.json").jobs.set_index("direction")
    for ddir in ("read", "write"):
        win = iops[iops["direction"] == ddir]["iops"]
        assert win.min() == jobs.loc[ddir, "iops_win_min"] and win.max() == jobs.loc[ddir, "iops_win_max"]


def test_layout_hints_and_options():
    r = read_json(PERIO / "10_perio_log_offset.json")
    a = read_log(PERIO / "perio_clat.1.log", options=r.options(0))
    b = read_log(PERIO / "perio_clat.1.log", log_offset=True, fio_version="fio-3.33")
    assert a.equals(b) and "offset" in a.columns
    with pytest.raises(ValueError, match=r"perio_clat\.1\.log.*ddir"):
        read_log(PERIO / "perio_clat.1.log", log_offset=False)  # 6 fields would then be value1 + prio


def _rewrite(src: Path, dst: Path, fn) -> Path:
    lines = src.read_text().splitlines()
    dst.write_text("".join(fn(ln.split(", ")) + "\n" for ln in lines))
    return dst


def test_older_layouts_derived_from_real_logs(tmp_path):
    # fio <= 3.17 with log_offset=1: time, value, ddir, bs, offset (no prio column)
    p = _rewrite(PERIO / "perio_bw.1.log", tmp_path / "old_bw.1.log", lambda f: ", ".join(f[:5]))
    df = read_log(p)
    assert list(df.columns) == ["time_ms", "bw_bytes_s", "direction", "bs", "offset"]
    assert sorted(df["offset"]) == list(range(0, 1 << 20, 4096))
    # fio <= 3.17 without log_offset: 4 fields
    p = _rewrite(PSYNC / "rr16k_psync_lat.1.log", tmp_path / "old_lat.1.log", lambda f: ", ".join(f[:4]))
    df = read_log(p)
    assert list(df.columns) == ["time_ms", "lat_ns", "direction", "bs"]
    assert df["lat_ns"].iloc[0] == 145639
    # fio 2.x logged latency in microseconds
    assert read_log(p, fio_version="fio-2.21")["lat_ns"].iloc[0] == 145639 * 1000
    # fio 3.37+ log_window_value=both: a window maximum after the value
    p = _rewrite(
        PSYNC / "rr16k_psync_clat.1.log",
        tmp_path / "both_clat.1.log",
        lambda f: ", ".join([f[0], f[1], str(int(f[1]) * 3)] + f[2:]),
    )
    df = read_log(p)
    assert list(df.columns) == ["time_ms", "clat_ns", "clat_max_ns", "direction", "bs", "prio"]
    assert (df["clat_max_ns"] == 3 * df["clat_ns"]).all()


def _long_log(src: Path, dst: Path, rows: int, fn=None) -> Path:
    """A log of ``rows`` rows made of a real log's lines, repeated (each time shifted by the
    source's span, so that the times still rise), each line through ``fn`` if given."""
    lines = src.read_text().splitlines()
    span = int(lines[-1].split(", ")[0]) + 1
    out = []
    for k in range(-(-rows // len(lines))):
        for ln in lines:
            f = ln.split(", ")
            f[0] = str(int(f[0]) + k * span)
            out.append(", ".join(fn(f) if fn else f))
    dst.write_text("\n".join(out[:rows]) + "\n")
    return dst


def test_a_long_per_io_log_reads_as_read_csv_does(tmp_path):
    # Issue 22: read_log took 4-6x pandas.read_csv of the same file; the goal (within 1.5x, 2
    # million rows) is bench/bench_fio_logs.py's, not a timed test's. Here: the same values.
    p = _long_log(PERIO / "perio_clat.1.log", tmp_path / "long_clat.1.log", 300_000)
    df = read_log(p)
    raw = pd.read_csv(p, header=None)
    assert len(df) == 300_000 and (df["clat_ns"].to_numpy() == raw[1].to_numpy()).all()


def test_hex_priorities_of_a_long_log(tmp_path):
    # log_prio=1 prints the priority as hex: each distinct field is parsed once. Half the rows
    # rewritten to class 2, level 1 (0x2001 = 8193), the rest as fio wrote them (0x0000).
    p = _long_log(
        PERIO / "perio_prio_clat.2.log",
        tmp_path / "prio_clat.2.log",
        1000,
        lambda f: f[:4] + (["0x2001"] if int(f[1]) % 2 else f[4:]),
    )
    df = read_log(p)
    odd = df["clat_ns"] % 2 == 1
    assert odd.any() and (~odd).any()
    assert (df["prio"][odd] == 0x2001).all() and (df["prio"][~odd] == 0).all()
    lines = p.read_text().splitlines()
    lines[500] = lines[500].rsplit(", ", 1)[0] + ", 0x" + "f" * 17  # beyond 64 bits
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"prio_clat\.2\.log, line 501: field 5 is '0xfffff"):
        read_log(p)


def test_line_ends_and_bytes_outside_a_table_are_named(tmp_path):
    # CR LF and CR line ends read as LF (as Python's universal newlines read them); a CR inside a
    # line, a non-ASCII digit, a NUL and bytes that are not UTF-8 are named with their line.
    lines = (PERIO / "perio_iops.1.log").read_text().splitlines()
    p = tmp_path / "crlf_iops.1.log"
    for end in ["\r\n", "\r"]:
        p.write_bytes((end.join(lines) + end).encode())
        assert read_log(p).equals(read_log(PERIO / "perio_iops.1.log"))
    # Line 4 cut by a CR after its second field: its two parts are lines of 2 and 4 fields.
    cut = lines[3].split(",")
    for body, message in [
        (
            "\n".join(lines[:3] + [",".join(cut[:2]) + "\r" + ",".join(cut[2:])] + lines[4:]),
            r"line 4: expected 6 .* got 2",
        ),
        ("\n".join(lines[:4] + ["1, \u0661, 0, 4096, 0, 0"]), r"line 5: character '\u0661' at column 4"),
        ("\n".join(lines[:2] + ["1, 2\x00, 0, 4096, 0, 0"]), r"line 3: character '\\x00' at column 5"),
    ]:
        p.write_text(body)
        with pytest.raises(ValueError, match=message):
            read_log(p)
    p.write_bytes(b"0, 1, 0, 4096, 0, 0\n0, \xff1, 0, 4096, 0, 0\n")
    with pytest.raises(ValueError, match=r"line 2: byte 0xff is not UTF-8"):
        read_log(p)


def test_a_line_number_in_a_message_counts_blank_lines_and_cr_line_ends(tmp_path):
    # The fast path reads the file without numbering its lines; a message that names one (here
    # the layout's ddir check, after the file was read) works it out from the file: pandas skips
    # blank lines, and CR ends a line as LF does.
    lines = (PERIO / "perio_iops.1.log").read_text().splitlines()
    bad = lines[5].split(",")
    bad[2] = " 7"  # ddir 7: lines[5] is the file's line 6
    body = "\n".join(lines[:2] + [""] + lines[2:5] + [",".join(bad)] + lines[6:]) + "\n"
    p = tmp_path / "blank_iops.1.log"
    p.write_text(body)  # a blank line after line 2: the bad row is on line 7
    with pytest.raises(ValueError, match=r"blank_iops\.1\.log, line 7: ddir field is 7"):
        read_log(p)
    p.write_bytes(body.replace("\n", "\r").encode())
    with pytest.raises(ValueError, match=r"blank_iops\.1\.log, line 7: ddir field is 7"):
        read_log(p)


# --------------------------------------------------------------------------------------------
# Errors: ValueError naming the file and the line or key
# --------------------------------------------------------------------------------------------


def test_truncated_json(tmp_path):
    text = (PSYNC / "02a_randread16k_psync_nj4.json").read_text()
    p = tmp_path / "cut.json"
    p.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"cut\.json: truncated fio JSON") as exc:
        read_json(p)
    assert exc.value.__cause__ is None and exc.value.__suppress_context__


def test_invalid_json_names_the_line(tmp_path):
    lines = (SEQREAD / "03a_seqread_1m_qd8.json").read_text().splitlines()
    no = next(i for i, ln in enumerate(lines) if '"iops" :' in ln)
    lines[no] = '        "iops" : oops,'
    p = tmp_path / "bad.json"
    p.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=rf"bad\.json: invalid JSON at line {no + 1}"):
        read_json(p)


def test_not_fio_json(tmp_path):
    p = tmp_path / "other.json"
    p.write_text('{"name": "not fio", "items": []}\n')
    with pytest.raises(ValueError, match=r"other\.json: not fio JSON output: top-level key 'jobs' missing"):
        read_json(p)
    with pytest.raises(ValueError, match=r"rr16k_psync_bw\.1\.log: no line starting with '\{'"):
        read_json(PSYNC / "rr16k_psync_bw.1.log")
    with pytest.raises(ValueError, match=r"<text>: jobs\[0\] is an int: expected a job object"):
        read_json('{"fio version": "fio-3.33", "jobs": [1]}')
    with pytest.raises(ValueError, match="not UTF-8"):
        read_json(b"\xff\xfe{")


def test_bad_job_keys_are_named():
    doc = raw_json(SEQREAD / "03a_seqread_1m_qd8.json")
    bad = copy.deepcopy(doc)
    bad["jobs"][0]["read"]["iops"] = "fast"
    with pytest.raises(ValueError, match=r"key jobs\[0\]\.read\.iops is 'fast': expected a finite number"):
        parse_json(bad, source="x.json")
    bad = copy.deepcopy(doc)
    del bad["jobs"][0]["read"]["runtime"]
    with pytest.raises(ValueError, match=r"x\.json: missing key jobs\[0\]\.read\.runtime"):
        parse_json(bad, source="x.json")
    bad = copy.deepcopy(doc)
    for ddir in ("read", "write", "trim"):
        del bad["jobs"][0][ddir]
    with pytest.raises(ValueError, match=r"jobs\[0\] \('seq1m_read'\) has no 'read', 'write', 'trim' or 'mixed'"):
        parse_json(bad)
    bad = copy.deepcopy(doc)
    del bad["jobs"][0]["jobname"]
    with pytest.raises(ValueError, match=r"missing key jobs\[0\]\.jobname"):
        parse_json(bad)
    bad = copy.deepcopy(doc)
    bad["jobs"] = {"a": 1}
    with pytest.raises(ValueError, match="key 'jobs' is a dict: expected a list"):
        parse_json(bad)


def test_log_line_with_wrong_number_of_columns(tmp_path):
    p = tmp_path / "cut_bw.1.log"
    lines = (PERIO / "perio_bw.1.log").read_text().splitlines()
    lines[99] = "3, 18166"  # a cut line
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"cut_bw\.1\.log, line 100: expected 6 comma-separated fields .* got 2"):
        read_log(p)
    q = tmp_path / "three_iops.1.log"
    q.write_text("1000, 5, 0\n2000, 6, 0\n")
    with pytest.raises(ValueError, match=r"three_iops\.1\.log, line 1: 3 comma-separated fields per line"):
        read_log(q)


def test_log_bad_values(tmp_path):
    p = tmp_path / "x_iops.1.log"
    p.write_text("1000, 5, 0, 0, 0\n2000, abc, 0, 0, 0\n")
    with pytest.raises(ValueError, match=r"x_iops\.1\.log, line 2: field 2 is 'abc': expected an integer"):
        read_log(p)
    p.write_text("1000, 5, 0, 0, 0\n2000, 6, 7, 0, 0\n")
    with pytest.raises(ValueError, match=r"x_iops\.1\.log, line 2: ddir field is 7"):
        read_log(p)


def test_log_kind_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown log kind 'latency'.*iops, bw, lat, clat, slat"):
        read_log(PSYNC / "rr16k_psync_lat.1.log", kind="latency")
    p = tmp_path / "samples.txt"
    shutil.copy(PSYNC / "rr16k_psync_lat.1.log", p)
    with pytest.raises(ValueError, match=r"samples\.txt: cannot infer the log kind"):
        read_log(p)
    assert read_log(p, kind="lat")["lat_ns"].iloc[0] == 145639
    with pytest.raises(ValueError, match="read_hist_log"):
        read_log(HIST / "hist_clat_hist.1.log")
    with pytest.raises(ValueError, match="read_log"):
        read_hist_log(PSYNC / "rr16k_psync_lat.1.log")
    fz = tmp_path / "x_bw.1.log.fz"
    fz.write_bytes(b"\x78\x9c\x00")
    with pytest.raises(ValueError, match="inflate-log"):
        read_log(fz)
    with pytest.raises(ValueError, match=r"several kinds \(bw, clat, iops, lat, slat\): pass kind="):
        read_logs(PSYNC)
    with pytest.raises(ValueError, match="no fio log files matched"):
        read_logs(PSYNC, prefix="nope")
    with pytest.raises(ValueError, match="unknown log kind"):
        read_logs(PSYNC, kind="bandwidth")


def test_hist_log_errors(tmp_path):
    row = (HIST / "hist_clat_hist.1.log").read_text().splitlines()[0].split(", ")
    p = tmp_path / "short_clat_hist.1.log"
    p.write_text(", ".join(row[:1003]) + "\n")
    with pytest.raises(ValueError, match=r"short_clat_hist\.1\.log, line 1: 1003 comma-separated fields"):
        read_hist_log(p)
    q = tmp_path / "cut_clat_hist.1.log"
    q.write_text(", ".join(row) + "\n" + ", ".join(row[:500]) + "\n")
    with pytest.raises(ValueError, match=r"cut_clat_hist\.1\.log, line 2: expected 1859 comma-separated fields"):
        read_hist_log(q)
    coarse = tmp_path / "c_clat_hist.1.log"  # coarseness 1: pairs of buckets summed, as fio's hist_sum does
    counts = np.array(row[3:], dtype=np.int64).reshape(-1, 2).sum(axis=1)
    coarse.write_text(", ".join(row[:3] + [str(c) for c in counts]) + "\n")
    h = read_hist_log(coarse)
    assert h.attrs["coarseness"] == 1 and h["count"].sum() == 37256
    assert read_hist_log(tmp_path / "c_clat_hist.1.log", include_zero=True)["bucket"].max() == 927
