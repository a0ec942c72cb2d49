// Closed forms for the gp2 credit bucket (AWS's burst table) and their agreement with the
// stepped engine.

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {
double burst_s(double size_gib) { return burst_duration_s(make_volume(gp2_spec(size_gib)), 3000); }
double refill_s(double size_gib) { return refill_time_s(make_volume(gp2_spec(size_gib))); }
}  // namespace

TEST_CASE("AWS gp2 burst table: seconds at 3,000 counted IOPS from a full bucket") {
    // duration = 5.4e6 / (3,000 - baseline)
    // 1 GiB: baseline 100 -> 5.4e6 / 2,900 = 1,862.07 s (AWS table: 1,862)
    CHECK(burst_s(1) == near(1862.0689655172414));
    CHECK(std::round(burst_s(1)) == 1862);
    // 33 GiB still has the 100 IOPS floor: same duration.
    CHECK(burst_s(33) == near(1862.0689655172414));
    // 100 GiB: 5.4e6 / 2,700 = 2,000 s
    CHECK(burst_s(100) == near(2000));
    // 250 GiB: 5.4e6 / 2,250 = 2,400 s
    CHECK(burst_s(250) == near(2400));
    // 334 GiB: baseline 1,002 -> 5.4e6 / 1,998 = 2,702.70 s (AWS table: 2,703)
    CHECK(burst_s(334) == near(2702.7027027027027));
    CHECK(std::round(burst_s(334)) == 2703);
    // 500 GiB: 5.4e6 / 1,500 = 3,600 s
    CHECK(burst_s(500) == near(3600));
    // 750 GiB: 5.4e6 / 750 = 7,200 s
    CHECK(burst_s(750) == near(7200));
    // 1,000 GiB: baseline 3,000 = burst, never runs out; 5,334 GiB: baseline 16,000.
    CHECK(std::isinf(burst_s(1000)));
    CHECK(burst_s(1000) > 0);
    CHECK(std::isinf(burst_s(5334)));
    CHECK(std::isinf(burst_s(16384)));
}

TEST_CASE("AWS gp2 burst table: seconds to refill an empty bucket while idle") {
    // refill = 5.4e6 / baseline
    CHECK(refill_s(1) == near(54000));                // / 100
    CHECK(refill_s(100) == near(18000));              // / 300
    CHECK(refill_s(250) == near(7200));               // / 750
    CHECK(refill_s(334) == near(5389.221556886228));  // / 1,002
    CHECK(std::round(refill_s(334)) == 5389);
    CHECK(refill_s(500) == near(3600));  // / 1,500
    CHECK(refill_s(750) == near(2400));  // / 2,250
}

TEST_CASE("burst_duration_s from a partial balance") {
    VolumeParams p = make_volume(gp2_spec(100));
    // 1,350,000 credits (25 %) / (3,000 - 300) = 500 s
    CHECK(burst_duration_s(p, 3000, 1.35e6) == near(500));
    // The same balance set through the spec becomes the default starting point.
    VolumeParams q = make_volume(gp2_spec(100, 25));
    CHECK(burst_duration_s(q, 3000) == near(500));
    // An empty bucket lasts 0 s above baseline.
    CHECK(burst_duration_s(p, 3000, 0.0) == 0);
    // 54,000 credits (1 %) / 2,700 = 20 s
    CHECK(burst_duration_s(make_volume(gp2_spec(100, 1)), 3000) == near(20));
}

TEST_CASE("burst_duration_s at other demands") {
    VolumeParams p = make_volume(gp2_spec(100));
    // 1,000 counted IOPS: 5.4e6 / (1,000 - 300) = 7,714.29 s
    CHECK(burst_duration_s(p, 1000) == near(5.4e6 / 700.0));
    CHECK(burst_duration_s(p, 1000) == near(7714.285714285714));
    // Above the burst ceiling the volume still spends only 3,000 - 300 per second.
    CHECK(burst_duration_s(p, 10000) == near(2000));
    // At or below baseline the bucket never drains.
    CHECK(std::isinf(burst_duration_s(p, 300)));
    CHECK(std::isinf(burst_duration_s(p, 100)));
    CHECK(std::isinf(burst_duration_s(p, 0)));
    // gp3 has no bucket: never runs out.
    CHECK(std::isinf(burst_duration_s(make_volume(gp3_spec(100)), 3000)));
}

