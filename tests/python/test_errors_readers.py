"""Every file reader outside fio (ebssim.aws, ebssim.k8s, Catalog, ``ebssim advise``): bad files
are a ValueError that names the file (and the field, line or limit), never a hang, a MemoryError
or another exception (issue 19).

The readers share ebssim._files: a FIFO or device is refused before it is opened for a read that
could block, a regular file is read up to its limit (a public constant, named in the message),
the text must be UTF-8 and JSON or YAML may nest at most ``MAX_NESTING`` (100) levels. The
reproducers at the end are the fuzzing findings of the issue, one case each.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List

import ebssim.aws as aws
import ebssim.instances as instances
import ebssim.k8s as k8s
import pytest
import yaml
from deadlines import deadline
from ebssim import Catalog
from ebssim._files import MAX_NESTING

DATA = Path(__file__).resolve().parents[1] / "data"
AWS = DATA / "aws"
K8S = DATA / "k8s"
PAGES = AWS / "cloudwatch-get-metric-data.pages.moto.json"
QUERIES = AWS / "cloudwatch-get-metric-data.queries.json"
LABELS = AWS / "cloudwatch-get-metric-data.labels.moto.json"
STATS = AWS / "cloudwatch-get-metric-statistics.moto.json"
REQUEST = AWS / "cloudwatch-get-metric-statistics.request.json"
METRICS_CSV = AWS / "cloudwatch-metrics.moto.csv"
VOLUMES = AWS / "ec2-describe-volumes.moto.json"
INSTANCES = AWS / "ec2-describe-instances.moto.json"
M5_JSON = AWS / "ec2-describe-instance-types.m5.large.from-moto.json"
SHIPPED_CSV = Path(instances.__file__).with_name("data") / "instance_types.csv"
SC_IO1 = K8S / "storageclass-io1.yaml"
CLAIM = K8S / "claim-4Gi.yaml"


@dataclass(frozen=True)
class Reader:
    name: str
    read: Callable[[Path], Any]  # reads the file under test (the others it needs are real fixtures)
    seed: Path  # a real file it reads
    module: Any  # where its size limit lives
    limit: str  # the limit's name there
    kind: str  # json, yaml or csv

    @property
    def limit_name(self) -> str:
        return f"{self.module.__name__}.{self.limit}"

    def __repr__(self) -> str:
        return self.name


READERS = [
    Reader("read_volumes", aws.read_volumes, VOLUMES, aws, "MAX_JSON_BYTES", "json"),
    Reader("read_instances", aws.read_instances, INSTANCES, aws, "MAX_JSON_BYTES", "json"),
    Reader("read_metric_data", aws.read_metric_data, LABELS, aws, "MAX_JSON_BYTES", "json"),
    # The other input of these is given parsed, so that only the file under test is read.
    Reader(
        "read_metric_data(queries=)",
        lambda p: aws.read_metric_data(json.loads(PAGES.read_text()), queries=p),
        QUERIES,
        aws,
        "MAX_JSON_BYTES",
        "json",
    ),
    Reader(
        "read_metric_statistics",
        lambda p: aws.read_metric_statistics(p, request=REQUEST),
        STATS,
        aws,
        "MAX_JSON_BYTES",
        "json",
    ),
    Reader(
        "read_metric_statistics(request=)",
        lambda p: aws.read_metric_statistics(json.loads(STATS.read_text()), request=p),
        REQUEST,
        aws,
        "MAX_JSON_BYTES",
        "json",
    ),
    Reader("read_metrics_csv", aws.read_metrics_csv, METRICS_CSV, aws, "MAX_CSV_BYTES", "csv"),
    Reader(
        "read_claims",
        lambda p: k8s.read_claims(*yaml.safe_load_all(SC_IO1.read_text()), p),
        CLAIM,
        k8s,
        "MAX_MANIFEST_BYTES",
        "yaml",
    ),
    Reader("Catalog.from_csv", Catalog.from_csv, SHIPPED_CSV, instances, "MAX_CATALOG_BYTES", "csv"),
    Reader(
        "Catalog.from_describe_instance_types",
        Catalog.from_describe_instance_types,
        M5_JSON,
        instances,
        "MAX_CATALOG_BYTES",
        "json",
    ),
]
NESTED = [r for r in READERS if r.kind != "csv"]
SUFFIX = {"json": ".json", "yaml": ".yaml", "csv": ".csv"}


def refused(reader: Reader, path: Path, *fragments: str) -> str:
    """The reader's ValueError for ``path``, checked to hold every fragment (within 10 s)."""
    with deadline(10), pytest.raises(ValueError) as e:
        reader.read(path)
    message = str(e.value)
    for f in fragments:
        assert f in message, (f, message)
    return message


