"""EC2 documents: ``describe-volumes`` into Volume configurations, ``describe-instances`` into
attachments (which volume sits on which instance type)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, NamedTuple, Optional

from .._files import shown as _shown
from ..volumes import VOLUME_TYPES, Volume
from ._cloudwatch import Source, _float, _pages, _volume

__all__ = ["read_volumes", "read_instances", "Attachment"]


class Attachment(NamedTuple):
    """Where a volume is attached: the instance, its type and the device name."""

    instance_id: str
    instance_type: str
    device: Optional[str] = None


def _whole(v: Any, field: str, where: str) -> float:
    x = _float(v, where, field) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
    if not (math.isfinite(x) and x > 0 and x.is_integer()):  # NaN and infinities (1e400 reads as inf) too
        raise ValueError(f"{where}: {field}={_shown(v)} must be a positive whole number")
    return x


def read_volumes(*sources: Source) -> Dict[str, Volume]:
    """Volume configurations from ``aws ec2 describe-volumes`` output, by VolumeId.

    Parameters
    ----------
    *sources : path, dict or list
        The output (``{"Volumes": [...]}``), a list of pages, or several paths (each a regular
        file of at most :data:`ebssim.aws.MAX_JSON_BYTES`, UTF-8 JSON nested at most 100 deep).

    Returns
    -------
    dict of str to Volume
        In the order listed. Read per ``VolumeType`` (``Size`` in GiB is required):

        - ``gp2``: ``Iops`` is the volume's *baseline* (3 IOPS per GiB, 100..16,000), not a
          provisioned figure; when present it must agree with ``Size`` (else the document is
          inconsistent: error).
        - ``gp3``: ``Iops`` and ``Throughput`` (MiB/s) are provisioned; missing ones take AWS's
          defaults (3,000 and 125).
        - ``io1``, ``io2``: ``Iops`` is provisioned and required.
        - ``st1``, ``sc1``, ``standard``: their performance follows from ``Size``; an ``Iops``
          or ``Throughput`` field is not read (AWS documents them for the SSD types only).

        Configurations AWS would reject are ValueErrors naming the volume and AWS's rule.
        Every volume starts with a full burst bucket (describe-volumes reports no balance; see
        :func:`ebssim.aws.replay` for starting from the measured BurstBalance).

    Examples
    --------
    >>> import ebssim.aws as aws
    >>> doc = {"Volumes": [{"VolumeId": "vol-0123abcd", "VolumeType": "gp2", "Size": 100, "Iops": 300}]}
    >>> vols = aws.read_volumes(doc)
    >>> print(vols["vol-0123abcd"])
    gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s)
    >>> aws.read_volumes({"Volumes": [{"VolumeId": "vol-0123abcd", "VolumeType": "gp2", "Size": 100, "Iops": 3000}]})
    Traceback (most recent call last):
    ...
    ValueError: document: Volumes[0] (vol-0123abcd): Iops=3000 but a 100 GiB gp2 volume's baseline is 300 IOPS ...
    """
    out: Dict[str, Volume] = {}
    for page, where in _pages(sources, "aws ec2 describe-volumes", "Volumes"):
        vols = page["Volumes"]
        if not isinstance(vols, (list, tuple)):
            raise ValueError(f"{where}: Volumes must be a list")
        for i, v in enumerate(vols):
            w = f"{where}: Volumes[{i}]"
            if not isinstance(v, Mapping):
                raise ValueError(f"{w}: a volume must be a JSON object")
            vid = _volume(v.get("VolumeId"), w)
            w = f"{w} ({vid})"
            if vid in out:
                raise ValueError(f"{w}: the volume is listed twice")
            out[vid] = _volume_from(v, w)
    return out


def _volume_from(v: Mapping[str, Any], where: str) -> Volume:
    vtype = v.get("VolumeType")
    if vtype not in VOLUME_TYPES:
        raise ValueError(f"{where}: VolumeType={vtype!r} is not one of {', '.join(VOLUME_TYPES)}")
    if "Size" not in v:
        raise ValueError(f"{where}: no Size (GiB)")
    size = _whole(v["Size"], "Size", where)
    iops = v.get("Iops")
    try:
        if vtype == "gp2":
            vol = Volume("gp2", size)
            if iops is not None and _whole(iops, "Iops", where) != vol.baseline_iops:
                raise ValueError(
                    f"Iops={iops!r} but a {size:g} GiB gp2 volume's baseline is {vol.baseline_iops:g} IOPS "
                    f"(3 per GiB, 100..16,000); describe-volumes reports gp2's baseline as Iops, so the "
                    f"document is inconsistent"
                )
            return vol
        if vtype == "gp3":
            tput = v.get("Throughput")
            return Volume(
                "gp3",
                size,
                iops=None if iops is None else _whole(iops, "Iops", where),
                throughput_mib_s=None if tput is None else _whole(tput, "Throughput", where),
            )
        if vtype in ("io1", "io2"):
            if iops is None:
                raise ValueError(f"no Iops: an {vtype} volume's provisioned IOPS are required")
            return Volume(vtype, size, iops=_whole(iops, "Iops", where))
        return Volume(str(vtype), size)
    except ValueError as e:
        if str(e).startswith(where):
            raise
        raise ValueError(f"{where}: {e}") from None


def read_instances(*sources: Source) -> Dict[str, Attachment]:
    """Attachments from ``aws ec2 describe-instances`` output: VolumeId -> :class:`Attachment`.

    Each instance's ``BlockDeviceMappings[].Ebs.VolumeId`` is attached to its ``InstanceType``
    (whose EBS limits the volumes then share in :func:`ebssim.aws.replay`). A volume attached to
    two instances (EBS Multi-Attach) is an error: ebssim attaches a volume to one instance.

    >>> import ebssim.aws as aws
    >>> doc = {"Reservations": [{"Instances": [{"InstanceId": "i-0abc", "InstanceType": "m5.large",
    ...        "BlockDeviceMappings": [{"DeviceName": "/dev/xvda", "Ebs": {"VolumeId": "vol-0123abcd"}}]}]}]}
    >>> aws.read_instances(doc)
    {'vol-0123abcd': Attachment(instance_id='i-0abc', instance_type='m5.large', device='/dev/xvda')}
    """
    out: Dict[str, Attachment] = {}
    where_of: Dict[str, str] = {}
    for page, where in _pages(sources, "aws ec2 describe-instances", "Reservations"):
        reservations = page["Reservations"]
        if not isinstance(reservations, (list, tuple)):
            raise ValueError(f"{where}: Reservations must be a list")
        for i, r in enumerate(reservations):
            instances: List[Any] = r.get("Instances", []) if isinstance(r, Mapping) else []
            for j, inst in enumerate(instances):
                w = f"{where}: Reservations[{i}].Instances[{j}]"
                if not isinstance(inst, Mapping):
                    raise ValueError(f"{w}: an instance must be a JSON object")
                iid, itype = inst.get("InstanceId"), inst.get("InstanceType")
                if not isinstance(iid, str) or not isinstance(itype, str):
                    raise ValueError(f"{w}: an instance needs InstanceId and InstanceType")
                for k, bdm in enumerate(inst.get("BlockDeviceMappings", [])):
                    ebs = bdm.get("Ebs") if isinstance(bdm, Mapping) else None
                    if not isinstance(ebs, Mapping):
                        continue  # an instance-store device
                    wk = f"{w}.BlockDeviceMappings[{k}]"
                    vid = _volume(ebs.get("VolumeId"), wk)
                    if vid in out and out[vid].instance_id != iid:
                        raise ValueError(
                            f"{wk}: {vid} is attached to {iid} and to {out[vid].instance_id} ({where_of[vid]}): "
                            f"ebssim attaches a volume to one instance (EBS Multi-Attach is not modelled)"
                        )
                    out[vid] = Attachment(iid, itype, bdm.get("DeviceName"))
                    where_of[vid] = wk
    return out
