"""How far data set 05's runs went over the limit that held them, against the idle time before
each run: the evidence for a token-bucket limiter with about a second of depth (docs/model.md,
"io2's own shape in 05"). Not part of the model: it reads the fio JSON of
tests/data/real-ebs/05_* and prints, run by run in the order they ran, the limit that held (the
least of the volume's IOPS cap x block size, its throughput cap and r5b.large's 1,250 MB/s), the
seconds of that limit moved beyond limit x runtime, and the idle time before the run (the time
between fio's end-of-run timestamps minus the run's runtime).

    .venv/bin/python scripts/overshoot.py
"""

from __future__ import annotations

from accuracy import runs05_in_order  # this directory: the runs as the accuracy report reads them

INSTANCE_MIB_S = 1250e6 / 2**20  # r5b.large's maximum EBS bandwidth, 1,250 MB/s
# device: (IOPS cap, throughput cap MiB/s), PROVENANCE 05
CAPS = {
    "nvme1n1": (4000.0, 1000.0),
    "md0": (8000.0, 2000.0),
    "nvme4n1": (16000.0, 4000.0),  # io2 as the model has it (4,000 MiB/s): the instance holds 128 and 256 KiB
    "nvme5n1": (16000.0, 1000.0),
}


def main() -> None:
    print(f"{'device':8} {'bs KiB':>6} {'limit':>22} {'idle before s':>17} {'extra s of the limit':>20}")
    previous, last_device = None, ""
    for end_ms, device, runtime, name, write in runs05_in_order():
        bs = float(name.split("kb_")[0].split("-")[-1])
        mib = write["io_bytes"] / 1024.0
        iops, tput = CAPS[device]
        limits = {"IOPS": iops * bs / 1024, "volume MiB/s": tput, "instance MiB/s": INSTANCE_MIB_S}
        which = min(limits, key=lambda k: limits[k])
        limit = limits[which]
        extra = (mib - limit * runtime) / limit
        idle = "(first)" if previous is None else f"{(end_ms - previous) / 1e3 - runtime:.2f}"
        if previous is not None and device != last_device:
            idle += " new device"
        held = f"IOPS {iops:.0f}" if which == "IOPS" else f"{which} {limit:.0f}"
        print(f"{device:8} {bs:6g} {held:>22} {idle:>17} {extra:20.2f}")
        previous, last_device = end_ms, device


if __name__ == "__main__":
    main()
