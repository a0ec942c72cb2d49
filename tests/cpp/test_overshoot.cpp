// Overshoot (VolumeSpec::overshoot_s, docs/model.md "Overshoot"): each rate limit of a volume is
// a token bucket of overshoot_s seconds of the limit, refilled at the limit's rate while the
// volume runs below it. Expected numbers are worked by hand from that rule.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

VolumeSpec with_overshoot(VolumeSpec s, double depth_s, double balance_s) {
    s.overshoot_s = depth_s;
    s.overshoot_balance_s = balance_s;
    return s;
}

}  // namespace

TEST_CASE("overshoot: a full second lets the first held step serve twice the IOPS cap, then the cap") {
    // gp3 3,000 IOPS, 64 4 KiB I/Os in flight (far above the cap), 1 s steps. Step 0 may spend the
    // saved second: 3,000 x (1 + 1/1) = 6,000 I/Os; the next nine serve 3,000 each.
    Simulation sim = single(with_overshoot(gp3_spec(100), 1.0, 1.0));
    const RunResult r = run1(sim, closed_loop(64, 4 * KiB), 10);
    const StepSeries& s = r.series[0];
    CHECK(s.iops[0] == near(6000));
    CHECK(s.bound[0] == code(Bound::volume_iops));
    CHECK(s.latency_s[0] == near(64.0 / 6000));  // Little's law at the step's rate
    for (std::size_t k = 1; k < 10; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(3000));
    }
    CHECK(r.totals[0].served_ops == near(33000));
    // The IOPS limit's second is spent; 24 MiB in step 0 is within 125 MiB/s, whose second stays.
    CHECK(sim.overshoot_saved_s(0).first == 0.0);
    CHECK(sim.overshoot_saved_s(0).second == 1.0);
}

TEST_CASE("overshoot: none by default, and none saved at the start unless a balance is given") {
    // The engine's default is none (nitro_overshoot_s is the fio front end's default on Nitro).
    CHECK(make_volume(gp3_spec(100)).overshoot_s == 0.0);
    CHECK(nitro_overshoot_s == 1.0);
    Simulation plain = single(gp3_spec(100));
    CHECK(run1(plain, closed_loop(64, 4 * KiB), 10).totals[0].served_ops == near(30000));
    // overshoot_s = 1 without a balance starts empty: held from the first step it serves the cap.
    Simulation empty = single(with_overshoot(gp3_spec(100), 1.0, unset));
    CHECK(empty.overshoot_saved_s(0).first == 0.0);
    CHECK(run1(empty, closed_loop(64, 4 * KiB), 10).totals[0].served_ops == near(30000));
    // An idle second saves a whole second again: the next held step serves 6,000.
    run1(empty, Idle{}, 1);
    CHECK(empty.overshoot_saved_s(0).first == 1.0);
    CHECK(run1(empty, closed_loop(64, 4 * KiB), 1).series[0].iops[0] == near(6000));
}

TEST_CASE("overshoot: time below the cap saves the unused share of it, at most overshoot_s") {
    // dt = 0.25 s: the cap is 750 I/Os a step. 2,000 IOPS (500 a step) use 2/3 of it, so each
    // step saves 0.25 x (1 - 2/3) = 1/12 s; four steps save 1/3 s. The held step after them
    // serves 750 x (1 + (1/3) / 0.25) = 1,750, and spends it all.
    Simulation sim = single(with_overshoot(gp3_spec(100), 1.0, 0.0), 0.25);
    const std::vector<double> ops(4, 500.0), bytes(4, 500.0 * 4 * KiB);
    run1(sim, open_loop(ops, bytes), 4);
    CHECK(sim.overshoot_saved_s(0).first == near(1.0 / 3));
    const RunResult r = run1(sim, closed_loop(64, 4 * KiB), 2);
    CHECK(r.series[0].iops[0] * 0.25 == near(1750));
    CHECK(r.series[0].iops[1] * 0.25 == near(750));
    CHECK(sim.overshoot_saved_s(0).first == 0.0);
    // Forty more steps at 2,000 IOPS would save 10/3 s; the bucket holds 1 s.
    const std::vector<double> ops40(40, 500.0), bytes40(40, 500.0 * 4 * KiB);
    run1(sim, open_loop(ops40, bytes40), 40);
    CHECK(sim.overshoot_saved_s(0).first == 1.0);
}

