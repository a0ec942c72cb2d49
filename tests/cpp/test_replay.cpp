// Replaying traces: every episode in which a bucket was empty (volume and instance), the backlog
// series, and an open loop's bound on outstanding I/Os (max_in_flight). Numbers worked out by hand.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

std::vector<double> bytes_of(const std::vector<double>& ops, double bytes_per_op) {
    std::vector<double> b;
    b.reserve(ops.size());
    for (double o : ops) b.push_back(o * bytes_per_op);
    return b;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cliffs: every episode with an empty bucket, from when it ran dry to when it earns again") {
    // 100 GiB gp2 (300 IOPS baseline, 3,000 burst) at 0.1 % BurstBalance: 5,400 credits.
    // 4 KiB random arrivals per step, credits at the end of each step (pool = credits + 300):
    //   0: 3,000: pool 5,700, serves 3,000                  -> 2,700
    //   1: 3,000: pool 3,000, serves 3,000                  -> 0: dry. It drained 2,700 a
    //      second (3,000 - 300) from 2,700: at 1 + 2,700 / 2,700 = 2.0 s
    //   2: 300:   pool 300, serves 300                      -> 0 (still dry)
    //   3: 300:   the same                                  -> 0
    //   4: 100:   pool 300, serves 100                      -> 200: earns again; the episode
    //      ends at the start of step 4, 4.0 s
    //   5: 3,000: pool 500, serves 500 (IOPS cap), 2,500 queue -> 0: dry again, from 200 at
    //      2,700 a second: 5 + 200 / 2,700 s
    //   6: 300 + 2,500 queued: pool 300, serves 300, 2,500 queue -> 0: still dry at the end
    const std::vector<double> ops = {3000, 3000, 300, 300, 100, 3000, 300};
    Simulation sim = single(gp2_spec(100, 0.1));
    RunResult r = run1(sim, open_loop(ops, bytes_of(ops, 4 * KiB)), 7);
    const VolumeTotals& t = r.totals[0];
    REQUIRE(t.cliffs.size() == 2);
    CHECK(t.cliffs[0].start_s == near(2.0));
    CHECK(t.cliffs[0].end_s == near(4.0));
    CHECK(t.cliffs[1].start_s == near(5.0 + 200.0 / 2700.0));
    CHECK(std::isnan(t.cliffs[1].end_s));
    CHECK(t.cliff_time_s == near(2.0));  // the first episode's start

    const std::vector<double> credits = {2700, 0, 0, 0, 200, 0, 0};
    const std::vector<double> backlog = {0, 0, 0, 0, 0, 2500, 2500};
    const std::vector<Bound> bound = {Bound::demand, Bound::demand,      Bound::demand,     Bound::demand,
                                      Bound::demand, Bound::volume_iops, Bound::volume_iops};
    for (std::size_t k = 0; k < ops.size(); ++k) {
        CAPTURE(k);
        CHECK(r.series[0].credits[k] == near(credits[k], 1e-9, 1e-9));
        CHECK(r.series[0].backlog_ops[k] == near(backlog[k], 1e-9, 1e-9));
        CHECK(r.series[0].bound[k] == code(bound[k]));
    }

    // Episodes are per run: the next run starts dry under 3,000 arrivals, so its first episode
    // starts at its own start, 7 s (2,500 still queued + 3,000 new; 300 served).
    const std::vector<double> more = {3000};
    RunResult r2 = run1(sim, open_loop(more, bytes_of(more, 4 * KiB)), 1);
    REQUIRE(r2.totals[0].cliffs.size() == 1);
    CHECK(r2.totals[0].cliffs[0].start_s == near(7.0));
    CHECK(std::isnan(r2.totals[0].cliffs[0].end_s));
    CHECK(r2.series[0].backlog_ops[0] == near(5200));
}

