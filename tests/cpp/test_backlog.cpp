// Open-loop (trace) workloads: demand above the limits queues as a FIFO fluid backlog, drains
// later, and shows up as queue length and latency. Idle runs drain a backlog and refill credits.

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

std::vector<double> times(const std::vector<double>& ops, double bytes_per_op) {
    std::vector<double> b;
    b.reserve(ops.size());
    for (double o : ops) b.push_back(o * bytes_per_op);
    return b;
}

double sum(const std::vector<double>& xs) {
    double s = 0;
    for (double x : xs) s += x;
    return s;
}
}  // namespace

TEST_CASE("open loop on gp3: demand above 3,000 IOPS queues and drains later") {
    // 4 KiB random. Step: arrivals -> available -> served (cap 3,000) -> backlog
    //   0: 6,000 -> 6,000 -> 3,000 -> 3,000
    //   1: 6,000 -> 9,000 -> 3,000 -> 6,000
    //   2:     0 -> 6,000 -> 3,000 -> 3,000
    //   3:     0 -> 3,000 -> 3,000 ->     0   (exactly the cap: not throttled)
    //   4:     0 ->     0 ->     0 ->     0
    const std::vector<double> ops = {6000, 6000, 0, 0, 0};
    const std::vector<double> bytes = times(ops, 4 * KiB);
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, open_loop(ops, bytes), 5);
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];

    const std::vector<double> served = {3000, 3000, 3000, 3000, 0};
    for (std::size_t k = 0; k < 5; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(served[k], 1e-9, 1e-9));
        CHECK(s.ebs_iops[k] == near(served[k], 1e-9, 1e-9));
    }
    CHECK(s.bound[0] == iops_bound);
    CHECK(s.bound[1] == iops_bound);
    CHECK(s.bound[2] == iops_bound);
    CHECK(s.bound[3] == demand_bound);
    CHECK(s.bound[4] == demand_bound);

    // Latency = service time + mean backlog over the step / completion rate:
    //   0: (0 + 3,000) / 2 / 3,000 = 0.5 s;  1: (3,000 + 6,000) / 2 / 3,000 = 1.5 s
    //   2: (6,000 + 3,000) / 2 / 3,000 = 1.5 s;  3: (3,000 + 0) / 2 / 3,000 = 0.5 s;  4: nothing completes
    CHECK(s.latency_s[0] == near(st_4k + 0.5));
    CHECK(s.latency_s[1] == near(st_4k + 1.5));
    CHECK(s.latency_s[2] == near(st_4k + 1.5));
    CHECK(s.latency_s[3] == near(st_4k + 0.5));
    CHECK(std::isnan(s.latency_s[4]));
    CHECK(s.latency_s[1] > s.latency_s[0]);  // rises with the backlog
    // Queue length = in service (3,000 x st) + waiting; Little's law ties it to the latency.
    CHECK(s.queue_length(0) == near(3000 * st_4k + 1500));
    CHECK(s.queue_length(1) == near(3000 * st_4k + 4500));

    CHECK(t.demanded_ops == 12000);
    CHECK(t.demanded_bytes == 12000 * 4 * KiB);
    CHECK(t.served_ops == near(12000));
    CHECK(t.served_bytes == near(12000 * 4 * KiB));
    CHECK(t.backlog_ops == near(0, 1e-9, 1e-6));
    CHECK(t.backlog_bytes == near(0, 1e-9, 1e-3));
    // 3,000 x (0.5 + 1.5 + 1.5 + 0.5 + 4 x st) = 12,000 + ...
    CHECK(t.latency_ops_s == near(3000 * (4.0 + 4 * st_4k)));
    CHECK(t.steps_bound[1] == 3);
    CHECK(t.steps_bound[0] == 2);
}

