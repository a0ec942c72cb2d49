"""ebssim.k8s: Kubernetes manifests (EBS CSI driver) in, VolumeAttributesClass manifests and PVC
patches out. The files in tests/data/k8s are the driver's own examples (README there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import ebssim
import pytest
import yaml
from ebssim import k8s
from ebssim.advise import BatchJob, advise

K8S = Path(__file__).resolve().parents[1] / "data" / "k8s"


def _sc(params: Dict[str, Any], name: str = "sc", default: bool = False) -> Dict[str, Any]:
    meta: Dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta,
        "provisioner": "ebs.csi.aws.com",
        "parameters": params,
    }


def _pvc(storage: Any = "100Gi", sc: str = "sc", **spec: Any) -> Dict[str, Any]:
    s: Dict[str, Any] = {"storageClassName": sc, **spec}
    if storage is not None:
        s["resources"] = {"requests": {"storage": storage}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "db"},
        "spec": s,
    }


# --- the driver's examples ---


def test_io1_storage_class_with_iops_per_gb():
    # iopsPerGB 50 x 4 GiB = 200 IOPS, io1's maximum for 4 GiB (50 per GiB).
    (c,) = k8s.read_claims(K8S / "storageclass-io1.yaml", K8S / "claim-4Gi.yaml")
    assert (c.volume_id, c.namespace, c.claim, c.storage_class) == (
        "pvc/default/ebs-claim",
        "default",
        "ebs-claim",
        "ebs-sc",
    )
    assert (c.volume.type, c.volume.size_gib, c.volume.baseline_iops) == ("io1", 4, 200)


def test_gp3_class_with_a_claim_and_a_pod():
    vols = k8s.read_manifests(K8S / "pod-with-volume.yaml")  # the Pod is skipped
    assert list(vols) == ["pvc/default/ebs-claim"]
    v = vols["pvc/default/ebs-claim"]
    assert (v.type, v.size_gib, v.baseline_iops, v.max_throughput_mib_s) == ("gp3", 10, 3000, 125)


def test_volume_attributes_class_on_a_claim():
    sc = yaml.safe_load((K8S / "pod-with-volume.yaml").read_text().split("---")[1])
    claim = yaml.safe_load((K8S / "pod-with-volume.yaml").read_text().split("---")[2])
    claim["spec"]["volumeAttributesClassName"] = "io2-class"
    (c,) = k8s.read_claims(sc, claim, K8S / "volumeattributesclass.yaml")
    assert c.volume_attributes_class == "io2-class"
    assert (c.volume.type, c.volume.size_gib, c.volume.baseline_iops) == ("io2", 10, 3000)


def test_static_volume_without_a_class_has_no_type():
    with pytest.raises(
        ValueError, match=r"PersistentVolume test-pv\): no storageClassName, so the manifests do not say"
    ):
        k8s.read_claims(K8S / "pv-static.yaml")


def test_bound_volume_gives_the_volume_id():
    pv = yaml.safe_load((K8S / "pv-static.yaml").read_text())
    pv["spec"]["storageClassName"] = "sc"
    pv["spec"]["claimRef"] = {"name": "data", "namespace": "db"}
    (c,) = k8s.read_claims(_sc({"type": "gp2"}), _pvc("5Gi"), pv)
    assert (c.volume_id, c.claim, str(c.volume)) == (
        "vol-03c604538dd7d2f41",
        "data",
        "gp2 5 GiB (100 IOPS baseline, burst 3000, 128 MiB/s)",
    )


# --- the driver's rules ---


@pytest.mark.parametrize(
    "storage, gib",
    [("100Gi", 100), ("1Ti", 1024), ("100G", 94), ("5368709120", 5), ("1.5Gi", 2), ("512Mi", 1)],
)
def test_sizes_round_up_to_whole_gib(storage, gib):
    # 100G = 1e11 B = 93.13 GiB -> 94; 1.5Gi -> 2; 512Mi -> 1.
    (c,) = k8s.read_claims(_sc({"type": "gp2"}), _pvc(storage))
    assert c.volume.size_gib == gib


def test_iops_above_the_maximum_are_capped():
    # io1 allows 50 IOPS per GiB: iopsPerGB 100 x 10 GiB = 1,000 -> 500.
    (c,) = k8s.read_claims(_sc({"type": "io1", "iopsPerGB": "100"}), _pvc("10Gi"))
    assert c.volume.baseline_iops == 500


def test_iops_below_the_minimum_need_the_auto_increase():
    # io1's minimum is 100 IOPS: iopsPerGB 10 x 4 GiB = 40.
    with pytest.raises(ValueError, match=r"iops=40 is out of range: io1 IOPS are 100 to 64000 .*would raise it to 100"):
        k8s.read_claims(_sc({"type": "io1", "iopsPerGB": "10"}), _pvc("4Gi"))
    (c,) = k8s.read_claims(_sc({"type": "io1", "iopsPerGB": "10", "allowAutoIOPSPerGBIncrease": "true"}), _pvc("4Gi"))
    assert c.volume.baseline_iops == 100


def test_parameter_names_are_case_insensitive_and_gp3_takes_throughput():
    (c,) = k8s.read_claims(
        _sc({"TYPE": "gp3", "IOPS": "6000", "Throughput": "250", "encrypted": "true"}), _pvc("2000Gi")
    )
    assert (c.volume.baseline_iops, c.volume.max_throughput_mib_s) == (6000, 250)


def test_default_storage_class():
    (c,) = k8s.read_claims(_sc({"type": "st1"}, default=True), _pvc("500Gi", sc=None))  # type: ignore[arg-type]
    assert c.volume.type == "st1"


def test_other_provisioners_are_skipped():
    efs = _sc({"type": "gp2"})
    efs["provisioner"] = "efs.csi.aws.com"
    assert k8s.read_claims(efs, _pvc()) == []


@pytest.mark.parametrize(
    "docs, message",
    [
        ([_sc({"type": "gp3", "iopsPerGb2": "5"}), _pvc()], "unknown parameter 'iopsPerGb2' for the EBS CSI driver"),
        ([_sc({"type": "gp2"}), _pvc(None)], "no spec.resources.requests.storage: the claim's size is missing"),
        ([_sc({"type": "gp3", "iops": "4000", "iopsPerGB": "10"}), _pvc()], "both iops and iopsPerGB are set"),
        ([_pvc()], "StorageClass 'sc' is not in the manifests given"),
        ([_sc({"type": "gp2", "iops": "500"}), _pvc()], "IOPS are set but a gp2 volume's IOPS follow its size"),
        ([_sc({"type": "io2"}), _pvc()], "an io2 volume needs iops or iopsPerGB"),
        ([_sc({"type": "gp9"}), _pvc()], "type='gp9' is not an EBS volume type"),
        ([_sc({"type": "gp2"}), _pvc("lots")], "storage='lots' is not a Kubernetes quantity"),
        ([_sc({"type": "gp2"}), _pvc(volumeAttributesClassName="fast")], "VolumeAttributesClass 'fast' is not in"),
        (["kind: [unclosed\n"], "not valid YAML"),
    ],
)
def test_bad_manifests(docs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        k8s.read_claims(*docs)


def test_unknown_parameter_names_the_file(tmp_path):
    f = tmp_path / "sc.yaml"
    f.write_text(yaml.safe_dump_all([_sc({"type": "gp3", "speed": "fast"}), _pvc()]))
    with pytest.raises(ValueError, match=r"sc.yaml: document 1 \(StorageClass sc\): unknown parameter 'speed'"):
        k8s.read_claims(f)


# --- advice out ---


def test_volume_attributes_class_round_trip():
    vac = k8s.volume_attributes_class(ebssim.gp3(2000, iops=6000, throughput_mib_s=250))
    text = k8s.to_yaml([vac])
    back = yaml.safe_load(text)
    assert back == {
        "apiVersion": "storage.k8s.io/v1beta1",
        "kind": "VolumeAttributesClass",
        "metadata": {"name": "ebs-gp3-6000iops-250mibs"},
        "driverName": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "iops": "6000", "throughput": "250"},
    }
    # What the tool writes, it reads: a claim moved to the class gets the advised volume.
    claim = _pvc("2000Gi", volumeAttributesClassName="ebs-gp3-6000iops-250mibs")
    (c,) = k8s.read_claims(_sc({"type": "gp2"}), claim, back)
    assert ebssim.fio.volume_spec(c.volume) == "gp3:size=2000,iops=6000,throughput=250"


def test_advice_manifests_and_patches():
    claims = k8s.read_claims(_sc({"type": "gp2"}), _pvc("2000Gi"))
    fleet = advise({c.volume_id: c.volume for c in claims}, "eu-west-1", job=BatchJob(minutes=5))
    manifests, commands = k8s.advice_manifests(claims, {v.volume_id: v.advice.volume for v in fleet.volumes})
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(manifests)] == ["ebs-gp3-6000iops-250mibs"]
    assert commands == [
        "kubectl patch pvc data -n db --type merge -p "
        + "'"
        + json.dumps({"spec": {"volumeAttributesClassName": "ebs-gp3-6000iops-250mibs"}}, separators=(",", ":"))
        + "'"
    ]


def test_cli_with_manifests(cli, tmp_path):
    f = tmp_path / "db.yaml"
    f.write_text(yaml.safe_dump_all([_sc({"type": "gp2"}), _pvc("2000Gi")]))
    r = cli("advise", "--region", "eu-west-1", "--job-minutes", "52", "--output-format", "json", str(f))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (v,) = doc["volumes"]
    assert (v["volume_id"], v["advice"]) == ("pvc/db/data", "gp3:size=2000,iops=6000,throughput=250")
    assert yaml.safe_load(doc["kubernetes"]["volume_attributes_classes"])["parameters"]["iops"] == "6000"
    assert doc["kubernetes"]["pvc_patches"][0].startswith("kubectl patch pvc data -n db --type merge")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all([_sc({"type": "gp2", "tier": "gold"}), _pvc()]))
    r = cli("advise", "--region", "eu-west-1", str(bad))
    assert r.returncode == 2
    assert "unknown parameter 'tier'" in r.stderr and r.stderr.count("\n") == 1