TEST_CASE("merge_cliffs: episodes apart by a short refill are one cliff, touches shorter than a minimum none") {
    // The trace above at dt = 1 s: episodes [2, 4) and [5.074, open), apart by 5.074 - 4 = 1.07 s
    // of credits: one cliff from 2 s (default gap max(300 s, 2 steps)), still open: kept.
    const std::vector<CliffEpisode> two = {{2.0, 4.0}, {5.0 + 200.0 / 2700.0, unset}};
    std::vector<CliffEpisode> m = merge_cliffs(two, 1.0);
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == 2.0);
    CHECK(std::isnan(m[0].end_s));
    // Gap 0 and no minimum: the episodes as recorded.
    m = merge_cliffs(two, 1.0, CliffRule{0.0, 0.0});
    REQUIRE(m.size() == 2);
    CHECK(m[0].end_s == 4.0);
    // A minimum of 3 s drops the 2 s episode; the open one stays, however short (1.93 s).
    m = merge_cliffs(two, 1.0, CliffRule{0.0, 3.0});
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == near(5.0 + 200.0 / 2700.0));

    // A replay at dt = 60 s of demand served at the baseline: six touches of 0 s at 6,000,
    // 6,120, ..., 6,600 s (each refilled by the next minute) and one from 6,720 s to 6,900 s.
    // Apart by 120 s <= max(300 s, 2 x 60 s): one cliff from 6,000 s to 6,900 s (900 s >= 60 s).
    std::vector<CliffEpisode> touches;
    for (int i = 0; i < 6; ++i) touches.push_back({6000.0 + 120.0 * i, 6000.0 + 120.0 * i});
    touches.push_back({6720.0, 6900.0});
    m = merge_cliffs(touches, 60.0);
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == 6000.0);
    CHECK(m[0].end_s == 6900.0);
    // A gap of 100 s < 120 s merges none, and the 0 s touches are shorter than 60 s: the 180 s
    // episode alone is a cliff.
    m = merge_cliffs(touches, 60.0, CliffRule{100.0, 60.0});
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == 6720.0);
    // At dt = 300 s a refill of two steps (600 s) still merges by default (max(300, 600)), not
    // with a gap of 300 s given.
    const std::vector<CliffEpisode> coarse = {{0.0, 0.0}, {600.0, 600.0}, {1200.0, 1500.0}};
    m = merge_cliffs(coarse, 300.0);
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == 0.0);
    CHECK(m[0].end_s == 1500.0);
    m = merge_cliffs(coarse, 300.0, CliffRule{300.0, 60.0});
    REQUIRE(m.size() == 1);
    CHECK(m[0].start_s == 1200.0);
    // Refills longer than the gap keep cliffs apart: [0, 100) and [1,000, 1,200) at dt = 1 s.
    CHECK(merge_cliffs({{0.0, 100.0}, {1000.0, 1200.0}}, 1.0).size() == 2);
    CHECK(merge_cliffs({}, 1.0).empty());

    CHECK_THROWS_WITH_AS(merge_cliffs(two, 1.0, CliffRule{-1.0, 60.0}), doctest::Contains("merge_gap_s=-1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(merge_cliffs(two, 1.0, CliffRule{300.0, unset}), doctest::Contains("min_duration_s=nan"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(merge_cliffs(two, 0.0), doctest::Contains("dt_s=0"), ConfigError);
}

TEST_CASE("cliffs: recorded without series, and none for a bucket that never runs dry") {
    const std::vector<double> ops = {3000, 3000, 300, 300, 100, 3000, 300};
    Simulation sim = single(gp2_spec(100, 0.1));
    RunResult r = run1(sim, open_loop(ops, bytes_of(ops, 4 * KiB)), 7, false);
    CHECK(r.series.empty());
    REQUIRE(r.totals[0].cliffs.size() == 2);
    CHECK(r.totals[0].cliffs[0].start_s == near(2.0));

    // The reference gp2 closed loop: one episode from 5.4e6 / 2,700 = 2,000 s, still open at 2,700 s.
    Simulation ref = single(gp2_spec(100));
    RunResult rr = run1(ref, closed_loop(32, 4 * KiB), 2700, false);
    REQUIRE(rr.totals[0].cliffs.size() == 1);
    CHECK(rr.totals[0].cliffs[0].start_s == near(2000));
    CHECK(std::isnan(rr.totals[0].cliffs[0].end_s));

    Simulation gp3 = single(gp3_spec(100));
    CHECK(run1(gp3, closed_loop(32, 4 * KiB), 100).totals[0].cliffs.empty());  // no bucket
}

TEST_CASE("cliffs: the instance's I/O bucket, every episode") {
    // Baseline 1,000 IOPS, maximum 2,000: with burst_s = 2 the I/O bucket holds (2,000 - 1,000)
    // x 2 = 2,000 credits, and with refill_s = 10 an idle instance earns 2,000 / 10 = 200 a
    // second (u below baseline earns 200 x (1 - u / 1,000)). Throughput is not burstable (1,000
    // MB/s both), so there is no byte bucket. One gp3 (3,000 IOPS) with 4 KiB arrivals:
    //   0: 2,000: cap min(2,000, 1,000 + 2,000): uses 2,000 -> 2,000 - 1,000 = 1,000
    //   1: 2,000: uses 2,000 -> 0: dry at 1 + 1,000 / (2,000 - 1,000) = 2.0 s
    //   2: 2,000: cap 1,000: uses 1,000, 1,000 queue in the volume -> 0 + 200 - 0.2 x 1,000 = 0
    //   3: 0 + 1,000 queued: uses 1,000 -> 0 (still dry: at exactly the baseline it earns nothing)
    //   4: 0: uses 0 -> 200: earns again; the episode ends at 4.0 s
    //   5: 2,000: cap 1,200: uses 1,200 -> 200 - 200 = 0: dry at 5 + 200 / 1,000 = 5.2 s
    InstanceSpec spec = instance_spec("test", 1000, 2000, 1000, 1000);
    spec.burst_s = 2;
    spec.refill_s = 10;
    Simulation sim(std::vector<VolumeSpec>{gp3_spec(100)}, spec);
    const std::vector<double> ops = {2000, 2000, 2000, 0, 0, 2000};
    RunResult r = run1(sim, open_loop(ops, bytes_of(ops, 4 * KiB)), 6);
    const InstanceTotals& it = r.instance_totals;
    REQUIRE(it.io_cliffs.size() == 2);
    CHECK(it.io_cliffs[0].start_s == near(2.0));
    CHECK(it.io_cliffs[0].end_s == near(4.0));
    CHECK(it.io_cliffs[1].start_s == near(5.2));
    CHECK(std::isnan(it.io_cliffs[1].end_s));
    CHECK(it.io_cliff_time_s == near(2.0));
    CHECK(it.bytes_cliffs.empty());
    const std::vector<double> balance = {50, 0, 0, 0, 10, 0};  // of 2,000: 1,000, 0, 0, 0, 200, 0
    const std::vector<double> backlog = {0, 0, 1000, 0, 0, 800};
    for (std::size_t k = 0; k < ops.size(); ++k) {
        CAPTURE(k);
        CHECK(r.instance_series.io_balance_pct[k] == near(balance[k], 1e-9, 1e-9));
        CHECK(r.series[0].backlog_ops[k] == near(backlog[k], 1e-9, 1e-9));
    }
    CHECK(r.totals[0].cliffs.empty());  // gp3 has no bucket of its own
}

TEST_CASE("max_in_flight: the application's bound on outstanding I/Os caps completions at bound / service time") {
    // gp3 100 GiB (3,000 IOPS), service time 1 ms, at most 2 I/Os outstanding at the device:
    // 2 / 0.001 = 2,000 completions per second. Arrivals 3,000, 3,000, 0, 0:
    //   0: 3,000 available: serves 2,000 (max_in_flight binds), 1,000 wait in the application
    //   1: 4,000 available: serves 2,000, 2,000 wait
    //   2: 2,000 available: serves 2,000 (exactly the bound: not held back), 0 wait
    //   3: nothing
    // Latency counts from arrival (Little's law over everything outstanding, in service and
    // waiting, wherever it waits): (2,000 x 0.001 + mean waiting) / 2,000:
    //   0: (2 + (0 + 1,000) / 2) / 2,000 = 0.251 s; 1: (2 + 1,500) / 2,000 = 0.751 s;
    //   2: (2 + 1,000) / 2,000 = 0.501 s; 3: NaN
    const std::vector<double> ops = {3000, 3000, 0, 0};
    const std::vector<double> bytes = bytes_of(ops, 4 * KiB);
    OpenLoop w = open_loop(ops, bytes);
    w.service_time_s = 0.001;
    w.max_in_flight = 2;
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, w, 4);
    const StepSeries& s = r.series[0];
    const std::vector<double> served = {2000, 2000, 2000, 0};
    const std::vector<double> waiting = {1000, 2000, 0, 0};
    const std::vector<Bound> bound = {Bound::max_in_flight, Bound::max_in_flight, Bound::demand, Bound::demand};
    for (std::size_t k = 0; k < 4; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(served[k], 1e-9, 1e-9));
        CHECK(s.backlog_ops[k] == near(waiting[k], 1e-9, 1e-9));
        CHECK(s.bound[k] == code(bound[k]));
    }
    CHECK(s.latency_s[0] == near(0.251));
    CHECK(s.latency_s[1] == near(0.751));
    CHECK(s.latency_s[2] == near(0.501));
    CHECK(std::isnan(s.latency_s[3]));
    CHECK(r.totals[0].steps_bound[static_cast<int>(Bound::max_in_flight)] == 2);
    CHECK(r.totals[0].served_ops == near(6000));
    CHECK(std::string(bound_names[static_cast<int>(Bound::max_in_flight)]) == "max_in_flight");
}

