"""Run the fuzz targets for a bounded time each, with corpora seeded from tests/data.

Usage: python tests/fuzz/run.py [--seconds N] [--workdir DIR] [TARGET ...]

Each target runs in its own process (``tests/fuzz/fuzz_fio.py TARGET`` for the fio front end,
``tests/fuzz/fuzz_readers.py TARGET`` for the aws, k8s and catalog readers) for N seconds
(``FUZZ_SECONDS`` in the Makefile). Its corpus lives in ``DIR/TARGET/corpus`` (default
``build/fuzz``), seeded from the repository's real files (and, for the readers, the reproducers of
issue 19) on every run and kept between runs;
a crash, timeout or out-of-memory input is written to ``DIR/TARGET/`` and makes this script exit 1.
Every input found that way becomes a regular test in tests/python.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, List

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
HARNESS = Path(__file__).resolve().with_name("fuzz_fio.py")
READERS_HARNESS = HARNESS.with_name("fuzz_readers.py")
FIO_TARGETS = ["jobfile", "cmdline", "json", "normal", "log", "hist", "predict"]
# tests/fuzz/fuzz_readers.py's targets: the real files of each (tests/data, the shipped catalog),
# as globs under the repository.
READER_SEEDS = {
    "volumes": ["tests/data/aws/ec2-describe-volumes.*.json"],
    "instances": ["tests/data/aws/ec2-describe-instances.*.json"],
    "metric_data": ["tests/data/aws/cloudwatch-get-metric-data.*.moto.json", "tests/data/aws/*.awscli-examples.json"],
    "queries": ["tests/data/aws/cloudwatch-get-metric-data.queries.json"],
    "statistics": ["tests/data/aws/cloudwatch-get-metric-statistics.[ma]*.json"],
    "request": ["tests/data/aws/cloudwatch-get-metric-statistics.request.json"],
    "metrics_csv": ["tests/data/aws/cloudwatch-metrics.moto.csv"],
    "claims": ["tests/data/k8s/*.yaml"],
    "catalog_csv": ["bindings/python/ebssim/data/instance_types.csv"],
    "catalog_json": ["tests/data/aws/ec2-describe-instance-types.*.json"],
}
_BRACKETS = b"[" * 100_000
_NOT_UTF8 = b'{"Volumes": [\xff]}'
# The fuzzing findings of issue 19, each kept in its target's corpus (tests/python/test_errors_readers.py
# holds the same cases as tests).
REPRODUCERS: Dict[str, List[bytes]] = {
    "volumes": [
        _BRACKETS,
        _NOT_UTF8,
        b'{"Volumes": [{"VolumeId": "vol-0a", "VolumeType": "gp2", "Size": 1e400}]}',
        b'{"Volumes": [{"VolumeId": "vol-0a", "VolumeType": "io1", "Size": 100, "Iops": Infinity}]}',
    ],
    "instances": [_BRACKETS, _NOT_UTF8],
    "metric_data": [
        _BRACKETS,
        _NOT_UTF8,
        b'{"MetricDataResults": [{"Id": "r", "Label": "vol-0a VolumeReadOps Sum 60", "Timestamps": '
        b'["9999-05-01T00:00:00+00:00"], "Values": [1.0], "StatusCode": "Complete"}]}',
    ],
    "queries": [_BRACKETS, _NOT_UTF8],
    "statistics": [
        _BRACKETS,
        _NOT_UTF8,
        b'{"Label": "VolumeReadOps", "Datapoints": '
        b'[{"Timestamp": "1000-01-01T00:00:00Z", "Sum": 1.0, "Unit": "Count"}]}',
    ],
    "request": [_BRACKETS, _NOT_UTF8, b'{"MetricName": "VolumeReadOps", "Period": 1e400}'],
    "metrics_csv": [
        b"Timestamp,VolumeId,MetricName,Statistic,Period,Unit,Value\n"
        b"2262-04-12T00:00:00Z,vol-0a,VolumeReadOps,Sum,60,Count,1\n",
        b"Timestamp,VolumeId\xff\n",
    ],
    "claims": [
        b"a: !!timestamp x\n",
        b"a: !!int\n",
        b"a: !!int x\n",
        b"[" * 5000,
        b"a: \xff\n",
        b"kind: PersistentVolume\nmetadata: {name: a}\nspec: x\n",
        b"kind: PersistentVolume\nmetadata: {name: a}\nspec: {csi: x}\n",
        b"kind: PersistentVolume\nmetadata: {name: a}\nspec: {csi: {driver: ebs.csi.aws.com}, capacity: x}\n",
        b"kind: PersistentVolumeClaim\nmetadata: {name: a}\nspec: [x]\n",
    ],
    "catalog_csv": [b"instance_type,hypervisor\nm5.large,nitro\n", b"instance_type\xff\n"],
    "catalog_json": [_BRACKETS, _NOT_UTF8, b'{"InstanceTypes": [{"InstanceType": "x", "EbsInfo": []}]}'],
}
LOG_KINDS = ("iops", "bw", "lat", "clat", "slat")

COMMAND_LINES = [
    "--name=rr --filename=/dev/nvme1n1 --rw=randread --bs=4k --ioengine=libaio --iodepth=32 --runtime=60 --time_based",
    "--rw=randrw --rwmixread=70 --bs=4k,64k --numjobs=4 --group_reporting --name=a --filename=/dev/x:/dev/y",
    "--name=s --size=1g --loops=2 --ramp_time=5s --thinktime=500 --thinktime_blocks=8 --rate_iops=300,100",
    "--name=l --write_iops_log=l --write_lat_log --log_avg_msec=1000 --per_job_logs=0 --kb_base=1000",
    "--output-format=json --section=b --readonly jobs.fio --name=global --stonewall --new_group",
]
VOLUME_SPECS = ["/dev/x=gp3:size=100,iops=3000,throughput=125", "/mnt=gp2:size=8,burst_balance=50", "/d=io2"]


def seeds(target: str) -> Iterable[Path]:
    fio = DATA / "fio"
    if target in ("jobfile", "predict"):
        yield from sorted((DATA / "fio_jobs").glob("*.fio"))
        yield from sorted(fio.glob("*/*.fio"))
        yield from sorted((ROOT / "examples").glob("*.fio"))
    elif target == "json":
        yield from sorted(fio.glob("*/*.json"))
        yield from sorted(fio.glob("*/stdout.txt"))
    elif target == "normal":  # fio's text output: fio 3.33 made here, fio 2.x and 3.32 as published
        yield from sorted(fio.glob("*/*.txt"))
        yield from sorted((DATA / "real-ebs").glob("0[13]*/raw/**/*.md"))
        yield from sorted((DATA / "real-ebs").glob("0[13]*/raw/*.txt"))
    elif target == "log":
        for p in sorted(fio.glob("*/*.log")):
            if any(p.name.split(".")[0].endswith("_" + k) for k in LOG_KINDS) and p.stat().st_size:
                yield p
    elif target == "hist":
        yield from sorted(fio.glob("*/*_clat_hist.*.log"))
    for pattern in READER_SEEDS.get(target, []):
        yield from sorted(ROOT.glob(pattern))


def write_seeds(target: str, corpus: Path) -> int:
    corpus.mkdir(parents=True, exist_ok=True)
    n = 0
    for p in seeds(target):
        shutil.copyfile(p, corpus / f"seed-{p.parent.name}-{p.name}")
        n += 1
    if target == "cmdline":
        # fuzz_cmdline's first byte picks the form: 0 a string, 2 a --volume spec.
        for i, line in enumerate(COMMAND_LINES):
            (corpus / f"seed-cmd-{i}").write_bytes(b"\x00" + line.encode())
        for i, spec in enumerate(VOLUME_SPECS):
            (corpus / f"seed-vol-{i}").write_bytes(b"\x02" + spec.encode())
        n += len(COMMAND_LINES) + len(VOLUME_SPECS)
    for i, data in enumerate(REPRODUCERS.get(target, [])):
        (corpus / f"seed-issue19-{i}").write_bytes(data)
        n += 1
    return n


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60, help="fuzzing time per target (default 60)")
    ap.add_argument("--workdir", type=Path, default=ROOT / "build" / "fuzz")
    ap.add_argument("targets", nargs="*", default=FIO_TARGETS + list(READER_SEEDS))
    args = ap.parse_args(argv)
    failed: Dict[str, int] = {}
    for target in args.targets:
        out = args.workdir / target
        corpus = out / "corpus"
        n = write_seeds(target, corpus)
        print(f"fuzz {target}: {args.seconds} s, corpus {corpus} ({n} seeds)", flush=True)
        cmd = [
            sys.executable,
            str(READERS_HARNESS if target in READER_SEEDS else HARNESS),
            target,
            f"-max_total_time={args.seconds}",
            "-timeout=20",
            "-rss_limit_mb=3072",
            "-max_len=65536",
            "-print_final_stats=1",
            f"-artifact_prefix={out}/",
            str(corpus),
        ]
        log = out / "fuzz.log"
        with open(log, "w") as fh:
            rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=out).returncode
        tail = log.read_text(errors="replace").splitlines()
        stats = [ln for ln in tail if ln.startswith(("stat::number_of_executed_units", "stat::new_units_added"))]
        print(f"  exit {rc}; {'; '.join(s.split('::')[1] for s in stats)}; log {log}", flush=True)
        if rc != 0:
            failed[target] = rc
            print("\n".join("  | " + ln for ln in tail[-30:]), flush=True)
    if failed:
        print(f"fuzz: findings in {', '.join(failed)}: see the artifacts in {args.workdir}", file=sys.stderr)
        return 1
    print("fuzz: no findings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
