#include <algorithm>
// The stepped engine under closed-loop (fio-like) workloads: the product's reference scenarios,
// the credit bucket's bookkeeping, and the IOPS / throughput limits.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {
constexpr auto demand_bound = static_cast<std::uint8_t>(Bound::demand);
constexpr auto iops_bound = static_cast<std::uint8_t>(Bound::volume_iops);
constexpr auto tput_bound = static_cast<std::uint8_t>(Bound::volume_throughput);
}  // namespace

TEST_CASE("reference: 100 GiB gp2, 32 x 4 KiB random reads, 2,700 s at dt = 1") {
    // Demand: 32 / 0.000503815 s = 63,515 IOPS, so the volume limit binds every step.
    // Credits: 5.4e6 - (3,000 - 300) x k after k steps -> 0 after exactly 2,000 steps.
    // Then the volume serves its baseline, 300 counted IOPS = 300 x 4 KiB I/Os.
    Simulation sim = single(gp2_spec(100));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB), 2700);
    REQUIRE(r.series.size() == 1);
    REQUIRE(r.totals.size() == 1);
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    CHECK(r.t0_s == 0);
    CHECK(r.dt_s == 1);
    CHECK(r.n_steps == 2700);
    REQUIRE(s.iops.size() == 2700);

    for (std::size_t k = 0; k < 2700; ++k) {
        CAPTURE(k);
        const bool bursting = k < 2000;
        const double iops = bursting ? 3000 : 300;
        CHECK(s.iops[k] == near(iops));
        CHECK(s.ebs_iops[k] == near(iops));
        // 3,000 x 4 KiB = 11.71875 MiB/s; 300 x 4 KiB = 1.171875 MiB/s
        CHECK(s.throughput_mib_s[k] == near(bursting ? 11.71875 : 1.171875));
        // Little's law: 32 in flight / 3,000 per s = 10.67 ms; / 300 = 106.7 ms.
        CHECK(s.latency_s[k] == near(bursting ? 32.0 / 3000 : 32.0 / 300));
        CHECK(s.queue_length(k) == near(32));
        CHECK(s.bound[k] == iops_bound);
        // Credits at the end of step k: 5.4e6 - 2,700 (k + 1), never below 0.
        const double credits = bursting ? 5.4e6 - 2700.0 * static_cast<double>(k + 1) : 0.0;
        CHECK(s.credits[k] == near(credits, 1e-9, 1.0));
    }
    CHECK(s.credits[1998] == 2700);
    CHECK(s.credits[1999] == 0);

    // The cliff is at t = 2,000 s (the closed form 5.4e6 / 2,700), within one step.
    CHECK(t.cliff_time_s == near(2000));
    CHECK(std::abs(t.cliff_time_s - burst_duration_s(sim.params(0), 3000)) <= 1.0);

    // Totals: 2,000 x 3,000 + 700 x 300 = 6,210,000 I/Os, each one counted op and 4 KiB.
    CHECK(t.served_ops == near(6.21e6));
    CHECK(t.served_counted == near(6.21e6));
    CHECK(t.served_bytes == near(6.21e6 * 4096));
    // A closed loop waits instead of queueing: what it issued is what was served.
    CHECK(t.demanded_ops == near(t.served_ops));
    CHECK(t.demanded_bytes == near(t.served_bytes));
    CHECK(t.backlog_ops == 0);
    CHECK(t.backlog_bytes == 0);
    CHECK(t.credits_end == 0);
    // Latency x I/Os: 2,000 x 3,000 x 32/3,000 + 700 x 300 x 32/300 = 32 x 2,700 = 86,400.
    CHECK(t.latency_ops_s == near(86400));
    CHECK(t.steps_bound[0] == 0);
    CHECK(t.steps_bound[1] == 2700);
    CHECK(t.steps_bound[2] == 0);

    CHECK(sim.time_s() == 2700);
    CHECK(sim.credits(0) == 0);
    CHECK(sim.backlog_ops(0) == 0);
}

