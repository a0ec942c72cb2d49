// Instance-level EBS limits (docs/ebs-model.md §6 and ebssim's bucket assumption): the budget that
// every attached volume shares, its IO and bytes buckets (EBSIOBalance%, EBSByteBalance%), the
// 'proportional' and 'fair' sharing policies, the Nitro rule for io1/io2, and the spec's errors.
// Instance limits are decimal MB/s (1e6 B/s); volume limits are MiB/s. Expected numbers are
// worked out by hand in the comments.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

std::string instance_error(const InstanceSpec& spec) {
    return config_error_message([&] { make_instance(spec); });
}

constexpr double MB = 1e6;

/// Two gp3 volumes provisioned at 16,000 IOPS / 1,000 MiB/s (100 GiB allows 50,000 IOPS).
std::vector<VolumeSpec> two_gp3_16k() { return {gp3_spec(100, 16000, 1000), gp3_spec(100, 16000, 1000)}; }

/// 16 KiB random reads, 256 in flight: 256 / (0.5 ms + 16 KiB / 1,024 MiB/s) = 256 / 0.000515259
/// = 496,835 IOPS asked of each volume, so each is held at its 16,000 IOPS (250 MiB/s).
Workload deep_16k() { return closed_loop(256, 16 * KiB); }

/// 1 MiB sequential reads, 64 in flight: 64 / 0.0014765625 s = 43,344 MiB/s asked.
Workload deep_1m_seq() { return closed_loop(64, MiB, Pattern::sequential); }

}  // namespace

TEST_CASE("instance parameters: buckets hold the excess over baseline for 30 minutes") {
    SUBCASE("m5.large") {
        InstanceParams p = make_instance(m5_large());
        CHECK(p.name == "m5.large");
        CHECK(p.nitro);
        CHECK(p.share == SharePolicy::proportional);
        CHECK(p.baseline_iops == 3600);
        CHECK(p.max_iops == 18750);
        CHECK(p.baseline_bytes_s == near(81.25e6));  // decimal MB/s
        CHECK(p.max_bytes_s == near(593.75e6));
        CHECK(p.io_capacity == near((18750.0 - 3600) * 1800));          // 27,270,000
        CHECK(p.bytes_capacity == near((593.75 - 81.25) * MB * 1800));  // 9.225e11
        CHECK(p.io_earn_idle == near(27270000.0 / 84600));              // refills in 84,600 s
        CHECK(p.bytes_earn_idle == near(9.225e11 / 84600));
        CHECK(p.io_initial == near(27270000));
        CHECK(p.bytes_initial == near(9.225e11));
    }
    SUBCASE("m5.xlarge, partial balances, other burst and refill times") {
        InstanceSpec s = m5_xlarge();
        s.io_balance_pct = 40;
        s.byte_balance_pct = 10;
        s.burst_s = 600;
        s.refill_s = 3600;
        s.share = SharePolicy::fair;
        InstanceParams p = make_instance(s);
        CHECK(p.share == SharePolicy::fair);
        CHECK(p.io_capacity == near(12750.0 * 600));   // 7,650,000
        CHECK(p.bytes_capacity == near(450e6 * 600));  // 2.7e11
        CHECK(p.io_initial == near(7650000 * 0.4));
        CHECK(p.bytes_initial == near(2.7e11 * 0.1));
        CHECK(p.io_earn_idle == near(7650000.0 / 3600));
    }
    SUBCASE("baseline == max: no bucket") {
        InstanceParams p = make_instance(instance_spec("c7g.16xlarge", 80000, 80000, 2500, 2500));
        CHECK(p.io_capacity == 0);
        CHECK(p.bytes_capacity == 0);
    }
}

