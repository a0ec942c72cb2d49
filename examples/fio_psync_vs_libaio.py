"""Why fio with psync and numjobs=4 reaches only 4 / service time IOPS.

A common surprise: on a gp3 volume provisioned at 16,000 IOPS,

    fio --name=t --filename=/dev/nvme1n1 --rw=randread --bs=16k --ioengine=psync --iodepth=64 --numjobs=4

reports about 7,800 IOPS, while the same job with --ioengine=libaio reports 16,000. psync is a
synchronous engine: each job has exactly one I/O in flight and waits for it before issuing the
next, whatever iodepth says (fio: "queue depth will be capped at 1"). Four jobs keep four I/Os
in flight, so they complete at most 4 / s I/Os per second, s being the unloaded service time of
one I/O. With ebssim's default service-time model, s = 0.5 ms + 16 KiB / 1,024 MiB/s = 0.5153 ms,
so 4 / s = 7,763 IOPS: the volume is never the limit, and the latency is just s.

With libaio at iodepth=64 the four jobs keep 256 I/Os in flight, which could complete
256 / s = 496,838 IOPS; the volume serves its 16,000, and by Little's law each I/O then takes
256 / 16,000 = 16 ms: the extra depth buys no throughput, only queueing.

This script asks ebssim for both predictions (and for the psync job count that would reach the
cap), and prints them next to the arithmetic:

    python examples/fio_psync_vs_libaio.py [--volume gp3:size=1000,iops=16000,throughput=1000]

The same predictions from the command line:

    ebssim fio --volume /dev/nvme1n1=gp3:size=1000,iops=16000,throughput=1000 \\
        "fio --name=t --filename=/dev/nvme1n1 --rw=randread --bs=16k --ioengine=psync --numjobs=4 ..."
"""

from __future__ import annotations

import argparse
import math
import sys

from ebssim.fio import JobPrediction, parse_volume_spec, predict

DEVICE = "/dev/nvme1n1"
BS = 16 * 1024
NUMJOBS = 4
IODEPTH = 64
RUNTIME_S = 60


def fio_cmd(name: str, engine: str, numjobs: int) -> str:
    return (
        f"fio --name={name} --filename={DEVICE} --rw=randread --bs=16k --ioengine={engine} "
        f"--iodepth={IODEPTH} --numjobs={numjobs} --group_reporting --direct=1 "
        f"--runtime={RUNTIME_S} --time_based"
    )


def show(label: str, j: JobPrediction, numjobs: int) -> None:
    print(
        f"  predicted {label}: {j.iops:,.0f} IOPS ({j.iops / numjobs:,.0f} per job), "
        f"mean latency {j.latency_mean_s * 1e3:.3f} ms, p99 {j.percentiles_s[99.0] * 1e3:.3f} ms, "
        f"bound by {j.bound}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--volume", default="gp3:size=1000,iops=16000,throughput=1000", help="volume SPEC")
    args = ap.parse_args()
    target, vol = parse_volume_spec(f"{DEVICE}={args.volume}")
    volumes = {target: vol}

    s = vol.service_time_s(BS)
    cap = min(vol.max_iops, vol.max_throughput_mib_s * 2**20 / BS)  # 16 KiB counts as one operation
    lat_ms = vol.latency_ms if vol.latency_ms is not None else (s - BS / (1024 * 2**20)) * 1e3
    print(f"Volume {target}: {vol}")
    print(f"Service time of one 16 KiB read: s = {lat_ms:.3f} ms + 16 KiB / 1,024 MiB/s = {s * 1e3:.4f} ms")
    print(f"The volume allows {cap:,.0f} IOPS of 16 KiB reads.")
    print()

    # Each engine on its own fresh volume, as two separate experiments: run back to back, the
    # libaio run would also spend the second of the cap the volume saved while psync stayed below
    # it (overshoot, docs/model.md), 16,533 IOPS over its 30 s instead of 16,000.
    (psync,) = predict([fio_cmd("psync", "psync", NUMJOBS)], volumes, log_dir=None).jobs
    (libaio,) = predict([fio_cmd("libaio", "libaio", NUMJOBS)], volumes, log_dir=None).jobs

    n_psync = NUMJOBS * 1
    offered = n_psync / s
    print(f"psync, numjobs={NUMJOBS}, iodepth={IODEPTH} (ignored: a sync engine has one I/O in flight per job)")
    print(f"  in flight: {NUMJOBS} jobs x 1 = {n_psync}")
    if offered < cap:
        print(
            f"  rule: {n_psync} / {s * 1e3:.4f} ms = {offered:,.0f} IOPS ({offered / NUMJOBS:,.0f} per job) "
            f"< {cap:,.0f}: the volume never binds; latency = s = {s * 1e3:.3f} ms"
        )
    else:
        print(f"  rule: {n_psync} / {s * 1e3:.4f} ms = {offered:,.0f} IOPS >= {cap:,.0f}: the volume binds")
    show(f"psync numjobs={NUMJOBS}", psync, NUMJOBS)
    print()

    n_aio = NUMJOBS * IODEPTH
    offered = n_aio / s
    print(f"libaio, numjobs={NUMJOBS}, iodepth={IODEPTH}")
    print(f"  in flight: {NUMJOBS} jobs x {IODEPTH} = {n_aio}")
    if offered > cap:
        print(
            f"  rule: {n_aio} / {s * 1e3:.4f} ms = {offered:,.0f} IOPS offered > {cap:,.0f}: capped at "
            f"{cap:,.0f}; latency (Little's law) = {n_aio} / {cap:,.0f} = {n_aio / cap * 1e3:.3f} ms"
        )
    else:
        print(f"  rule: {n_aio} / {s * 1e3:.4f} ms = {offered:,.0f} IOPS < {cap:,.0f}; latency = s")
    show(f"libaio iodepth={IODEPTH} numjobs={NUMJOBS}", libaio, NUMJOBS)
    print()

    need = math.ceil(cap * s)
    print(f"In flight needed to reach the cap: {cap:,.0f} x {s * 1e3:.4f} ms = {cap * s:.2f}, so {need} psync jobs")
    (more,) = predict([fio_cmd(f"psync_{need}", "psync", need)], volumes, log_dir=None).jobs
    show(f"psync numjobs={need}", more, need)
    print()
    if psync.bound == "demand":
        print(
            f"Takeaway: with a sync engine, IOPS = numjobs / service time. {NUMJOBS} psync jobs measure the "
            f"latency of one I/O, not the volume; {need} jobs (or an async engine at a modest depth) reach "
            f"the {cap:,.0f} IOPS the volume allows, and deeper queues past that only add latency."
        )
    else:
        print(
            f"Takeaway: this volume is slow enough that {NUMJOBS} psync jobs already reach its "
            f"{cap:,.0f} IOPS; deeper queues past {need} in flight only add latency."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