TEST_CASE("max_in_flight above what the volume serves changes nothing: the wait moves, latency does not") {
    // 32 outstanding at 1 ms allow 32,000 completions per second, above gp3's 3,000 IOPS: the
    // volume's limit binds first, every output is the unbounded open loop's.
    const std::vector<double> ops = {6000, 6000, 0, 0, 0};
    const std::vector<double> bytes = bytes_of(ops, 4 * KiB);
    OpenLoop bounded = open_loop(ops, bytes);
    bounded.service_time_s = 0.001;
    OpenLoop unbounded = bounded;
    bounded.max_in_flight = 32;
    Simulation a = single(gp3_spec(100));
    Simulation b = single(gp3_spec(100));
    RunResult ra = run1(a, bounded, 5);
    RunResult rb = run1(b, unbounded, 5);
    CHECK(same_series(ra.series[0].iops, rb.series[0].iops));
    CHECK(same_series(ra.series[0].latency_s, rb.series[0].latency_s));
    CHECK(same_series(ra.series[0].backlog_ops, rb.series[0].backlog_ops));
    CHECK(ra.series[0].bound[0] == code(Bound::volume_iops));
}

TEST_CASE("max_in_flight must be a positive number of I/Os") {
    const std::vector<double> ops = {1};
    const std::vector<double> bytes = {4096};
    Simulation sim = single(gp3_spec(100));
    for (double bad : {0.0, -1.0, NaN}) {
        CAPTURE(bad);
        OpenLoop w = open_loop(ops, bytes);
        w.max_in_flight = bad;
        const std::string msg = config_error_message([&] { run1(sim, w, 1); });
        CHECK(contains(msg, "max_in_flight="));
        CHECK(contains(msg, "must be a positive number of I/Os"));
    }
    CHECK(sim.time_s() == 0.0);
}