TEST_CASE("m5.xlarge, two gp3 at 16,000 IOPS, 16 KiB random: 18,750 IOPS for 1,800 s, then 6,000") {
    // The volumes ask 32,000 counted IOPS and 2 x 250 MiB/s. IO bucket: (18,750 - 6,000) x 1,800
    // = 22,950,000 credits, spent at 18,750 - 6,000 = 12,750 per second: empty after exactly
    // 1,800 s, EBSIOBalance% = 100 (1 - (k + 1) / 1,800) at the end of step k.
    // Proportional: each volume gets 18,750 / 32,000 of its 16,000 = 9,375 IOPS (146.484375 MiB/s);
    // after the cliff 3,000 each (46.875 MiB/s).
    // Bytes: 18,750 x 16,384 B = 307.2 MB/s; above the 143.75 MB/s baseline it spends
    // 163.45e6 B/s of the (593.75 - 143.75)e6 x 1,800 = 8.1e11 B bucket: 63.6778 % left after
    // 1,800 s. From 1,800 s: 6,000 x 16,384 = 98.304 MB/s, below baseline, so the bytes bucket
    // earns 8.1e11 / 84,600 x (1 - 98.304 / 143.75) B per second.
    Simulation sim(two_gp3_16k(), m5_xlarge());
    REQUIRE(sim.has_instance());
    RunResult r = sim.run({deep_16k(), deep_16k()}, 2400);
    REQUIRE(r.has_instance);
    const InstanceSeries& is = r.instance_series;
    REQUIRE(is.iops.size() == 2400);
    const double bytes_left = 8.1e11 - 1800 * 163.45e6;  // 5.1579e11
    for (std::size_t k = 0; k < 2400; ++k) {
        CAPTURE(k);
        const bool burst = k < 1800;
        CHECK(is.iops[k] == near(burst ? 18750 : 6000));
        CHECK(is.throughput_mb_s[k] == near(burst ? 307.2 : 98.304));
        CHECK(is.bound[k] == code(Bound::instance_iops));
        const double io_pct = burst ? 100.0 * (1.0 - static_cast<double>(k + 1) / 1800) : 0.0;
        CHECK(is.io_balance_pct[k] == near(io_pct, 1e-9, 1e-9));
        for (std::size_t v = 0; v < 2; ++v) {
            CAPTURE(v);
            const StepSeries& s = r.series[v];
            CHECK(s.iops[k] == near(burst ? 9375 : 3000));
            CHECK(s.ebs_iops[k] == near(burst ? 9375 : 3000));
            CHECK(s.throughput_mib_s[k] == near(burst ? 146.484375 : 46.875));
            CHECK(s.bound[k] == code(Bound::instance_iops));
            CHECK(s.latency_s[k] == near(256.0 / (burst ? 9375 : 3000)));
        }
    }
    CHECK(is.io_balance_pct[899] == near(50));
    CHECK(is.io_balance_pct[1799] == 0);
    CHECK(is.byte_balance_pct[1799] == near(bytes_left / 8.1e11 * 100, 1e-9));  // 63.6778 %
    CHECK(is.byte_balance_pct[1800] - is.byte_balance_pct[1799] == near(100.0 / 84600 * (1 - 98.304 / 143.75), 1e-6));
    const InstanceTotals& it = r.instance_totals;
    CHECK(it.io_cliff_time_s == near(1800));
    CHECK(std::isnan(it.bytes_cliff_time_s));
    CHECK(it.served_counted == near(1800 * 18750.0 + 600 * 6000.0));  // 37,350,000
    CHECK(it.served_bytes == near((1800 * 18750.0 + 600 * 6000.0) * 16 * KiB));
    CHECK(it.io_credits_end == 0);
    CHECK(it.steps_bound[static_cast<int>(Bound::instance_iops)] == 2400);
    CHECK(sim.instance_io_credits() == 0);
    for (std::size_t v = 0; v < 2; ++v) {
        CHECK(r.totals[v].served_ops == near(1800 * 9375.0 + 600 * 3000.0));
        CHECK(r.totals[v].steps_bound[static_cast<int>(Bound::instance_iops)] == 2400);
        CHECK(std::isnan(r.totals[v].cliff_time_s));  // gp3: no bucket of its own
    }
}

TEST_CASE("m5.large, the same two volumes: 18,750 IOPS while the burst lasts, 3,600 after") {
    // IO bucket (18,750 - 3,600) x 1,800 = 27,270,000, spent at 15,150 per second: 1,800 s.
    Simulation sim(two_gp3_16k(), m5_large());
    RunResult r = sim.run({deep_16k(), deep_16k()}, 2000);
    const InstanceSeries& is = r.instance_series;
    for (std::size_t k = 0; k < 2000; ++k) {
        CAPTURE(k);
        const bool burst = k < 1800;
        CHECK(is.iops[k] == near(burst ? 18750 : 3600));
        CHECK(r.series[0].iops[k] == near(burst ? 9375 : 1800));
        CHECK(r.series[1].iops[k] == near(burst ? 9375 : 1800));
        CHECK(is.io_balance_pct[k] ==
              near(burst ? 100.0 * (1.0 - static_cast<double>(k + 1) / 1800) : 0.0, 1e-9, 1e-9));
    }
    CHECK(r.instance_totals.io_cliff_time_s == near(1800));
    CHECK(r.instance_totals.served_counted == near(1800 * 18750.0 + 200 * 3600.0));
}

TEST_CASE("m5.xlarge, two gp3 at 1,000 MiB/s, 1 MiB sequential: 593.75 MB/s for 1,800 s, then 143.75") {
    // Each volume is held at 1,000 MiB/s = 4,000 counted ops; together 2,000 MiB/s =
    // 2,097.152 MB/s. The instance allows 593.75 MB/s (= 566.24 MiB/s) from a bytes bucket of
    // (593.75 - 143.75)e6 x 1,800 = 8.1e11 B spent at 450e6 B/s: 1,800 s. Then 143.75 MB/s.
    // Each volume: 296.875 MB/s = 283.122 MiB/s, then 71.875 MB/s = 68.545 MiB/s.
    // Counted ops: 593.75e6 / 2^20 x 4 = 2,264.97 per second, below the 6,000 IOPS baseline,
    // so the IO bucket stays full.
    Simulation sim(two_gp3_16k(), m5_xlarge());
    RunResult r = sim.run({deep_1m_seq(), deep_1m_seq()}, 2400);
    const InstanceSeries& is = r.instance_series;
    for (std::size_t k = 0; k < 2400; ++k) {
        CAPTURE(k);
        CHECK(is.io_balance_pct[k] == near(100));
        if (k == 1799 || k == 1800) continue;  // the step that empties the bucket, either side
        const bool burst = k < 1800;
        CHECK(is.throughput_mb_s[k] == near(burst ? 593.75 : 143.75, 1e-9));
        CHECK(is.iops[k] == near((burst ? 593.75 : 143.75) * MB / MiB * 4, 1e-9));
        CHECK(is.bound[k] == code(Bound::instance_throughput));
        if (burst) {
            CHECK(is.byte_balance_pct[k] == near(100.0 * (1.0 - static_cast<double>(k + 1) / 1800), 1e-9));
        } else {
            CHECK(within(is.byte_balance_pct[k], 0, 1e-9));
        }
        for (std::size_t v = 0; v < 2; ++v) {
            CAPTURE(v);
            CHECK(r.series[v].throughput_mib_s[k] == near((burst ? 296.875 : 71.875) * MB / MiB, 1e-9));
            CHECK(r.series[v].bound[k] == code(Bound::instance_throughput));
        }
        // MB/s vs MiB/s: the volumes' MiB/s add up to the instance's MB/s / 1.048576.
        CHECK(r.series[0].throughput_mib_s[k] + r.series[1].throughput_mib_s[k] ==
              near(is.throughput_mb_s[k] / 1.048576, 1e-9));
    }
    CHECK(is.throughput_mb_s[10] / 1.048576 == near(566.2441253662109));
    const InstanceTotals& it = r.instance_totals;
    CHECK(std::abs(it.bytes_cliff_time_s - 1800) <= 1.0);
    CHECK(it.bytes_cliff_time_s == near(1800, 1e-6));
    CHECK(std::isnan(it.io_cliff_time_s));
    // Everything the instance let through: the bucket plus 143.75 MB/s over 2,400 s.
    CHECK(it.served_bytes == near(8.1e11 + 143.75e6 * 2400, 1e-9));  // 1.155e12
    CHECK(r.totals[0].served_bytes + r.totals[1].served_bytes == near(1.155e12, 1e-9));
    CHECK(it.steps_bound[static_cast<int>(Bound::instance_throughput)] == 2400);
    CHECK(within(it.bytes_credits_end, 0, 1.0));  // less than a byte
}