# --- every reader x every kind of bad file -------------------------------------------------------


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_the_real_file_reads(reader: Reader) -> None:
    reader.read(reader.seed)  # the cases below are refusals of this reader, not of everything


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_a_fifo_is_refused_without_waiting_for_a_writer(reader: Reader, tmp_path: Path) -> None:
    fifo = tmp_path / f"fifo{SUFFIX[reader.kind]}"
    os.mkfifo(fifo)
    refused(reader, fifo, f"{fifo}: is a device, FIFO or socket, not a regular file")


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_dev_zero_is_refused(reader: Reader) -> None:
    refused(reader, Path("/dev/zero"), "/dev/zero: is a device, FIFO or socket, not a regular file")


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_a_directory_is_refused(reader: Reader, tmp_path: Path) -> None:
    refused(reader, tmp_path, f"{tmp_path}: is a directory, not a regular file")


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_a_file_over_the_limit_is_refused_naming_the_limit(
    reader: Reader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit is read at each call: a small one stands for the 1.5 GiB file of the issue.
    assert reader.seed.stat().st_size > 100
    monkeypatch.setattr(reader.module, reader.limit, 100)
    refused(
        reader,
        reader.seed,
        f"{reader.seed}: holds more than 100 bytes, the limit for ",
        f"({reader.limit_name}); split the file, or raise {reader.limit_name}",
    )


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_bytes_that_are_not_utf8_are_named_by_line(reader: Reader, tmp_path: Path) -> None:
    # The real file with byte 0xff at the start of its third line.
    lines = reader.seed.read_bytes().split(b"\n")
    lines[2] = b"\xff" + lines[2]
    bad = tmp_path / f"bad{SUFFIX[reader.kind]}"
    bad.write_bytes(b"\n".join(lines))
    refused(reader, bad, f"{bad}, line 3: byte 0xff is not UTF-8 text")


@pytest.mark.parametrize("reader", READERS, ids=repr)
def test_utf16_text_is_named_as_such(reader: Reader, tmp_path: Path) -> None:
    bad = tmp_path / f"utf16{SUFFIX[reader.kind]}"
    bad.write_bytes(reader.seed.read_text().encode("utf-16"))  # with its byte order mark, as PowerShell writes
    refused(reader, bad, f"{bad}: is UTF-16 text", "not UTF-8")


@pytest.mark.parametrize("reader", NESTED, ids=repr)
def test_100000_brackets_are_refused_at_the_nesting_limit(reader: Reader, tmp_path: Path) -> None:
    # '[' x 100,000 (the reproducer): the 101st bracket, column 101, passes the limit.
    deep = tmp_path / f"deep{SUFFIX[reader.kind]}"
    deep.write_text("[" * 100_000)
    message = refused(reader, deep, f"{deep}, line 1", f"more than {MAX_NESTING} levels deep", "MAX_NESTING")
    if reader.kind == "json":
        assert f"{deep}, line 1, column 101:" in message


@pytest.mark.parametrize("reader", NESTED, ids=repr)
def test_a_document_just_within_the_nesting_limit_is_not_refused_for_it(reader: Reader, tmp_path: Path) -> None:
    # 100 levels are allowed: the reader goes on to say what is wrong with the document instead.
    ok = tmp_path / f"deep{SUFFIX[reader.kind]}"
    ok.write_text("[" * MAX_NESTING + "]" * MAX_NESTING)
    message = refused(reader, ok)
    assert "levels deep" not in message and str(ok) in message


def test_yaml_nested_in_block_style_is_refused_where_it_passes_the_limit(tmp_path: Path) -> None:
    # Line i + 1 opens mapping i + 1, indented i: the 101st (line 101, column 101) is one too many
    # (the key of the 100th, one level in, is not: levels of collections count, as brackets in JSON).
    deep = tmp_path / "deep.yaml"
    deep.write_text("".join(" " * i + "k:\n" for i in range(200)))
    with pytest.raises(ValueError, match=rf"{re.escape(str(deep))}, line 101, column 101: .* more than 100 levels"):
        k8s.read_claims(deep)


def test_json_nesting_ignores_brackets_inside_strings(tmp_path: Path) -> None:
    # 1,000 brackets inside a string (one escaped quote before them) nest nothing.
    doc = {"Volumes": [], "note": '\\"' + "[" * 1000}
    f = tmp_path / "volumes.json"
    f.write_text(json.dumps(doc))
    assert aws.read_volumes(f) == {}


# --- the fuzzing reproducers of the issue ---------------------------------------------------------


def _volume(**fields: Any) -> Any:
    return {"Volumes": [dict({"VolumeId": "vol-0a", "VolumeType": "io1", "Size": 100, "Iops": 1000}, **fields)]}


def _data(timestamp: str, value: Any = 1.0) -> Any:
    label = "vol-0a VolumeReadOps Sum 60"
    result = {"Id": "r", "Label": label, "Timestamps": [timestamp], "Values": [value], "StatusCode": "Complete"}
    return {"MetricDataResults": [result]}


def _statistics(timestamp: str) -> Any:
    return {"Label": "VolumeReadOps", "Datapoints": [{"Timestamp": timestamp, "Sum": 1.0, "Unit": "Count"}]}


CSV_HEAD = "Timestamp,VolumeId,MetricName,Statistic,Period,Unit,Value\n"

# (id, file name, content, reader, the message's text after "<file>")
REPRODUCERS: List[Any] = [
    # _whole: 1e400 is read as inf, which int() cannot take.
    ("Size-1e400", "v.json", '{"Volumes": [{"VolumeId": "vol-0a", "VolumeType": "gp2", "Size": 1e400}]}',
     aws.read_volumes, ": Volumes[0] (vol-0a): Size=inf must be a positive whole number"),
    ("Iops-1e400", "v.json", json.dumps(_volume()).replace('"Iops": 1000', '"Iops": 1e400'),
     aws.read_volumes, ": Volumes[0] (vol-0a): Iops=inf must be a positive whole number"),
    ("Iops-Infinity", "v.json", json.dumps(_volume(Iops=float("inf"))),
     aws.read_volumes, ": Volumes[0] (vol-0a): Iops=inf must be a positive whole number"),
    ("Size-NaN", "v.json", json.dumps(_volume(Size=float("nan"))),
     aws.read_volumes, ": Volumes[0] (vol-0a): Size=nan must be a positive whole number"),
    ("Size-401-digits", "v.json", json.dumps(_volume(Size=10**400)),
     aws.read_volumes, ": Volumes[0] (vol-0a): Size an integer of 401 digits is out of range"),
    # Timestamps outside pandas' nanosecond range (1677-09-21 00:12:43 to 2262-04-11 23:47:16).
    ("get-metric-data-year-9999", "d.json", json.dumps(_data("9999-05-01T00:00:00+00:00")),
     aws.read_metric_data,
     ": MetricDataResults[0] (Id 'r'): Timestamps '9999-05-01T00:00:00+00:00' is outside 1677-09-21"),
    ("get-metric-data-past-2262", "d.json", json.dumps(_data("2262-04-12T00:00:00Z")),
     aws.read_metric_data, ": MetricDataResults[0] (Id 'r'): Timestamps '2262-04-12T00:00:00Z' is outside"),
    ("get-metric-data-value-401-digits", "d.json", json.dumps(_data("2024-05-01T00:00:00Z", 10**400)),
     aws.read_metric_data,
     ": MetricDataResults[0] (Id 'r') at 2024-05-01 00:00:00+00:00: value an integer of 401 digits is out of range"),
    ("get-metric-statistics-year-1000", "s.json", json.dumps(_statistics("1000-01-01T00:00:00Z")),
     lambda p: aws.read_metric_statistics(p, volume_id="vol-0a", period=60),
     ": Datapoints[].Timestamp '1000-01-01T00:00:00Z' is outside 1677-09-21"),
    ("csv-past-2262", "m.csv", CSV_HEAD + "2262-04-12T00:00:00Z,vol-0a,VolumeReadOps,Sum,60,Count,1\n",
     aws.read_metrics_csv, " (vol-0a VolumeReadOps Sum): Timestamp '2262-04-12T00:00:00Z' is outside 1677-09-21"),
    ("request-period-1e400", "r.json", REQUEST.read_text().replace('"Period": 60', '"Period": 1e400'),
     lambda p: aws.read_metric_statistics(STATS, request=p), ": period inf must be a positive number of seconds"),
    # PyYAML's constructors, failing as they may (AttributeError, IndexError, a bare ValueError).
    ("yaml-timestamp-x", "m.yaml", "a: !!timestamp x\n",
     k8s.read_claims, ", line 1, column 4: 'x' is not a valid !!timestamp"),
    ("yaml-int-empty", "m.yaml", "a: !!int\n",
     k8s.read_claims, ", line 1, column 4: an empty value is not a valid !!int"),
    ("yaml-int-x", "m.yaml", "a: !!int x\n",
     k8s.read_claims, ", line 1, column 4: 'x' is not a valid !!int (invalid literal for int()"),
    ("yaml-month-13", "m.yaml", "kind: PersistentVolumeClaim\nmetadata:\n  name: 2024-13-01\n",
     k8s.read_claims, ", line 3, column 9: '2024-13-01' is not a valid !!timestamp (month must be in 1..12)"),
    ("yaml-brackets-5000", "m.yaml", "[" * 5000,
     k8s.read_claims, ", line 1, column "),
    # Manifests whose spec, spec.csi or spec.capacity is not a mapping.
    ("pv-spec-x", "m.yaml", "kind: PersistentVolume\nmetadata: {name: a}\nspec: x\n",
     k8s.read_claims, ": document 1: spec must be a mapping, not str 'x'"),
    ("pv-csi-x", "m.yaml", "kind: PersistentVolume\nmetadata: {name: a}\nspec: {csi: x}\n",
     k8s.read_claims, ": document 1 (PersistentVolume a): spec.csi must be a mapping, not str 'x'"),
    ("pv-capacity-x", "m.yaml",
     "kind: PersistentVolume\nmetadata: {name: a}\nspec: {csi: {driver: ebs.csi.aws.com}, capacity: x}\n",
     k8s.read_claims, ": document 1 (PersistentVolume a): spec.capacity must be a mapping, not str 'x'"),
    ("pvc-spec-list", "m.yaml", "kind: PersistentVolumeClaim\nmetadata: {name: a}\nspec: [x]\n",
     k8s.read_claims, ": document 1 (PersistentVolumeClaim default/a): spec must be a mapping, not list ['x']"),
    ("pvc-requests-x", "m.yaml", "kind: PersistentVolumeClaim\nmetadata: {name: a}\nspec: {resources: {requests: x}}\n",
     k8s.read_claims, ": document 1 (PersistentVolumeClaim default/a): spec.resources.requests must be a mapping"),
    ("pvc-class-list", "m.yaml",
     "kind: PersistentVolumeClaim\nmetadata: {name: a}\n"
     "spec: {storageClassName: [x], resources: {requests: {storage: 1Gi}}}\n",
     k8s.read_claims, ": document 1 (PersistentVolumeClaim default/a): spec.storageClassName must be a name (text)"),
    ("sc-annotations-x", "m.yaml",
     "kind: StorageClass\nmetadata: {name: a, annotations: x}\nprovisioner: ebs.csi.aws.com\n",
     k8s.read_claims, ": document 1: metadata.annotations must be a mapping, not str 'x'"),
    # The catalog's readers check what they take.
    ("catalog-csv-no-column", "c.csv", "instance_type,hypervisor\nm5.large,nitro\n",
     Catalog.from_csv, ", line 1: the columns are instance_type, hypervisor; expected an instance catalog CSV"),
    ("catalog-csv-iops-x", "c.csv",
     SHIPPED_CSV.read_text().splitlines()[0] + "\nm5.large,nitro,0,default,x,18750,81.25,593.75,28\n",
     Catalog.from_csv, ", line 2: baseline_iops='x' must be a number >= 0 or empty"),
    ("catalog-csv-short-row", "c.csv", SHIPPED_CSV.read_text().splitlines()[0] + "\nm5.large,nitro\n",
     Catalog.from_csv, ", line 2: 9 comma-separated fields expected, like the header"),
    ("catalog-csv-bare-metal-2", "c.csv",
     SHIPPED_CSV.read_text().splitlines()[0] + "\nm5.large,nitro,2,default,3600,18750,81.25,593.75,28\n",
     Catalog.from_csv, ", line 2: bare_metal='2' must be 0 or 1"),
    ("catalog-json-iops-text", "t.json", M5_JSON.read_text().replace('"BaselineIops": 3600', '"BaselineIops": "3600"'),
     Catalog.from_describe_instance_types,
     ": InstanceTypes[0] (m5.large): EbsInfo.EbsOptimizedInfo.BaselineIops='3600' must be a number >= 0"),
    ("catalog-json-iops-infinity", "t.json",
     M5_JSON.read_text().replace('"MaximumIops": 18750', '"MaximumIops": Infinity'),
     Catalog.from_describe_instance_types,
     ": InstanceTypes[0] (m5.large): EbsInfo.EbsOptimizedInfo.MaximumIops=inf must be a number >= 0"),
    ("catalog-json-bare-metal-text", "t.json", M5_JSON.read_text().replace('"BareMetal": false', '"BareMetal": "no"'),
     Catalog.from_describe_instance_types, ": InstanceTypes[0] (m5.large): BareMetal='no' must be true or false"),
    ("catalog-json-ebsinfo-list", "t.json", json.dumps({"InstanceTypes": [{"InstanceType": "x.large", "EbsInfo": []}]}),
     Catalog.from_describe_instance_types, ": InstanceTypes[0] (x.large): EbsInfo must be a JSON object, not list"),
]  # fmt: skip


@pytest.mark.parametrize("name, content, read, message", [r[1:] for r in REPRODUCERS], ids=[r[0] for r in REPRODUCERS])
def test_fuzzing_reproducers(name: str, content: str, read: Any, message: str, tmp_path: Path) -> None:
    f = tmp_path / name
    f.write_text(content)
    with deadline(10), pytest.raises(ValueError) as e:
        read(f)
    assert str(e.value).startswith(f"{f}{message}"), str(e.value)


def test_infinite_iops_in_a_parsed_document_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"^document: Volumes\[0\] \(vol-0a\): Iops=inf must be a positive whole"):
        aws.read_volumes(_volume(Iops=float("inf")))