TEST_CASE("open loop: demanded == served + backlog at the end of a truncated run") {
    const std::vector<double> ops = {6000, 6000, 0};
    const std::vector<double> bytes = times(ops, 4 * KiB);
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, open_loop(ops, bytes), 3);
    const VolumeTotals& t = r.totals[0];
    // 12,000 arrived, 3 x 3,000 = 9,000 served, 3,000 still queued.
    CHECK(t.demanded_ops == 12000);
    CHECK(t.served_ops == near(9000));
    CHECK(t.backlog_ops == near(3000));
    CHECK(t.backlog_bytes == near(3000 * 4 * KiB));
    CHECK(t.served_ops + t.backlog_ops == near(t.demanded_ops));
    CHECK(t.served_bytes + t.backlog_bytes == near(t.demanded_bytes));
    CHECK(sim.backlog_ops(0) == near(3000));

    SUBCASE("an Idle run drains the backlog; state and clock carry over") {
        RunResult idle = run1(sim, Idle{}, 2);
        CHECK(idle.t0_s == 3);
        CHECK(sim.time_s() == 5);
        const VolumeTotals& u = idle.totals[0];
        CHECK(u.demanded_ops == 0);
        CHECK(u.served_ops == near(3000));
        CHECK(u.served_bytes == near(3000 * 4 * KiB));
        CHECK(u.backlog_ops == near(0, 1e-9, 1e-6));
        CHECK(idle.series[0].iops[0] == near(3000));
        // The queued I/Os waited on average (3,000 + 0) / 2 / 3,000 = 0.5 s in that step.
        CHECK(idle.series[0].latency_s[0] == near(st_4k + 0.5));
        CHECK(std::isnan(idle.series[0].latency_s[1]));
        CHECK(sim.backlog_ops(0) == near(0, 1e-9, 1e-6));
    }
    SUBCASE("a closed loop after the trace: the backlog is served on top of what the loop issues") {
        // Whatever the order of service, everything queued plus everything the loop issued is
        // served once the volume has spare capacity: the loop asks for 1,985 IOPS, 1,015 below
        // the cap, so 3 steps clear the 3,000 queued I/Os.
        RunResult c = run1(sim, closed_loop(1, 4 * KiB), 3);
        CHECK(c.series[0].iops[0] == near(3000));
        CHECK(c.series[0].bound[0] == iops_bound);
        CHECK(c.totals[0].backlog_ops == near(0, 1e-9, 1e-6));
        CHECK(c.totals[0].served_ops == near(3000 + c.totals[0].demanded_ops));
        CHECK(sim.backlog_ops(0) == near(0, 1e-9, 1e-6));
    }
}

// docs/model.md: "Backlog and new arrivals are served in proportion (not strictly first-in
// first-out)": each step serves the same fraction f of what is queued and of what arrives.
TEST_CASE("open loop: the backlog and new arrivals are served in proportion") {
    SUBCASE("a queued 1 MiB backlog and new 4 KiB I/Os share the step") {
        // gp3 3,000 IOPS / 125 MiB/s.
        //   step 0: 250 x 1 MiB random arrive (1,000 counted, 250 MiB): 125 served, 125 queued
        //           (125 MiB, 500 counted).
        //   step 1: 3,000 x 4 KiB arrive (3,000 counted, 11.71875 MiB). Available: 3,125 I/Os,
        //           136.71875 MiB, 3,500 counted. f = min(3,000 / 3,500, 125 / 136.71875)
        //           = min(6/7, 32/35) = 6/7: 3,125 x 6/7 = 2,678.57 I/Os, 3,000 counted,
        //           136.71875 x 6/7 = 117.1875 MiB; 446.43 I/Os (19.53125 MiB, 500 counted) stay.
        //   step 2: the rest, 446.43 I/Os, 500 counted, 19.53125 MiB.
        // (Strict FIFO would serve only the 125 queued 1 MiB I/Os in step 1: the whole 125 MiB.)
        const std::vector<double> ops = {250, 3000, 0};
        const std::vector<double> bytes = {250 * MiB, 3000 * 4 * KiB, 0};
        Simulation sim = single(gp3_spec(100));
        RunResult r = run1(sim, open_loop(ops, bytes), 3);
        const StepSeries& s = r.series[0];
        CHECK(s.iops[0] == near(125));
        CHECK(s.bound[0] == tput_bound);
        CHECK(s.iops[1] == near(3125.0 * 6 / 7));
        CHECK(s.ebs_iops[1] == near(3000));
        CHECK(s.throughput_mib_s[1] == near(117.1875));
        CHECK(s.bound[1] == iops_bound);
        CHECK(s.iops[2] == near(3125.0 / 7));
        CHECK(s.ebs_iops[2] == near(500));
        CHECK(s.throughput_mib_s[2] == near(19.53125));
        CHECK(s.bound[2] == demand_bound);
        CHECK(r.totals[0].served_ops == near(3250));
        CHECK(r.totals[0].served_bytes == near(250 * MiB + 3000 * 4 * KiB));
        CHECK(r.totals[0].served_counted == near(1000 + 3000));  // 250 x 4 + 3,000 x 1
    }
    SUBCASE("a closed loop after a trace shares the steps with the queued I/Os") {
        // 3,000 x 4 KiB queued on gp3; the loop (1 in flight) offers a = 1 / st = 1,984.86 per step.
        //   step 0: f = 3,000 / (3,000 + a); queue 3,000 (1 - f) = 1,194.5
        //   step 1: f = 3,000 / (1,194.5 + a); queue 1,194.5 (1 - f) = 67.4
        //   step 2: 67.4 + a = 2,052.3 < 3,000: everything is served.
        const std::vector<double> ops = {6000};
        const std::vector<double> bytes = {6000 * 4 * KiB};
        Simulation sim = single(gp3_spec(100));
        run1(sim, open_loop(ops, bytes), 1);
        REQUIRE(sim.backlog_ops(0) == near(3000));
        RunResult c = run1(sim, closed_loop(1, 4 * KiB), 3);
        const double a = 1.0 / st_4k;
        const double q1 = 3000 * (1 - 3000 / (3000 + a));
        const double q2 = q1 * (1 - 3000 / (q1 + a));
        CHECK(q1 == near(1194.53, 1e-5));
        CHECK(q2 == near(67.40, 1e-3));
        CHECK(c.series[0].iops[0] == near(3000));
        CHECK(c.series[0].iops[1] == near(3000));
        CHECK(c.series[0].iops[2] == near(q2 + a));
        // Waiting I/Os: mean of the queue at the start and the end of each step, on top of the 1 in flight.
        CHECK(c.series[0].queue_length(0) == near(1 + (3000 + q1) / 2));
        CHECK(c.series[0].queue_length(1) == near(1 + (q1 + q2) / 2));
        CHECK(c.totals[0].backlog_ops == near(0, 1e-9, 1e-6));
    }
}