TEST_CASE("instance IO bucket refills in 84,600 s of idle") {
    // Drain the IO bucket as above (1,800 s), then rest: it earns 22,950,000 / 84,600 per second,
    // so 50 % after 42,300 s and 100 % after 84,600 s. The bytes bucket (63.68 % after the
    // drain) is full again long before.
    Simulation sim(two_gp3_16k(), m5_xlarge());
    sim.run({deep_16k(), deep_16k()}, 1800, false);
    CHECK(sim.instance_io_credits() == 0);
    RunResult r = sim.run({Idle{}, Idle{}}, 42300);
    CHECK(r.t0_s == 1800);
    CHECK(r.instance_series.iops[0] == 0);
    CHECK(r.instance_series.io_balance_pct[0] == near(100.0 / 84600, 1e-9));
    CHECK(r.instance_series.io_balance_pct[42299] == near(50, 1e-9));
    CHECK(r.instance_series.byte_balance_pct[42299] == near(100));
    CHECK(sim.instance_io_credits() == near(22950000.0 / 2, 1e-9));
    CHECK(std::isnan(r.instance_totals.io_cliff_time_s));
    RunResult r2 = sim.run({Idle{}, Idle{}}, 42300, false);
    CHECK(r2.instance_series.iops.empty());
    CHECK(sim.instance_io_credits() == near(22950000, 1e-9));
    CHECK(r2.instance_totals.io_credits_end == near(22950000, 1e-9));
    CHECK(sim.time_s() == 1800 + 84600);
    // Full again: the next burst lasts 1,800 s.
    RunResult r3 = sim.run({deep_16k(), deep_16k()}, 1900, false);
    CHECK(r3.instance_totals.io_cliff_time_s == near(1800 + 84600 + 1800, 1e-9));
}

TEST_CASE("instance bucket earns in proportion to the unused baseline") {
    // m5.xlarge from an empty IO bucket; one gp3 volume at its default 3,000 IOPS uses half the
    // 6,000 baseline, so it earns 22,950,000 / 84,600 x (1 - 3,000 / 6,000) per second:
    // after 8,460 s, 8,460 / 84,600 x 0.5 = 5 %.
    InstanceSpec inst = m5_xlarge();
    inst.io_balance_pct = 0;
    Simulation sim({gp3_spec(100)}, inst);
    RunResult r = sim.run({deep_16k()}, 8460);
    CHECK(r.series[0].iops[0] == near(3000));
    CHECK(r.series[0].bound[0] == code(Bound::volume_iops));
    CHECK(r.instance_series.bound[0] == code(Bound::demand));
    CHECK(r.instance_series.iops[100] == near(3000));
    CHECK(r.instance_series.io_balance_pct[8459] == near(5, 1e-9));
    CHECK(r.instance_series.io_balance_pct[845] == near(0.5, 1e-9));  // 846 / 84,600 x 0.5
    CHECK(r.instance_series.byte_balance_pct[8459] == 100);           // 49.152 MB/s < 143.75: full stays full
}

TEST_CASE("partial initial EBSIOBalance%: 50 % of m5.xlarge lasts 900 s") {
    InstanceSpec inst = m5_xlarge();
    inst.io_balance_pct = 50;  // 11,475,000 credits at 12,750 per second
    Simulation sim(two_gp3_16k(), inst);
    RunResult r = sim.run({deep_16k(), deep_16k()}, 1000);
    CHECK(r.instance_series.io_balance_pct[0] == near(50.0 * (1 - 1.0 / 900)));
    CHECK(r.instance_series.iops[899] == near(18750));
    CHECK(r.instance_series.iops[900] == near(6000));
    CHECK(r.instance_totals.io_cliff_time_s == near(900));
}

TEST_CASE("instance cliff at 1,800 s with dt = 7 s, interpolated in the step") {
    // Per 7 s step: 12,750 x 7 = 89,250 credits spent. After 257 steps 22,950,000 - 22,937,250
    // = 12,750 are left: step 257 serves 6,000 x 7 + 12,750 = 54,750 counted ops, and the
    // bucket runs dry 12,750 / 89,250 = 1/7 into it: at 257 x 7 + 1 = 1,800 s.
    // Over 300 steps (2,100 s): 22,950,000 + 6,000 x 2,100 = 35,550,000 counted ops.
    Simulation sim(two_gp3_16k(), m5_xlarge(), 7.0);
    RunResult r = sim.run({deep_16k(), deep_16k()}, 300);
    CHECK(r.instance_series.iops[256] == near(18750));
    CHECK(r.instance_series.iops[257] == near(54750.0 / 7));
    CHECK(r.instance_series.iops[258] == near(6000));
    CHECK(r.instance_totals.io_cliff_time_s == near(1800, 1e-9));
    CHECK(r.instance_totals.served_counted == near(35550000, 1e-9));
}

