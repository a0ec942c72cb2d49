"""``ebssim cost`` and ``ebssim advise`` (wired into :mod:`ebssim.cli`).

ebssim cost --region REGION [--output-format normal|json] [--io-requests-per-month N] SPEC [SPEC ...]
ebssim advise --region REGION [--metrics FILE]... [--queries FILE] [--device DEVICE=ID]... [--disk-info FILE]
              [--members SET_ID=ID,ID...]... [--volume-id ID]... [--instance TYPE] [--headroom PCT]
              [--job-minutes M] [--job-io-size SIZE] [--max-in-flight N] [--p99-ms MS] [--alarm-minutes M]
              [--recent-modifications ID=N]... [--output-format normal|json]
              INPUT [INPUT ...]

An INPUT is an ``aws ec2 describe-volumes`` JSON file, a Kubernetes manifest file (YAML or
JSON), a SPEC (``gp2:size=2000``, or a striped set ``raid0:members=2+gp2:size=500``) or ``VOLUME_ID=SPEC``
(so metrics can name it). A ``--metrics`` FILE is CloudWatch's (get-metric-data JSON, or CSV) or a
Prometheus ``query_range`` answer (JSON with ``status`` and ``data``, told apart by its content:
:func:`ebssim.prometheus.is_answer`), whose devices ``--device`` and ``--disk-info`` map to the
INPUTs' ids.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Tuple, Union

# Only what the parser needs is imported here (`ebssim --help` stays fast); the rest in run_*.
from .. import aws
from ..cost import PRICES_AS_OF, io_requests_of, monthly_cost, prices
from ..volumes import VOLUME_TYPES
from ._plan import MODIFICATION_RULE, check_recent_modifications, modify_volume_plan

if TYPE_CHECKING:
    from .. import k8s
    from ..stripes import StripedSet
    from ..volumes import Volume

_ID_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._/-]*)=(.+)$")


def add_parsers(sub: Any) -> None:
    """Add the ``cost`` and ``advise`` sub-commands to the ``ebssim`` parser."""
    types = " ".join(VOLUME_TYPES)
    c = sub.add_parser(
        "cost",
        help="monthly list price of EBS volumes in a region",
        description=f"Monthly on-demand list price of each SPEC in REGION (AWS's price list of {PRICES_AS_OF}, "
        "USD; snapshots not included).",
    )
    c.add_argument("--region", required=True, help="region code, e.g. eu-west-1")
    c.add_argument("--output-format", choices=["normal", "json"], default="normal")
    c.add_argument(
        "--io-requests-per-month",
        type=float,
        default=0.0,
        metavar="N",
        help="I/O requests in the month, billed for standard volumes (default 0)",
    )
    c.add_argument(
        "specs",
        nargs="+",
        metavar="SPEC",
        help=f"TYPE[:size=,iops=,throughput=] as for 'ebssim fio --volume'; TYPE one of {types}",
    )
    a = sub.add_parser(
        "advise",
        help="advise gp2 -> gp3 and io1/io2 -> gp3 (or io1 -> io2) migrations, priced and checked by replay",
        description="For each volume: gp3 (or io2) settings that keep its performance, the monthly cost of the "
        "current volume, of gp3 with defaults and of the advice, and throttled minutes and job time of each under "
        "the CloudWatch metrics replayed (or a stated batch job); a fleet summary; aws ec2 modify-volume commands "
        "and, for Kubernetes inputs, VolumeAttributesClass manifests and PVC patches.",
    )
    a.add_argument("--region", required=True, help="region code, e.g. eu-west-1")
    a.add_argument(
        "--metrics",
        action="append",
        default=[],
        metavar="FILE",
        help="CloudWatch metrics: aws cloudwatch get-metric-data output (JSON) or CSV; or a Prometheus query_range "
        "answer of node_exporter's disk counters (JSON with status and data; METRIC=FILE for a rate() answer, "
        "which has no metric name); repeatable",
    )
    a.add_argument(
        "--device",
        action="append",
        default=[],
        metavar="DEVICE=ID",
        help="Prometheus: the device (or INSTANCE/DEVICE) is the INPUT with this id (a volume, or a striped set "
        "for its md device); repeatable",
    )
    a.add_argument(
        "--disk-info",
        metavar="FILE",
        help="Prometheus: node_disk_info's answer (JSON): devices whose NVMe serial is an EBS volume id are it",
    )
    a.add_argument(
        "--members",
        action="append",
        default=[],
        metavar="SET_ID=ID,ID...",
        help="a striped set's member volume ids, whose metrics summed are the set's demand; repeatable",
    )
    a.add_argument(
        "--volume-id",
        action="append",
        default=[],
        metavar="ID",
        help="advise only these volumes of the INPUTs (repeatable)",
    )
    a.add_argument("--queries", metavar="FILE", help="the get-metric-data request's MetricDataQueries (JSON)")
    a.add_argument("--instance", metavar="TYPE", help="run each volume on its own instance of this type")
    a.add_argument("--headroom", type=float, default=20.0, metavar="PCT", help="added to the observed p99 (20)")
    a.add_argument("--job-minutes", type=float, default=60.0, metavar="M", help="synthetic job length (60)")
    a.add_argument("--job-io-size", default="16k", metavar="SIZE", help="synthetic job's I/O size (16k)")
    a.add_argument(
        "--max-in-flight",
        default="auto",
        metavar="N",
        help="the application's concurrency: auto (the largest VolumeQueueLength of the metrics, where they hold "
        "it), peak (that, required), measured (each period's), none, or a number of I/Os (also the synthetic "
        "job's); with it each choice reports its device latency p50 and p99",
    )
    a.add_argument(
        "--p99-ms",
        type=float,
        metavar="MS",
        help="a bound on the advice's device p99: gp3 IOPS (then throughput) raised to keep within it; needs the "
        "application's concurrency (--max-in-flight, or VolumeQueueLength in the metrics)",
    )
    a.add_argument("--alarm-minutes", type=float, default=15.0, metavar="M", help="BurstBalance alarm warning (15)")
    a.add_argument(
        "--recent-modifications",
        action="append",
        default=[],
        metavar="ID=N",
        help="the volume had N modifications in the last 24 hours: warn when the plan passes AWS's limit",
    )
    a.add_argument("--output-format", choices=["normal", "json"], default="normal")
    a.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="describe-volumes JSON, Kubernetes manifest (YAML/JSON), SPEC (raid0: a striped set) or VOLUME_ID=SPEC",
    )


def run_cost(args: argparse.Namespace) -> Tuple[str, int]:
    """The ``ebssim cost`` report and exit status."""
    p = prices(args.region)
    n = io_requests_of(args.io_requests_per_month, "--io-requests-per-month")
    from ..stripes import StripedSet, target_from_spec  # here: it imports numpy, `ebssim --help` must not

    costs = []
    for s in args.specs:
        target = target_from_spec(s)  # a volume, or a striped set priced as the sum of its members
        if isinstance(target, StripedSet):
            costs.append(target.monthly_cost(p, spec=s))
        else:
            costs.append(monthly_cost(target, p, io_requests_per_month=n, spec=s))
    if args.output_format == "json":
        doc = {
            "region": p.region,
            "prices_as_of": p.prices_as_of,
            "currency": "USD",
            "volumes": [c.to_dict() for c in costs],
        }
        return json.dumps(doc, indent=2) + "\n", 0
    width = max(len(s) for s in args.specs)
    lines = [f"{p.region} ({p.location}), AWS list prices of {p.prices_as_of}, USD per month"]
    for c in costs:
        parts = ", ".join(f"{k} {v:.2f}" for k, v in c.breakdown.items() if v)
        lines.append(f"  {c.spec:{width}}  {c.monthly_usd:10.2f}  ({parts or 'free'})")
    if len(costs) > 1:
        lines.append(f"  {'total':{width}}  {sum(c.monthly_usd for c in costs):10.2f}")
    return "\n".join(lines) + "\n", 0


def _looks_like_path(text: str) -> bool:
    return text.endswith((".json", ".yaml", ".yml", ".csv")) or text.startswith(("/", "./", "../"))


def read_inputs(inputs: List[str]) -> Tuple[Dict[str, Union[Volume, StripedSet]], List[k8s.Claim]]:
    """Volumes by id from INPUTs, and the Kubernetes claims among them."""
    from .. import k8s
    from .._files import load_json, read_text
    from ..stripes import target_from_spec  # a volume or a striped set (raid0:...)

    volumes: Dict[str, Union[Volume, StripedSet]] = {}
    claims: List[k8s.Claim] = []

    def add(vid: str, vol: Union[Volume, StripedSet], where: str) -> None:
        if vid in volumes:
            raise ValueError(f"INPUT {where}: volume {vid} is given twice")
        volumes[vid] = vol

    for item in inputs:
        path = Path(item)
        if path.exists() and not path.is_dir():  # a FIFO or device too: the reader refuses it, naming it
            what = "an INPUT: aws ec2 describe-volumes JSON or Kubernetes manifests"
            text = read_text(item, aws.MAX_JSON_BYTES, what, "ebssim.aws.MAX_JSON_BYTES")
            doc: Any = None
            if text.lstrip("\ufeff \t\r\n")[:1] in ("{", "["):
                try:
                    doc = load_json(text, item, what)
                except ValueError:  # YAML in flow style, or broken: the manifest reader says which
                    doc = None
            pages = doc if isinstance(doc, list) else [doc]
            if pages and all(isinstance(p, dict) and "Volumes" in p for p in pages):
                for vid, vol in aws.read_volumes(str(path)).items():
                    add(vid, vol, item)
                continue
            if doc is not None and not (isinstance(doc, dict) and "kind" in doc):
                raise ValueError(
                    f"INPUT {item}: neither aws ec2 describe-volumes output (no Volumes) nor a Kubernetes manifest "
                    f"(no kind)"
                )
            found = k8s.read_claims(str(path))
            if not found:
                raise ValueError(f"INPUT {item}: the manifests hold no EBS volume (no claim of an EBS StorageClass)")
            for c in found:
                add(c.volume_id, c.volume, item)
            claims.extend(found)
        elif _looks_like_path(item):
            raise ValueError(f"INPUT {item}: no such file")
        else:
            m = _ID_SPEC.match(item)
            if m and m.group(1) not in VOLUME_TYPES and ":" not in m.group(1):
                add(m.group(1), target_from_spec(m.group(2)), item)
            else:
                add(item, target_from_spec(item), item)
    return volumes, claims


def _devices(items: List[str]) -> Dict[Any, str]:
    """``--device DEVICE=ID`` / ``INSTANCE/DEVICE=ID`` as ebssim.prometheus's ``devices``."""
    out: Dict[Any, str] = {}
    for item in items:
        key, eq, vid = item.rpartition("=")
        if not eq or not key or not vid:
            raise ValueError(f"--device {item!r}: expected DEVICE=ID or INSTANCE/DEVICE=ID, e.g. nvme1n1=vol-0123...")
        instance, slash, device = key.rpartition("/")
        out[(instance, device) if slash else device] = vid
    return out


