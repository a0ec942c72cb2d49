"""ebssim.fio.read_normal: fio's normal (text) output of fio 2.x and 3.x, on real output.

Fixtures: fio 2.x and fio 3.32 text as published with the real EBS measurements
(tests/data/real-ebs, unedited copies, see their PROVENANCE.md), and fio 3.33 output made on this
project's machine (tests/data/fio/20, 21; their README), case 20 holding the normal report and the
JSON of one run, so that the two readers can be compared figure by figure. Expected values are the
numbers as printed in the raw text, converted by hand (the arithmetic is in the comments).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from ebssim.fio import FioResult, read_json, read_normal

TESTS = Path(__file__).resolve().parents[1]
REAL = TESTS / "data" / "real-ebs"
D01 = REAL / "01_c4xlarge_gp2-100_gp2-300_io1-600_libaio-qd32x16" / "raw" / "script"
GP2_100 = D01 / "c4.xlarge-gp2-io1-benchmark-100gp2.md"
GP2_300 = D01 / "c4.xlarge-gp2-io1-benchmark-300gp2snapshot.md"
IO1 = D01 / "c4.xlarge-gp2-io1-benchmark-100io1.md"
D03 = REAL / "03_c6a-m6a-r6a-m5a_xlarge_io2-100G_psync-x16_instance-caps" / "raw"
FIO = TESTS / "data" / "fio"
BOTH = FIO / "20_normal_json_randrw_mix70" / "20_normal_json_randrw_mix70.txt"
GROUPS = FIO / "21_normal_two_groups" / "21_normal_two_groups.txt"

MIB = 2**20


def one(result: FioResult, direction: str):  # type: ignore[no-untyped-def]
    rows = result.jobs[result.jobs["direction"] == direction]
    assert len(rows) == 1
    return rows.iloc[0]


# --------------------------------------------------------------------------------------------
# fio 2.x (01: c4.xlarge, fio 2.x of Amazon Linux 2, pasted into Markdown after the commands)
# --------------------------------------------------------------------------------------------


def test_fio2_write_run_as_printed():
    runs = read_normal(GP2_100)
    assert len(runs) == 15  # 9 runs on 100 GiB, then the 6 runs of 300 GiB appended (PROVENANCE 01)
    r = runs[0]
    assert r.lines == (16, 43)  # "Starting 16 processes" .. the Disk stats line
    assert r.fio_version is None and r.version is None  # fio 2.x prints no version in this paste
    assert r.preamble[-1].startswith("sudo fio --ioengine=libaio --iodepth=32") and "--rw=randwrite" in r.preamble[-1]
    assert r.preamble[0] == "# c4.xlarge EBS Snapshot testing - 100GB的gp2"
    row = one(r, "write")
    assert (row["jobname"], row["groupid"], row["line"]) == ("fio_test_file", 0, 19)
    # write: io=8657.1MB, bw=49239KB/s, iops=3077, runt=180054msec; issued total=r=0/w=554106/d=0
    assert row["total_ios"] == 554106 and row["runtime_ms"] == 180054
    assert row["iops"] == pytest.approx(1000 * 554106 / 180054)  # 3077.45: fio prints 3077
    assert row["bw_kib_s"] == 49239 and row["bw_bytes_s"] == 49239 * 1024
    # fio 2.x's num2str: 554106 x 16 KiB = 8,865,696 KiB = 8,657 MiB + 928 KiB, printed "8657.1MB"
    # (928 -> 93 -> 10 -> 1): the whole MiB are read
    assert row["io_bytes"] == 8657 * MIB
    # slat (usec): avg=3924.78; clat (usec): min=972, max=506686, avg=162418.94, stdev=28762.28
    assert row["slat_mean_ns"] == pytest.approx(3924.78e3)
    assert row["clat_min_ns"] == 972e3 and row["clat_max_ns"] == 506686e3
    assert row["clat_mean_ns"] == pytest.approx(162418.94e3) and row["clat_stddev_ns"] == pytest.approx(28762.28e3)
    # lat (msec): min=1, max=506, avg=166.34, stdev=19.55
    assert row["lat_min_ns"] == 1e6 and row["lat_mean_ns"] == pytest.approx(166.34e6)
    # clat percentiles (msec): 1.00th=[42] ... 50.00th=[167] ... 99.00th=[192] ... 99.99th=[400]
    assert row["clat_p1_ns"] == 42e6 and row["clat_p50_ns"] == 167e6
    assert row["clat_p99_ns"] == 192e6 and row["clat_p99_99_ns"] == 400e6
    assert (row["usr_cpu_pct"], row["sys_cpu_pct"], row["ctx"], row["minf"]) == (0.14, 0.13, 36506, 154)
    disk = r.disk_util
    assert list(disk["name"]) == ["xvdb"]
    d = disk.iloc[0]
    # xvdb: ios=0/554691, merge=0/3878, ticks=0/25855860, in_queue=25861088, util=100.00%
    assert (d["read_ios"], d["write_ios"], d["write_merges"], d["write_ticks"]) == (0, 554691, 3878, 25855860)
    assert (d["in_queue"], d["util"], d["line"]) == (25861088, 100.0, 43)


def test_fio2_digits_after_the_point_are_not_a_fraction():
    r = read_normal(IO1)[0]
    row = one(r, "write")
    # write: io=1733.3MB, bw=9845.2KB/s, iops=615, runt=180278msec: 1,733 MiB and 9,845 KiB/s
    assert row["io_bytes"] == 1733 * MIB and row["bw_kib_s"] == 9845
    # clat (usec): min=827, max=1524.4K: 1,524 thousand usec (and some) = 1.524 s
    assert row["clat_max_ns"] == 1524e3 * 1e3
    assert row["iops"] == pytest.approx(1000 * 110929 / 180278)  # issued w=110929: 615.3, printed 615


def test_fio2_randrw_has_a_row_per_direction():
    r = read_normal(GP2_100)[2]
    read, write = one(r, "read"), one(r, "write")
    assert (read["line"], write["line"]) == (88, 98)
    assert (read["total_ios"], write["total_ios"]) == (368348, 368141)  # issued total=r=368348/w=368141/d=0
    assert read["clat_p50_ns"] == 41728e3  # read: clat percentiles (usec), 50.00th=[41728]
    assert write["clat_mean_ns"] == pytest.approx(162.41e6)  # write: clat (msec): avg=162.41
    assert write["clat_p50_ns"] == 167e6  # write: clat percentiles (msec), 50.00th=[167]
    d = r.disk_util.iloc[0]
    assert (d["read_ios"], d["write_ios"]) == (185098, 370697)


def test_runs_appended_to_a_file_read_as_in_their_own_file():
    """The 6 runs on 300 GiB are both in their own file and appended to the 100 GiB one."""
    appended = read_normal(GP2_100)[9:]
    alone = read_normal(GP2_300)
    assert len(appended) == len(alone) == 6
    for a, b in zip(appended, alone):
        cols = [c for c in a.jobs.columns if c != "line"]
        assert a.jobs[cols].equals(b.jobs[cols])
        assert a.disk_util.drop(columns="line").equals(b.disk_util.drop(columns="line"))


# --------------------------------------------------------------------------------------------
# fio 3.32 (03: pasted into a Markdown README, partly bold and without indentation)
# --------------------------------------------------------------------------------------------


def test_fio3_from_markdown_with_emphasis():
    runs = read_normal(D03 / "README.md")
    assert len(runs) == 4  # c6a, m6a, r6a, m5a write runs
    c6a = runs[0]
    assert c6a.fio_version == "fio-3.32" and c6a.version == (3, 32)
    assert c6a.job_options == [
        {"rw": "randwrite", "bs": "(R) 16.0KiB-16.0KiB, (W) 16.0KiB-16.0KiB, (T) 16.0KiB-16.0KiB",
         "ioengine": "psync", "iodepth": "1"}
    ]  # fmt: skip
    # "**write: IOPS=40.1k**, BW=626MiB/s (656MB/s)(110GiB/180001msec); 0 zone resets", not indented
    row = one(c6a, "write")
    assert row["line"] == 99
    assert row["iops"] == pytest.approx(1000 * 7211815 / 180001)  # issued rwts: total=0,7211815,0,0
    assert round(row["iops"] / 100) / 10 == 40.1  # as printed: 40.1k
    assert row["bw_bytes_s"] == 626 * MIB and row["io_bytes"] == 110 * 2**30 and row["runtime_ms"] == 180001
    assert row["clat_mean_ns"] == pytest.approx(398.38e3) and row["lat_mean_ns"] == pytest.approx(398.59e3)
    assert row["clat_p50_ns"] == 396e3 and row["clat_p99_9_ns"] == 1123e3
    assert math.isnan(row["slat_mean_ns"])  # psync: fio prints no slat line
    assert row["bw_win_mean_kib_s"] == pytest.approx(641412.19) and row["iops_win_max"] == 54904
    assert c6a.disk_util.iloc[0]["write_ios"] == 7207547
    # m6a: "**_write:IOPS=40.0k_** , BW=626MiB/s ..." and no "fio-3.32" line before it
    m6a = runs[1]
    row = one(m6a, "write")
    assert row["iops"] == pytest.approx(1000 * 7207376 / 180001) and row["clat_p99_9_ns"] == 758e3
    assert m6a.fio_version is None
    # the text between runs is kept as it is, emphasis and all
    assert (
        "The same steps were followed on a **m6a.xlarge** instance and was able to find similar results in "
        "instance as you can see below"
    ) in m6a.preamble


def test_fio3_nanoseconds_and_thousands_suffix():
    runs = read_normal(D03 / "read.txt")
    assert len(runs) == 4  # c6a read, m6a read, m5a write (again), m5a read
    m5a = one(runs[3], "read")
    # clat (nsec): min=1830, max=10842k, avg=994722.27, stdev=108709.40
    assert m5a["clat_min_ns"] == 1830 and m5a["clat_max_ns"] == 10842e3
    assert m5a["clat_mean_ns"] == pytest.approx(994722.27) and m5a["lat_mean_ns"] == pytest.approx(994878.29)
    assert m5a["clat_p50_ns"] == 996e3  # clat percentiles (usec): 50.00th=[  996]
    again, first = runs[2], read_normal(D03 / "README.md")[3]  # the m5a write run, printed twice
    cols = [c for c in first.jobs.columns if c != "line"]
    assert again.jobs[cols].equals(first.jobs[cols])


# --------------------------------------------------------------------------------------------
# fio 3.33, made here
# --------------------------------------------------------------------------------------------


def test_normal_and_json_of_one_run_agree():
    """--output-format=normal,json: the two reports of one run give the same figures, to the
    precision the text prints them with."""
    (normal,) = read_normal(BOTH)
    json_ = read_json(BOTH)  # the JSON document in the same file
    assert normal.fio_version == json_.fio_version == "fio-3.33"
    n, j = normal.jobs, json_.jobs
    assert list(n["direction"]) == list(j["direction"]) == ["read", "write"]
    assert set(j.columns) <= set(n.columns) and set(n.columns) - set(j.columns) == {"line"}
    for col in j.columns:
        for a, b in zip(n[col], j[col]):
            if isinstance(b, str) or col in ("job", "groupid", "error", "total_ios", "short_ios", "drop_ios",
                                              "runtime_ms", "ctx", "majf", "minf", "bw_win_samples",
                                              "iops_win_samples", "bw_win_min_kib_s", "bw_win_max_kib_s",
                                              "iops_win_min", "iops_win_max"):  # fmt: skip
                assert a == b, col
            elif col == "iops":
                assert a == pytest.approx(b, abs=1e-6), col  # both 1000 * total_ios / runtime_ms (JSON: 6 decimals)
            elif isinstance(a, float) and math.isnan(a):
                # what the text does not print: N, job_runtime, elapsed
                assert col.endswith("_n") or col in ("job_runtime_ms", "job_start_ms", "elapsed_s"), col
            elif col in ("io_bytes", "bw_bytes_s", "bw_kib_s"):
                assert a == pytest.approx(b, rel=5e-3), col  # "101MiB/s", "43.4MiB/s": 3 digits
            elif col.endswith(("_min_ns", "_max_ns")):
                assert abs(a - b) <= 1000, col  # whole usec, or nsec with a k suffix
            elif "_p" in col:
                assert abs(a - b) <= 1000, col  # whole usec (fio rounds 80384 ns up to 81)
            elif col.endswith("_ns"):
                assert abs(a - b) <= 5, col  # means and stdevs: 2 decimals of usec (or of nsec)
            else:
                assert a == pytest.approx(b, abs=0.005), col  # window means, per=, usr=, sys=: 2 decimals
    nd = normal.disk_util.drop(columns="line")
    jd = json_.disk_util
    assert list(nd.columns) == [c for c in jd.columns if c in nd.columns]
    for col in nd.columns:
        if col == "util":
            assert nd[col].iloc[0] == pytest.approx(jd[col].iloc[0], abs=0.005)
        else:
            assert nd[col].iloc[0] == jd[col].iloc[0], col
    # the JSON document and the header lines before the normal report are the run's preamble/header
    assert normal.lines is not None and normal.lines[0] == 1
    assert normal.preamble[0] == "{"


def test_two_groups_are_one_run():
    (r,) = read_normal(GROUPS)
    assert r.fio_version == "fio-3.33"
    assert list(zip(r.jobs["jobname"], r.jobs["groupid"], r.jobs["direction"])) == [
        ("rr_latpct", 0, "read"), ("rw_two", 1, "write"), ("rw_two", 1, "write"),
    ]  # fmt: skip
    read = r.jobs.iloc[0]
    # lat_percentiles=1 prints "lat percentiles (usec):" after the clat ones: 99.00th=[ 1860] in both
    assert read["lat_p99_ns"] == 1860e3 and read["clat_p99_ns"] == 1860e3
    assert read["iops"] == pytest.approx(1000 * 8145 / 1002)  # issued rwts: total=8145,0,0,0; 1002msec
    assert r.job_options[1]["rw"] == "randwrite" and r.job_options[0]["ioengine"] == "psync"
    d = r.disk_util.iloc[0]
    assert (d["name"], d["read_ios"], d["write_ios"]) == ("vda", 8145, 12896)
    assert r.lines == (1, 83)


def test_inputs_path_text_and_bytes():
    text = GROUPS.read_text()
    for src in (GROUPS, str(GROUPS), text, GROUPS.read_bytes()):
        (r,) = read_normal(src)
        assert r.jobs["total_ios"].tolist() == [8145, 7652, 8030]
    assert read_normal(text)[0].source == "<text>" and read_normal(GROUPS)[0].source == str(GROUPS)


# --------------------------------------------------------------------------------------------
# Errors: real text with one line changed (derived here, in memory)
# --------------------------------------------------------------------------------------------


def _changed(old: str, new: str) -> str:
    text = GP2_100.read_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    "old, new, line, words",
    [
        ("clat (usec): min=972,", "clat (usec): min=9x2,", 21, "clat min"),
        ("99.00th=[  192]", "99.00th=[  19z]", 27, "percentile"),
        (", runt=180054msec\n", "\n", 19, "direction line"),
        ("xvdb: ios=0/554691,", "xvdb: ios=0-554691,", 43, "ios"),
        ("cpu          : usr=0.14%,", "cpu          : usr=x%,", 32, "cpu"),
        ("issued    : total=r=0/w=554106/d=0", "issued    : total=r=0/w=5541o6/d=0", 36, "issued"),
    ],
)
def test_a_malformed_line_is_named(old, new, line, words):
    with pytest.raises(ValueError, match=rf"<text>, line {line}: .*{words}"):
        read_normal(_changed(old, new))


def test_issued_counts_of_a_direction_without_its_line_are_not_rows():
    """A fuzzing finding: 'issued rwts: total=8,...' with no read line gave a read row without a line."""
    text = (D03 / "README.md").read_text().replace("total=0,7212079,0,0", "total=8,7212079,0,0")
    r6a = read_normal(text)[2]
    assert list(r6a.jobs["direction"]) == ["write"]
    assert r6a.jobs.iloc[0]["total_ios"] == 7212079


def test_a_job_without_statistics_is_named():
    text = "".join(GP2_100.read_text().splitlines(keepends=True)[:18])  # cut after the job header
    with pytest.raises(ValueError, match=r"line 18: fio job 'fio_test_file' has no read, write"):
        read_normal(text)


def test_a_second_direction_line_is_refused():
    line = "  write: io=8657.1MB, bw=49239KB/s, iops=3077, runt=180054msec\n"
    with pytest.raises(
        ValueError, match=r"line 20: a second 'write' line in job 'fio_test_file' \(its first is line 19\)"
    ):
        read_normal(_changed(line, line + line))


def test_percentile_header_without_values():
    text = GROUPS.read_text()
    start = text.index("    lat percentiles (usec):\n") + len("    lat percentiles (usec):\n")
    end = text.index("   bw (", start)
    with pytest.raises(ValueError, match=r"line 17: a percentiles header with no '\|' lines"):
        read_normal(text[:start] + text[end:])


def test_not_fio_output():
    with pytest.raises(ValueError, match=r"<text>: no fio job found"):
        read_normal("hello\nworld\n")
    with pytest.raises(ValueError, match=r"<bytes>: not UTF-8"):
        read_normal(b"\xff\xfe\n")
    with pytest.raises(ValueError, match=r"expected a path, text or bytes"):
        read_normal(3)  # type: ignore[arg-type]