TEST_CASE("non-burstable instance (baseline == max): the limit holds, balances stay 100 %") {
    // c7g.16xlarge-like: 80,000 IOPS / 2,500 MB/s. Two gp3 at 80,000 IOPS / 2,000 MiB/s ask
    // 160,000 counted IOPS of 16 KiB: the instance holds them at 80,000 (40,000 each,
    // 625 MiB/s each, 1,310.72 MB/s together, below 2,500).
    const std::vector<VolumeSpec> vols{gp3_spec(1000, 80000, 2000), gp3_spec(1000, 80000, 2000)};
    Simulation sim(vols, instance_spec("c7g.16xlarge", 80000, 80000, 2500, 2500));
    RunResult r = sim.run({deep_16k(), deep_16k()}, 2500);
    const InstanceSeries& is = r.instance_series;
    for (std::size_t k = 0; k < 2500; k += 13) {
        CAPTURE(k);
        CHECK(is.iops[k] == near(80000));
        CHECK(is.throughput_mb_s[k] == near(1310.72));
        CHECK(is.io_balance_pct[k] == 100);
        CHECK(is.byte_balance_pct[k] == 100);
        CHECK(is.bound[k] == code(Bound::instance_iops));
        CHECK(r.series[0].iops[k] == near(40000));
        CHECK(r.series[1].throughput_mib_s[k] == near(625));
    }
    CHECK(std::isnan(r.instance_totals.io_cliff_time_s));
    CHECK(std::isnan(r.instance_totals.bytes_cliff_time_s));
    CHECK(r.instance_totals.served_counted == near(80000.0 * 2500));
}

TEST_CASE("instance IOPS count the volumes' EBS-counted operations") {
    SUBCASE("SSD: a 512 KiB random I/O counts 2 operations of 256 KiB") {
        // gp3 16,000 IOPS / 1,000 MiB/s, 512 KiB random at QD 64 (64 / 0.00098828125 = 64,760
        // I/Os asked): the volume allows 1,000 MiB/s = 2,000 I/Os = 4,000 counted ops. An
        // instance of 2,000 IOPS (baseline == max, 10,000 MB/s) halves it: 1,000 I/Os, 2,000
        // counted, 500 MiB/s = 524.288 MB/s.
        Simulation sim({gp3_spec(100, 16000, 1000)}, instance_spec("small", 2000, 2000, 10000, 10000));
        RunResult r = sim.run({closed_loop(64, 512 * KiB)}, 3);
        CHECK(r.instance_series.iops[2] == near(2000));
        CHECK(r.instance_series.throughput_mb_s[2] == near(524.288));
        CHECK(r.series[0].iops[2] == near(1000));
        CHECK(r.series[0].ebs_iops[2] == near(2000));
        CHECK(r.series[0].throughput_mib_s[2] == near(500));
        CHECK(r.series[0].bound[2] == code(Bound::instance_iops));
    }
    SUBCASE("HDD: 4 KiB random on st1 counts 1 MiB operations; only what is served spends credits") {
        // st1 1 TiB asks 250 counted ops; an instance of 100 IOPS lets 100 through, so the st1
        // bucket spends 100 - 40 = 60 per second (not 210).
        Simulation sim({st1_spec(1024)}, instance_spec("tiny", 100, 100, 1000, 1000));
        RunResult r = sim.run({closed_loop(64, 4 * KiB)}, 10);
        CHECK(r.instance_series.iops[9] == near(100));
        CHECK(r.series[0].iops[9] == near(100));
        CHECK(r.series[0].throughput_mib_s[9] == near(100 * 4.0 / 1024));
        CHECK(r.series[0].bound[9] == code(Bound::instance_iops));
        CHECK(sim.credits(0) == near(1048576 - 10 * 60.0));
    }
}

TEST_CASE("gp2 volumes behind a binding instance: both buckets, each spends what is served") {
    // m5.large from an empty IO bucket: 3,600 IOPS. Two gp2 100 GiB ask 3,000 each (4 KiB
    // random, QD 32): each gets 3,600 / 6,000 x 3,000 = 1,800 and spends 1,800 - 300 = 1,500
    // credits per second: dry after 5.4e6 / 1,500 = 3,600 s. The instance uses exactly its
    // baseline, so its bucket neither earns nor spends. From 3,600 s each volume serves its
    // 300 baseline; the instance then earns 27,270,000 / 84,600 x (1 - 600 / 3,600) per second.
    InstanceSpec inst = m5_large();
    inst.io_balance_pct = 0;
    Simulation sim({gp2_spec(100), gp2_spec(100)}, inst);
    Workload w = closed_loop(32, 4 * KiB);
    RunResult r = sim.run({w, w}, 3700);
    for (std::size_t k = 0; k < 3599; k += 11) {
        CAPTURE(k);
        CHECK(r.instance_series.iops[k] == near(3600));
        CHECK(within(r.instance_series.io_balance_pct[k], 0, 1e-9));
        for (std::size_t v = 0; v < 2; ++v) {
            CHECK(r.series[v].iops[k] == near(1800, 1e-9));
            CHECK(r.series[v].bound[k] == code(Bound::instance_iops));
            CHECK(r.series[v].credits[k] == near(5.4e6 - 1500.0 * static_cast<double>(k + 1), 1e-9, 1e-3));
        }
    }
    for (std::size_t k = 3601; k < 3700; ++k) {
        CAPTURE(k);
        CHECK(r.series[0].iops[k] == near(300));
        CHECK(r.series[1].iops[k] == near(300));
        CHECK(r.series[0].bound[k] == code(Bound::volume_iops));
        CHECK(r.instance_series.bound[k] == code(Bound::demand));
    }
    // Within one step of 5.4e6 / 1,500 = 3,600 s (the exact time: see the next test case).
    CHECK(std::abs(r.totals[0].cliff_time_s - 3600) <= 1.0);
    CHECK(std::abs(r.totals[1].cliff_time_s - 3600) <= 1.0);
    // 99 steps (3,601..3,699) of earning at 5/6 of the idle rate, after ~0 before.
    CHECK(sim.instance_io_credits() >= 99 * 27270000.0 / 84600 * 5 / 6 * (1 - 1e-6));
    CHECK(sim.instance_io_credits() <= 100 * 27270000.0 / 84600 * 5 / 6 * (1 + 1e-6));
}