TEST_CASE("max_in_flight per step: each step's own bound on outstanding I/Os") {
    // gp3 100 GiB, service time 1 ms, 1,500 arrivals a second; at most 1 in flight in steps 0-4
    // (1,000 completions a second: 500 a second wait), 2 in steps 5-9 (2,000 a second: the 2,500
    // waiting drain by 500 a second, to 0 at the end of step 9, where 500 + 1,500 is exactly the
    // bound and so not held back). The device's latency: 1 / 1,000 and 2 / 2,000 s, 1 ms.
    const std::vector<double> ops(10, 1500.0);
    const std::vector<double> bytes = bytes_of(ops, 4 * KiB);
    std::vector<double> bound(10, 1.0);
    for (std::size_t k = 5; k < 10; ++k) bound[k] = 2.0;
    OpenLoop w = open_loop(ops, bytes);
    w.service_time_s = 0.001;
    w.max_in_flight_steps = bound;
    for (bool jump : {true, false}) {
        CAPTURE(jump);
        Simulation sim = single(gp3_spec(100));
        RunOptions opt;
        opt.jump = jump;
        RunResult r = sim.run({w}, 10, true, RunLimits{}, {}, opt);
        const StepSeries& s = r.series[0];
        const std::vector<double> waiting = {500, 1000, 1500, 2000, 2500, 2000, 1500, 1000, 500, 0};
        for (std::size_t k = 0; k < 10; ++k) {
            CAPTURE(k);
            CHECK(s.iops[k] == near(k < 5 ? 1000.0 : 2000.0, 1e-12, 1e-9));
            CHECK(s.backlog_ops[k] == near(waiting[k], 1e-12, 1e-9));
            CHECK(s.bound[k] == code(k < 9 ? Bound::max_in_flight : Bound::demand));
            CHECK(device_latency_s(s.latency_s[k], s.iops[k], bound[k]) == near(0.001));
        }
    }
}

