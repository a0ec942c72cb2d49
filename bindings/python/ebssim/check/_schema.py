"""The schema of a capacity plan (``ebssim check PLAN.yaml``) and its validator.

The plan is YAML (PyYAML's safe loader, one document). Every mapping's keys are checked against
the schema below: an unknown key is an error with the closest allowed key, a missing required
key is an error, and every value's type is checked before anything is read or simulated. Each
error is a :class:`PlanError` naming the plan file, the line, the key's path within the plan
(``criteria.p99_ms``, ``volumes["/dev/nvme1n1"].id``), the value and what is allowed.

The criteria are :class:`ebssim.testing.Plan`'s fields, read from the dataclass: the plan adds
no criterion of its own and restates none of their rules (their ranges are checked by ``Plan``).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["PlanError", "Key", "SCHEMA", "CRITERIA", "WORKLOAD_KINDS", "validate", "key_path"]


class PlanError(ValueError):
    """A plan that cannot be read: not YAML, a key the schema does not know, a value of the wrong
    type or out of range, a file it names that cannot be read.

    Attributes
    ----------
    source : str
        The plan file (or ``"<plan>"`` for text).
    key : str
        The key's path within the plan, e.g. ``criteria.p99_ms`` (empty for the whole plan).
    line : int or None
        The line of the key in the plan, when known.
    reason : str
        The message without the location.
    """

    def __init__(self, reason: str, *, source: str = "<plan>", key: str = "", line: Optional[int] = None) -> None:
        self.source = source
        self.key = key
        self.line = line
        self.reason = reason
        where = source + (f", line {line}" if line is not None else "")
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


@dataclass(frozen=True)
class Key:
    """One key of the schema: what its value must be, and what it means (docs/check.md shows these)."""

    kind: str
    """``string``, ``number``, ``flag``, ``mapping``, ``size`` (bytes or ``"16k"``), ``strings``
    (one string or a list of them), ``number-or-string``."""
    doc: str
    required: bool = False


#: The keys of each part of a plan. ``volumes`` maps each volume's name to a SPEC or to one of
#: the mappings of ``volume``; ``workload`` has exactly one of ``fio``, ``trace``, ``metrics``,
#: ``prometheus``.
SCHEMA: Dict[str, Dict[str, Key]] = {
    "plan": {
        "name": Key(
            "string",
            "what the plan is about: the report's title, the JUnit test suite's name (default: the file's name)",
        ),
        "instance": Key(
            "string",
            "EC2 instance type whose EBS limits the volumes share, e.g. m5.xlarge, or an RDS DB instance "
            "class, e.g. db.r5b.large (its EC2 type's limits) (default: none)",
        ),
        "volumes": Key(
            "mapping",
            "NAME: SPEC (a volume's, a raid0: striped set's or an rds: instance's storage), or NAME: "
            "{describe_volumes: FILE} or {kubernetes: FILE}",
            required=True,
        ),
        "workload": Key("mapping", "exactly one of fio, trace, metrics, prometheus, and their options", required=True),
        "criteria": Key("mapping", "what every volume must sustain: ebssim.testing.Plan's criteria", required=True),
    },
    "volume": {
        "describe_volumes": Key("string", "an aws ec2 describe-volumes JSON file: the volume whose VolumeId is id"),
        "kubernetes": Key("string", "Kubernetes manifests (EBS CSI driver): the volume of the claim whose id is id"),
        "id": Key("string", "the VolumeId (or pvc/NAMESPACE/NAME of a claim) in the file (default: the NAME)"),
    },
    "workload": {
        "fio": Key(
            "string", "a fio job file, or a 'fio ...' command line: its jobs run together, each for its runtime"
        ),
        "trace": Key(
            "mapping", "NAME: FILE for each volume: a CSV or parquet trace, read by ebssim.OpenLoop.from_pandas"
        ),
        "metrics": Key("strings", "CloudWatch metrics, one file or a list: get-metric-data JSON or CSV (ebssim.aws)"),
        "prometheus": Key(
            "strings",
            "Prometheus query_range answers (JSON) of node_exporter's disk counters, one file or a list "
            "(ebssim.prometheus); METRIC=FILE for an answer of rate(), whose series have no metric name",
        ),
        "devices": Key(
            "mapping",
            "prometheus: DEVICE: VOLUME (a plan volume's name or id), or INSTANCE: {DEVICE: VOLUME} where several "
            "nodes have the device",
        ),
        "disk_info": Key(
            "string", "prometheus: node_disk_info's answer (JSON): each device whose NVMe serial names a volume's id"
        ),
        "queries": Key("string", "metrics: the get-metric-data request's MetricDataQueries (JSON)"),
        "members": Key(
            "mapping",
            "metrics, prometheus: SET: [VolumeId, ...] for a striped set whose members' metrics are its demand "
            "(default: the set's own counters, under its name)",
        ),
        "dt": Key(
            "number",
            "the simulation step in seconds (fio: default 1; trace, metrics, prometheus: default their period)",
        ),
        "gaps": Key("string", "trace, metrics, prometheus: periods without data: error (default), zero or interpolate"),
        "max_in_flight": Key(
            "number-or-string",
            "trace, metrics, prometheus: the application's bound on outstanding I/Os (metrics, prometheus: a number, "
            "measured (each period's VolumeQueueLength) or peak (the largest))",
        ),
        "io_size": Key("size", "trace: the I/O size when the trace has no bytes, e.g. 16k"),
        "read_fraction": Key("number", "trace: the share of reads when the trace gives totals only"),
        "initial_burst_balance": Key(
            "number-or-string",
            "metrics, prometheus: the gp2/st1/sc1 bucket at the start: measured (default; without a BurstBalance "
            "datapoint, as Prometheus's, the volume's own: full unless its SPEC says), full or a percentage",
        ),
    },
}

#: The workload kinds, and the options each takes besides its own key.
WORKLOAD_KINDS: Dict[str, Tuple[str, ...]] = {
    "fio": ("dt",),
    "trace": ("dt", "gaps", "max_in_flight", "io_size", "read_fraction"),
    "metrics": ("queries", "members", "dt", "gaps", "max_in_flight", "initial_burst_balance"),
    "prometheus": ("devices", "disk_info", "members", "dt", "gaps", "max_in_flight", "initial_burst_balance"),
}


def _criteria() -> Dict[str, Key]:
    """:class:`ebssim.testing.Plan`'s fields as keys: a flag, a mapping, a string or a number each."""
    from ..testing import Plan

    out: Dict[str, Key] = {}
    for f in dataclasses.fields(Plan):
        if f.name.startswith("_"):
            continue
        ann = str(f.type)
        kind = "flag" if ann == "bool" else "mapping" if "Mapping" in ann else "string" if ann == "str" else "number"
        out[f.name] = Key(kind, f"ebssim.testing.Plan's {f.name}")
    return out