// In the step where a volume's bucket runs dry behind a binding instance, its own credits +
// baseline (1,500 + 300 = 1,800) already cut its ask to its instance share, so the instance does
// not bind in that step; the cliff is interpolated at the share the instance allowed before:
// 3,599 + 1,500 / (1,800 - 300) = 3,600 s (not at the unthrottled 3,000: 3,599.56 s).
TEST_CASE("volume cliff behind a binding instance is interpolated at the rate the instance allows") {
    // Same set-up as above. Each gp2 volume is served 1,800 counted IOPS (its share of the
    // instance's 3,600), so its 5.4e6 credits go at 1,800 - 300 = 1,500 per second and are
    // gone at exactly 3,600 s: step 3,599 starts with 1,500 credits and serves 1,800.
    InstanceSpec inst = m5_large();
    inst.io_balance_pct = 0;
    Simulation sim({gp2_spec(100), gp2_spec(100)}, inst);
    Workload w = closed_loop(32, 4 * KiB);
    RunResult r = sim.run({w, w}, 3700);
    CHECK(r.series[0].credits[3598] == near(1500, 1e-6));
    CHECK(r.series[0].iops[3599] == near(1800, 1e-9));
    CHECK(r.series[0].credits[3599] == 0);
    CHECK(r.totals[0].cliff_time_s == near(3600, 1e-9));
    CHECK(r.totals[1].cliff_time_s == near(3600, 1e-9));
}

TEST_CASE("fair vs proportional sharing of the instance IOPS") {
    // m5.xlarge with an empty IO bucket: 6,000 IOPS. Volume A (gp3 defaults) asks 2,000 IOPS
    // (2 in flight, 1 ms each, 16 KiB); volume B (gp3 16,000) asks 16,000. Together 18,000.
    // fair (max-min): A is below the fair share (3,000) and gets its 2,000; B gets 4,000.
    // proportional: both get 6,000 / 18,000 = 1/3 of their ask: 666.67 and 5,333.33.
    // The instance uses exactly its 6,000 baseline, so its bucket stays empty.
    const std::vector<VolumeSpec> vols{gp3_spec(100), gp3_spec(100, 16000, 1000)};
    const Workload small = closed_loop_st(2, 16 * KiB, 0.001);
    for (SharePolicy policy : {SharePolicy::fair, SharePolicy::proportional}) {
        const bool fair = policy == SharePolicy::fair;
        CAPTURE(fair);
        InstanceSpec inst = m5_xlarge();
        inst.io_balance_pct = 0;
        inst.share = policy;
        Simulation sim(vols, inst);
        RunResult r = sim.run({small, deep_16k()}, 20);
        for (std::size_t k = 0; k < 20; ++k) {
            CAPTURE(k);
            CHECK(r.instance_series.iops[k] == near(6000, 1e-9));
            CHECK(r.instance_series.bound[k] == code(Bound::instance_iops));
            CHECK(within(r.instance_series.io_balance_pct[k], 0, 1e-9));
            CHECK(r.series[0].iops[k] == near(fair ? 2000 : 2000.0 / 3, 1e-9));
            CHECK(r.series[1].iops[k] == near(fair ? 4000 : 16000.0 / 3, 1e-9));
            // Closed loop: 2 in flight / completions per second.
            CHECK(r.series[0].latency_s[k] == near(fair ? 0.001 : 0.003, 1e-9));
            CHECK(r.series[0].bound[k] == code(fair ? Bound::demand : Bound::instance_iops));
            CHECK(r.series[1].bound[k] == code(Bound::instance_iops));
        }
    }
}

TEST_CASE("fair vs proportional sharing of the instance throughput") {
    // m5.xlarge with an empty bytes bucket: 143.75 MB/s. Volume A asks 50 MiB/s = 52.4288 MB/s
    // (1 MiB sequential, 1 in flight, 20 ms each); volume B 1,000 MiB/s = 1,048.576 MB/s.
    // fair: A (below the 71.875 MB/s fair share) gets all of it, B the remaining
    // 143.75 - 52.4288 = 91.3212 MB/s. proportional: both get 143.75 / 1,101.0048 of their ask.
    // IOPS (4 counted per MiB, at most 4,200) stay below 6,000: the bytes budget binds.
    const std::vector<VolumeSpec> vols{gp3_spec(100), gp3_spec(100, 16000, 1000)};
    const Workload small = closed_loop_st(1, MiB, 0.02, Pattern::sequential);
    const double g = 143.75 / 1101.0048;
    for (SharePolicy policy : {SharePolicy::fair, SharePolicy::proportional}) {
        const bool fair = policy == SharePolicy::fair;
        CAPTURE(fair);
        InstanceSpec inst = m5_xlarge();
        inst.byte_balance_pct = 0;
        inst.share = policy;
        Simulation sim(vols, inst);
        RunResult r = sim.run({small, deep_1m_seq()}, 20);
        for (std::size_t k = 0; k < 20; ++k) {
            CAPTURE(k);
            CHECK(r.instance_series.throughput_mb_s[k] == near(143.75, 1e-9));
            CHECK(r.instance_series.bound[k] == code(Bound::instance_throughput));
            CHECK(r.series[0].throughput_mib_s[k] == near(fair ? 50 : 50 * g, 1e-9));
            CHECK(r.series[1].throughput_mib_s[k] == near(fair ? 91.3212e6 / MiB : 1000 * g, 1e-9));
            CHECK(r.series[0].bound[k] == code(fair ? Bound::demand : Bound::instance_throughput));
            CHECK(r.series[1].bound[k] == code(Bound::instance_throughput));
        }
    }
}