TEST_CASE("reference: 100 GiB gp3 defaults, same workload: flat 3,000 IOPS, no cliff") {
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB), 2700);
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    for (std::size_t k = 0; k < 2700; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(3000));
        CHECK(s.ebs_iops[k] == near(3000));
        CHECK(s.latency_s[k] == near(32.0 / 3000));  // 10.67 ms
        CHECK(s.credits[k] == 0);                    // no bucket
        CHECK(s.bound[k] == iops_bound);
    }
    CHECK(std::isnan(t.cliff_time_s));
    CHECK(t.served_ops == near(3000.0 * 2700));  // 8,100,000
    CHECK(t.credits_end == 0);
}

TEST_CASE("reference at dt = 1 ms: cliff after 2 s within one step of the closed form") {
    // burst_balance_pct = 0.1 -> 5,400 credits; 5,400 / (3,000 - 300) = 2.0 s.
    // Per 1 ms step: at most 3 counted ops, 0.3 earned.
    const double dt = 0.001;
    Simulation sim = single(gp2_spec(100, 0.1), dt);
    CHECK(sim.dt_s() == dt);
    RunResult r = run1(sim, closed_loop(32, 4 * KiB), 3000);  // 3 s
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    const double closed_form = burst_duration_s(sim.params(0), 3000);
    CHECK(closed_form == near(2.0));
    CHECK(std::abs(t.cliff_time_s - 2.0) <= dt);
    CHECK(std::abs(t.cliff_time_s - closed_form) <= dt);
    // Before the cliff step: 3,000 IOPS; after it: 300.
    for (std::size_t k = 0; k < 1999; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(3000, 1e-6));
        CHECK(s.latency_s[k] == near(32.0 / 3000, 1e-6));
    }
    for (std::size_t k = 2001; k < 3000; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(300, 1e-6));
        CHECK(s.latency_s[k] == near(32.0 / 300, 1e-6));
        CHECK(s.credits[k] == 0);
    }
    // Served counted ops: 5,400 credits + 300/s x 3 s earned = 6,300 (= 2 s x 3,000 + 1 s x 300).
    CHECK(t.served_counted == near(6300, 1e-9));
    CHECK(t.credits_end == 0);
    CHECK(sim.time_s() == near(3.0));
}

TEST_CASE("the cliff lands at 2,000 s whatever the step size") {
    // 100 GiB gp2, 3,000 counted IOPS asked: the bucket empties at 5.4e6 / 2,700 = 2,000 s.
    // Over T >= 2,000 s the volume serves everything it ever has: 5.4e6 + 300 x T counted ops.
    for (double dt : {0.3, 0.7, 3.0, 7.0, 3600.0}) {
        CAPTURE(dt);
        const auto n = static_cast<std::int64_t>(std::ceil(2100.0 / dt));
        const double total_s = static_cast<double>(n) * dt;
        Simulation sim = single(gp2_spec(100), dt);
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), n, false);
        CHECK(r.totals[0].cliff_time_s == near(2000, 1e-9));
        CHECK(r.totals[0].served_counted == near(5.4e6 + 300 * total_s, 1e-9));
        CHECK(r.totals[0].credits_end == 0);
    }
    SUBCASE("one step of an hour") {
        // Step 0 can serve min(3,000 x 3,600, 5.4e6 + 300 x 3,600) = 6.48e6 counted ops:
        // an average of 1,800 IOPS over the hour, so 32 / 1,800 s of latency.
        Simulation sim = single(gp2_spec(100), 3600);
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 1);
        CHECK(r.series[0].ebs_iops[0] == near(1800));
        CHECK(r.series[0].latency_s[0] == near(32.0 / 1800));
        // The bucket drains at 10.8e6 - 1.08e6 = 9.72e6 per step: 5.4e6 / 9.72e6 x 3,600 = 2,000 s.
        CHECK(r.totals[0].cliff_time_s == near(2000));
    }
}