TEST_CASE("cliff_time_s of a steady open loop: burst_duration_s at the counted rate it is served") {
    VolumeParams p = make_volume(gp2_spec(100));
    const double kib4 = 4 * KiB;
    // 1,200 x 4 KiB a second: one counted I/O each, drain 1,200 - 300: 5.4e6 / 900 = 6,000 s.
    CHECK(cliff_time_s(p, SteadyOpenLoop{1200, 1200 * kib4}) == near(6000));
    // 5,000 arrive, the burst cap serves 3,000 (the rest queues): 5.4e6 / 2,700 = 2,000 s.
    CHECK(cliff_time_s(p, SteadyOpenLoop{5000, 5000 * kib4}) == near(2000));
    // 3,000 x 64 KiB = 187.5 MiB/s > 128 MiB/s: 128 MiB/s / 64 KiB = 2,048 counted/s.
    CHECK(cliff_time_s(p, SteadyOpenLoop{3000, 3000 * 64 * KiB}) == near(5.4e6 / 1748));
    // 1 MiB sequential counts 4 x 256 KiB each; 100 x 1 MiB = 100 MiB/s within 128: 400 counted/s.
    CHECK(cliff_time_s(p, SteadyOpenLoop{100, 100 * MiB, 1.0, Pattern::sequential}) == near(5.4e6 / 100));
    // At most one I/O outstanding, 0.5 ms + 4 KiB / 1 GiB/s each: 1 / 0.503815 ms = 1,984.857 a second.
    const double st = 0.5e-3 + kib4 / (1024 * MiB);
    CHECK(cliff_time_s(p, SteadyOpenLoop{2500, 2500 * kib4, 1.0, Pattern::random, unset, 1.0}) ==
          near(5.4e6 / (1 / st - 300)));
    // From 54,000 credits: 54,000 / 900 = 60 s. At the baseline, idle, or on gp3: never.
    CHECK(cliff_time_s(p, SteadyOpenLoop{1200, 1200 * kib4}, 54000) == near(60));
    CHECK(std::isinf(cliff_time_s(p, SteadyOpenLoop{300, 300 * kib4})));
    CHECK(std::isinf(cliff_time_s(p, SteadyOpenLoop{})));
    CHECK(std::isinf(cliff_time_s(make_volume(gp3_spec(100)), SteadyOpenLoop{5000, 5000 * kib4})));
    CHECK_THROWS_WITH_AS(cliff_time_s(p, SteadyOpenLoop{-1, 0}), doctest::Contains("iops=-1"), ConfigError);
    CHECK_THROWS_WITH_AS(cliff_time_s(p, SteadyOpenLoop{0, 4096}), doctest::Contains("bytes_per_s=4096 with iops=0"),
                         ConfigError);
}

TEST_CASE("refill_time_s from a partial balance and under load") {
    VolumeParams p = make_volume(gp2_spec(100));
    // From half full, idle: (5.4e6 - 2.7e6) / 300 = 9,000 s
    CHECK(refill_time_s(p, 0, 2.7e6) == near(9000));
    // From empty while serving 100 counted IOPS: 5.4e6 / (300 - 100) = 27,000 s
    CHECK(refill_time_s(p, 100) == near(27000));
    // Already full: 0 s, even at baseline demand.
    CHECK(refill_time_s(p, 0, 5.4e6) == 0);
    CHECK(refill_time_s(p, 300, 5.4e6) == 0);
    // At or above baseline, a bucket that is not full never refills.
    CHECK(std::isinf(refill_time_s(p, 300, 1e6)));
    CHECK(std::isinf(refill_time_s(p, 3000)));
    // gp3: no bucket.
    CHECK(std::isinf(refill_time_s(make_volume(gp3_spec(100)))));
}