#: The criteria a plan may give: exactly :class:`ebssim.testing.Plan`'s.
CRITERIA: Dict[str, Key] = _criteria()

_PLAIN = re.compile(r"^[A-Za-z0-9_-]+$")
_NUMBER_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def key_path(path: Sequence[Any]) -> str:
    """``("volumes", "/dev/x", "id")`` -> ``volumes["/dev/x"].id``."""
    out = ""
    for k in path:
        if isinstance(k, int) and not isinstance(k, bool):
            out += f"[{k}]"
        elif isinstance(k, str) and _PLAIN.match(k):
            out += f".{k}" if out else k
        else:
            out += f"[{_shown(k)}]"
    return out


def _shown(value: Any) -> str:
    from .._files import shown

    return shown(value)


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a flag (true/false)"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


class Validator:
    """Checks the parsed plan against the schema; errors carry the plan's name and the key's line."""

    def __init__(self, source: str, lines: Mapping[Tuple[str, ...], int]) -> None:
        self.source = source
        self.lines = lines

    def error(self, path: Sequence[Any], reason: str) -> PlanError:
        line = None
        p = tuple(str(k) for k in path)
        while p and line is None:  # the key's own line, else its parent's
            line = self.lines.get(p)
            p = p[:-1]
        return PlanError(reason, source=self.source, key=key_path(path), line=line)

    def mapping(self, value: Any, path: Sequence[Any], what: str) -> Dict[Any, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"{_shown(value)} is {_type_name(value)}: expected a mapping ({what})")
        if not value:
            raise self.error(path, f"is empty: expected {what}")
        return value

    def keys(self, value: Dict[Any, Any], path: Sequence[Any], schema: Mapping[str, Key]) -> None:
        for k in value:
            if not isinstance(k, str):
                raise self.error([*path, k], f"the key {_shown(k)} is {_type_name(k)}: keys here are names")
            if k not in schema:
                close = difflib.get_close_matches(k, list(schema), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise self.error([*path, k], f"unknown key{hint} (allowed: {', '.join(schema)})")
        for k, spec in schema.items():
            if spec.required and k not in value:
                raise self.error(path, f"{k} is missing: {spec.doc}")

    def string(self, value: Any, path: Sequence[Any], what: str) -> str:
        if not isinstance(value, str) or not value.strip():
            got = "an empty string" if value == "" else f"{_shown(value)} is {_type_name(value)}"
            raise self.error(path, f"{got}: expected {what}")
        return value

    def number(self, value: Any, path: Sequence[Any], what: str) -> Any:
        """``value`` if it is a finite number (as given: the readers' messages show it as written)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = ""
            if isinstance(value, str) and _NUMBER_TEXT.match(value.strip()):
                hint = " (YAML reads 1e3 as a string: write 1000 or 1.0e+3)"
            raise self.error(path, f"{_shown(value)} is {_type_name(value)}: expected {what}{hint}")
        if not math.isfinite(float(value)):
            raise self.error(path, f"{_shown(value)} is not finite: expected {what}")
        return value

    def flag(self, value: Any, path: Sequence[Any], what: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"{_shown(value)} is {_type_name(value)}: expected true or false ({what})")
        return value

    def value(self, value: Any, path: Sequence[Any], key: Key) -> Any:
        """``value`` checked against ``key``'s kind (ranges are the reader's)."""
        what = key.doc
        if key.kind == "string":
            return self.string(value, path, what)
        if key.kind == "number":
            return self.number(value, path, what)
        if key.kind == "flag":
            return self.flag(value, path, what)
        if key.kind == "mapping":
            return self.mapping(value, path, what)
        if key.kind == "size":
            if isinstance(value, str):
                return self.string(value, path, what)
            return self.number(value, path, what)
        if key.kind == "number-or-string":
            if isinstance(value, str):
                return self.string(value, path, what)
            return self.number(value, path, what)
        if key.kind == "strings":
            if isinstance(value, list):
                if not value:
                    raise self.error(path, f"is an empty list: expected {what}")
                return [self.string(v, [*path, i], what) for i, v in enumerate(value)]
            return [self.string(value, path, what)]
        raise AssertionError(key.kind)  # pragma: no cover - the schema's own kinds


def validate(doc: Any, source: str, lines: Mapping[Tuple[str, ...], int]) -> Dict[str, Any]:
    """The plan document checked against :data:`SCHEMA`: the same document, with ``metrics``
    made a list. Raises :class:`PlanError` on the first problem found, top to bottom."""
    v = Validator(source, lines)
    if not isinstance(doc, dict):
        raise PlanError(
            f"the plan is {_type_name(doc)}: expected a mapping with volumes, workload and criteria", source=source
        )
    v.keys(doc, [], SCHEMA["plan"])
    out: Dict[str, Any] = {}
    for k in ("name", "instance"):
        if k in doc:
            out[k] = v.value(doc[k], [k], SCHEMA["plan"][k])

    volumes = v.mapping(doc["volumes"], ["volumes"], SCHEMA["plan"]["volumes"].doc)
    out["volumes"] = {}
    for name, entry in volumes.items():
        path: List[Any] = ["volumes", name]
        if not isinstance(name, str) or not name.strip():
            raise v.error(path, f"the name {_shown(name)} is {_type_name(name)}: a volume's name is a string")
        if isinstance(entry, str):
            out["volumes"][name] = v.string(entry, path, "a SPEC such as gp3:size=500,iops=6000")
            continue
        if not isinstance(entry, dict):
            raise v.error(
                path,
                f"{_shown(entry)} is {_type_name(entry)}: expected a SPEC (gp3:size=500) or a mapping "
                "{describe_volumes: FILE} or {kubernetes: FILE}, with an optional id",
            )
        v.keys(entry, path, SCHEMA["volume"])
        given = [k for k in ("describe_volumes", "kubernetes") if k in entry]
        if len(given) != 1:
            raise v.error(
                path,
                "give exactly one of describe_volumes, kubernetes"
                + (" (both given)" if given else " (or write a SPEC instead of a mapping)"),
            )
        out["volumes"][name] = {k: v.value(x, [*path, k], SCHEMA["volume"][k]) for k, x in entry.items()}

    workload = v.mapping(doc["workload"], ["workload"], SCHEMA["plan"]["workload"].doc)
    v.keys(workload, ["workload"], SCHEMA["workload"])
    kinds = [k for k in WORKLOAD_KINDS if k in workload]
    if len(kinds) != 1:
        raise v.error(
            ["workload"],
            f"give exactly one of {', '.join(WORKLOAD_KINDS)}" + (f" (given: {', '.join(kinds)})" if kinds else ""),
        )
    kind = kinds[0]
    w: Dict[str, Any] = {"kind": kind}
    for k, x in workload.items():
        if k != kind and k not in WORKLOAD_KINDS[kind]:
            takes = [o for o, ks in WORKLOAD_KINDS.items() if k in ks]
            them = takes[0] if len(takes) == 1 else f"{', '.join(takes[:-1])} and {takes[-1]}"
            raise v.error(["workload", k], f"is an option of {them} workloads, not of {kind}")
        w[k] = v.value(x, ["workload", k], SCHEMA["workload"][k])
    if kind == "trace":
        for name, f in w["trace"].items():
            if not isinstance(name, str):
                raise v.error(
                    ["workload", "trace", name], f"the name {_shown(name)} is {_type_name(name)}: a volume's name"
                )
            w["trace"][name] = v.string(f, ["workload", "trace", name], "a CSV or parquet file")
    for name, ids in w.get("members", {}).items():
        path = ["workload", "members", name]
        if not isinstance(ids, list) or not ids:
            got = "an empty list" if ids == [] else f"{_shown(ids)} is {_type_name(ids)}"
            raise v.error(path, f"{got}: expected a list of the set's members' VolumeIds, one per member")
        for i, x in enumerate(ids):
            v.string(x, [*path, i], "a member's VolumeId")
    if kind == "prometheus":
        if "devices" not in w and "disk_info" not in w:
            raise v.error(
                ["workload"],
                "a prometheus workload maps its devices to the plan's volumes: give devices (DEVICE: VOLUME), "
                "disk_info (node_disk_info's answer, by NVMe serial), or both",
            )
        for dev, vol in w.get("devices", {}).items():
            path = ["workload", "devices", dev]
            if not isinstance(dev, str) or not dev.strip():
                raise v.error(path, f"the key {_shown(dev)} is {_type_name(dev)}: a device (nvme1n1) or an instance")
            if isinstance(vol, dict):  # INSTANCE: {DEVICE: VOLUME}
                inner = v.mapping(vol, path, "DEVICE: VOLUME of the devices of this instance")
                for d, x in inner.items():
                    if not isinstance(d, str) or not d.strip():
                        raise v.error([*path, d], f"the key {_shown(d)} is {_type_name(d)}: a device, e.g. nvme1n1")
                    v.string(x, [*path, d], "the plan volume's name or id")
            else:
                v.string(vol, path, "the plan volume's name or id (or, under an instance, a mapping DEVICE: VOLUME)")
    out["workload"] = w

    criteria = v.mapping(doc["criteria"], ["criteria"], "at least one criterion, e.g. p99_ms: 20")
    v.keys(criteria, ["criteria"], CRITERIA)
    crit: Dict[str, Any] = {}
    for k, x in criteria.items():
        spec = CRITERIA[k]
        if spec.kind == "mapping":
            m = v.mapping(x, ["criteria", k], "percentiles to ms, e.g. {99.9: 50}")
            crit[k] = {
                v.number(p, ["criteria", k, p], "a percentile"): v.number(ms, ["criteria", k, p], "a latency in ms")
                for p, ms in m.items()
            }
        else:
            crit[k] = v.value(x, ["criteria", k], spec)
    out["criteria"] = crit
    return out


def key_lines(text: str) -> Tuple[Dict[Tuple[str, ...], int], List[Tuple[Tuple[str, ...], int, int]]]:
    """The line of every key of the plan's YAML (by its path of keys, as strings), and the keys
    given twice in one mapping (path, first line, second line): PyYAML keeps the last silently."""
    import yaml

    lines: Dict[Tuple[str, ...], int] = {}
    twice: List[Tuple[Tuple[str, ...], int, int]] = []
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:  # the loader has already said what is wrong; no lines then
        return lines, twice

    def walk(node: Any, path: Tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: Dict[str, int] = {}
            for k, val in node.value:
                key = str(k.value)
                here = (*path, key)
                line = k.start_mark.line + 1
                if key in seen:
                    twice.append((here, seen[key], line))
                else:
                    seen[key] = line
                    lines[here] = line
                walk(val, here)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault((*path, str(i)), item.start_mark.line + 1)
                walk(item, (*path, str(i)))

    if root is not None:
        walk(root, ())
    return lines, twice