// engine.cpp: "A cliff: the bucket runs dry in this step, or starts the run dry under demand that
// wants more than the baseline" -- then the cliff is the start of the run.
TEST_CASE("a run that starts dry under demand above the baseline has its cliff at its start") {
    SUBCASE("empty from the start: 4 KiB random asks for 3,000 > 300") {
        Simulation sim = single(gp2_spec(100, 0));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 10);
        CHECK(r.totals[0].cliff_time_s == 0);
        CHECK(r.series[0].iops[0] == near(300));
    }
    SUBCASE("a second run after the bucket ran dry") {
        Simulation sim = single(gp2_spec(100, 1));  // 54,000 credits: dry at 20 s
        RunResult a = run1(sim, closed_loop(32, 4 * KiB), 30);
        CHECK(a.totals[0].cliff_time_s == near(20));
        RunResult b = run1(sim, closed_loop(32, 4 * KiB), 30);
        CHECK(b.t0_s == 30);
        CHECK(b.totals[0].cliff_time_s == near(30));
    }
    SUBCASE("no cliff when the demand stays at or below the baseline") {
        // Idle: nothing asked.
        Simulation idle = single(gp2_spec(100, 0));
        CHECK(std::isnan(run1(idle, Idle{}, 5).totals[0].cliff_time_s));
        // 1 in flight x 10 ms = 100 IOPS < 300.
        ClosedLoop slow = closed_loop(1, 4 * KiB);
        slow.service_time_s = 0.01;
        Simulation light = single(gp2_spec(100, 0));
        CHECK(std::isnan(run1(light, slow, 5).totals[0].cliff_time_s));
        // 334 GiB: 250 MiB/s of 1 MiB sequential = 1,000 counted ops < the 1,002 baseline.
        Simulation big = single(gp2_spec(334, 0));
        CHECK(std::isnan(run1(big, closed_loop(8, MiB, Pattern::sequential), 5).totals[0].cliff_time_s));
    }
}

// An empty bucket under demand above baseline has its cliff at the start of the run, also
// for large I/Os: the with-credits caps (128 MiB/s = 512 counted ops on 100 GiB, 250 MiB/s =
// 1,000 on 250 GiB) are above the baselines (300, 750), so the demand wants more than baseline.
TEST_CASE("a run that starts dry under large I/Os above the baseline has its cliff at its start") {
    // 8 x 1 MiB sequential ask for 5,418 MiB/s; 100 GiB gp2 without credits serves 75 MiB/s.
    Simulation a = single(gp2_spec(100, 0));
    RunResult ra = run1(a, closed_loop(8, MiB, Pattern::sequential), 5);
    CHECK(ra.series[0].throughput_mib_s[0] == near(75));
    CHECK(ra.totals[0].cliff_time_s == 0);
    // 250 GiB without credits serves 187.5 MiB/s of the 5,418 asked.
    Simulation b = single(gp2_spec(250, 0));
    RunResult rb = run1(b, closed_loop(8, MiB), 5);
    CHECK(rb.series[0].throughput_mib_s[0] == near(187.5));
    CHECK(rb.totals[0].cliff_time_s == 0);
}

TEST_CASE("the cliff step serves exactly the credits left plus the baseline earned") {
    SUBCASE("cliff inside the first step") {
        // 0.02 % of 5.4e6 = 1,080 credits. Step 0 can serve min(3,000, 1,080 + 300) = 1,380
        // counted ops: the bucket empties 1,080 / 2,700 = 0.4 s into the step.
        Simulation sim = single(gp2_spec(100, 0.02));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 3);
        const StepSeries& s = r.series[0];
        CHECK(s.ebs_iops[0] == near(1380));
        CHECK(s.iops[0] == near(1380));
        CHECK(s.credits[0] == 0);
        CHECK(s.ebs_iops[1] == near(300));
        CHECK(s.ebs_iops[2] == near(300));
        CHECK(r.totals[0].cliff_time_s == near(0.4));
        CHECK(r.totals[0].served_counted == near(1080 + 3 * 300));
    }
    SUBCASE("cliff inside a later step") {
        // 0.33 % of 5.4e6 = 17,820 credits. After 6 steps at 3,000: 17,820 - 6 x 2,700 = 1,620
        // left; step 6 serves 1,620 + 300 = 1,920; the cliff is at 6 + 1,620 / 2,700 = 6.6 s.
        Simulation sim = single(gp2_spec(100, 0.33));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 10);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 6; ++k) CHECK(s.ebs_iops[k] == near(3000));
        CHECK(s.credits[5] == near(1620));
        CHECK(s.ebs_iops[6] == near(1920));
        CHECK(s.credits[6] == 0);
        for (std::size_t k = 7; k < 10; ++k) CHECK(s.ebs_iops[k] == near(300));
        CHECK(r.totals[0].cliff_time_s == near(6.6));
        // 6 x 3,000 + 1,920 + 3 x 300 = 20,820 = 17,820 + 10 x 300.
        CHECK(r.totals[0].served_counted == near(20820));
    }
}

