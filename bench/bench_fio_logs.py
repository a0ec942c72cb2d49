#!/usr/bin/env python3
"""ebssim's fio log readers against ``pandas.read_csv`` of the same files (issue 22).

    .venv/bin/python bench/bench_fio_logs.py                  # 2 million rows per per-I/O log
    .venv/bin/python bench/bench_fio_logs.py --rows 200000 --repeats 3

Goal: each reader takes at most 1.5 times what ``pandas.read_csv(path, header=None)`` takes on
the same file (the files' sum, for ``read_logs``), with its checks (every field a 64-bit integer
>= 0, one field count, a fio layout, ddir 0..2) and its named, unit-normalised columns.

The logs are written into a temporary directory (not kept) in the formats of real fio 3.33 logs
in tests/data/fio, their rows drawn from those logs' rows (fixed seed), with times of a job at
3,000 IOPS (three I/Os a millisecond; 2 million rows are 11 minutes):

- ``read_log``: a per-I/O clat log with ``log_offset=1`` (``time, clat_ns, ddir, bs, offset,
  prio``), as ``10_perio_log_offset/perio_clat.1.log``;
- ``read_log``, ``log_prio=1``: fio prints the priority as hex (``time, clat_ns, ddir, bs, 0x0000``),
  as ``10_perio_log_offset/perio_prio_clat.2.log``;
- ``read_logs``: four jobs' numbered logs of the first kind, a quarter of the rows each;
- ``read_hist_log``: a clat histogram log of one row a second (1,859 fields a row), each row one
  of ``06_clat_hist_log/hist_clat_hist.1.log``'s rows, its counts scaled.

Each reader's frame is checked against what ``read_csv`` read (times, values, directions) before
the times are compared. Exit status 1 if a check fails or a reader misses the goal.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Callable, List, Tuple

import ebssim.fio as fio
import numpy as np
import pandas as pd
from _timing import interleaved_best
from ebssim.fio.logs import DIRECTIONS

GOAL = 1.5  # a reader's time / pandas.read_csv's, at most
DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "fio"
PERIO = DATA / "10_perio_log_offset"
HIST = DATA / "06_clat_hist_log" / "hist_clat_hist.1.log"


def real_rows(path: Path) -> List[List[str]]:
    return [[f.strip() for f in line.split(",")] for line in path.read_text().splitlines() if line.strip()]


def write_table(path: Path, columns: List[np.ndarray], fmt: List[str]) -> None:
    """Rows of ``columns`` joined by fio's ", ", a chunk of rows per formatting call."""
    line = ", ".join(fmt) + "\n"
    n = len(columns[0])
    with open(path, "w") as f:
        step = 100_000
        for a in range(0, n, step):
            block = [c[a : a + step] for c in columns]
            flat = np.stack(block, axis=1).ravel().tolist()
            f.write((line * len(block[0])) % tuple(flat))


def per_io_log(path: Path, rows: int, seed: int, hex_prio: bool) -> None:
    """A per-I/O clat log of ``rows`` rows drawn from a real one's (its values, directions and
    sizes; offsets in its range), at three I/Os a millisecond."""
    rng = np.random.default_rng(seed)
    real = real_rows(PERIO / ("perio_prio_clat.2.log" if hex_prio else "perio_clat.1.log"))
    pick = rng.integers(0, len(real), rows)
    clat = np.array([int(r[1]) for r in real], dtype=np.int64)[pick]
    ddir = np.array([int(r[2]) for r in real], dtype=np.int64)[pick]
    bs = np.array([int(r[3]) for r in real], dtype=np.int64)[pick]
    t = np.arange(rows, dtype=np.int64) // 3
    if hex_prio:
        prio = np.array([int(r[4], 16) for r in real], dtype=np.int64)[pick]
        write_table(path, [t, clat, ddir, bs, prio], ["%d", "%d", "%d", "%d", "0x%04x"])
    else:
        top = max(int(r[4]) for r in real) // 4096
        offset = rng.integers(0, top + 1, rows) * 4096
        prio = np.array([int(r[5]) for r in real], dtype=np.int64)[pick]
        write_table(path, [t, clat, ddir, bs, offset, prio], ["%d"] * 6)