def _metrics(paths: List[str], queries: Any, devices: List[str], disk_info: Any) -> Any:
    import pandas as pd

    from .. import prometheus

    frames = []
    answers: List[Any] = []
    for p in paths:
        src = prometheus.source_of(p)
        if isinstance(src, tuple):  # METRIC=FILE: a rate() answer
            answers.append(src)
        elif prometheus.is_answer(p):
            answers.append(p)
        elif p.endswith(".csv"):
            frames.append(aws.read_metrics_csv(p))
        else:
            frames.append(aws.read_metric_data(p, queries=queries))
    if answers:
        if not devices and disk_info is None:
            raise ValueError(
                "--metrics: Prometheus answers name devices, not volumes: map them with --device DEVICE=ID "
                "or --disk-info FILE (node_disk_info, by NVMe serial)"
            )
        frames.append(prometheus.read_metrics(*answers, devices=_devices(devices), disk_info=disk_info))
    elif devices or disk_info is not None:
        raise ValueError("--device and --disk-info map the devices of Prometheus answers: give one with --metrics")
    return aws.check_metrics(pd.concat(frames, ignore_index=True)) if len(frames) > 1 else frames[0]


def _in_flight(text: str) -> Union[str, float, None]:
    """``--max-in-flight``: auto, peak, measured, none or a number of I/Os (checked by ``advise``)."""
    if text in ("auto", "peak", "measured"):
        return text
    if text == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(
            f"--max-in-flight {text!r}: expected auto, peak, measured, none or a number of I/Os in flight"
        ) from None