TEST_CASE("credit conservation: served = initial + earned - final while the bucket stays below its cap") {
    SUBCASE("half-full bucket, 500 s at 3,000 counted IOPS") {
        // 2.7e6 + 300 x 500 - 3,000 x 500 = 1,350,000 credits left.
        Simulation sim = single(gp2_spec(100, 50));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 500);
        const VolumeTotals& t = r.totals[0];
        CHECK(t.served_counted == near(1.5e6));
        CHECK(t.credits_end == near(1.35e6));
        CHECK(t.served_counted == near(2.7e6 + 300.0 * 500 - t.credits_end));
        CHECK(std::isnan(t.cliff_time_s));
    }
    SUBCASE("full reference run through the cliff") {
        // 5.4e6 + 300 x 2,700 - 0 = 6,210,000
        Simulation sim = single(gp2_spec(100));
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 2700, false);
        CHECK(r.totals[0].served_counted == near(5.4e6 + 300.0 * 2700 - r.totals[0].credits_end));
        CHECK(r.totals[0].served_counted == near(6.21e6));
    }
    SUBCASE("below baseline the bucket fills by the difference") {
        // 1 in flight with a 10 ms service time: 100 IOPS, 200 below the 300 baseline.
        // From 10 %: 540,000 + (300 - 100) x 1,000 = 740,000 after 1,000 s.
        Simulation sim = single(gp2_spec(100, 10));
        ClosedLoop w = closed_loop(1, 4 * KiB);
        w.service_time_s = 0.01;
        RunResult r = run1(sim, w, 1000);
        const VolumeTotals& t = r.totals[0];
        CHECK(r.series[0].iops[0] == near(100));
        CHECK(r.series[0].latency_s[0] == near(0.01));  // unthrottled: the service time
        CHECK(r.series[0].bound[0] == demand_bound);
        CHECK(t.served_counted == near(1e5));
        CHECK(t.credits_end == near(740000));
        CHECK(t.served_counted == near(540000 + 300.0 * 1000 - t.credits_end));
    }
    SUBCASE("a stepped sum of the per-step series matches the totals") {
        Simulation sim = single(gp2_spec(100, 1));  // 54,000 credits: cliff at 20 s
        RunResult r = run1(sim, closed_loop(32, 4 * KiB), 60);
        const StepSeries& s = r.series[0];
        // 20 x 3,000 + 40 x 300 = 72,000 = 54,000 + 60 x 300
        CHECK(integrate(s.ebs_iops, 1) == near(72000));
        CHECK(integrate(s.iops, 1) == near(r.totals[0].served_ops));
        CHECK(integrate(s.throughput_mib_s, 1) * MiB == near(r.totals[0].served_bytes));
        CHECK(r.totals[0].cliff_time_s == near(20));
    }
}

TEST_CASE("unthrottled closed loop: N / service time, latency = service time") {
    // 1 x 4 KiB in flight: 1 / 0.000503814697265625 = 1,984.857 IOPS, below 3,000.
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, closed_loop(1, 4 * KiB), 5);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 5; ++k) {
        CHECK(s.iops[k] == near(1984.8567448058634));
        CHECK(s.ebs_iops[k] == near(1984.8567448058634));
        CHECK(s.latency_s[k] == near(st_4k));
        CHECK(s.queue_length(k) == near(1));
        CHECK(s.bound[k] == demand_bound);
    }
    CHECK(r.totals[0].steps_bound[0] == 5);
}

