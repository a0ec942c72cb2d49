// Threads: Simulation::run over RunOptions::threads and run_many over independent Simulations
// give, bit for bit, what one thread gives; per-item errors, interrupts and bad counts.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

// Distinct noisy traces: a level per volume and uniform noise, fixed seeds.
struct Traces {
    std::vector<std::vector<double>> ops, bytes;
    std::vector<Workload> workloads;
    Traces(std::size_t volumes, std::size_t steps) : ops(volumes), bytes(volumes) {
        for (std::size_t i = 0; i < volumes; ++i) {
            std::mt19937_64 rng(i + 1);
            std::uniform_real_distribution<double> noise(0.0, 2000.0);
            for (std::size_t k = 0; k < steps; ++k) {
                ops[i].push_back(500.0 * static_cast<double>(i % 4) + noise(rng));
                bytes[i].push_back(ops[i].back() * 16 * KiB);
            }
            workloads.emplace_back(open_loop(ops[i], bytes[i]));
        }
    }
};

std::vector<VolumeSpec> mixed_specs(std::size_t n) {
    std::vector<VolumeSpec> specs;
    for (std::size_t i = 0; i < n; ++i)
        specs.push_back(i % 3 == 0 ? gp3_spec(100) : gp2_spec(50.0 + 50.0 * static_cast<double>(i)));
    return specs;
}

RunOptions threads(int n) {
    RunOptions o;
    o.threads = n;
    return o;
}

void require_same(const VolumeTotals& a, const VolumeTotals& b) {
    CHECK(a.demanded_ops == b.demanded_ops);
    CHECK(a.served_ops == b.served_ops);
    CHECK(a.served_bytes == b.served_bytes);
    CHECK(a.served_counted == b.served_counted);
    CHECK(a.latency_ops_s == b.latency_ops_s);
    CHECK(a.backlog_ops == b.backlog_ops);
    CHECK(a.credits_end == b.credits_end);
    CHECK((a.cliff_time_s == b.cliff_time_s || (std::isnan(a.cliff_time_s) && std::isnan(b.cliff_time_s))));
    REQUIRE(a.cliffs.size() == b.cliffs.size());
    for (int i = 0; i < n_bounds; ++i) CHECK(a.steps_bound[i] == b.steps_bound[i]);
}

}  // namespace

TEST_CASE("independent volumes: 1, 2 and 3 threads give the same series and totals, bit for bit") {
    const std::size_t nv = 7, n = 20'000;  // 140,000 volume-steps: enough work for every thread
    const Traces t(nv, n);
    Simulation one(mixed_specs(nv));
    const RunResult r1 = one.run(t.workloads, n, true, {}, {}, threads(1));
    for (int th : {2, 3}) {
        Simulation sim(mixed_specs(nv));
        const RunResult r = sim.run(t.workloads, n, true, {}, {}, threads(th));
        for (std::size_t i = 0; i < nv; ++i) {
            require_same(r1.totals[i], r.totals[i]);
            for (std::size_t k = 0; k < n; ++k) {
                REQUIRE(r1.series[i].iops[k] == r.series[i].iops[k]);
                REQUIRE(r1.series[i].credits[k] == r.series[i].credits[k]);
                REQUIRE(r1.series[i].bound[k] == r.series[i].bound[k]);
            }
            CHECK(sim.credits(i) == one.credits(i));
            CHECK(sim.backlog_ops(i) == one.backlog_ops(i));
        }
    }
    // The run is not trivial: gp2 volumes under 500-2,500 IOPS of 16 KiB run dry.
    CHECK(r1.totals[1].cliffs.size() >= 1);
}

TEST_CASE("a negative thread count is a ConfigError naming it; 0 is every core") {
    Simulation sim({gp3_spec(100)});
    const std::string msg = config_error_message([&] { (void)sim.run({Idle{}}, 10, false, {}, {}, threads(-1)); });
    CHECK(msg.rfind("threads=-1 must be >= 0 (0: every core, ", 0) == 0);
    CHECK(resolve_threads(threads(0)) >= 1);
    CHECK(resolve_threads(threads(5)) == 5);
    CHECK(sim.time_s() == 0.0);
}