# --- the command line ----------------------------------------------------------------------------


def one_line_error(run: Any, *fragments: str) -> None:
    assert run.returncode == 2, run
    assert run.stderr.startswith("ebssim: error: ") and run.stderr.count("\n") == 1, run.stderr
    for f in fragments:
        assert f in run.stderr, (f, run.stderr)


@pytest.mark.parametrize(
    "where",
    ["INPUT", "--metrics", "--metrics csv", "--queries"],
)
def test_advise_refuses_a_fifo(where: str, cli: Any, tmp_path: Path) -> None:
    fifo = tmp_path / ("fifo.csv" if where.endswith("csv") else "fifo.json")
    os.mkfifo(fifo)
    argv = {
        "INPUT": [str(fifo)],
        "--metrics": ["--metrics", str(fifo), str(VOLUMES)],
        "--metrics csv": ["--metrics", str(fifo), str(VOLUMES)],
        "--queries": ["--metrics", str(PAGES), "--queries", str(fifo), str(VOLUMES)],
    }[where]
    with deadline(20):
        run = cli("advise", "--region", "us-east-1", *argv)
    one_line_error(run, f"{fifo}: is a device, FIFO or socket, not a regular file")


@pytest.mark.parametrize("where", ["INPUT", "--metrics", "--queries"])
def test_advise_refuses_dev_zero(where: str, cli: Any) -> None:
    argv = {
        "INPUT": ["/dev/zero"],
        "--metrics": ["--metrics", "/dev/zero", str(VOLUMES)],
        "--queries": ["--metrics", str(PAGES), "--queries", "/dev/zero", str(VOLUMES)],
    }[where]
    with deadline(20):
        run = cli("advise", "--region", "us-east-1", *argv)
    one_line_error(run, "/dev/zero: is a device, FIFO or socket, not a regular file")