TEST_CASE("closed loop with an explicit service time") {
    // 2 in flight x 1 ms: 2,000 IOPS unthrottled, below gp3's 3,000.
    ClosedLoop w = closed_loop(2, 16 * KiB);
    w.service_time_s = 0.001;
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, w, 1);
    CHECK(r.series[0].iops[0] == near(2000));
    CHECK(r.series[0].latency_s[0] == near(0.001));
    // 2,000 x 16 KiB = 31.25 MiB/s
    CHECK(r.series[0].throughput_mib_s[0] == near(31.25));
}

TEST_CASE("1 MiB sequential reads at queue depth 8: throughput limits") {
    // Demand: 8 / 0.0014765625 s = 5,418 I/Os of 1 MiB per second, each counted as 4 ops.
    SUBCASE("gp3 defaults cap at 125 MiB/s = 500 counted IOPS") {
        Simulation sim = single(gp3_spec(100));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 10);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 10; ++k) {
            CHECK(s.throughput_mib_s[k] == near(125));
            CHECK(s.iops[k] == near(125));
            CHECK(s.ebs_iops[k] == near(500));         // 125 x 4
            CHECK(s.latency_s[k] == near(8.0 / 125));  // 64 ms
            CHECK(s.bound[k] == tput_bound);
        }
        CHECK(r.totals[0].steps_bound[2] == 10);
    }
    SUBCASE("gp2 100 GiB caps at 128 MiB/s = 512 counted IOPS while credits last") {
        Simulation sim = single(gp2_spec(100));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 10);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 10; ++k) {
            CAPTURE(k);
            CHECK(s.throughput_mib_s[k] == near(128));
            CHECK(s.iops[k] == near(128));
            CHECK(s.ebs_iops[k] == near(512));         // 128 x 4
            CHECK(s.latency_s[k] == near(8.0 / 128));  // 62.5 ms
            CHECK(s.bound[k] == tput_bound);
            // Spends 512 - 300 = 212 credits per second.
            CHECK(s.credits[k] == near(5.4e6 - 212.0 * static_cast<double>(k + 1)));
        }
    }
    SUBCASE("gp2 100 GiB without credits: 300 counted IOPS = 75 MiB/s") {
        Simulation sim = single(gp2_spec(100, 0));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 5);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 5; ++k) {
            CHECK(s.throughput_mib_s[k] == near(75));
            CHECK(s.ebs_iops[k] == near(300));
            CHECK(s.credits[k] == 0);
            // Baseline IOPS and the 75 MiB/s throughput cap bind together; either code is right.
            CHECK((s.bound[k] == iops_bound || s.bound[k] == tput_bound));
        }
    }
    SUBCASE("gp2 170 GiB: 128 MiB/s with credits, 510 x 0.25 = 127.5 MiB/s without") {
        for (double pct : {100.0, 0.0}) {
            CAPTURE(pct);
            Simulation sim = single(gp2_spec(170, pct));
            RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 2);
            CHECK(r.series[0].throughput_mib_s[1] == near(pct > 0 ? 128 : 127.5));
            CHECK(r.series[0].ebs_iops[1] == near(pct > 0 ? 512 : 510));
        }
    }
    SUBCASE("gp2 250 GiB: 250 MiB/s with credits") {
        // 250 MiB/s = 1,000 counted IOPS, below the 3,000 ceiling: throughput binds.
        Simulation sim = single(gp2_spec(250));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 5);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 5; ++k) {
            CHECK(s.throughput_mib_s[k] == near(250));
            CHECK(s.ebs_iops[k] == near(1000));
            CHECK(s.bound[k] == tput_bound);
        }
        // Spends 1,000 - 750 = 250 credits per second.
        CHECK(r.totals[0].credits_end == near(5.4e6 - 5 * 250.0));
    }
    SUBCASE("gp2 250 GiB: 187.5 MiB/s (750 x 0.25) once credits are gone") {
        Simulation sim = single(gp2_spec(250, 0));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 5);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 5; ++k) {
            CHECK(s.throughput_mib_s[k] == near(187.5));
            CHECK(s.ebs_iops[k] == near(750));
            CHECK(s.credits[k] == 0);
        }
    }
    SUBCASE("gp2 250 GiB: 250 MiB/s until the bucket runs dry, then 187.5") {
        // 0.1 % = 5,400 credits spent at 250/s: dry after 21.6 s. Step 21 has 5,400 - 21 x 250
        // = 150 credits + 750 earned = 900 counted ops = 225 MiB.
        Simulation sim = single(gp2_spec(250, 0.1));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 25);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 21; ++k) CHECK(s.throughput_mib_s[k] == near(250));
        CHECK(s.ebs_iops[21] == near(900));
        CHECK(s.throughput_mib_s[21] == near(225));
        for (std::size_t k = 22; k < 25; ++k) CHECK(s.throughput_mib_s[k] == near(187.5));
        CHECK(r.totals[0].cliff_time_s == near(21.6));
    }
    SUBCASE("gp2 334 GiB: 250 MiB/s regardless of credits") {
        for (double pct : {100.0, 0.0}) {
            CAPTURE(pct);
            Simulation sim = single(gp2_spec(334, pct));
            RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 5);
            const StepSeries& s = r.series[0];
            for (std::size_t k = 0; k < 5; ++k) {
                CHECK(s.throughput_mib_s[k] == near(250));
                CHECK(s.ebs_iops[k] == near(1000));
                CHECK(s.bound[k] == tput_bound);
            }
        }
        // From empty, 1,000 counted ops against a 1,002 baseline: the bucket gains 2 per second.
        Simulation sim = single(gp2_spec(334, 0));
        run1(sim, closed_loop(8, MiB, Pattern::sequential), 5);
        CHECK(sim.credits(0) == near(10));
    }
    SUBCASE("gp2 1,000 GiB: 250 MiB/s") {
        Simulation sim = single(gp2_spec(1000));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 3);
        CHECK(r.series[0].throughput_mib_s[2] == near(250));
        CHECK(r.totals[0].credits_end == 5.4e6);  // 1,000 counted ops < 3,000 baseline
    }
    SUBCASE("gp3 provisioned 16,000 IOPS / 1,000 MiB/s") {
        Simulation sim = single(gp3_spec(100, 16000, 1000));
        RunResult r = run1(sim, closed_loop(8, MiB, Pattern::sequential), 3);
        CHECK(r.series[0].throughput_mib_s[0] == near(1000));
        CHECK(r.series[0].ebs_iops[0] == near(4000));  // 1,000 x 4
        CHECK(r.series[0].bound[0] == tput_bound);
    }
}