def _members(items: List[str]) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for item in items:
        sid, eq, ids = item.partition("=")
        if not eq or not sid or not ids:
            raise ValueError(f"--members {item!r}: expected SET_ID=ID,ID,... (the set's member volume ids)")
        if sid in out:
            raise ValueError(f"--members {item!r}: the set {sid} is given twice")
        out[sid] = [i.strip() for i in ids.split(",")]
    return out


def run_advise(args: argparse.Namespace) -> Tuple[str, int]:
    """The ``ebssim advise`` report and exit status."""
    from .. import k8s
    from ._advisor import BatchJob, advise
    from ._alarms import warning_minutes_of

    prices(args.region)  # an unknown region fails before any work
    alarm_minutes = warning_minutes_of(args.alarm_minutes, "--alarm-minutes")
    volumes, claims = read_inputs(args.inputs)
    if args.volume_id:
        unknown = [v for v in args.volume_id if v not in volumes]
        if unknown:
            raise ValueError(f"--volume-id {', '.join(unknown)}: not among the INPUTs' volumes ({', '.join(volumes)})")
        volumes = {v: volumes[v] for v in args.volume_id}
        claims = [c for c in claims if c.volume_id in volumes]
    recent: Dict[str, int] = {}
    for item in args.recent_modifications:
        vid, eq, n = item.partition("=")
        if not eq or not n.isdigit():
            raise ValueError(f"--recent-modifications {item!r}: expected VOLUME_ID=N, N a whole number")
        recent[vid] = int(n)
    # Before the replays: a count for a volume the advice does not hold is a typo, not a no-op.
    recent = check_recent_modifications(recent, list(volumes), "--recent-modifications")
    if args.queries and not args.metrics:
        raise ValueError("--queries needs --metrics")
    members = _members(args.members)
    if members and not args.metrics:
        raise ValueError("--members names whose metrics are a striped set's: it needs --metrics")
    if (args.device or args.disk_info) and not args.metrics:
        raise ValueError("--device and --disk-info map the devices of Prometheus answers: give one with --metrics")
    metrics = _metrics(args.metrics, args.queries, args.device, args.disk_info) if args.metrics else None
    fleet = advise(
        volumes,
        args.region,
        metrics=metrics,
        instance=args.instance,
        headroom_pct=args.headroom,
        job=BatchJob(minutes=args.job_minutes, io_size=args.job_io_size),
        alarm_minutes=alarm_minutes,
        max_in_flight=_in_flight(args.max_in_flight),
        p99_ms=args.p99_ms,
        members={k: v for k, v in members.items() if k in volumes} if args.volume_id else members,
    )
    plan = modify_volume_plan(fleet, recent_modifications=recent)
    manifests, patches = k8s.advice_manifests(claims, {v.volume_id: v.advice.volume for v in fleet.volumes})
    if args.output_format == "json":
        doc = fleet.to_dict()
        doc["modify_volume"] = {"commands": plan.commands, "warnings": plan.warnings, "rule": MODIFICATION_RULE}
        if claims:
            doc["kubernetes"] = {"volume_attributes_classes": manifests, "pvc_patches": patches}
        return json.dumps(doc, indent=2) + "\n", 0
    text = fleet.to_normal()
    if plan.commands:
        text += "\naws ec2 modify-volume, one modification per volume (" + MODIFICATION_RULE + "):\n"
        text += "".join(f"  {c}\n" for c in plan.commands)
        text += "".join(f"  warning: {w}\n" for w in plan.warnings)
    if patches:
        text += "\nKubernetes (apply these or the modify-volume commands, not both):\n" + manifests
        text += "".join(f"{c}\n" for c in patches)
    return text, 0