// With share = fair the shares are dominant-resource fair: max-min fair on each volume's larger
// share of the two budgets, so at least one budget is used up when both volumes want more.
TEST_CASE("fair sharing when the IOPS and the bytes budgets both bind leaves neither unused") {
    // m5.large with both buckets empty: 3,600 counted IOPS and 81.25 MB/s. Volume A (gp3 16,000 /
    // 1,000) asks 16,000 IOPS of 4 KiB random (65.536 MB/s); volume B (the same) asks 1,000 MiB/s
    // of 1 MiB sequential (1,048.576 MB/s, 4,000 counted). Both ask more than either budget
    // allows, so a max-min fair allocation (Pareto-efficient by definition) must use up at least
    // one budget: otherwise both volumes could get more without taking from the other.
    // proportional: g = min(3,600 / 20,000, 81.25 / 1,114.112) = 0.0729: bytes fully used.
    const std::vector<VolumeSpec> vols{gp3_spec(100, 16000, 1000), gp3_spec(100, 16000, 1000)};
    for (SharePolicy policy : {SharePolicy::proportional, SharePolicy::fair}) {
        const bool fair = policy == SharePolicy::fair;
        CAPTURE(fair);
        InstanceSpec inst = m5_large();
        inst.io_balance_pct = 0;
        inst.byte_balance_pct = 0;
        inst.share = policy;
        Simulation sim(vols, inst);
        RunResult r = sim.run({closed_loop(256, 4 * KiB), deep_1m_seq()}, 1);
        const double iops = r.instance_series.iops[0];
        const double mb_s = r.instance_series.throughput_mb_s[0];
        CAPTURE(iops);
        CAPTURE(mb_s);
        CHECK(iops <= 3600 * (1 + 1e-12));
        CHECK(mb_s <= 81.25 * (1 + 1e-12));
        CHECK((iops == near(3600) || mb_s == near(81.25)));
        // Each volume is held below its ask.
        CHECK(r.series[0].iops[0] < 16000);
        CHECK(r.series[1].throughput_mib_s[0] < 1000);
    }
}

TEST_CASE("an idle volume leaves the whole instance budget to the busy one") {
    // m5.large at 3,600 IOPS (empty bucket): the busy gp3 gets all 3,600, under either policy.
    for (SharePolicy policy : {SharePolicy::fair, SharePolicy::proportional}) {
        const bool fair = policy == SharePolicy::fair;
        CAPTURE(fair);
        InstanceSpec inst = m5_large();
        inst.io_balance_pct = 0;
        inst.share = policy;
        Simulation sim(two_gp3_16k(), inst);
        RunResult r = sim.run({Idle{}, deep_16k()}, 3);
        CHECK(r.series[0].iops[2] == 0);
        CHECK(r.series[0].ebs_iops[2] == 0);
        CHECK(r.series[1].iops[2] == near(3600));
        CHECK(r.series[1].bound[2] == code(Bound::instance_iops));
        CHECK(r.instance_series.iops[2] == near(3600));
    }
}

// A volume that asked for nothing (Idle, or an open-loop step with no arrivals and no backlog)
// was not held back by the instance: its bound stays Bound::demand under either policy.
TEST_CASE("an idle volume is not reported as held back by the instance") {
    for (SharePolicy policy : {SharePolicy::fair, SharePolicy::proportional}) {
        const bool fair = policy == SharePolicy::fair;
        CAPTURE(fair);
        InstanceSpec inst = m5_large();
        inst.io_balance_pct = 0;
        inst.share = policy;
        Simulation sim(two_gp3_16k(), inst);
        RunResult r = sim.run({Idle{}, deep_16k()}, 3);
        CHECK(r.series[0].bound[2] == code(Bound::demand));
        CHECK(r.totals[0].steps_bound[static_cast<int>(Bound::demand)] == 3);
    }
}

TEST_CASE("open loop behind a binding instance: the excess queues and drains later") {
    // A gp3 16,000 IOPS volume behind a 10,000 IOPS instance (baseline == max). 20,000 16 KiB
    // I/Os arrive in each of 10 steps, then none for 10 steps: 10,000 are served in each of the
    // 20 steps; the backlog peaks at 100,000 after step 9 and is empty after step 19.
    std::vector<double> ops(20, 0.0), bytes(20, 0.0);
    for (std::size_t k = 0; k < 10; ++k) {
        ops[k] = 20000;
        bytes[k] = 20000 * 16 * KiB;
    }
    Simulation sim({gp3_spec(100, 16000, 1000)}, instance_spec("10k", 10000, 10000, 5000, 5000));
    RunResult r = sim.run({open_loop(ops, bytes)}, 20);
    for (std::size_t k = 0; k < 20; ++k) {
        CAPTURE(k);
        CHECK(r.series[0].iops[k] == near(10000));
        CHECK(r.instance_series.iops[k] == near(10000));
        // In the last step the 10,000 left fit the instance exactly: either code is right.
        if (k < 19) {
            CHECK(r.series[0].bound[k] == code(Bound::instance_iops));
        }
    }
    CHECK(r.totals[0].demanded_ops == near(200000));
    CHECK(r.totals[0].served_ops == near(200000));
    CHECK(within(r.totals[0].backlog_ops, 0, 1e-6));
    CHECK(within(sim.backlog_ops(0), 0, 1e-6));
}