TEST_CASE("random I/Os above 256 KiB count as several ops against the IOPS limit") {
    SUBCASE("257 KiB random on gp3 3,000 IOPS / 750 MiB/s: 2 ops each, IOPS binds") {
        // Demand: 8 / (0.5 ms + 257 KiB / 1024 MiB/s) = 8 / 0.000745 = 10,737 I/Os per second.
        // IOPS cap: 3,000 counted / 2 = 1,500 I/Os = 1,500 x 257 / 1,024 = 376.46484375 MiB/s,
        // well under the 750 MiB/s throughput cap.
        Simulation sim = single(gp3_spec(100, 3000, 750));
        RunResult r = run1(sim, closed_loop(8, 257 * KiB), 2);
        CHECK(r.series[0].iops[0] == near(1500));
        CHECK(r.series[0].ebs_iops[0] == near(3000));
        CHECK(r.series[0].throughput_mib_s[0] == near(376.46484375));
        CHECK(r.series[0].bound[0] == iops_bound);
        CHECK(r.series[0].latency_s[0] == near(8.0 / 1500));
    }
    SUBCASE("1 MiB random on gp3 5,000 IOPS / 1,000 MiB/s: throughput binds first") {
        // IOPS would allow 5,000 / 4 = 1,250 I/Os = 1,250 MiB/s; throughput allows 1,000.
        Simulation sim = single(gp3_spec(100, 5000, 1000));
        RunResult r = run1(sim, closed_loop(8, MiB), 2);
        CHECK(r.series[0].iops[0] == near(1000));
        CHECK(r.series[0].ebs_iops[0] == near(4000));
        CHECK(r.series[0].bound[0] == tput_bound);
    }
    SUBCASE("16 KiB random on gp3 20,000 IOPS / 1,000 MiB/s: IOPS binds") {
        // Demand: 64 / 0.000515259 s = 124,209 IOPS. 20,000 x 16 KiB = 312.5 MiB/s < 1,000.
        Simulation sim = single(gp3_spec(100, 20000, 1000));
        RunResult r = run1(sim, closed_loop(64, 16 * KiB), 2);
        CHECK(r.series[0].iops[0] == near(20000));
        CHECK(r.series[0].throughput_mib_s[0] == near(312.5));
        CHECK(r.series[0].bound[0] == iops_bound);
        CHECK(r.series[0].latency_s[0] == near(0.0032));  // 64 / 20,000
    }
}

