"""ebssim.fleet on Dask: a LocalCluster of two worker processes gives the local run's summary exactly."""

from __future__ import annotations

from typing import Dict, Iterator, Tuple

import dask.bag as db
import dask.dataframe as dd
import distributed
import ebssim
import numpy as np
import pandas as pd
import pytest
from ebssim.aws import Attachment
from ebssim.fleet import FleetVolume, simulate_fleet, simulate_fleet_dask

# dask and distributed come with the `fleet` extra, which `make` installs: a missing one is an
# error here, not a skip.


@pytest.fixture(scope="module")
def client() -> Iterator["distributed.Client"]:
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _long() -> Tuple[Dict[str, ebssim.Volume], pd.DataFrame, Dict[str, Attachment]]:
    """Eight volumes, three hours at one minute, distinct diurnal traces; two share a t3.micro."""
    idx = pd.date_range("2024-05-01", periods=180, freq="1min", tz="UTC")
    kinds = [ebssim.gp2(50), ebssim.gp3(100), ebssim.gp2(200), ebssim.io1(100, iops=1000)]
    vols = {f"vol-{i}": kinds[i % 4] for i in range(8)}
    frames = []
    for i, vid in enumerate(vols):
        rng = np.random.default_rng(i)
        level = 60_000.0 * (1 + 0.7 * np.sin(np.arange(180) / 30 + i)) + rng.uniform(0, 20_000, 180)
        frames.append(pd.DataFrame({"volume_id": vid, "read_ops": level, "write_ops": level / 3}, index=idx))
    att = {"vol-2": Attachment("i-1", "t3.micro"), "vol-6": Attachment("i-1", "t3.micro")}
    return vols, pd.concat(frames).rename_axis("time"), att


def test_a_dask_dataframe_partitioned_by_volume_gives_the_local_summary(client: "distributed.Client") -> None:
    vols, long, att = _long()
    local = simulate_fleet(vols, long, att, io_size="8k", threads=1)
    # Partitioned by volume, and by instance: vol-2 and vol-6 share i-1, so they go together.
    keyed = long.assign(part=long["volume_id"].map(lambda v: "i-1" if v in att else v))
    ddf = dd.from_pandas(keyed.reset_index(), npartitions=3).shuffle("part", npartitions=3).drop(columns="part")
    remote = simulate_fleet_dask(vols, ddf, att, io_size="8k")
    pd.testing.assert_frame_equal(remote.summary, local.summary, check_exact=True)
    assert remote.errors == {} and local.summary.loc["vol-2", "instance_id"] == "i-1"


def test_set_index_on_the_volume_id_and_a_bad_trace(client: "distributed.Client") -> None:
    vols, long, _ = _long()
    long = long.copy()
    long.loc[(long["volume_id"] == "vol-5").to_numpy() & (np.arange(len(long)) % 180 == 17), "read_ops"] = -1.0
    with pytest.warns(UserWarning, match="1 of 8 volumes were not simulated"):
        local = simulate_fleet(vols, long, io_size="8k")
    ddf = dd.from_pandas(long.reset_index(), npartitions=4).set_index("volume_id")
    with pytest.warns(UserWarning, match="1 of 8 volumes were not simulated"):
        remote = simulate_fleet_dask(vols, ddf, io_size="8k")
    pd.testing.assert_frame_equal(remote.summary, local.summary, check_exact=True)
    assert list(remote.errors) == ["vol-5"] and remote.errors == local.errors
    assert "read_ops" in remote.errors["vol-5"] and "-1" in remote.errors["vol-5"]


def test_a_bag_of_fleet_volumes_gives_the_local_summary(client: "distributed.Client") -> None:
    vols, long, att = _long()
    loads = {
        vid: ebssim.trace.from_pandas(g.drop(columns="volume_id"), io_size="8k") for vid, g in long.groupby("volume_id")
    }
    local = simulate_fleet(vols, loads, att)
    # The two volumes of i-1 in one partition: a bag's partitions are its items in order.
    order = ["vol-2", "vol-6"] + [v for v in vols if v not in att]
    items = [FleetVolume(v, vols[v], loads[v], att.get(v)) for v in order]
    bag = db.from_sequence(items, partition_size=2)
    remote = simulate_fleet_dask(vols, bag)
    pd.testing.assert_frame_equal(remote.summary, local.summary, check_exact=True)


def test_an_instance_split_over_partitions_is_an_error_not_a_wrong_answer(client: "distributed.Client") -> None:
    vols, long, att = _long()
    # In the order of the volumes, two partitions of four volumes: vol-2 in the first, vol-6 in the second.
    ddf = dd.from_pandas(long.reset_index(), npartitions=2, sort=False)
    assert ddf.map_partitions(lambda p: p["volume_id"].unique().tolist()).compute().tolist() == [
        ["vol-0", "vol-1", "vol-2", "vol-3"],
        ["vol-4", "vol-5", "vol-6", "vol-7"],
    ]
    with pytest.warns(UserWarning, match="2 of 8 volumes were not simulated.*not in one partition"):
        remote = simulate_fleet_dask(vols, ddf, att, io_size="8k")
    assert sorted(remote.errors) == ["vol-2", "vol-6"]
    local = simulate_fleet(vols, long, att, io_size="8k")
    pd.testing.assert_frame_equal(
        remote.summary.drop(index=["vol-2", "vol-6"]), local.summary.drop(index=["vol-2", "vol-6"]), check_exact=True
    )