TEST_CASE("open loop: a burst drains at the spare capacity, hand-worked over 100 steps") {
    // gp3 3,000 IOPS. 9,000 arrive per step for 10 steps (+6,000 queued per step -> 60,000),
    // then 1,000 per step: the 2,000 spare per step drains 60,000 in 30 steps (steps 10..39).
    std::vector<double> ops(100, 1000);
    for (std::size_t k = 0; k < 10; ++k) ops[k] = 9000;
    const std::vector<double> bytes = times(ops, 4 * KiB);
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, open_loop(ops, bytes), 100);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 40; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(3000));
    }
    for (std::size_t k = 40; k < 100; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(1000));
        CHECK(s.bound[k] == demand_bound);
        CHECK(s.latency_s[k] == near(st_4k));  // no queue: just the service time
    }
    // Steps 0..9: backlog 6,000 k -> 6,000 (k + 1), waiting 6,000 k + 3,000, latency st + 2k + 1.
    for (std::size_t k = 0; k < 10; ++k) {
        CAPTURE(k);
        CHECK(s.latency_s[k] == near(st_4k + 2.0 * static_cast<double>(k) + 1.0));
        if (k > 0) CHECK(s.latency_s[k] > s.latency_s[k - 1]);
    }
    // Step 10: 60,000 -> 58,000, mean 59,000 waiting / 3,000 = 19.67 s; step 39: (2,000 + 0) / 2 / 3,000.
    CHECK(s.latency_s[10] == near(st_4k + 59000.0 / 3000));
    CHECK(s.latency_s[39] == near(st_4k + 1000.0 / 3000, 1e-6));
    // 10 x 9,000 + 90 x 1,000 = 180,000 demanded, all served.
    const VolumeTotals& t = r.totals[0];
    CHECK(t.demanded_ops == 180000);
    CHECK(t.served_ops == near(180000));
    CHECK(t.backlog_ops == near(0, 1e-9, 1e-6));
    CHECK(t.steps_bound[2] == 0);
}