TEST_CASE("small sequential I/Os count one each: 4 KiB sequential on gp2 100 GiB is IOPS-bound") {
    // Under AWS's 32 KiB merge floor, 4 KiB sequential I/Os count like random ones: 32 in flight
    // ask for 63,515 I/Os, the 3,000 IOPS burst cap binds (11.72 MiB/s), and the bucket drains
    // at 3,000 - 300: the cliff comes at 5.4e6 / 2,700 = 2,000 s, as for 4 KiB random I/O.
    Simulation sim = single(gp2_spec(100));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB, Pattern::sequential), 2100);
    const StepSeries& s = r.series[0];
    CHECK(s.iops[0] == near(3000));
    CHECK(s.ebs_iops[0] == near(3000));
    CHECK(s.throughput_mib_s[0] == near(3000 * 4.0 / 1024));
    CHECK(s.bound[0] == iops_bound);
    CHECK(s.latency_s[0] == near(32.0 / 3000));
    CHECK(r.totals[0].cliff_time_s == near(2000));
    CHECK(s.iops[2099] == near(300));
}

TEST_CASE("4 KiB sequential on gp3 100 GiB: 3,000 application IOPS") {
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB, Pattern::sequential), 2);
    CHECK(r.series[0].iops[0] == near(3000));
    CHECK(r.series[0].ebs_iops[0] == near(3000));
    CHECK(r.series[0].bound[0] == iops_bound);
}

TEST_CASE("consecutive runs: burst, rest, burst again, with the clock and the cliff carried over") {
    Simulation sim = single(gp2_spec(100));
    RunResult a = run1(sim, closed_loop(32, 4 * KiB), 2000);
    CHECK(a.totals[0].cliff_time_s == near(2000));
    CHECK(sim.credits(0) == 0);
    // Rest 1,000 s: 300 x 1,000 = 300,000 credits.
    RunResult b = run1(sim, Idle{}, 1000);
    CHECK(b.t0_s == 2000);
    CHECK(b.totals[0].served_ops == 0);
    CHECK(std::isnan(b.totals[0].cliff_time_s));
    CHECK(sim.credits(0) == near(300000));
    CHECK(b.series[0].credits[999] == near(300000));
    for (std::size_t k = 0; k < 1000; ++k) CHECK(std::isnan(b.series[0].latency_s[k]));
    // Burst again: 300,000 / 2,700 = 111.11 s -> cliff at 3,000 + 111.11 = 3,111.11 s.
    RunResult c = run1(sim, closed_loop(32, 4 * KiB), 200);
    CHECK(c.t0_s == 3000);
    CHECK(c.totals[0].cliff_time_s == near(3000 + 300000.0 / 2700));
    CHECK(c.series[0].iops[110] == near(3000));
    CHECK(c.series[0].iops[112] == near(300));
    CHECK(sim.time_s() == 3200);
}

