// Bounds on one run (RunLimits: work and recorded memory), the interrupt check between chunks of
// a run, the closed loop's per-step demand bound, volume indices and the gamma shape bound.
// Expected numbers are worked out by hand in the comments.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// Message of the LimitError `f` throws, or "<no LimitError>".
template <class F>
std::string limit_error_message(F&& f) {
    try {
        f();
    } catch (const LimitError& e) {
        return e.what();
    }
    return "<no LimitError>";
}

RunLimits limits(std::int64_t max_volume_steps, std::int64_t max_memory_bytes) {
    RunLimits l;
    l.max_volume_steps = max_volume_steps;
    l.max_memory_bytes = max_memory_bytes;
    return l;
}

Simulation two_on_m5_large() { return Simulation(std::vector<VolumeSpec>{gp3_spec(100), gp3_spec(100)}, m5_large()); }

}  // namespace

TEST_CASE("limits: the work bound counts volume-steps of the whole run") {
    Simulation sim(std::vector<VolumeSpec>{gp2_spec(100), gp2_spec(100)});
    const RunLimits ten = limits(10, RunLimits{}.max_memory_bytes);
    // 5 steps x 2 volumes = 10 volume-steps: at the limit, accepted.
    CHECK(sim.run({Idle{}, Idle{}}, 5, true, ten).n_steps == 5);
    // 6 x 2 = 12 > 10.
    const std::string msg = limit_error_message([&] { sim.run({Idle{}, Idle{}}, 6, false, ten); });
    CHECK(contains(msg, "n_steps=6"));
    CHECK(contains(msg, "= 12 volume-steps"));
    CHECK(contains(msg, "max_volume_steps=10"));
    CHECK(contains(msg, "coarser dt"));
    CHECK(sim.time_s() == 5.0);  // nothing ran
}