TEST_CASE("a run rejected for a bad trace value leaves the instance buckets untouched") {
    std::vector<double> ops(10, 20000.0), bytes(10, 20000 * 16 * KiB);
    ops[5] = NaN;
    Simulation sim(two_gp3_16k(), m5_xlarge());
    sim.run({deep_16k(), deep_16k()}, 100, false);
    const double io = sim.instance_io_credits();
    const double by = sim.instance_bytes_credits();
    CHECK(io == near(22950000 - 100 * 12750.0));
    std::string msg = config_error_message([&] { sim.run({open_loop(ops, bytes), deep_16k()}, 10); });
    CHECK(contains(msg, "ops[5]"));
    CHECK(sim.instance_io_credits() == io);
    CHECK(sim.instance_bytes_credits() == by);
    CHECK(sim.time_s() == 100);
}

TEST_CASE("fair sharing with every volume above the fair share: equal split") {
    // m5.large at 3,600 IOPS (empty bucket); two gp3 at 16,000 asking 16,000 each: 1,800 each,
    // the same as proportional.
    InstanceSpec inst = m5_large();
    inst.io_balance_pct = 0;
    inst.share = SharePolicy::fair;
    Simulation sim(two_gp3_16k(), inst);
    RunResult r = sim.run({deep_16k(), deep_16k()}, 5);
    CHECK(r.series[0].iops[4] == near(1800));
    CHECK(r.series[1].iops[4] == near(1800));
}

TEST_CASE("a volume without an instance is unaffected by instance code") {
    // The gp2 100 GiB reference: 3,000 IOPS for 2,000 s, then 300.
    Simulation alone = single(gp2_spec(100));
    RunResult ra = run1(alone, closed_loop(32, 4 * KiB), 2200);
    CHECK_FALSE(alone.has_instance());
    CHECK_FALSE(ra.has_instance);
    CHECK(ra.instance_series.iops.empty());
    CHECK(ra.instance_series.io_balance_pct.empty());
    CHECK(ra.instance_totals.served_counted == 0);
    CHECK(std::isnan(ra.instance_totals.io_cliff_time_s));
    CHECK(ra.series[0].iops[1999] == near(3000));
    CHECK(ra.series[0].iops[2000] == near(300));
    CHECK(ra.totals[0].cliff_time_s == near(2000));

    SUBCASE("behind an instance that never binds: the same series") {
        Simulation big({gp2_spec(100)}, instance_spec("huge", 1e7, 1e7, 1e6, 1e6));
        RunResult rb = big.run({closed_loop(32, 4 * KiB)}, 2200);
        CHECK(rb.has_instance);
        CHECK(same_series(rb.series[0].iops, ra.series[0].iops));
        CHECK(same_series(rb.series[0].credits, ra.series[0].credits));
        CHECK(same_series(rb.series[0].latency_s, ra.series[0].latency_s));
        CHECK(rb.totals[0].cliff_time_s == ra.totals[0].cliff_time_s);
        CHECK(same_series(rb.instance_series.iops, ra.series[0].ebs_iops));
        CHECK(rb.instance_series.io_balance_pct[2199] == 100);
        CHECK(rb.instance_series.bound[0] == code(Bound::demand));
    }
}

TEST_CASE("Nitro rule: io1 at 64,000 IOPS on a non-Nitro instance delivers 32,000 and 500 MiB/s") {
    // A large Xen instance that never binds: 80,000 IOPS / 2,500 MB/s, nitro = false.
    const InstanceSpec xen = instance_spec("xen", 80000, 80000, 2500, 2500, false);
    SUBCASE("8 KiB random: 32,000 IOPS (250 MiB/s)") {
        // Demand: 256 / (0.5 ms + 8 KiB / 1,024 MiB/s) = 256 / 0.00050763 = 504,308 IOPS.
        Simulation sim({io1_spec(1280, 64000)}, xen);
        CHECK_FALSE(sim.params(0).nitro);
        CHECK(sim.params(0).baseline_iops == 32000);
        RunResult r = sim.run({closed_loop(256, 8 * KiB)}, 3);
        CHECK(r.series[0].iops[2] == near(32000));
        CHECK(r.series[0].throughput_mib_s[2] == near(250));
        CHECK(r.series[0].bound[2] == code(Bound::volume_iops));
    }
    SUBCASE("1 MiB sequential: 500 MiB/s, not 1,000") {
        Simulation sim({io1_spec(1280, 64000)}, xen);
        RunResult r = sim.run({deep_1m_seq()}, 3);
        CHECK(r.series[0].throughput_mib_s[2] == near(500));
        CHECK(r.series[0].throughput_mib_s[2] <= 500 * (1 + 1e-12));
        CHECK(r.series[0].bound[2] == code(Bound::volume_throughput));
    }
    SUBCASE("the same volume on a Nitro instance: 64,000 IOPS, 1,000 MiB/s") {
        InstanceSpec nitro = xen;
        nitro.nitro = true;
        Simulation sim({io1_spec(1280, 64000)}, nitro);
        CHECK(sim.params(0).nitro);
        RunResult r = sim.run({closed_loop(256, 8 * KiB)}, 3);
        CHECK(r.series[0].iops[2] == near(64000));
        Simulation sim2({io1_spec(1280, 64000)}, nitro);
        RunResult r2 = sim2.run({deep_1m_seq()}, 3);
        CHECK(r2.series[0].throughput_mib_s[2] == near(1000));
    }
    SUBCASE("io2 64,000 attaches to a non-Nitro instance and delivers 32,000") {
        Simulation sim({io2_spec(100, 64000)}, xen);
        CHECK(sim.params(0).baseline_iops == 32000);
        CHECK(sim.params(0).tput_burst_bytes_s == near(500 * MiB));
    }
    SUBCASE("io2 80,000 on a non-Nitro instance is rejected") {
        std::string msg = config_error_message([&] { Simulation sim({io2_spec(100, 80000)}, xen); });
        CHECK(contains(msg, "iops=80000"));
        CHECK(contains(msg, "64000"));
        CHECK(contains(msg, "Nitro"));
        // Among several volumes, the offender is named.
        std::string msg2 = config_error_message([&] { Simulation sim({gp3_spec(100), io2_spec(100, 80000)}, xen); });
        CHECK(contains(msg2, "volume 1"));
        CHECK(contains(msg2, "iops=80000"));
        // On a Nitro instance, and without an instance, 80,000 is fine.
        InstanceSpec nitro = xen;
        nitro.nitro = true;
        CHECK_NOTHROW(Simulation({io2_spec(100, 80000)}, nitro));
        CHECK(single(io2_spec(100, 80000)).params(0).baseline_iops == 80000);
    }
}