TEST_CASE("the stepped engine reproduces the burst table (cliff interpolated inside the step)") {
    // 32 x 4 KiB random reads in flight ask for 32 / 0.000503815 = 63,515 IOPS, far above 3,000,
    // so every volume below 1 TiB runs at 3,000 counted IOPS until its bucket is empty.
    struct Row {
        double size_gib;
        double cliff_s;  // 5.4e6 / (3,000 - baseline)
    };
    const std::vector<Row> rows = {
        {1, 5.4e6 / 2900},                                    // 1,862.07
        {100, 2000},       {250, 2400}, {334, 5.4e6 / 1998},  // 2,702.70
        {500, 3600},       {750, 7200},
    };
    for (const Row& row : rows) {
        CAPTURE(row.size_gib);
        Simulation sim = single(gp2_spec(row.size_gib));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 7300, false);
        CHECK(r.series.empty());
        CHECK(r.totals[0].cliff_time_s == near(row.cliff_s, 1e-12));
        CHECK(r.totals[0].credits_end == 0);
        // The closed form on the same parameters agrees.
        CHECK(burst_duration_s(sim.params(0), 3000) == near(row.cliff_s, 1e-12));
    }
    // 1,000 GiB never hits a cliff: its baseline is the burst ceiling.
    Simulation big = single(gp2_spec(1000));
    RunResult r = run1(big, closed_loop(32, 4 * KiB), 7300, false);
    CHECK(std::isnan(r.totals[0].cliff_time_s));
    CHECK(r.totals[0].credits_end == 5.4e6);
    CHECK(r.totals[0].served_counted == near(3000.0 * 7300));
}

TEST_CASE("the stepped engine refills in refill_time_s") {
    // 100 GiB gp2 from empty, idle: +300 credits per second; full after 5.4e6 / 300 = 18,000 s.
    Simulation sim = single(gp2_spec(100, 0));
    run1(sim, Idle{}, 9000, false);
    CHECK(sim.credits(0) == near(2.7e6));  // 300 x 9,000
    run1(sim, Idle{}, 8999, false);
    CHECK(sim.credits(0) == near(5.4e6 - 300));  // one second short
    run1(sim, Idle{}, 1, false);
    CHECK(sim.credits(0) == near(5.4e6));
    // Capped: more rest earns nothing more.
    run1(sim, Idle{}, 1000, false);
    CHECK(sim.credits(0) == 5.4e6);
    CHECK(sim.time_s() == 19000);
}

// The closed loop's closed forms (closed_loop_rate, cliff_time_s) use the engine's own rules, so
// they agree with a stepped run exactly, think time included.
TEST_CASE("closed_loop_rate: gp2 100 GiB, 4 KiB random at QD 4 with 1 ms think time") {
    const VolumeParams p = make_volume(gp2_spec(100));
    ClosedLoop w = closed_loop(4, 4 * KiB);
    w.think_time_s = 0.001;
    // 4 / (0.000503815 + 0.001) = 2,659.9 I/Os per second: under the 3,000 burst cap.
    const double offered = 4 / (st_4k + 0.001);
    const ClosedLoopRate r = closed_loop_rate(p, w);
    CHECK(r.offered_iops == near(offered));
    CHECK(r.iops == near(offered));
    CHECK(r.counted_iops == near(offered));
    CHECK(r.throughput_bytes_s == near(offered * 4 * KiB));
    CHECK(r.latency_s == near(st_4k));
    CHECK(r.bound == Bound::demand);
    // The bucket drains at 2,659.9 - 300: 5.4e6 / 2,359.9 = 2,288.2 s (not 2,000 s).
    CHECK(cliff_time_s(p, w) == near(5.4e6 / (offered - 300)));
    CHECK(cliff_time_s(p, w) == near(2288.2304329991207));
    // Without credits the 300 IOPS baseline binds; Little's law over the cycle: 4 / 300 - think.
    const ClosedLoopRate b = closed_loop_rate(p, w, false);
    CHECK(b.iops == near(300));
    CHECK(b.bound == Bound::volume_iops);
    CHECK(b.latency_s == near(4.0 / 300 - 0.001));
    // The engine: the same rate and the same cliff.
    Simulation sim = single(gp2_spec(100));
    RunResult run = run1(sim, w, 2400);
    CHECK(run.series[0].iops[0] == near(r.iops));
    CHECK(run.series[0].latency_s[0] == near(r.latency_s));
    CHECK(run.totals[0].cliff_time_s == near(cliff_time_s(p, w)));
    CHECK(run.series[0].iops[2399] == near(b.iops));
    CHECK(run.series[0].latency_s[2399] == near(b.latency_s));
}

