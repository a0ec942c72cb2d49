"""A named simulation's per-volume accessors (issue 23): ``RunResult.to_pandas`` labels each row
with its target and a set's member index, and ``Simulation.credits`` takes a target's name.
Every expected figure is worked out by hand in the comment beside it."""

from __future__ import annotations

import ebssim
import pandas as pd
import pytest


def _sim() -> ebssim.Simulation:
    # md0: 2 x gp2 100 GiB (300 IOPS baseline, burst 3,000, a 5.4 M bucket); log: gp2 50 GiB
    # (150 IOPS baseline; 100 IOPS is gp2's floor, 3 x 50 = 150).
    md0 = ebssim.striped([ebssim.gp2(100)] * 2, chunk_kib=64)
    return ebssim.Simulation({"md0": md0, "log": ebssim.gp2(50)})


def test_to_pandas_of_a_named_run_has_target_and_member_columns():
    sim = _sim()
    # 64 x 4 KiB in flight on md0: one piece per I/O, 32 on each member, each at its 3,000 IOPS
    # burst; the log idle. 3 steps of 1 s.
    run = sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.Idle()}, duration_s=3)
    df = run.to_pandas()
    assert len(df) == 3 * 3  # 3 volumes stepped x 3 steps
    assert df["target"].tolist() == ["md0"] * 6 + ["log"] * 3
    assert str(df["member"].dtype) == "Int64"
    assert df["member"].tolist()[:6] == [0, 0, 0, 1, 1, 1]
    assert df["member"].iloc[6:].isna().all()
    assert df["volume"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    # Per member 3,000 IOPS for 3 steps: 9,000 I/Os each; md0 18,000; the log none.
    per = df.groupby(["target", "member"], dropna=False)["iops"].sum()
    assert per[("md0", 0)] == pytest.approx(9000)
    assert per[("md0", 1)] == pytest.approx(9000)
    assert df[df.target == "log"]["iops"].sum() == 0
    # The columns otherwise are an unnamed run's, with the two after 'volume'.
    cols = list(df.columns)
    assert cols[cols.index("volume") + 1 : cols.index("volume") + 3] == ["target", "member"]


def test_to_pandas_of_an_unnamed_run_is_unchanged():
    run = ebssim.Simulation([ebssim.gp2(100), ebssim.gp2(50)]).run(
        [ebssim.ClosedLoop(32, "4k"), ebssim.Idle()], duration_s=2
    )
    df = run.to_pandas()
    assert "target" not in df.columns and "member" not in df.columns
    assert df["volume"].tolist() == [0, 0, 1, 1]
    expected = pd.concat([r.to_pandas().reset_index().assign(volume=i) for i, r in enumerate(run)], ignore_index=True)
    pd.testing.assert_frame_equal(df, expected)


def test_to_pandas_of_a_named_replay_names_its_volumes():
    sim = ebssim.Simulation({"data": ebssim.gp3(100), "log": ebssim.gp3(50)})
    t = ebssim.OpenLoop.constant(100, "4k", 2)  # 100 IOPS for 2 s
    df = sim.replay({"data": t, "log": t}).to_pandas()
    assert df.drop_duplicates("volume")[["volume", "target"]].values.tolist() == [[0, "data"], [1, "log"]]
    assert df["member"].isna().all()


def test_credits_by_target_name():
    sim = _sim()
    # Full buckets: 5.4 M I/O credits each.
    assert sim.credits("md0") == (5.4e6, 5.4e6)
    assert sim.credits("log") == 5.4e6
    # 64 in flight on md0 for 100 s: each member at 3,000 IOPS, earning 300: 5.4 M - 100 x 2,700
    # = 5.13 M. The log idles at a full bucket.
    sim.run({"md0": ebssim.ClosedLoop(64, "4k"), "log": ebssim.Idle()}, duration_s=100)
    assert sim.credits("md0") == pytest.approx((5.13e6, 5.13e6))
    assert sim.credits("log") == pytest.approx(5.4e6)
    assert sim.credits(1) == sim.credits("md0")[1]  # positions still index the volumes stepped
    assert sim.credits(-1) == sim.credits("log")


def test_credits_by_a_name_it_does_not_have():
    with pytest.raises(KeyError, match=r"'data' is not a target of the simulation: its targets are 'md0', 'log'"):
        _sim().credits("data")
    with pytest.raises(ValueError, match=r"^i='md0' must be a volume index"):  # unnamed: as before
        ebssim.Simulation([ebssim.gp2(100)]).credits("md0")
    with pytest.raises(IndexError, match=r"volume index 3 is out of range: the simulation has 3 volumes"):
        _sim().credits(3)
