"""Kubernetes (EKS with the EBS CSI driver): manifests in, volume configurations out, and the
advice back as VolumeAttributesClass manifests and PersistentVolumeClaim patches (docs/advise.md).

:func:`read_claims` reads StorageClass, PersistentVolumeClaim, PersistentVolume and
VolumeAttributesClass manifests (YAML, several documents per file, ``kind: List`` too) and
works out the EBS volume behind each claim (or unclaimed PersistentVolume) the way the driver
provisions it, with the driver's parameter names (kubernetes-sigs/aws-ebs-csi-driver,
``docs/parameters.md``; keys are case-insensitive, as the driver reads them):

- ``type`` (default ``gp3``); size: the claim's ``resources.requests.storage`` (or the volume's
  ``capacity.storage``) rounded up to whole GiB;
- ``iops`` or ``iopsPerGB`` (not both; io1, io2 and gp3) — IOPS above the type's maximum for the
  size are capped to it, IOPS below its minimum are an error unless
  ``allowAutoIOPSPerGBIncrease: "true"`` raises them (the driver's rules); ``throughput`` (MiB/s,
  gp3 only);
- a claim's ``volumeAttributesClassName`` applies that class's ``type``, ``iops`` and
  ``throughput`` on top (what the driver's ``ControllerModifyVolume`` changes);
- parameters that do not change performance (``csi.storage.k8s.io/*``, ``encrypted``,
  ``kmsKeyId``, file-system options, ``tagSpecification_N``, ...) are accepted and ignored;
  anything else is an error naming the manifest and the parameter.

The volume's id is its PersistentVolume's ``csi.volumeHandle`` (the EBS VolumeId) when the
manifests hold the bound volume, else ``pvc/<namespace>/<name>``.

>>> from ebssim import k8s
>>> claims = k8s.read_claims('''
... apiVersion: storage.k8s.io/v1
... kind: StorageClass
... metadata: {name: fast}
... provisioner: ebs.csi.aws.com
... parameters: {type: gp2}
... ---
... apiVersion: v1
... kind: PersistentVolumeClaim
... metadata: {name: data-db-0, namespace: prod}
... spec:
...   storageClassName: fast
...   resources: {requests: {storage: 2000Gi}}
... ''')
>>> print(claims[0].volume_id, claims[0].volume)
pvc/prod/data-db-0 gp2 2000 GiB (6000 IOPS baseline, burst 6000, 250 MiB/s)
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from os import PathLike
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import yaml

from ._files import load_yaml_all, read_yaml_all, shown
from ._units import a_an
from .volumes import VOLUME_TYPES, Volume, volume_types

__all__ = [
    "MAX_MANIFEST_BYTES",
    "PROVISIONERS",
    "Claim",
    "read_claims",
    "read_manifests",
    "volume_attributes_class",
    "pvc_patch",
    "advice_manifests",
]

#: Largest manifest file :func:`read_claims` reads (``kubectl get sc,pv,pvc -A -o yaml`` of a cluster
#: with 10,000 volumes is about 30 MB, and YAML is parsed at about 0.5 MB/s). Read at each call.
MAX_MANIFEST_BYTES = 32 << 20
_WHAT = "Kubernetes manifests (YAML)"

#: The EBS CSI driver's provisioner names (the driver; EKS Auto Mode's block storage).
PROVISIONERS = ("ebs.csi.aws.com", "ebs.csi.eks.amazonaws.com")

# StorageClass parameters of the driver (docs/parameters.md), lower-cased: those that set the
# volume's performance, and those that do not (read and ignored).
_PERFORMANCE = {"type", "iops", "iopspergb", "allowautoiopspergbincrease", "throughput"}
_IGNORED = {
    "encrypted",
    "kmskeyid",
    "blockexpress",
    "blocksize",
    "inodesize",
    "bytesperinode",
    "numberofinodes",
    "ext4bigalloc",
    "ext4clustersize",
    "outpostarn",
}
_TAG = re.compile(r"^tagspecification_\d+$")
# VolumeAttributesClass parameters the driver modifies (docs/modify-volume.md), and tags.
_VAC_PERFORMANCE = {"type", "iops", "throughput"}

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
_FACTORS = {
    None: 1,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}

Source = Union[str, "PathLike[str]", Mapping[str, Any], List[Any]]


@dataclass(frozen=True)
class Claim:
    """One EBS volume of the manifests: the claim (or volume) behind it and its configuration."""

    volume_id: str
    volume: Volume
    namespace: Optional[str]
    claim: Optional[str]
    storage_class: Optional[str]
    volume_attributes_class: Optional[str]
    source: str


def _size_gib(quantity: Any, where: str) -> float:
    """A Kubernetes quantity (``10Gi``, ``100G``, ``1Ti``, ``5368709120``) as whole GiB, rounded up."""
    text = str(quantity).strip() if isinstance(quantity, (str, int)) and not isinstance(quantity, bool) else ""
    m = _QUANTITY.match(text)
    if not m:
        raise ValueError(f"{where}: storage={quantity!r} is not a Kubernetes quantity such as 100Gi")
    nbytes = float(m.group(1)) * _FACTORS[m.group(2)]
    if nbytes <= 0:
        raise ValueError(f"{where}: storage={quantity!r} must be more than 0")
    return float(math.ceil(nbytes / 2**30 - 1e-12))


def _valid(vtype: str, size: float, iops: float) -> bool:
    try:
        Volume(vtype, size, iops=iops)
    except ValueError:
        return False
    return True


def _fit_iops(vtype: str, size: float, iops: float, allow_increase: bool, where: str) -> float:
    """The driver's handling of requested IOPS: capped to the type's maximum for the size,
    raised to its minimum only with allowAutoIOPSPerGBIncrease (the rules are the core's)."""
    want = float(math.floor(iops))
    if _valid(vtype, size, want):
        return want
    # The valid IOPS of a type and size are one range: find a point in it, then its edge.
    probes = [volume_types()[vtype].default_iops or 3000.0]
    k = want
    while k >= 1:
        k = math.floor(k / 1.5)
        probes.append(k)
    k = max(want, 1)
    while k < 1e7:
        k = math.ceil(k * 1.5)
        probes.append(k)
    inside = next((p for p in probes if p >= 1 and _valid(vtype, size, p)), None)
    if inside is None:
        try:
            Volume(vtype, size, iops=want)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    assert inside is not None
    lo, hi = (int(inside), int(want)) if inside < want else (int(want), int(inside))
    if inside < want:  # above the maximum: the driver caps it
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if _valid(vtype, size, mid) else (lo, mid - 1)
        return float(lo)
    while lo < hi:  # below the minimum
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _valid(vtype, size, mid) else (mid + 1, hi)
    if not allow_increase:
        try:
            Volume(vtype, size, iops=want)
        except ValueError as e:
            raise ValueError(
                f'{where}: {e} (the driver refuses it; allowAutoIOPSPerGBIncrease: "true" would raise it to {lo})'
            ) from None
    return float(lo)


def _documents(sources: Iterable[Source]) -> List[Tuple[Mapping[str, Any], str]]:
    docs: List[Tuple[Mapping[str, Any], str]] = []
    for n, source in enumerate(sources):
        if isinstance(source, (str, PathLike)) and (not isinstance(source, str) or "\n" not in source):
            where = str(os.fspath(source))
            try:
                loaded: List[Any] = read_yaml_all(where, MAX_MANIFEST_BYTES, _WHAT, f"{__name__}.MAX_MANIFEST_BYTES")
            except OSError as e:
                raise ValueError(f"{where}: cannot read the manifest ({e.strerror or e})") from None
        elif isinstance(source, str):
            where = f"manifest {n + 1}"
            loaded = load_yaml_all(source, where, _WHAT)
        elif isinstance(source, Mapping):
            where, loaded = f"manifest {n + 1}", [source]
        elif isinstance(source, list):
            where, loaded = f"manifest {n + 1}", list(source)
        else:
            raise ValueError(
                f"manifest {n + 1}: expected a path, YAML text, a dict or a list, got {type(source).__name__}"
            )
        for i, doc in enumerate(loaded):
            if doc is None:
                continue
            w = f"{where}: document {i + 1}"
            if not isinstance(doc, Mapping):
                raise ValueError(f"{w}: a manifest must be a mapping with apiVersion and kind")
            if doc.get("kind") == "List":
                items = doc.get("items")
                if not isinstance(items, list):
                    raise ValueError(f"{w}: kind List needs a list of items")
                for j, item in enumerate(items):
                    if not isinstance(item, Mapping):
                        raise ValueError(f"{w}: items[{j}] must be a mapping")
                    docs.append((item, f"{w}: items[{j}]"))
            else:
                docs.append((doc, w))
    return docs


def _field(doc: Mapping[str, Any], path: str, where: str) -> Mapping[str, Any]:
    """The mapping at the dotted ``path`` of ``doc`` (empty where a key is absent or null); a
    value on the way that is not a mapping is a ValueError naming the field."""
    node: Any = doc
    for i, key in enumerate(path.split(".")):
        node = node.get(key)
        if node is None:
            return {}
        if not isinstance(node, Mapping):
            field = ".".join(path.split(".")[: i + 1])
            raise ValueError(f"{where}: {field} must be a mapping, not {type(node).__name__} {shown(node)}")
    return node  # type: ignore[no-any-return]


def _class_name(spec: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    """A StorageClass or VolumeAttributesClass name of a claim or volume spec (None when absent)."""
    name = spec.get(key)
    if name is not None and not isinstance(name, str):
        raise ValueError(f"{where}: spec.{key} must be a name (text), not {type(name).__name__}")
    return name


def _name(doc: Mapping[str, Any], where: str) -> Tuple[str, str]:
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise ValueError(f"{where}: {doc.get('kind')} without metadata.name")
    ns = meta.get("namespace") or "default"
    return str(meta["name"]), str(ns)


def _params(doc: Mapping[str, Any], where: str, allowed_performance: Iterable[str]) -> Dict[str, str]:
    raw = doc.get("parameters") or {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: parameters must be a mapping")
    allowed = set(allowed_performance)
    kind = doc.get("kind")
    out: Dict[str, str] = {}
    for key, value in raw.items():
        k = str(key).lower()
        if k in allowed:
            out[k] = str(value)
        elif k.startswith("csi.storage.k8s.io/") or _TAG.match(k) or (k in _IGNORED and kind == "StorageClass"):
            continue
        else:
            known = sorted(allowed) + (sorted(_IGNORED) if doc.get("kind") == "StorageClass" else [])
            raise ValueError(
                f"{where}: unknown parameter {key!r} for the EBS CSI driver; known: {', '.join(known)}, "
                f"csi.storage.k8s.io/*, tagSpecification_N"
            )
    return out


def _number(params: Mapping[str, str], key: str, where: str) -> float:
    try:
        x = float(params[key])
    except ValueError:
        raise ValueError(f"{where}: {key}={params[key]!r} is not a number") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{where}: {key}={params[key]!r} must be a positive number")
    return x


def _volume(size: float, sc: Mapping[str, str], vac: Mapping[str, str], where: str) -> Volume:
    vtype = vac.get("type", sc.get("type", "gp3"))
    if vtype not in VOLUME_TYPES:
        raise ValueError(f"{where}: type={vtype!r} is not an EBS volume type ({', '.join(VOLUME_TYPES)})")
    if "iops" in sc and "iopspergb" in sc:
        raise ValueError(f"{where}: both iops and iopsPerGB are set; the driver takes one or the other")
    provisioned = vtype in ("io1", "io2", "gp3")
    iops: Optional[float] = None
    if "iops" in vac:
        iops = _number(vac, "iops", where)
    elif "iops" in sc:
        iops = _number(sc, "iops", where)
    elif "iopspergb" in sc:
        iops = _number(sc, "iopspergb", where) * size
    if iops is not None and not provisioned:
        raise ValueError(f"{where}: IOPS are set but {a_an(vtype)} volume's IOPS follow its size (only io1, io2, gp3)")
    if iops is None and vtype in ("io1", "io2"):
        raise ValueError(f"{where}: {a_an(vtype)} volume needs iops or iopsPerGB")
    allow = sc.get("allowautoiopspergbincrease", "false").lower() == "true"
    if iops is not None:
        iops = _fit_iops(vtype, size, iops, allow, where)
    tput: Optional[float] = None
    if vtype == "gp3":
        if "throughput" in vac:
            tput = _number(vac, "throughput", where)
        elif "throughput" in sc:
            tput = _number(sc, "throughput", where)
    try:
        return Volume(vtype, size, iops=iops, throughput_mib_s=tput)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def read_claims(*sources: Source) -> List[Claim]:
    """The EBS volumes of Kubernetes manifests, one per claim (and per unclaimed EBS volume).

    Parameters
    ----------
    *sources : path, YAML text, dict or list
        Manifest files (several documents each; each a regular file, not a FIFO or device, of at
        most :data:`MAX_MANIFEST_BYTES`, UTF-8), YAML text (a string with a line break), or
        parsed documents. YAML may nest at most 100 levels (``ebssim._files.MAX_NESTING``). Kinds other
        than StorageClass, PersistentVolumeClaim, PersistentVolume and VolumeAttributesClass
        (Pods, Deployments, ...) are skipped, and so are claims of other provisioners.

    Returns
    -------
    list of Claim
        In the order of the claims, then the unclaimed volumes. Errors (ValueError) name the
        file, the document and the rule (or the line, for YAML that does not read: a value its
        tag does not fit such as ``!!int x``): a claim without a size, a ``spec``, ``spec.csi`` or
        ``spec.capacity`` that is not a mapping, an unknown parameter, a
        StorageClass or VolumeAttributesClass that is not in the manifests, IOPS the driver
        would refuse, a volume whose type the manifests do not say.
    """
    classes: Dict[str, Tuple[Mapping[str, Any], str]] = {}
    vacs: Dict[str, Tuple[Dict[str, str], str]] = {}
    pvcs: List[Tuple[Mapping[str, Any], str]] = []
    pvs: List[Tuple[Mapping[str, Any], str]] = []
    for doc, where in _documents(sources):
        kind = doc.get("kind")
        if kind == "StorageClass":
            name, _ = _name(doc, where)
            classes[name] = (doc, where)
        elif kind == "VolumeAttributesClass":
            name, _ = _name(doc, where)
            if doc.get("driverName") in PROVISIONERS:
                vacs[name] = (_params(doc, f"{where} (VolumeAttributesClass {name})", _VAC_PERFORMANCE), where)
        elif kind == "PersistentVolumeClaim":
            pvcs.append((doc, where))
        elif kind == "PersistentVolume":
            pvs.append((doc, where))
    defaults = [
        n
        for n, (d, w) in classes.items()
        if str(_field(d, "metadata.annotations", w).get("storageclass.kubernetes.io/is-default-class", "")).lower()
        == "true"
    ]

    def sc_params(name: Optional[str], where: str) -> Optional[Dict[str, str]]:
        if name is None:
            if len(defaults) != 1:
                raise ValueError(
                    f"{where}: no storageClassName, and the manifests hold {len(defaults)} default StorageClasses "
                    f"(annotation storageclass.kubernetes.io/is-default-class); give the claim's StorageClass"
                )
            name = defaults[0]
        if name not in classes:
            raise ValueError(f"{where}: StorageClass {name!r} is not in the manifests given; add its manifest")
        doc, w = classes[name]
        if doc.get("provisioner") not in PROVISIONERS:
            return None  # not an EBS volume
        return _params(doc, f"{w} (StorageClass {name})", _PERFORMANCE)

    def vac_params(name: Any, where: str) -> Dict[str, str]:
        if name is None:
            return {}
        if name not in vacs:
            raise ValueError(f"{where}: VolumeAttributesClass {name!r} is not in the manifests given; add its manifest")
        return vacs[name][0]

    bound: Dict[Tuple[str, str], Tuple[Mapping[str, Any], str]] = {}
    by_name: Dict[str, Tuple[Mapping[str, Any], str]] = {}
    for doc, where in pvs:
        name, _ = _name(doc, where)
        by_name[name] = (doc, where)
        ref = _field(doc, "spec.claimRef", where)
        if ref.get("name"):
            bound[(str(ref.get("namespace") or "default"), str(ref["name"]))] = (doc, where)
    out: List[Claim] = []
    used_pvs = set()
    for doc, where in pvcs:
        name, ns = _name(doc, where)
        w = f"{where} (PersistentVolumeClaim {ns}/{name})"
        spec = _field(doc, "spec", w)
        storage = _field(doc, "spec.resources.requests", w).get("storage")
        if storage is None:
            raise ValueError(f"{w}: no spec.resources.requests.storage: the claim's size is missing")
        size = _size_gib(storage, w)
        sc_name = _class_name(spec, "storageClassName", w)
        sc = sc_params(sc_name, w)
        if sc is None:
            continue
        vac_name = _class_name(spec, "volumeAttributesClassName", w)
        pv = by_name.get(str(spec.get("volumeName"))) if spec.get("volumeName") else bound.get((ns, name))
        vid = f"pvc/{ns}/{name}"
        if pv is not None:
            handle = _field(pv[0], "spec.csi", pv[1]).get("volumeHandle")
            if handle:
                vid = str(handle)
            used_pvs.add(id(pv[0]))
        out.append(Claim(vid, _volume(size, sc, vac_params(vac_name, w), w), ns, name, sc_name, vac_name, where))
    for doc, where in pvs:
        if id(doc) in used_pvs:
            continue
        name, _ = _name(doc, where)
        w = f"{where} (PersistentVolume {name})"
        spec = _field(doc, "spec", w)
        csi = _field(doc, "spec.csi", w)
        if csi.get("driver") not in PROVISIONERS:
            continue
        storage = _field(doc, "spec.capacity", w).get("storage")
        if storage is None:
            raise ValueError(f"{w}: no spec.capacity.storage: the volume's size is missing")
        size = _size_gib(storage, w)
        sc_name = _class_name(spec, "storageClassName", w)
        if sc_name is None:
            raise ValueError(
                f"{w}: no storageClassName, so the manifests do not say the volume's type; give "
                f"`aws ec2 describe-volumes --volume-ids {csi.get('volumeHandle', '<id>')}` output instead"
            )
        sc = sc_params(sc_name, w)
        if sc is None:
            continue
        vac_name = _class_name(spec, "volumeAttributesClassName", w)
        vid = str(csi.get("volumeHandle") or f"pv/{name}")
        out.append(Claim(vid, _volume(size, sc, vac_params(vac_name, w), w), None, None, sc_name, vac_name, where))
    return out


def read_manifests(*sources: Source) -> Dict[str, Volume]:
    """The volumes of :func:`read_claims`, by volume id (as :func:`ebssim.aws.read_volumes` gives them).

    >>> from ebssim import k8s
    >>> vols = k8s.read_manifests({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    ...     "metadata": {"name": "db", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    ...     "provisioner": "ebs.csi.aws.com", "parameters": {"type": "io1", "iopsPerGB": "50"}},
    ...     {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
    ...     "spec": {"resources": {"requests": {"storage": "4Gi"}}}})
    >>> print(vols["pvc/default/data"])
    io1 4 GiB (200 IOPS, 50 MiB/s)
    """
    out: Dict[str, Volume] = {}
    for c in read_claims(*sources):
        if c.volume_id in out:
            raise ValueError(f"{c.source}: volume {c.volume_id} appears twice in the manifests")
        out[c.volume_id] = c.volume
    return out


def _vac_name(volume: Volume) -> str:
    parts = [f"ebs-{volume.type}"]
    if volume.type in ("gp3", "io1", "io2"):
        parts.append(f"{volume.baseline_iops:g}iops")
    if volume.type == "gp3":
        parts.append(f"{volume.max_throughput_mib_s:g}mibs")
    return "-".join(parts)


def volume_attributes_class(
    volume: Volume, *, name: Optional[str] = None, api_version: str = "storage.k8s.io/v1beta1"
) -> Dict[str, Any]:
    """A VolumeAttributesClass that gives a claim ``volume``'s type, IOPS and throughput.

    ``api_version``: ``storage.k8s.io/v1beta1`` (Kubernetes 1.31 and later, the driver's
    example) by default; the class must be enabled in the cluster (docs/modify-volume.md of the
    driver).

    >>> import ebssim
    >>> from ebssim import k8s
    >>> print(k8s.to_yaml([k8s.volume_attributes_class(ebssim.gp3(2000, iops=6000, throughput_mib_s=250))]), end="")
    apiVersion: storage.k8s.io/v1beta1
    kind: VolumeAttributesClass
    metadata:
      name: ebs-gp3-6000iops-250mibs
    driverName: ebs.csi.aws.com
    parameters:
      type: gp3
      iops: '6000'
      throughput: '250'
    """
    if not isinstance(volume, Volume):
        raise ValueError(f"volume={volume!r} must be an ebssim.Volume")
    params: Dict[str, str] = {"type": volume.type}
    if volume.type in ("gp3", "io1", "io2"):
        params["iops"] = f"{volume.baseline_iops:g}"
    if volume.type == "gp3":
        params["throughput"] = f"{volume.max_throughput_mib_s:g}"
    return {
        "apiVersion": api_version,
        "kind": "VolumeAttributesClass",
        "metadata": {"name": name or _vac_name(volume)},
        "driverName": PROVISIONERS[0],
        "parameters": params,
    }


def pvc_patch(namespace: str, claim: str, attributes_class: str) -> Tuple[Dict[str, Any], str]:
    """The merge patch that moves a claim to a VolumeAttributesClass, and the ``kubectl`` line.

    >>> from ebssim import k8s
    >>> patch, command = k8s.pvc_patch("prod", "data-db-0", "ebs-gp3-6000iops-250mibs")
    >>> print(command)
    kubectl patch pvc data-db-0 -n prod --type merge
    -p '{"spec":{"volumeAttributesClassName":"ebs-gp3-6000iops-250mibs"}}'
    """
    patch = {"spec": {"volumeAttributesClassName": attributes_class}}
    text = json.dumps(patch, separators=(",", ":"))
    return patch, f"kubectl patch pvc {claim} -n {namespace} --type merge -p '{text}'"


def to_yaml(documents: Iterable[Mapping[str, Any]]) -> str:
    """Documents as one multi-document YAML text (keys in the order given)."""
    return "---\n".join(yaml.safe_dump(dict(d), sort_keys=False) for d in documents)


def advice_manifests(
    claims: Iterable[Claim], advice: Mapping[str, Volume], *, api_version: str = "storage.k8s.io/v1beta1"
) -> Tuple[str, List[str]]:
    """VolumeAttributesClass manifests (one per distinct configuration) and the ``kubectl patch``
    lines that move each claim whose advice differs from its volume.

    ``advice`` maps volume ids to the advised configuration (e.g. ``{v.volume_id:
    v.advice.volume for v in fleet.volumes}``). A claim's size is not changed here: a larger
    size is a change of ``resources.requests.storage``. Apply either these or the
    ``aws ec2 modify-volume`` commands, not both: each is a modification of the volume.
    """
    classes: Dict[str, Dict[str, Any]] = {}
    commands: List[str] = []
    for c in claims:
        target = advice.get(c.volume_id)
        if target is None or c.claim is None or target == c.volume:
            continue
        vac = volume_attributes_class(target, api_version=api_version)
        name = str(vac["metadata"]["name"])
        classes.setdefault(name, vac)
        commands.append(pvc_patch(c.namespace or "default", c.claim, name)[1])
    return to_yaml(classes.values()), commands