TEST_CASE("overshoot: the throughput limit has its own second") {
    // gp3 3,000 IOPS / 125 MiB/s, 1 MiB random I/Os (4 counted operations each): step 0 may move
    // 125 x 2 = 250 MiB (1,000 counted, within 3,000), then 125 MiB a step. The IOPS limit, never
    // reached, keeps its second.
    Simulation sim = single(with_overshoot(gp3_spec(100), 1.0, 1.0));
    const RunResult r = run1(sim, closed_loop(64, 1 * MiB), 3);
    CHECK(r.series[0].throughput_mib_s[0] == near(250));
    CHECK(r.series[0].bound[0] == code(Bound::volume_throughput));
    CHECK(r.series[0].throughput_mib_s[1] == near(125));
    CHECK(r.series[0].throughput_mib_s[2] == near(125));
    CHECK(sim.overshoot_saved_s(0).first == 1.0);
    CHECK(sim.overshoot_saved_s(0).second == 0.0);
}

TEST_CASE("overshoot: on gp2 the extra I/Os cost credits, and the cliff comes that much earlier") {
    // gp2 100 GiB: 300 IOPS baseline, 3,000 burst. Step 0 serves 6,000 from 5.4 M + 300 earned:
    // 5,394,300 left. Then 2,700 a step net: after 1,997 more steps 2,400 are left, which step
    // 1,998 spends in 2,400 / 2,700 s: the bucket runs dry at 1,998.889 s instead of 2,000 s.
    Simulation sim = single(with_overshoot(gp2_spec(100), 1.0, 1.0));
    run1(sim, closed_loop(64, 4 * KiB), 1);
    CHECK(sim.credits(0) == near(5394300));
    const RunResult r = run1(sim, closed_loop(64, 4 * KiB), 2100, false);
    REQUIRE(r.totals[0].cliffs.size() == 1);
    CHECK(r.totals[0].cliffs[0].start_s == near(1998.0 + 2400.0 / 2700.0));
    // Without credits the cap is what the bucket earns, 300 a step, and the saved second cannot
    // add to it: credits gate the overshoot of a bucket volume.
    Simulation dry = single(with_overshoot(gp2_spec(100, 0.0), 1.0, 1.0));
    CHECK(run1(dry, closed_loop(64, 4 * KiB), 1).series[0].iops[0] == near(300));
}

TEST_CASE("overshoot: a volume held by its instance keeps the second it did not use") {
    // Two gp3 16,000 IOPS volumes on an m5.large (18,750 IOPS at most) with a full second each:
    // the instance holds the pair at 18,750 (the instance's own limits do not overshoot), 9,375
    // each, within each volume's 16,000, so neither spends its second.
    const VolumeSpec v = with_overshoot(gp3_spec(1000, 16000), 1.0, 1.0);
    Simulation sim(std::vector<VolumeSpec>{v, v}, m5_large(), 1.0);
    const RunResult r = sim.run(std::vector<Workload>{closed_loop(64, 4 * KiB), closed_loop(64, 4 * KiB)}, 2, true);
    CHECK(r.series[0].iops[0] + r.series[1].iops[0] == near(18750));
    CHECK(sim.overshoot_saved_s(0).first == 1.0);
    CHECK(sim.overshoot_saved_s(1).first == 1.0);
}

TEST_CASE("overshoot: an instance serves the volumes' rates first, then their overshoot from what is left") {
    // m5.large (18,750 IOPS with its bucket full) and two volumes with a full second each: gp3
    // 3,000 and gp3 10,000 IOPS, deep closed loops. At their rates they ask 13,000, which fits; with
    // their seconds 26,000, which does not. The 5,750 left go to the 3,000 + 10,000 of overshoot,
    // each the share 5,750 / 13,000: 3,000 x (1 + 0.44231) = 4,326.9 and 10,000 x 1.44231 =
    // 14,423.1. Each spent 0.44231 s of its second: 0.55769 s stay.
    const double h = 5750.0 / 13000.0;
    const VolumeSpec a = with_overshoot(gp3_spec(1000), 1.0, 1.0);
    const VolumeSpec b = with_overshoot(gp3_spec(1000, 10000), 1.0, 1.0);
    Simulation sim(std::vector<VolumeSpec>{a, b}, m5_large(), 1.0);
    const RunResult r = sim.run(std::vector<Workload>{closed_loop(64, 4 * KiB), closed_loop(64, 4 * KiB)}, 1, true);
    CHECK(r.series[0].iops[0] == near(3000 * (1 + h)));
    CHECK(r.series[1].iops[0] == near(10000 * (1 + h)));
    CHECK(r.instance_series.iops[0] == near(18750));
    CHECK(r.series[0].bound[0] == code(Bound::instance_iops));
    CHECK(sim.overshoot_saved_s(0).first == near(1 - h));
    CHECK(sim.overshoot_saved_s(1).first == near(1 - h));
    // Where the rates alone are above the instance's budget, it shares them as without overshoot
    // and nothing saved is spent: two gp3 16,000 on 18,750 (the test above).
}