def hist_log(path: Path, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    real = np.array([[int(x) for x in r] for r in real_rows(HIST)], dtype=np.int64)
    pick = rng.integers(0, len(real), rows)
    scale = rng.uniform(0.5, 1.5, rows)[:, None]
    counts = np.floor(real[pick, 3:] * scale).astype(np.int64)
    t = (np.arange(rows, dtype=np.int64) + 1) * 1000
    cols = [t, real[pick, 1], real[pick, 2], *counts.T]
    write_table(path, cols, ["%d"] * len(cols))


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000, help="rows of each per-I/O log (default 2 million)")
    p.add_argument("--hist-rows", type=int, default=2700, help="rows of the histogram log (default 45 min at 1 s)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=22)
    a = p.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        offset_log = d / "perio_clat.1.log"
        per_io_log(offset_log, a.rows, a.seed, hex_prio=False)
        prio_log = d / "prio_clat.1.log"
        per_io_log(prio_log, a.rows, a.seed + 1, hex_prio=True)
        jobs = d / "jobs"
        jobs.mkdir()
        for j in range(1, 5):
            per_io_log(jobs / f"rr_clat.{j}.log", a.rows // 4, a.seed + 10 + j, hex_prio=False)
        hist = d / "hist_clat_hist.1.log"
        hist_log(hist, a.hist_rows, a.seed + 2)

        def csv(path: Path) -> pd.DataFrame:
            return pd.read_csv(path, header=None)

        cases: List[Tuple[str, List[Path], Callable[[], pd.DataFrame]]] = [
            ("read_log, log_offset", [offset_log], lambda: fio.read_log(offset_log)),
            ("read_log, hex prio", [prio_log], lambda: fio.read_log(prio_log)),
            ("read_logs, 4 jobs", sorted(jobs.iterdir()), lambda: fio.read_logs(jobs)),
            ("read_hist_log", [hist], lambda: fio.read_hist_log(hist)),
        ]
        print(
            f"fio logs of {a.rows:,} rows (read_logs: 4 x {a.rows // 4:,}; histogram: {a.hist_rows:,} rows), "
            f"best of {a.repeats}; goal: reader <= {GOAL:g}x pandas.read_csv of the same files"
        )
        print(f"{'reader':<22} {'MB':>6} {'reader s':>9} {'read_csv s':>10} {'ratio':>6}  goal")
        for name, paths, read in cases:
            (t_csv, frames), (t_read, out) = interleaved_best(
                [lambda paths=paths: [csv(q) for q in paths], read], a.repeats
            )
            raw = pd.concat(frames, ignore_index=True)
            if name == "read_hist_log":
                counts = raw.iloc[:, 3:].to_numpy()
                same = int(out["count"].sum()) == int(counts.sum()) and out.attrs["intervals"] == len(raw)
            else:
                value = "clat_ns"
                same = (
                    np.array_equal(out["time_ms"].to_numpy(), raw[0].to_numpy())
                    and np.array_equal(out[value].to_numpy(), raw[1].to_numpy())
                    and np.array_equal(out["direction"].to_numpy(), np.array(DIRECTIONS)[raw[2].to_numpy()])
                )
            ratio = t_read / t_csv
            met = same and ratio <= GOAL
            ok = ok and met
            mb = sum(q.stat().st_size for q in paths) / 1e6
            verdict = "met" if met else ("MISSED" if same else "MISSED (frames differ)")
            print(f"{name:<22} {mb:>6.1f} {t_read:>9.3f} {t_csv:>10.3f} {ratio:>6.2f}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
