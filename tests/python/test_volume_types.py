"""The volume-type table: one list of the types, in the C++ core, that Python reads."""

from __future__ import annotations

import math

import ebssim
import pytest
from ebssim import Volume

KiB, MiB = 1024.0, 1024.0**2

# name: (media, counting unit, bucket, min, max GiB, console's size, IOPS, throughput)
EXPECTED = {
    "gp2": ("ssd", 256 * KiB, "io_credits", 1, 16384, 8, None, None),
    "gp3": ("ssd", 256 * KiB, "none", 1, 65536, 8, 3000, 125),
    "io1": ("ssd", 256 * KiB, "none", 4, 16384, 100, 3000, None),
    "io2": ("ssd", 256 * KiB, "none", 4, 65536, 100, 3000, None),
    "st1": ("hdd", MiB, "throughput_credits", 125, 16384, 125, None, None),
    "sc1": ("hdd", MiB, "throughput_credits", 125, 16384, 125, None, None),
    "standard": ("hdd", MiB, "io_credits", 1, 1024, 8, None, None),
}


def test_types_in_aws_order():
    assert tuple(ebssim.volume_types()) == ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
    assert ebssim.VOLUME_TYPES == tuple(ebssim.volume_types())


@pytest.mark.parametrize("name", EXPECTED)
def test_table_row(name):
    t = ebssim.volume_types()[name]
    assert isinstance(t, ebssim.VolumeTypeInfo)
    got = (
        t.media,
        t.io_unit_bytes,
        t.bucket,
        t.min_size_gib,
        t.max_size_gib,
        t.default_size_gib,
        t.default_iops,
        t.default_throughput_mib_s,
    )
    assert got == EXPECTED[name]
    assert t.name == name
    assert t.description
    assert t.has_bucket == (t.bucket != "none")


@pytest.mark.parametrize("name", EXPECTED)
def test_table_agrees_with_the_rules(name):
    """The console's defaults make a volume AWS accepts, and what the table says about a type is
    what a volume of that type does."""
    t = ebssim.volume_types()[name]
    v = Volume(name, t.default_size_gib, iops=t.default_iops, throughput_mib_s=t.default_throughput_mib_s)
    assert v.io_unit_bytes == t.io_unit_bytes
    assert v.has_bucket == t.has_bucket
    Volume(name, t.min_size_gib, iops=100 if name in ("io1", "io2") else None)
    Volume(name, t.max_size_gib, iops=t.default_iops)
    with pytest.raises(ValueError, match=f"size_gib={t.max_size_gib + 1:g} is out of range"):
        Volume(name, t.max_size_gib + 1, iops=t.default_iops)


@pytest.mark.parametrize("name", EXPECTED)
def test_every_type_has_a_factory(name):
    """A type added to the C++ table is noticed here until it has its ebssim.<type>() factory."""
    assert callable(getattr(ebssim, name))
    assert name in ebssim.__all__


def test_table_is_read_only():
    types = ebssim.volume_types()
    with pytest.raises(TypeError):
        types["gp4"] = types["gp3"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        types["gp3"].default_size_gib = 100  # type: ignore[misc]


def test_unknown_type_lists_the_table():
    with pytest.raises(ValueError, match="type='gp4' is not a supported volume type; known: gp2, gp3, io1, io2, st1"):
        Volume("gp4", 100)
    with pytest.raises(ValueError, match="volume type 'gp4' is not an EBS volume type; known types: gp2, gp3, io1"):
        ebssim._core.VolumeSpec("gp4", 100)


def test_repr():
    assert repr(ebssim.volume_types()["io2"]) == (
        "VolumeTypeInfo(name='io2', description='Provisioned IOPS SSD (Block Express)', media='ssd', "
        "io_unit_bytes=262144.0, bucket='none', has_bucket=False, min_size_gib=4.0, max_size_gib=65536.0, "
        "default_size_gib=100.0, default_iops=3000.0, default_throughput_mib_s=None)"
    )


@pytest.mark.parametrize(
    "volume, text",
    [
        # I/O-credit buckets: baseline, burst and the throughput cap with credits.
        (ebssim.gp2(100), "gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s)"),
        (ebssim.standard(100), "standard 100 GiB (100 IOPS baseline, burst 200, 90 MiB/s)"),
        # Throughput-credit buckets: 500 GiB st1 = 0.488 TiB x 40 = 19.5 MiB/s, x 250 = 122.1 MiB/s.
        (ebssim.st1(500), "st1 500 GiB (19.5312 MiB/s baseline, burst 122.07 MiB/s)"),
        # 1 TiB sc1: 12 MiB/s baseline, bursts to 80.
        (ebssim.sc1(1024), "sc1 1024 GiB (12 MiB/s baseline, burst 80 MiB/s)"),
        # Provisioned: IOPS and throughput. 3,000 IOPS x 0.25 MiB/s = 750 MiB/s, which io1 caps
        # at 500 (at or below 32,000 IOPS) and io2 does not (4,000).
        (ebssim.gp3(100), "gp3 100 GiB (3000 IOPS, 125 MiB/s)"),
        (ebssim.io1(100, 3000), "io1 100 GiB (3000 IOPS, 500 MiB/s)"),
        (ebssim.io2(100, 3000), "io2 100 GiB (3000 IOPS, 750 MiB/s)"),
    ],
    ids=["gp2", "standard", "st1", "sc1", "gp3", "io1", "io2"],
)
def test_volume_str_follows_the_bucket(volume, text):
    assert str(volume) == text


def test_default_iops_is_none_where_iops_follow_the_size():
    for name, t in ebssim.volume_types().items():
        assert (t.default_iops is None) == (name in ("gp2", "st1", "sc1", "standard"))
        if t.default_iops is not None:
            assert math.isfinite(t.default_iops)