TEST_CASE("closed_loop_rate and cliff_time_s agree with the engine on every bucket type") {
    struct Case {
        VolumeSpec spec;
        ClosedLoop w;
    };
    auto think = [](ClosedLoop w, double t) {
        w.think_time_s = t;
        return w;
    };
    const std::vector<Case> cases = {
        {gp2_spec(1), think(closed_loop(8, 4 * KiB), 0.002)},
        {gp2_spec(250), think(closed_loop(32, 16 * KiB), 0.0005)},
        {gp2_spec(200), think(closed_loop(16, MiB, Pattern::sequential), 0.001)},  // throughput-bound
        {gp2_spec(100), closed_loop(32, 4 * KiB, Pattern::sequential)},            // 2,000 s
        {st1_spec(1024), think(closed_loop(8, MiB, Pattern::sequential), 0.01)},
        {st1_spec(500), think(closed_loop(16, 4 * KiB, Pattern::sequential), 0.001)},
        {sc1_spec(2048), closed_loop(4, 128 * KiB, Pattern::sequential)},
        {standard_spec(50), think(closed_loop(2, 16 * KiB), 0.002)},
    };
    for (const Case& c : cases) {
        const VolumeParams p = make_volume(c.spec);
        const ClosedLoopRate with = closed_loop_rate(p, c.w);
        const ClosedLoopRate without = closed_loop_rate(p, c.w, false);
        const double cliff = cliff_time_s(p, c.w);
        CAPTURE(to_string(p.type));
        CAPTURE(p.size_gib);
        CAPTURE(c.w.io_bytes);
        REQUIRE(std::isfinite(cliff));
        Simulation sim = single(c.spec);
        const auto n = static_cast<std::int64_t>(std::ceil(cliff)) + 50;
        RunResult r = run1(sim, c.w, n);
        const StepSeries& s = r.series[0];
        CHECK(s.iops[0] == near(with.iops));
        CHECK(s.ebs_iops[0] == near(with.counted_iops));
        CHECK(s.throughput_mib_s[0] == near(with.throughput_bytes_s / MiB));
        CHECK(s.latency_s[0] == near(with.latency_s));
        CHECK(s.bound[0] == code(with.bound));
        CHECK(r.totals[0].cliff_time_s == near(cliff));
        const auto last = static_cast<std::size_t>(n - 1);
        CHECK(s.iops[last] == near(without.iops));
        CHECK(s.ebs_iops[last] == near(without.counted_iops));
        CHECK(s.latency_s[last] == near(without.latency_s));
        CHECK(s.bound[last] == code(without.bound));
    }
}

TEST_CASE("cliff_time_s of a closed loop: never without a bucket or below baseline") {
    CHECK(std::isinf(cliff_time_s(make_volume(gp3_spec(100)), closed_loop(32, 4 * KiB))));
    CHECK(std::isinf(cliff_time_s(make_volume(gp2_spec(1000)), closed_loop(32, 4 * KiB))));
    // One 4 KiB I/O in flight with 10 ms think time: 99.5 IOPS, under gp2 100 GiB's 300 baseline.
    ClosedLoop slow = closed_loop(1, 4 * KiB);
    slow.think_time_s = 0.01;
    CHECK(std::isinf(cliff_time_s(make_volume(gp2_spec(100)), slow)));
    // From half a bucket: half the time.
    CHECK(cliff_time_s(make_volume(gp2_spec(100)), closed_loop(32, 4 * KiB), 2.7e6) == near(1000));
}

TEST_CASE("closed_loop_rate validates the workload") {
    ClosedLoop bad = closed_loop(0, 4 * KiB);
    CHECK(config_error_message([&] { (void)closed_loop_rate(make_volume(gp2_spec(100)), bad); }).find("in_flight=0") !=
          std::string::npos);
    ClosedLoop neg = closed_loop(4, 4 * KiB);
    neg.counted_per_io = -1;
    CHECK(config_error_message([&] {
              (void)cliff_time_s(make_volume(gp2_spec(100)), neg);
          }).find("counted_per_io=-1") != std::string::npos);
}

TEST_CASE("closed_loop_rate: counted_per_io describes a mix by its means") {
    // 1.5 counted ops per 64 KiB I/O (a mix): gp3's 3,000 IOPS allow 2,000 I/Os.
    ClosedLoop w = closed_loop(64, 64 * KiB);
    w.counted_per_io = 1.5;
    const ClosedLoopRate r = closed_loop_rate(make_volume(gp3_spec(100, 3000, 750)), w);
    CHECK(r.iops == near(2000));
    CHECK(r.counted_iops == near(3000));
    CHECK(r.bound == Bound::volume_iops);
}