TEST_CASE("overshoot: among open loops and in a fleet a volume gets what it gets alone") {
    // The lockstep kernel steps groups of totals-only open loops, with overshoot and without.
    // 30 s at about 1,000 IOPS then 10 s at about 4,000, fifteen times, 16 KiB (the trace varies
    // a little from step to step, as the kernel's traces do). Each burst queues about 10,000
    // I/Os beyond the 3,000 cap, drained within 5 s of the quiet that follows, whose first steps
    // save the whole second again (1 - 1,000 / 3,000 of a second each). So every burst but the
    // last is served in full either way, and the last one's first step serves 3,000 more with
    // overshoot: 3,000 more served in all, 3,000 fewer left queued.
    std::vector<double> ops, bytes;
    for (int k = 0; k < 600; ++k) {
        const double o = (k % 40 < 30 ? 1000.0 : 4000.0) + (k % 3);
        ops.push_back(o);
        bytes.push_back(o * 16 * KiB);
    }
    const Workload w = open_loop(ops, bytes);
    const VolumeSpec over = with_overshoot(gp3_spec(100), 1.0, 1.0);
    Simulation alone = single(over);
    const RunResult ra = run1(alone, w, 600, false);
    Simulation plain = single(no_overshoot(gp3_spec(100)));
    const RunResult rp = run1(plain, w, 600, false);
    CHECK(ra.totals[0].served_ops == near(rp.totals[0].served_ops + 3000));
    CHECK(ra.totals[0].backlog_ops == near(rp.totals[0].backlog_ops - 3000));
    // Among four volumes without overshoot in the lockstep kernel, and in a fleet: as alone.
    std::vector<VolumeSpec> specs(5, no_overshoot(gp3_spec(100)));
    specs[2] = over;
    Simulation group(specs, 1.0);
    const RunResult rg = group.run(std::vector<Workload>(5, w), 600, false);
    CHECK(rg.totals[2].served_ops == ra.totals[0].served_ops);
    CHECK(rg.totals[2].latency_ops_s == ra.totals[0].latency_ops_s);
    CHECK(rg.totals[0].served_ops == rp.totals[0].served_ops);
    CHECK(rg.totals[0].latency_ops_s == rp.totals[0].latency_ops_s);
    std::vector<Simulation> sims;
    for (int i = 0; i < 4; ++i) sims.push_back(single(i == 1 ? over : no_overshoot(gp3_spec(100))));
    const std::vector<Workload> ws{w};
    std::vector<FleetItem> items;
    for (Simulation& s : sims) items.push_back(FleetItem{&s, &ws, 600, false, 1});
    const std::vector<FleetOutcome> out = run_many(items);
    CHECK(out[1].result->totals[0].latency_ops_s == ra.totals[0].latency_ops_s);
    CHECK(out[0].result->totals[0].latency_ops_s == rp.totals[0].latency_ops_s);
}

TEST_CASE("overshoot: validation names the field, the value and the limit") {
    auto err = [](double depth, double balance) {
        return config_error_message([&] { make_volume(with_overshoot(gp3_spec(100), depth, balance)); });
    };
    CHECK(err(-1, unset).find("overshoot_s=-1 must be between 0 and 10 seconds") != std::string::npos);
    CHECK(err(11, unset).find("overshoot_s=11 must be between 0 and 10") != std::string::npos);
    CHECK(err(0, 1).find("overshoot_balance_s=1 must be between 0 and overshoot_s=0") != std::string::npos);
    CHECK(err(NaN, 1).find("overshoot_balance_s=1 must be between 0 and overshoot_s=0") != std::string::npos);
    CHECK(err(1, 2).find("overshoot_balance_s=2 must be between 0 and overshoot_s=1") != std::string::npos);
    CHECK(err(1, -0.5).find("overshoot_balance_s=-0.5") != std::string::npos);
    CHECK(err(Inf, unset).find("overshoot_s") != std::string::npos);
}