TEST_CASE("open loop: the throughput cap queues bytes") {
    // gp3 125 MiB/s. 250 x 1 MiB random arrive in step 0 (1,000 counted ops, below 3,000):
    // 125 MiB served, 125 MiB queued and served in step 1.
    const std::vector<double> ops = {250, 0};
    const std::vector<double> bytes = {250 * MiB, 0};
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, open_loop(ops, bytes), 2);
    const StepSeries& s = r.series[0];
    CHECK(s.iops[0] == near(125));
    CHECK(s.ebs_iops[0] == near(500));  // 125 x 4
    CHECK(s.throughput_mib_s[0] == near(125));
    CHECK(s.bound[0] == tput_bound);
    CHECK(s.throughput_mib_s[1] == near(125));
    CHECK(s.bound[1] == demand_bound);
    // Latency: st(1 MiB) + (0 + 125) / 2 / 125 = st + 0.5 s, and st + (125 + 0) / 2 / 125 in step 1.
    CHECK(s.latency_s[0] == near(st_1m + 0.5));
    CHECK(s.latency_s[1] == near(st_1m + 0.5));
    CHECK(r.totals[0].served_bytes == near(250 * MiB));
    CHECK(r.totals[0].backlog_bytes == near(0, 1e-9, 1e-3));
}

TEST_CASE("open loop on gp2: credits run out, the backlog builds, Idle drains it and refills") {
    // 100 GiB, 0.1 % = 5,400 credits, 3,000 x 4 KiB random per step for 4 steps then nothing.
    //   0: serve 3,000, credits 5,400 + 300 - 3,000 = 2,700
    //   1: serve 3,000, credits 0 -> cliff at t = 2 (2,700 / 2,700 = the whole step)
    //   2: serve 300, backlog 2,700;  3: serve 300, backlog 5,400
    //   4..21: serve 300 from the backlog (5,400 / 300 = 18 steps), credits stay 0
    //   22, 23: idle, credits 300, 600
    std::vector<double> ops(24, 0);
    for (std::size_t k = 0; k < 4; ++k) ops[k] = 3000;
    const std::vector<double> bytes = times(ops, 4 * KiB);
    Simulation sim = single(gp2_spec(100, 0.1));
    RunResult r = run1(sim, open_loop(ops, bytes), 24);
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    CHECK(s.iops[0] == near(3000));
    CHECK(s.iops[1] == near(3000));
    CHECK(s.credits[0] == near(2700));
    CHECK(s.credits[1] == near(0, 1e-9, 1e-6));
    CHECK(t.cliff_time_s == near(2));
    for (std::size_t k = 2; k < 22; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(300));
        CHECK(s.credits[k] == near(0, 1e-9, 1e-6));
    }
    // Latency rises while the backlog builds (steps 2, 3) and falls as it drains.
    CHECK(s.latency_s[3] > s.latency_s[2]);
    CHECK(s.latency_s[2] > s.latency_s[1]);
    CHECK(s.latency_s[21] < s.latency_s[4]);
    // Step 3: backlog 2,700 -> 5,400, waiting 4,050 / 300 = 13.5 s.
    CHECK(s.latency_s[3] == near(st_4k + 13.5));
    CHECK(s.iops[22] == near(0, 1e-9, 1e-9));
    CHECK(s.credits[22] == near(300));
    CHECK(s.credits[23] == near(600));
    CHECK(t.demanded_ops == 12000);
    CHECK(t.served_ops == near(12000));
    CHECK(t.backlog_ops == near(0, 1e-9, 1e-6));
    // Credits: 5,400 + 300 x 24 - 600 = 12,000 counted ops served.
    CHECK(t.served_counted == near(12000));
    CHECK(t.credits_end == near(600));
}

TEST_CASE("Idle after a throttled trace: backlog drains, then credits refill, and the clock advances") {
    // 100 GiB gp2 with an empty bucket: 1,200 x 4 KiB arrive in one step, 300 served, 900 queued.
    const std::vector<double> ops = {1200};
    const std::vector<double> bytes = {1200 * 4 * KiB};
    Simulation sim = single(gp2_spec(100, 0));
    RunResult a = run1(sim, open_loop(ops, bytes), 1);
    CHECK(a.totals[0].served_ops == near(300));
    CHECK(a.totals[0].backlog_ops == near(900));
    CHECK(sim.time_s() == 1);
    // Idle: 300 per step for 3 steps (credits stay 0 while the baseline is spent), then +300 per step.
    RunResult b = run1(sim, Idle{}, 5);
    CHECK(b.t0_s == 1);
    const StepSeries& s = b.series[0];
    for (std::size_t k = 0; k < 3; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(300));
        CHECK(s.credits[k] == near(0, 1e-9, 1e-6));
    }
    CHECK(s.iops[3] == near(0, 1e-9, 1e-9));
    CHECK(s.credits[3] == near(300));
    CHECK(s.credits[4] == near(600));
    CHECK(b.totals[0].served_ops == near(900));
    CHECK(b.totals[0].demanded_ops == 0);
    CHECK(b.totals[0].backlog_ops == near(0, 1e-9, 1e-6));
    CHECK(sim.credits(0) == near(600));
    CHECK(sim.time_s() == 6);
}

