"""How long ebssim.fit takes on a 1-hour, 1-second log of a gp2 volume (issue 9: well under a second).

The capture is made by ebssim itself (``ebssim.fio.predict`` writes fio's job file, JSON and a
windowed iops log): a 100 GiB gp2 at queue depth 32 for 3,600 s, whose bucket runs dry at
2,000 s. The script checks the fit (100 GiB, a full bucket, the cliff at 2,000 s), then times
``ebssim.fit.fit(..., type="gp2")`` best of 5, and the first call of the process.

    python bench/bench_fit.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import ebssim
import ebssim.fio
import ebssim.fit


def capture(directory: Path, seconds: int = 3600) -> Path:
    job = directory / "cliff.fio"
    job.write_text(
        "[rr]\nfilename=/dev/nvme1n1\nrw=randread\nbs=4k\nioengine=libaio\niodepth=32\ntime_based\n"
        f"runtime={seconds}\nwrite_iops_log=rr\nlog_avg_msec=1000\n"
    )
    pred = ebssim.fio.predict([str(job)], {"/dev/nvme1n1": ebssim.gp2(100)}, log_dir=str(directory))
    (directory / "cliff.json").write_text(json.dumps(pred.to_json()))
    return directory


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = capture(Path(tmp))
        t = time.perf_counter()
        f = ebssim.fit.fit([d], type="gp2")
        first = time.perf_counter() - t
        assert f.parameter("size_gib").value == 100, f
        assert abs((f.cliff_time_s or 0) - 2000) <= 1, f
        times = []
        for _ in range(5):
            t = time.perf_counter()
            f = ebssim.fit.fit([d], type="gp2")
            times.append(time.perf_counter() - t)
        windows = sum(len(j.iops) for j in f.capture.jobs)
        print(f"gp2 100 GiB, {windows} windows of 1 s: size {f.parameter('size_gib').value:g} GiB, cliff at")
        print(f"  {f.cliff_time_s:.2f} s, {f.engine_runs} engine runs of {f.dt_s:g} s steps")
        print(f"ebssim.fit.fit(..., type='gp2'): best of 5 {min(times):.3f} s, first call {first:.3f} s")


if __name__ == "__main__":
    main()