TEST_CASE("instance spec errors") {
    SUBCASE("missing limits (NaN is the default)") {
        CHECK(contains(instance_error(InstanceSpec{}), "baseline_iops"));
        CHECK(contains(instance_error(InstanceSpec{}), "missing"));
        for (int field = 0; field < 4; ++field) {
            CAPTURE(field);
            InstanceSpec s = m5_large();
            const char* name = "";
            switch (field) {
                case 0:
                    s.baseline_iops = NaN;
                    name = "baseline_iops";
                    break;
                case 1:
                    s.max_iops = NaN;
                    name = "max_iops";
                    break;
                case 2:
                    s.baseline_mb_s = NaN;
                    name = "baseline_mb_s";
                    break;
                default:
                    s.max_mb_s = NaN;
                    name = "max_mb_s";
                    break;
            }
            std::string msg = instance_error(s);
            CHECK(contains(msg, name));
            CHECK(contains(msg, "m5.large"));
        }
    }
    SUBCASE("limits must be positive and finite") {
        InstanceSpec s = m5_large();
        s.baseline_iops = 0;
        CHECK(contains(instance_error(s), "baseline_iops=0"));
        s = m5_large();
        s.max_mb_s = -1;
        CHECK(contains(instance_error(s), "max_mb_s=-1"));
        s = m5_large();
        s.max_iops = Inf;
        CHECK(contains(instance_error(s), "max_iops=inf"));
    }
    SUBCASE("max below baseline") {
        InstanceSpec s = m5_xlarge();
        s.max_iops = 5999;
        std::string msg = instance_error(s);
        CHECK(contains(msg, "max_iops=5999"));
        CHECK(contains(msg, "baseline_iops=6000"));
        s = m5_xlarge();
        s.max_mb_s = 100;
        std::string msg2 = instance_error(s);
        CHECK(contains(msg2, "max_mb_s=100"));
        CHECK(contains(msg2, "baseline_mb_s=143.75"));
    }
    SUBCASE("burst_s and refill_s must be > 0") {
        for (double v : {0.0, -1.0, -1800.0}) {
            CAPTURE(v);
            InstanceSpec s = m5_large();
            s.burst_s = v;
            CHECK(contains(instance_error(s), "burst_s="));
            InstanceSpec s2 = m5_large();
            s2.refill_s = v;
            CHECK(contains(instance_error(s2), "refill_s="));
        }
        InstanceSpec s = m5_large();
        s.burst_s = NaN;
        CHECK(contains(instance_error(s), "burst_s"));
        s.burst_s = Inf;
        CHECK(contains(instance_error(s), "burst_s"));
    }
    SUBCASE("initial balances 0 to 100") {
        for (double v : {-1.0, 100.5, NaN}) {
            CAPTURE(v);
            InstanceSpec s = m5_large();
            s.io_balance_pct = v;
            CHECK(contains(instance_error(s), "io_balance_pct"));
            InstanceSpec s2 = m5_large();
            s2.byte_balance_pct = v;
            CHECK(contains(instance_error(s2), "byte_balance_pct"));
        }
        InstanceSpec s = m5_large();
        s.io_balance_pct = 0;
        s.byte_balance_pct = 100;
        CHECK_NOTHROW(make_instance(s));
    }
    SUBCASE("the Simulation constructor rejects a bad instance") {
        InstanceSpec s = m5_large();
        s.max_iops = 100;
        CHECK_THROWS_WITH_AS(Simulation({gp3_spec(100)}, s), doctest::Contains("max_iops=100"), ConfigError);
        CHECK_THROWS_AS(Simulation({gp3_spec(100)}, m5_large(), 0.0), ConfigError);
    }
}

TEST_CASE("instance wait_cv: unset (the platform's, by the I/Os in flight), or the spec's within 0 to max_cv") {
    InstanceSpec s = m5_large();
    CHECK(std::isnan(make_instance(s).wait_cv));  // the latency model takes instance_wait_cv_at
    s.nitro = false;
    CHECK(std::isnan(make_instance(s).wait_cv));
    s.wait_cv = 0.0;
    CHECK(make_instance(s).wait_cv == 0.0);
    s.wait_cv = max_cv;
    CHECK(make_instance(s).wait_cv == max_cv);
    for (double bad : {-0.01, max_cv + 0.01, std::numeric_limits<double>::infinity()}) {
        CAPTURE(bad);
        s.wait_cv = bad;
        const std::string msg = instance_error(s);
        CHECK(contains(msg, "wait_cv="));
        CHECK(contains(msg, "must be between 0 and 10"));
    }
}