TEST_CASE("max_in_flight per step is checked") {
    const std::vector<double> ops = {1, 1};
    const std::vector<double> bytes = {4096, 4096};
    Simulation sim = single(gp3_spec(100));
    const std::vector<double> short_bound = {1};
    const std::vector<double> zero = {1, 0};
    OpenLoop w = open_loop(ops, bytes);
    w.max_in_flight_steps = short_bound;
    CHECK(contains(config_error_message([&] { run1(sim, w, 2); }), "max_in_flight_steps has 1 steps but ops has 2"));
    w.max_in_flight_steps = zero;
    CHECK(contains(config_error_message([&] { run1(sim, w, 2); }), "max_in_flight_steps[1]=0 must be a positive"));
    const std::vector<double> one = {1, 1};
    w.max_in_flight_steps = one;
    w.max_in_flight = 4;
    CHECK(contains(config_error_message([&] { run1(sim, w, 2); }), "are both given"));
    CHECK(sim.time_s() == 0.0);
}

TEST_CASE("device latency: at most max_in_flight of the outstanding I/Os are at the device") {
    // 5,000 I/Os outstanding on average at 3,000 completions a second: 5,000 / 3,000 s from
    // arrival; 64 of them at the device: 64 / 3,000 s. Without a bound, all of them; NaN where
    // nothing completed.
    CHECK(device_latency_s(5000.0 / 3000, 3000, 64) == near(64.0 / 3000));
    CHECK(device_latency_s(5000.0 / 3000, 3000, Inf) == 5000.0 / 3000);
    CHECK(device_latency_s(0.0005, 3000, 64) == 0.0005);  // fewer outstanding than the bound
    CHECK(std::isnan(device_latency_s(NaN, 0, 64)));
    const std::vector<double> lat = {1.0, 0.5}, iops = {100, 200}, m = {10}, m2 = {10, 200};
    std::vector<double> out(2);
    device_latency_s(lat, iops, m, out);
    CHECK(out == std::vector<double>{0.1, 0.05});
    device_latency_s(lat, iops, m2, out);
    CHECK(out == std::vector<double>{0.1, 0.5});
    const std::vector<double> m3 = {1, 2, 3};
    CHECK(contains(config_error_message([&] { device_latency_s(lat, iops, m3, out); }), "max_in_flight has 3 values"));
}