def test_advise_names_the_limit_of_a_file_too_large(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aws, "MAX_JSON_BYTES", 100)
    one_line_error(
        cli("advise", "--region", "us-east-1", str(VOLUMES)),
        f"{VOLUMES}: holds more than 100 bytes",
        "raise ebssim.aws.MAX_JSON_BYTES",
    )
    monkeypatch.setattr(aws, "MAX_JSON_BYTES", 256 << 20)
    monkeypatch.setattr(aws, "MAX_CSV_BYTES", 100)
    one_line_error(
        cli("advise", "--region", "us-east-1", "--metrics", str(METRICS_CSV), str(VOLUMES)),
        f"{METRICS_CSV}: holds more than 100 bytes",
        "raise ebssim.aws.MAX_CSV_BYTES",
    )


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_advise_refuses_deep_nesting_and_bytes_that_are_not_utf8(suffix: str, cli: Any, tmp_path: Path) -> None:
    deep = tmp_path / f"deep{suffix}"
    deep.write_text("[" * 100_000)
    one_line_error(cli("advise", "--region", "us-east-1", str(deep)), str(deep), "more than 100 levels", "MAX_NESTING")
    bad = tmp_path / f"bad{suffix}"
    bad.write_bytes(b'{"Volumes": [\xff]}')
    one_line_error(cli("advise", "--region", "us-east-1", str(bad)), f"{bad}, line 1: byte 0xff is not UTF-8 text")
    one_line_error(
        cli("advise", "--region", "us-east-1", "--metrics", str(bad), str(VOLUMES)),
        f"{bad}, line 1: byte 0xff is not UTF-8 text",
    )