TEST_CASE("a bad trace among threaded volumes undoes the run and names the first offender") {
    const std::size_t nv = 4, n = 40'000;
    Traces t(nv, n);
    t.ops[2][30'000] = -1.0;
    Simulation sim(mixed_specs(nv));
    const double before = sim.credits(1);
    const std::string msg = config_error_message([&] { (void)sim.run(t.workloads, n, false, {}, {}, threads(2)); });
    CHECK(msg == "workload 2: ops[30000]=-1 must be finite, >= 0 and <= 1e+15 per step");
    CHECK(sim.time_s() == 0.0);
    CHECK(sim.credits(1) == before);
}

TEST_CASE("run_many: each item as run alone, whatever the thread count; a bad item is its error") {
    const std::size_t items = 5, n = 30'000;
    Traces t(items, n);
    t.ops[3][7] = NaN;
    std::vector<std::vector<Workload>> ws(items);
    for (std::size_t i = 0; i < items; ++i) ws[i] = {t.workloads[i]};
    for (int th : {1, 2}) {
        std::vector<Simulation> sims;
        for (std::size_t i = 0; i < items; ++i) sims.emplace_back(std::vector<VolumeSpec>{mixed_specs(items)[i]});
        std::vector<FleetItem> fleet;
        for (std::size_t i = 0; i < items; ++i) fleet.push_back({&sims[i], &ws[i], std::int64_t{n}, false});
        const std::vector<FleetOutcome> out = run_many(fleet, {}, {}, threads(th));
        REQUIRE(out.size() == items);
        for (std::size_t i = 0; i < items; ++i) {
            if (i == 3) {
                CHECK_FALSE(out[i].result.has_value());
                CHECK(out[i].error == "ops[7]=nan must be finite, >= 0 and <= 1e+15 per step");
                CHECK(sims[i].time_s() == 0.0);  // refused: unchanged
                continue;
            }
            REQUIRE(out[i].result.has_value());
            CHECK(out[i].error.empty());
            Simulation alone(std::vector<VolumeSpec>{mixed_specs(items)[i]});
            const RunResult r = alone.run(ws[i], n, false, {}, {}, threads(1));
            require_same(out[i].result->totals[0], r.totals[0]);
            CHECK(sims[i].time_s() == static_cast<double>(n));
        }
    }
}

TEST_CASE("run_many: volumes on an instance are coupled as in their own Simulation") {
    const std::size_t n = 5'000;
    const Traces t(2, n);
    InstanceSpec inst;
    inst.baseline_iops = 1000;
    inst.max_iops = 1000;
    inst.baseline_mb_s = 1000;
    inst.max_mb_s = 1000;
    Simulation a({gp3_spec(100), gp3_spec(100)}, inst);
    Simulation b({gp3_spec(100), gp3_spec(100)}, inst);
    const std::vector<FleetItem> fleet{{&a, &t.workloads, std::int64_t{n}, false}};
    const auto out = run_many(fleet, {}, {}, threads(2));
    const RunResult r = b.run(t.workloads, n, false);
    REQUIRE(out[0].result.has_value());
    for (std::size_t i = 0; i < 2; ++i) require_same(out[0].result->totals[i], r.totals[i]);
    // 1,000 IOPS shared by two volumes asking 250-2,250 each: the instance binds.
    CHECK(r.instance_totals.steps_bound[static_cast<int>(Bound::instance_iops)] > 0);
}

TEST_CASE("run_many: an interrupt undoes every item, finished or not; a Simulation twice is refused") {
    const std::size_t items = 3, n = 600'000;  // past one chunk of 2^18 steps per item
    const Traces t(items, n);
    std::vector<std::vector<Workload>> ws(items);
    for (std::size_t i = 0; i < items; ++i) ws[i] = {t.workloads[i]};
    for (int th : {1, 2}) {
        std::vector<Simulation> sims;
        for (std::size_t i = 0; i < items; ++i) sims.emplace_back(std::vector<VolumeSpec>{gp2_spec(100)});
        std::vector<FleetItem> fleet;
        for (std::size_t i = 0; i < items; ++i) fleet.push_back({&sims[i], &ws[i], std::int64_t{n}, false});
        int calls = 0;
        // Stop at the second question: by then an item may have finished (it is undone too).
        const InterruptCheck stop = [&calls] { return ++calls >= 2; };
        CHECK_THROWS_AS((void)run_many(fleet, {}, stop, threads(th)), Interrupted);
        for (const auto& s : sims) {
            CHECK(s.time_s() == 0.0);
            CHECK(s.credits(0) == 5.4e6);
        }
    }
    Simulation s({gp3_spec(100)});
    const std::vector<Workload> idle{Idle{}};
    const std::vector<FleetItem> twice{{&s, &idle, 10, false}, {&s, &idle, 10, false}};
    CHECK(config_error_message([&] { (void)run_many(twice, {}, {}, threads(2)); }) ==
          "items[1] runs a Simulation that an earlier item runs too: each item needs its own Simulation");
}

TEST_CASE("run_many: lone open-loop volumes are pooled for the lockstep kernel, each as run alone") {
    // 9 lone volumes (one pool of 8 at one clock, one alone at another), an instance of two
    // volumes whose second trace is bad, and a closed loop: pooling changes no outcome.
    const std::size_t lone = 9, n = 20'000;
    Traces t(lone + 2, n);
    t.ops[lone + 1][11] = -1.0;
    const std::vector<VolumeSpec> specs = mixed_specs(lone);
    for (int th : {1, 2}) {
        std::vector<Simulation> sims;
        for (std::size_t i = 0; i < lone; ++i) sims.emplace_back(std::vector<VolumeSpec>{specs[i]});
        std::vector<std::vector<Workload>> ws(lone);
        for (std::size_t i = 0; i < lone; ++i) ws[i] = {t.workloads[i]};
        // The last lone volume has run 5 steps before: another clock, not in the pool.
        (void)sims[lone - 1].run({Idle{}}, 5, false);
        InstanceSpec inst;
        inst.baseline_iops = inst.max_iops = 1000;
        inst.baseline_mb_s = inst.max_mb_s = 1000;
        Simulation shared({gp3_spec(100), gp3_spec(100)}, inst);
        const std::vector<Workload> pair{t.workloads[lone], t.workloads[lone + 1]};
        Simulation closed({gp3_spec(100)});
        const std::vector<Workload> loop{ClosedLoop{}};
        std::vector<FleetItem> fleet;
        for (std::size_t i = 0; i < lone; ++i) fleet.push_back({&sims[i], &ws[i], std::int64_t{n}, false});
        fleet.push_back({&shared, &pair, std::int64_t{n}, false});
        fleet.push_back({&closed, &loop, std::int64_t{n}, false});
        const std::vector<FleetOutcome> out = run_many(fleet, {}, {}, threads(th));
        REQUIRE(out.size() == lone + 2);
        for (std::size_t i = 0; i < lone; ++i) {
            REQUIRE(out[i].result.has_value());
            CHECK(out[i].workload == -1);
            Simulation alone(std::vector<VolumeSpec>{specs[i]});
            if (i == lone - 1) (void)alone.run({Idle{}}, 5, false);
            const RunResult r = alone.run(ws[i], n, false, {}, {}, threads(1));
            CHECK(out[i].result->t0_s == r.t0_s);
            CHECK(out[i].result->totals.size() == 1);
            require_same(out[i].result->totals[0], r.totals[0]);
            CHECK(sims[i].time_s() == alone.time_s());
            CHECK(sims[i].credits(0) == alone.credits(0));
            CHECK(sims[i].backlog_ops(0) == alone.backlog_ops(0));
        }
        // The instance's error is about its second workload: the index, and the reason alone.
        CHECK_FALSE(out[lone].result.has_value());
        CHECK(out[lone].workload == 1);
        CHECK(out[lone].error == "ops[11]=-1 must be finite, >= 0 and <= 1e+15 per step");
        CHECK(shared.time_s() == 0.0);
        CHECK(out[lone + 1].result.has_value());
    }
}

TEST_CASE("run_many: a lone volume's bad trace is workload 0 of its item, a run above the limits is -1") {
    const std::size_t n = 1'000;
    Traces t(3, n);
    t.ops[1][3] = NaN;
    std::vector<Simulation> sims;
    for (std::size_t i = 0; i < 3; ++i) sims.emplace_back(std::vector<VolumeSpec>{gp3_spec(100)});
    std::vector<std::vector<Workload>> ws{{t.workloads[0]}, {t.workloads[1]}, {t.workloads[2]}};
    std::vector<FleetItem> fleet{{&sims[0], &ws[0], std::int64_t{n}, false},
                                 {&sims[1], &ws[1], std::int64_t{n}, false},
                                 {&sims[2], &ws[2], std::int64_t{n}, true}};
    RunLimits limits;
    limits.max_memory_bytes = 1'000;  // the recorded item's series do not fit
    const std::vector<FleetOutcome> out = run_many(fleet, limits, {}, threads(2));
    CHECK(out[0].result.has_value());
    CHECK(out[1].workload == 0);
    CHECK(out[1].error == "ops[3]=nan must be finite, >= 0 and <= 1e+15 per step");
    CHECK(out[2].workload == -1);
    CHECK(out[2].error.rfind("recording n_steps=1000 for 1 volume takes ", 0) == 0);
}