TEST_CASE("drain_time_s: when a backlog runs out inside a step") {
    // 60,000 waiting, 30,000 arriving over a 60 s step, served at 3,000 a second: the backlog
    // shrinks by 3,000 - 500 a second and is gone after 24 s.
    CHECK(drain_time_s(60000, 30000, 3000, 60) == near(24.0));
    CHECK(drain_time_s(60000, 0, 3000, 60) == near(20.0));  // nothing arriving: 60,000 / 3,000
    CHECK(drain_time_s(60000, 0, 500, 60) == 60.0);         // not gone within the step: dt
    CHECK(drain_time_s(60000, 180000, 3000, 60) == 60.0);   // arrivals as fast as the rate
    CHECK(drain_time_s(0, 30000, 3000, 60) == 0.0);         // no backlog
}

TEST_CASE("device latency of a step whose backlog runs out after a held step") {
    // Step 0 held at the bound: 32 at the device at 3,000 a second. Step 1 (60 s, 90,000 I/Os,
    // 1,500 a second) starts with 60,000 waiting and 30,000 arriving: gone after 24 s, during
    // which 72,000 are served at 32 / 3,000 s; the other 18,000 take the service time 0.5 ms:
    // (72,000 x 32 / 3,000 + 18,000 x 0.0005) / 90,000 = 8.6333 ms. The steady rule alone gives
    // 32 / 1,500 s. Step 2 keeps up: its latency, the service time.
    const std::vector<double> lat = {10.0, 20.0, 0.0005}, iops = {3000, 1500, 500}, bound = {32};
    const std::vector<double> backlog = {60000, 0, 0}, arrivals = {240000, 30000, 30000};
    std::vector<double> out(3);
    device_latency_s(lat, iops, bound, out, backlog, arrivals, 0.0005, 60);
    CHECK(out[0] == near(32.0 / 3000));
    CHECK(out[1] == near((72000 * 32.0 / 3000 + 18000 * 0.0005) / 90000));
    CHECK(out[2] == 0.0005);
    device_latency_s(lat, iops, bound, out);  // without the backlog: the steady rule
    CHECK(out[1] == near(32.0 / 1500));
    // A step before that did not hold the application at its bound (its latency from arrival
    // below 32 / its rate: the backlog was queued at the device) leaves the steady rule.
    const std::vector<double> lat_unheld = {0.005, 20.0, 0.0005};
    device_latency_s(lat_unheld, iops, bound, out, backlog, arrivals, 0.0005, 60);
    CHECK(out[1] == near(32.0 / 1500));
    const std::vector<double> short_backlog = {60000, 0};
    CHECK(contains(
        config_error_message([&] { device_latency_s(lat, iops, bound, out, short_backlog, arrivals, 0.0005, 60); }),
        "backlog_ops has 2 steps and arrivals 3 for 3 steps"));
    CHECK(contains(config_error_message([&] { device_latency_s(lat, iops, bound, out, backlog, arrivals, 0, 60); }),
                   "service_s=0 and dt=60 must be positive"));
}