TEST_CASE("record = false gives the same totals and no series") {
    Simulation a = single(gp2_spec(100, 1));
    Simulation b = single(gp2_spec(100, 1));
    RunResult ra = run1(a, closed_loop(32, 4 * KiB), 100, true);
    RunResult rb = run1(b, closed_loop(32, 4 * KiB), 100, false);
    CHECK(rb.series.empty());
    REQUIRE(rb.totals.size() == 1);
    CHECK(ra.totals[0].served_ops == rb.totals[0].served_ops);
    CHECK(ra.totals[0].served_counted == rb.totals[0].served_counted);
    CHECK(ra.totals[0].credits_end == rb.totals[0].credits_end);
    CHECK(ra.totals[0].cliff_time_s == rb.totals[0].cliff_time_s);
    CHECK(ra.totals[0].latency_ops_s == rb.totals[0].latency_ops_s);
    CHECK(a.time_s() == b.time_s());
}

TEST_CASE("a run of zero steps changes nothing") {
    Simulation sim = single(gp2_spec(100, 50));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB), 0);
    CHECK(r.n_steps == 0);
    CHECK(r.series[0].iops.empty());
    CHECK(r.totals[0].served_ops == 0);
    CHECK(std::isnan(r.totals[0].cliff_time_s));
    CHECK(r.totals[0].credits_end == 2.7e6);
    CHECK(sim.time_s() == 0);
}

TEST_CASE("two volumes in one simulation behave as each alone") {
    const std::vector<VolumeSpec> specs = {gp2_spec(100, 1), gp3_spec(100), gp2_spec(250, 0.1)};
    const std::vector<Workload> work = {closed_loop(32, 4 * KiB), closed_loop(8, MiB, Pattern::sequential),
                                        closed_loop(8, MiB, Pattern::sequential)};
    Simulation together(specs, 1.0);
    CHECK(together.size() == 3);
    RunResult rt = together.run(work, 60);
    REQUIRE(rt.series.size() == 3);
    REQUIRE(rt.totals.size() == 3);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        CAPTURE(i);
        Simulation alone = single(specs[i]);
        RunResult ra = run1(alone, work[i], 60);
        const StepSeries& x = rt.series[i];
        const StepSeries& y = ra.series[0];
        CHECK(same_series(x.iops, y.iops));
        CHECK(same_series(x.ebs_iops, y.ebs_iops));
        CHECK(same_series(x.throughput_mib_s, y.throughput_mib_s));
        CHECK(same_series(x.credits, y.credits));
        CHECK(same_series(x.latency_s, y.latency_s));
        CHECK(std::equal(x.bound.begin(), x.bound.end(), y.bound.begin(), y.bound.end()));
        CHECK(rt.totals[i].served_counted == ra.totals[0].served_counted);
        CHECK(rt.totals[i].credits_end == ra.totals[0].credits_end);
        const double cx = rt.totals[i].cliff_time_s, cy = ra.totals[0].cliff_time_s;
        CHECK(((std::isnan(cx) && std::isnan(cy)) || cx == cy));
        CHECK(together.credits(i) == alone.credits(0));
    }
    // And the numbers are the hand-worked ones: volume 0 cliffs at 54,000 / 2,700 = 20 s,
    // volume 1 holds 125 MiB/s, volume 2 cliffs at 5,400 / 250 = 21.6 s.
    CHECK(rt.totals[0].cliff_time_s == near(20));
    CHECK(rt.series[1].throughput_mib_s[59] == near(125));
    CHECK(rt.totals[2].cliff_time_s == near(21.6));
    CHECK(rt.series[2].throughput_mib_s[59] == near(187.5));
}

TEST_CASE("two identical volumes with different workloads stay independent") {
    // Both start at 1 % = 54,000 credits. Volume 0 bursts and cliffs at 54,000 / 2,700 = 20 s;
    // volume 1 rests and earns 300 per second: 54,000 + 300 x 60 = 72,000.
    const std::vector<VolumeSpec> specs = {gp2_spec(100, 1), gp2_spec(100, 1)};
    Simulation sim(specs);
    RunResult r = sim.run({closed_loop(32, 4 * KiB), Idle{}}, 60);
    CHECK(r.totals[0].cliff_time_s == near(20));
    CHECK(r.totals[0].credits_end == 0);
    CHECK(std::isnan(r.totals[1].cliff_time_s));
    CHECK(r.totals[1].credits_end == near(72000));
    CHECK(sim.credits(1) == near(72000));
}