TEST_CASE("limits: the default work bound is 1e10 volume-steps, refused before anything runs") {
    Simulation one = single(gp2_spec(100));
    CHECK(contains(limit_error_message([&] { run1(one, Idle{}, 10'000'000'001, false); }), "max_volume_steps=1e+10"));
    Simulation two(std::vector<VolumeSpec>{gp2_spec(100), gp2_spec(100)});
    // 5e9 + 1 steps x 2 volumes = 1e10 + 2.
    CHECK(contains(limit_error_message([&] { two.run({Idle{}, Idle{}}, 5'000'000'001, false); }), "max_volume_steps"));
    CHECK(one.time_s() == 0.0);
    CHECK(two.time_s() == 0.0);
}

TEST_CASE("limits: the memory bound covers every volume's series and the instance's") {
    // Per step: 2 volumes x (6 x 8 + 1) + the instance's 4 x 8 + 1 = 98 + 33 = 131 bytes.
    CHECK(recorded_bytes_per_volume_step == 49);
    CHECK(recorded_bytes_per_instance_step == 33);
    Simulation sim = two_on_m5_large();
    const Workload w = closed_loop(8, 16 * KiB);
    const RunLimits cap = limits(RunLimits{}.max_volume_steps, 1310);
    CHECK(sim.run({w, w}, 10, true, cap).n_steps == 10);  // 10 x 131 = 1,310: at the limit
    const std::string msg = limit_error_message([&] { sim.run({w, w}, 11, true, cap); });  // 1,441
    CHECK(contains(msg, "n_steps=11"));
    CHECK(contains(msg, "2 volumes and the instance"));
    CHECK(contains(msg, "1441 bytes"));
    CHECK(contains(msg, "131 per step"));
    CHECK(contains(msg, "max_memory_bytes=1310"));
    CHECK(contains(msg, "record=False"));
    // Totals only: nothing is recorded, so the bound does not apply.
    CHECK(sim.run({w, w}, 11, false, cap).n_steps == 11);
}

TEST_CASE("limits: the memory bound is for the run, not for each volume") {
    Simulation sim(std::vector<VolumeSpec>{gp2_spec(100), gp2_spec(100), gp2_spec(100)});
    // 3 x 49 = 147 bytes per step; 10 steps = 1,470. 11 steps = 1,617 is refused although one
    // volume's series (11 x 49 = 539 bytes) is far below the limit.
    const RunLimits cap = limits(RunLimits{}.max_volume_steps, 1470);
    CHECK(sim.run({Idle{}, Idle{}, Idle{}}, 10, true, cap).n_steps == 10);
    CHECK(contains(limit_error_message([&] { sim.run({Idle{}, Idle{}, Idle{}}, 11, true, cap); }), "1617 bytes"));
}

TEST_CASE("limits: the default memory bound is 4 GiB, refused before allocating") {
    Simulation sim = single(gp2_spec(100));
    // 2^32 / 49 = 87,652,393.8: 87,652,394 steps take 4,294,967,306 bytes > 4,294,967,296.
    const std::string msg = limit_error_message([&] { run1(sim, Idle{}, 87'652'394, true); });
    CHECK(contains(msg, "4.295e+09 bytes"));
    CHECK(contains(msg, "max_memory_bytes=4.295e+09"));
    // The old bound was 2e8 steps for each volume: 9.8 GB for one volume is now refused.
    CHECK_THROWS_AS(run1(sim, Idle{}, 200'000'000, true), LimitError);
}

TEST_CASE("limits: a LimitError is a ConfigError; negative limits are errors") {
    Simulation sim = single(gp2_spec(100));
    CHECK_THROWS_AS(sim.run({Idle{}}, 2, false, limits(1, 0)), ConfigError);
    CHECK(contains(config_error_message([&] { sim.run({Idle{}}, 1, false, limits(-1, 0)); }), "max_volume_steps=-1"));
    CHECK(contains(config_error_message([&] { sim.run({Idle{}}, 1, false, limits(1, -5)); }), "max_memory_bytes=-5"));
}

TEST_CASE("interrupt: asked between chunks; stopping undoes the run") {
    Simulation sim = single(gp2_spec(100));
    run1(sim, closed_loop(32, 4 * KiB), 10);
    // 10 s at 3,000 IOPS against 300 earned: 5.4e6 - 10 x 2,700.
    REQUIRE(sim.credits(0) == 5.4e6 - 27000);
    const std::int64_t chunk = interrupt_every_volume_steps;  // one volume: chunks of 2^18 steps
    int calls = 0;
    const InterruptCheck stop_third = [&calls] { return ++calls == 3; };
    CHECK_THROWS_AS(sim.run({closed_loop(32, 4 * KiB)}, 10 * chunk, false, RunLimits{}, stop_third), Interrupted);
    CHECK(calls == 3);
    CHECK(sim.credits(0) == 5.4e6 - 27000);
    CHECK(sim.backlog_ops(0) == 0.0);
    CHECK(sim.time_s() == 10.0);
}

TEST_CASE("interrupt: a check that never stops is called once between chunks and changes nothing") {
    const std::int64_t chunk = interrupt_every_volume_steps;
    // 3 chunks + 5 steps = 4 chunks, so 3 checks between them.
    const std::int64_t n = 3 * chunk + 5;
    const std::vector<double> ops(static_cast<std::size_t>(n), 4000.0);
    const std::vector<double> bytes(static_cast<std::size_t>(n), 4000.0 * 4096);
    Simulation plain = single(gp2_spec(100));
    Simulation checked = single(gp2_spec(100));
    int calls = 0;
    RunResult a = run1(plain, open_loop(ops, bytes), n);
    RunResult b = checked.run({open_loop(ops, bytes)}, n, true, RunLimits{}, [&calls] {
        ++calls;
        return false;
    });
    CHECK(calls == 3);
    CHECK(same_series(a.series[0].iops, b.series[0].iops));
    CHECK(same_series(a.series[0].credits, b.series[0].credits));
    CHECK(same_series(a.series[0].latency_s, b.series[0].latency_s));
    CHECK(a.totals[0].served_ops == b.totals[0].served_ops);
    CHECK(a.totals[0].cliff_time_s == b.totals[0].cliff_time_s);
    CHECK(plain.credits(0) == checked.credits(0));
}

TEST_CASE("interrupt: the instance loop is chunked per volume-step and undone too") {
    // 2 volumes: chunks of 2^18 / 2 = 2^17 steps; 2^18 + 1 steps are 3 chunks, 2 checks.
    const std::int64_t n = interrupt_every_volume_steps + 1;
    const Workload w = closed_loop(64, 16 * KiB);
    Simulation plain = two_on_m5_large();
    Simulation checked = two_on_m5_large();
    int calls = 0;
    RunResult a = plain.run({w, w}, n, false);
    RunResult b = checked.run({w, w}, n, false, RunLimits{}, [&calls] {
        ++calls;
        return false;
    });
    CHECK(calls == 2);
    CHECK(a.instance_totals.served_counted == b.instance_totals.served_counted);
    CHECK(a.instance_totals.io_cliff_time_s == b.instance_totals.io_cliff_time_s);
    CHECK(plain.instance_io_credits() == checked.instance_io_credits());

    Simulation sim = two_on_m5_large();
    sim.run({w, w}, 100, false);
    const double io = sim.instance_io_credits(), by = sim.instance_bytes_credits();
    const double c0 = sim.credits(0);
    CHECK_THROWS_AS(sim.run({w, w}, n, true, RunLimits{}, [] { return true; }), Interrupted);
    CHECK(sim.instance_io_credits() == io);
    CHECK(sim.instance_bytes_credits() == by);
    CHECK(sim.credits(0) == c0);
    CHECK(sim.time_s() == 100.0);
}

TEST_CASE("interrupt: an exception from the check propagates and undoes the run") {
    Simulation sim = single(gp2_spec(100));
    const InterruptCheck boom = []() -> bool { throw std::runtime_error("boom"); };
    CHECK_THROWS_WITH_AS(
        sim.run({closed_loop(32, 4 * KiB)}, 2 * interrupt_every_volume_steps, false, RunLimits{}, boom), "boom",
        std::runtime_error);
    CHECK(sim.credits(0) == 5.4e6);
    CHECK(sim.time_s() == 0.0);
}

TEST_CASE("closed loop: demand per step is bounded like a trace's, so totals stay finite") {
    // Service time 1 s, dt 1 s: in_flight / 1 x 1 = in_flight I/Os offered per step.
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, closed_loop_st(1e15, 4 * KiB, 1.0), 2);  // exactly max_demand_per_step
    // gp3 100 GiB serves 3,000 IOPS (125 MiB/s = 32,000 x 4 KiB is not the bound): 2 x 3,000.
    CHECK(r.totals[0].served_ops == near(6000.0));
    CHECK(std::isfinite(r.totals[0].demanded_ops));
    CHECK(std::isfinite(r.totals[0].latency_ops_s));

    std::string msg = config_error_message([&] { run1(sim, closed_loop_st(2e15, 4 * KiB, 1.0), 2); });
    CHECK(contains(msg, "in_flight=2"));
    CHECK(contains(msg, "max_demand_per_step"));
    // 1e308 / 0.0005038 s is infinite: refused instead of NaN totals.
    msg = config_error_message([&] { run1(sim, closed_loop(1e308, 4 * KiB), 2); });
    CHECK(contains(msg, "in_flight=1e+308"));
    CHECK(contains(msg, "inf I/Os per step"));
    CHECK(sim.time_s() == 2.0);  // only the first run ran

    Simulation two(std::vector<VolumeSpec>{gp3_spec(100), gp3_spec(100)});
    msg = config_error_message([&] { two.run({Idle{}, closed_loop(1e308, 4 * KiB)}, 1); });
    CHECK(contains(msg, "workload 1: in_flight=1e+308"));
}

TEST_CASE("volume index out of range names the index and the number of volumes") {
    Simulation sim = single(gp2_spec(100));
    try {
        (void)sim.credits(5);
        FAIL("no out_of_range");
    } catch (const std::out_of_range& e) {
        CHECK(std::string(e.what()) == "volume index 5 is out of range: the simulation has 1 volume (0 to 0)");
    }
    CHECK_THROWS_AS((void)sim.backlog_ops(1), std::out_of_range);
    CHECK_THROWS_AS((void)sim.params(1), std::out_of_range);
    Simulation three(std::vector<VolumeSpec>{gp2_spec(100), gp2_spec(100), gp2_spec(100)});
    CHECK(three.credits(2) == 5.4e6);
    CHECK_THROWS_WITH((void)three.credits(3), "volume index 3 is out of range: the simulation has 3 volumes (0 to 2)");
}

TEST_CASE("latency spread is bounded where the gamma functions stay exact") {
    const double s = 0.001;
    const std::vector<double> means = {s}, weights = {1.0}, q = {0.5};
    const LatencyModel too_narrow{s, s, 1.0, 1e-6, 0.0, 0.0};
    const std::string msg = config_error_message([&] { (void)latency_quantiles(means, weights, {}, too_narrow, q); });
    CHECK(contains(msg, "service_cv=1e-06 must be between 0.001 and 10"));
    // At the bound (cv 1e-3, gamma shape 1e6) the service time is all but constant: Gamma(k)'s
    // median is about k - 1/3 scale units, so p50 = s (1 - 1/(3k)) = s (1 - 3.3e-7).
    const LatencyModel narrowest{s, s, 1.0, min_service_cv, 0.0, 0.0};
    const std::vector<double> p50 = latency_quantiles(means, weights, {}, narrowest, q);
    CHECK(p50[0] == near(s * (1.0 - 1.0 / 3e6), 1e-9));
}