TEST_CASE("a phased closed loop: each step as a closed loop with that step's users and think time") {
    // 100 GiB gp2 at 0.1 % (5,400 credits), service time 1 ms:
    //   0: 32 users offer 32 / 0.001 = 32,000; cap min(3,000, 5,400 + 300): 3,000 -> 2,700 left;
    //      latency 32 / 3,000 = 10.67 ms
    //   1: 3,000 -> 0: dry at 1 + 2,700 / 2,700 = 2.0 s
    //   2: the 300 baseline; latency 32 / 300 = 106.7 ms
    //   3: no users: nothing offered, 300 earned; the episode ends at 3.0 s; latency NaN
    //   4: 4 users with 10 ms think time offer 4 / 0.011 = 363.6; cap min(3,000, 300 + 300) = 600:
    //      all served, 600 - 363.6 = 236.4 left; latency 4 / 363.6 - 0.010 = 1 ms
    const std::vector<double> users = {32, 32, 32, 0, 4};
    const std::vector<double> think = {0, 0, 0, 0, 0.010};
    PhasedClosedLoop w{closed_loop_st(1, 4 * KiB, 0.001), users, think};
    Simulation sim = single(gp2_spec(100, 0.1));
    RunResult r = run1(sim, w, 5);
    const StepSeries& s = r.series[0];
    const double last = 4 / 0.011;
    const std::vector<double> served = {3000, 3000, 300, 0, last};
    const std::vector<double> credits = {2700, 0, 0, 300, 600 - last};
    for (std::size_t k = 0; k < 5; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(served[k], 1e-9, 1e-9));
        CHECK(s.credits[k] == near(credits[k], 1e-9, 1e-9));
    }
    CHECK(s.latency_s[0] == near(32.0 / 3000));
    CHECK(s.latency_s[2] == near(32.0 / 300));
    CHECK(std::isnan(s.latency_s[3]));
    CHECK(s.latency_s[4] == near(0.001));
    REQUIRE(r.totals[0].cliffs.size() == 1);
    CHECK(r.totals[0].cliffs[0].start_s == near(2.0));
    CHECK(r.totals[0].cliffs[0].end_s == near(3.0));

    // Exactly what consecutive runs of closed loops give on one Simulation.
    Simulation seq = single(gp2_spec(100, 0.1));
    std::vector<double> iops, lat;
    ClosedLoop thinking = closed_loop_st(4, 4 * KiB, 0.001);
    thinking.think_time_s = 0.010;
    for (const Workload& step :
         {Workload{closed_loop_st(32, 4 * KiB, 0.001)}, Workload{closed_loop_st(32, 4 * KiB, 0.001)},
          Workload{closed_loop_st(32, 4 * KiB, 0.001)}, Workload{Idle{}}, Workload{thinking}}) {
        RunResult one = run1(seq, step, 1);
        iops.push_back(one.series[0].iops[0]);
        lat.push_back(one.series[0].latency_s[0]);
    }
    for (std::size_t k = 0; k < 5; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == iops[k]);
        CHECK((s.latency_s[k] == lat[k] || (std::isnan(s.latency_s[k]) && std::isnan(lat[k]))));
    }
    CHECK(sim.credits(0) == seq.credits(0));
}

TEST_CASE("a phased closed loop's steps are checked") {
    const std::vector<double> users = {4, -1};
    const std::vector<double> think = {0, 0};
    Simulation sim = single(gp3_spec(100));
    PhasedClosedLoop w{closed_loop(1, 4 * KiB), users, think};
    CHECK(config_error_message([&] { run1(sim, w, 2); }) == "in_flight[1]=-1 must be a finite number >= 0");
    const std::vector<double> nan_think = {0, NaN};
    const std::vector<double> ok_users = {4, 4};
    PhasedClosedLoop w2{closed_loop(1, 4 * KiB), ok_users, nan_think};
    CHECK(config_error_message([&] { run1(sim, w2, 2); }) == "think_time_s[1]=nan must be a finite number >= 0");
    CHECK(contains(config_error_message([&] { run1(sim, w2, 3); }), "in_flight has 2 steps but the run has n_steps=3"));
    const std::vector<double> huge = {1e30, 1};
    PhasedClosedLoop w3{closed_loop(1, 4 * KiB), huge, think};
    CHECK(contains(config_error_message([&] { run1(sim, w3, 2); }), "in_flight[0]=1e+30 offers"));
    CHECK(sim.time_s() == 0.0);
}