TEST_CASE("open loop conservation over a long irregular trace") {
    // gp2 100 GiB from 1 % (54,000 credits), 600 steps of a repeating pattern averaging
    // 0.3 x 8,000 + 0.7 x 500 = 2,750 ops/s with sizes 4 KiB to 512 KiB: it outruns the
    // baseline, so credits only fall and the bucket never reaches its cap.
    const std::size_t n = 600;
    std::vector<double> ops(n);
    std::vector<double> bytes(n);
    const double sizes[4] = {4 * KiB, 64 * KiB, 256 * KiB, 512 * KiB};
    for (std::size_t k = 0; k < n; ++k) {
        ops[k] = (k % 10 < 3) ? 8000 : 500;
        bytes[k] = ops[k] * sizes[k % 4];
    }
    Simulation sim = single(gp2_spec(100, 1));
    RunResult r = run1(sim, open_loop(ops, bytes), static_cast<std::int64_t>(n));
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    CHECK(t.demanded_ops == near(sum(ops)));
    CHECK(t.demanded_bytes == near(sum(bytes)));
    CHECK(t.served_ops + t.backlog_ops == near(t.demanded_ops));
    CHECK(t.served_bytes + t.backlog_bytes == near(t.demanded_bytes));
    CHECK(t.backlog_ops > 0);
    CHECK(integrate(s.iops, 1) == near(t.served_ops));
    CHECK(integrate(s.ebs_iops, 1) == near(t.served_counted));
    double max_credits = 0;
    for (std::size_t k = 0; k < n; ++k) {
        CAPTURE(k);
        max_credits = std::max(max_credits, s.credits[k]);
        CHECK(s.ebs_iops[k] <= 3000 * (1 + 1e-12));
        CHECK(s.credits[k] >= 0);
    }
    CHECK(max_credits < 5.4e6);
    // Counted ops served = initial + earned - final.
    CHECK(t.served_counted == near(54000 + 300.0 * static_cast<double>(n) - t.credits_end));
    // After the cliff only the baseline remains: the last steps serve exactly 300 counted ops.
    CHECK(t.cliff_time_s < 600);
    CHECK(s.ebs_iops[n - 1] == near(300));
}

TEST_CASE("open loop: sequential I/Os from 32 KiB merge into 256 KiB counted ops, smaller ones do not") {
    Simulation sim = single(gp3_spec(100));
    SUBCASE("1,600 x 64 KiB sequential per step: 1,600 x 64 / 256 = 400 counted ops, 100 MiB/s") {
        const std::vector<double> ops = {1600, 1600};
        const std::vector<double> bytes = times(ops, 64 * KiB);
        RunResult r = run1(sim, open_loop(ops, bytes, Pattern::sequential), 2);
        CHECK(r.series[0].iops[0] == near(1600));
        CHECK(r.series[0].ebs_iops[0] == near(400));
        CHECK(r.series[0].throughput_mib_s[0] == near(100));
        CHECK(r.series[0].bound[0] == demand_bound);
        CHECK(r.series[0].latency_s[0] == near(0.0005 + 64 * KiB / (1024 * MiB)));
        CHECK(r.totals[0].served_counted == near(800));
    }
    SUBCASE("10,000 x 4 KiB sequential per step: one counted op each, held at gp3's 3,000 IOPS") {
        const std::vector<double> ops = {10000, 10000};
        const std::vector<double> bytes = times(ops, 4 * KiB);
        RunResult r = run1(sim, open_loop(ops, bytes, Pattern::sequential), 2);
        CHECK(r.series[0].iops[0] == near(3000));
        CHECK(r.series[0].ebs_iops[0] == near(3000));
        CHECK(r.series[0].bound[0] == iops_bound);
        CHECK(r.totals[0].served_counted == near(6000));
        CHECK(r.totals[0].backlog_ops == near(14000));  // 7,000 left in each step
    }
}

