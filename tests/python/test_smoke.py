import ebssim


def test_gp2_100gib_cliff_at_2000s():
    r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
    # 5.4e6 credits / (3,000 - 300) IOPS = 2,000 s
    assert r.cliff_time_s == 2000.0