TEST_CASE("open loop: random I/Os count by their mean size per step") {
    // 100 x 512 KiB random: 2 counted ops each -> 200; 1,000 x 64 KiB random: 1 each -> 1,000.
    const std::vector<double> ops = {100, 1000};
    const std::vector<double> bytes = {100 * 512 * KiB, 1000 * 64 * KiB};
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, open_loop(ops, bytes), 2);
    CHECK(r.series[0].ebs_iops[0] == near(200));
    CHECK(r.series[0].ebs_iops[1] == near(1000));
    // Unthrottled latency is the service time at the step's mean size:
    // 0.5 ms + 512 KiB / 1024 MiB/s = 0.5 ms + 0.48828125 ms; 0.5 ms + 64 KiB / ... = 0.5 ms + 0.06103515625 ms.
    CHECK(r.series[0].latency_s[0] == near(0.00098828125));
    CHECK(r.series[0].latency_s[1] == near(0.00056103515625));
}

TEST_CASE("open loop with an explicit service time") {
    // 1,000 I/Os per second, unthrottled, 2 ms each: latency 2 ms, 1,000 x 0.002 = 2 in flight.
    const std::vector<double> ops = {1000};
    const std::vector<double> bytes = {1000 * 4 * KiB};
    OpenLoop w = open_loop(ops, bytes);
    w.service_time_s = 0.002;
    Simulation sim = single(gp3_spec(100));
    RunResult r = run1(sim, w, 1);
    CHECK(r.series[0].latency_s[0] == near(0.002));
    CHECK(r.series[0].queue_length(0) == near(2));
}

TEST_CASE("open loop at dt = 0.1 s: per-step amounts, per-second rates") {
    // gp3: 3,000 IOPS = 300 ops per 0.1 s step. 600 arrive in step 0: 300 served, 300 queued
    // and served in step 1. Rates are per second: 3,000 IOPS in both steps.
    const std::vector<double> ops = {600, 0, 0};
    const std::vector<double> bytes = times(ops, 4 * KiB);
    Simulation sim = single(gp3_spec(100), 0.1);
    RunResult r = run1(sim, open_loop(ops, bytes), 3);
    CHECK(r.series[0].iops[0] == near(3000));
    CHECK(r.series[0].iops[1] == near(3000));
    CHECK(r.series[0].iops[2] == near(0, 1e-9, 1e-9));
    // Waiting (0 + 300) / 2 = 150 I/Os at 3,000 per second: 0.05 s.
    CHECK(r.series[0].latency_s[0] == near(st_4k + 0.05));
    CHECK(r.totals[0].served_ops == near(600));
    CHECK(sim.time_s() == near(0.3));
}

TEST_CASE("multi-volume open loops are independent") {
    const std::vector<double> ops_a = {6000, 6000, 0, 0, 0};
    const std::vector<double> bytes_a = times(ops_a, 4 * KiB);
    const std::vector<double> ops_b = {250, 0, 100, 0, 0};
    const std::vector<double> bytes_b = times(ops_b, MiB);
    const std::vector<VolumeSpec> specs = {gp3_spec(100), gp2_spec(100, 0)};
    Simulation both(specs);
    RunResult rb = both.run({open_loop(ops_a, bytes_a), open_loop(ops_b, bytes_b, Pattern::sequential)}, 5);
    Simulation a = single(specs[0]);
    Simulation b = single(specs[1]);
    RunResult ra = run1(a, open_loop(ops_a, bytes_a), 5);
    RunResult rbb = run1(b, open_loop(ops_b, bytes_b, Pattern::sequential), 5);
    CHECK(same_series(rb.series[0].iops, ra.series[0].iops));
    CHECK(same_series(rb.series[0].latency_s, ra.series[0].latency_s));
    CHECK(same_series(rb.series[1].iops, rbb.series[0].iops));
    CHECK(same_series(rb.series[1].latency_s, rbb.series[0].latency_s));
    CHECK(same_series(rb.series[1].credits, rbb.series[0].credits));
    CHECK(rb.totals[1].backlog_ops == rbb.totals[0].backlog_ops);
    CHECK(both.backlog_ops(0) == a.backlog_ops(0));
    CHECK(both.backlog_ops(1) == b.backlog_ops(0));
    // Volume 1 (gp2 100 GiB, empty): 300 counted ops = 75 x 1 MiB per step.
    // 250 -> 75 served (175 queued); 75 (100 left); 100 + 100 = 200 -> 75 (125); 75 (50); 50 (0).
    CHECK(rb.series[1].iops[0] == near(75));
    CHECK(rb.series[1].iops[4] == near(50));
    CHECK(rb.totals[1].served_ops == near(350));
}
