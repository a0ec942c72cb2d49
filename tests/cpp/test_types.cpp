// io1, io2 (Block Express), st1, sc1 and standard: the AWS rules of docs/ebs-model.md §3-§5
// (and ebssim's assumed model for standard), the limits derived from them, and the stepped
// engine on each type. Every expected number is worked out by hand in the comments.

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

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

std::string volume_error(const VolumeSpec& spec, bool nitro = true) {
    return config_error_message([&] { make_volume(spec, nitro); });
}

/// Both limits meet exactly at this workload: either code is a right answer.
bool iops_or_tput(std::uint8_t b) { return b == code(Bound::volume_iops) || b == code(Bound::volume_throughput); }

// A full 1 TiB HDD bucket: 1,024 GiB x 1,024 MiB of credits.
constexpr double tib_credits = 1024.0 * 1024.0;  // 1,048,576

}  // namespace

// ---------------------------------------------------------------------------------------------
// io1 / io2
// ---------------------------------------------------------------------------------------------

TEST_CASE("io1 throughput rule: 256 KiB per IOPS up to 500 MiB/s, then 16 KiB per IOPS up to 1,000") {
    CHECK(io1::throughput_mib_s(100) == near(25));     // 100 x 0.25
    CHECK(io1::throughput_mib_s(1000) == near(250));   // 1,000 x 0.25
    CHECK(io1::throughput_mib_s(2000) == near(500));   // peak reached at 2,000 IOPS
    CHECK(io1::throughput_mib_s(20000) == near(500));  // min(500, 5,000)
    CHECK(io1::throughput_mib_s(32000) == near(500));
    CHECK(io1::throughput_mib_s(32064) == near(501));   // 32,064 / 64: continuous at 32,000
    CHECK(io1::throughput_mib_s(48000) == near(750));   // 48,000 / 64
    CHECK(io1::throughput_mib_s(64000) == near(1000));  // 64,000 / 64
}

TEST_CASE("io2 Block Express throughput rule: 0.25 MiB/s per IOPS (256 KiB counting) up to 4,000 MiB/s") {
    // AWS quotes 0.256 MiB/s per IOPS; one IOPS carries at most one 256 KiB operation, 0.25 MiB/s.
    CHECK(io2::throughput_mib_s(100) == near(25));
    CHECK(io2::throughput_mib_s(4000) == near(1000));
    CHECK(io2::throughput_mib_s(10000) == near(2500));
    CHECK(io2::throughput_mib_s(15625) == near(3906.25));
    CHECK(io2::throughput_mib_s(16000) == near(4000));  // "achieved at 16,000 IOPS or higher"
    CHECK(io2::throughput_mib_s(256000) == near(4000));
}

TEST_CASE("io2 4 GiB at 4,000 IOPS: 1 MiB sequential reaches the reported 1,000 MiB/s") {
    Simulation sim = single(io2_spec(4, 4000));
    CHECK(sim.params(0).tput_burst_bytes_s == near(1000 * MiB));
    RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
    CHECK(r.series[0].throughput_mib_s[0] == near(1000));
    CHECK(r.series[0].ebs_iops[0] == near(4000));  // both limits bind together
}

TEST_CASE("io1 and io2 limits: provisioned caps, no bucket, 256 KiB counting") {
    SUBCASE("io1 960 GiB at 48,000 IOPS (exactly 50 IOPS per GiB)") {
        VolumeParams p = make_volume(io1_spec(960, 48000));
        CHECK(p.type == VolumeType::io1);
        CHECK(p.size_gib == 960);
        CHECK(p.nitro);
        CHECK(p.baseline_iops == 48000);
        CHECK(p.burst_iops == 48000);
        CHECK_FALSE(p.has_bucket());
        CHECK(p.initial_credits == 0);
        CHECK(p.io_unit_bytes == 256 * KiB);
        CHECK(p.tput_burst_bytes_s == near(750 * MiB));
        CHECK(p.tput_base_bytes_s == near(750 * MiB));
        CHECK(p.read_latency_s == near(0.0005));  // io1: the SSD default 0.5 ms, both directions
        CHECK(p.write_latency_s == near(0.0005));
    }
    SUBCASE("io2 100 GiB at 16,000 IOPS") {
        VolumeParams p = make_volume(io2_spec(100, 16000));
        CHECK(p.type == VolumeType::io2);
        CHECK(p.baseline_iops == 16000);
        CHECK(p.burst_iops == 16000);
        CHECK_FALSE(p.has_bucket());
        CHECK(p.io_unit_bytes == 256 * KiB);
        CHECK(p.tput_burst_bytes_s == near(4000 * MiB));
        CHECK(p.tput_base_bytes_s == near(4000 * MiB));
        // Block Express: "under 500 us" for a 16 KiB I/O; reads 0.44 ms, writes 0.335 ms + 16 KiB /
        // 1,024 MiB/s (data set 03: 16 KiB reads at 0.43-0.48 ms).
        CHECK(p.read_latency_s == near(0.00044));
        CHECK(p.write_latency_s == near(0.000335));
        CHECK(p.service_time_s(16 * KiB, 1.0) == near(0.00044 + 16.0 / (1024.0 * 1024.0)));
        CHECK(p.service_time_s(16 * KiB, 1.0) < 0.0005);
    }
    SUBCASE("io2 10 GiB at 10,000 IOPS (1,000 per GiB): 2,500 MiB/s cap") {
        VolumeParams p = make_volume(io2_spec(10, 10000));
        CHECK(p.baseline_iops == 10000);
        CHECK(p.tput_burst_bytes_s == near(2500 * MiB));
    }
    SUBCASE("edges: io1 4 GiB / 100 IOPS, io1 16,384 GiB / 64,000, io2 65,536 GiB / 256,000") {
        CHECK(make_volume(io1_spec(4, 100)).baseline_iops == 100);  // 100 <= 50 x 4 = 200
        CHECK(make_volume(io1_spec(16384, 64000)).tput_burst_bytes_s == near(1000 * MiB));
        VolumeParams p = make_volume(io2_spec(65536, 256000));
        CHECK(p.baseline_iops == 256000);
        CHECK(p.tput_burst_bytes_s == near(4000 * MiB));
        CHECK(make_volume(io2_spec(4, 100)).tput_burst_bytes_s == near(25 * MiB));
    }
}

TEST_CASE("io1 at 48,000 IOPS: 1 MiB sequential at queue depth 64 caps at 750 MiB/s") {
    // Demand: 64 / 0.0014765625 s = 43,344 I/Os of 1 MiB per second. Each counts 4 ops of
    // 256 KiB, so the IOPS cap would allow 12,000 I/Os; the 750 MiB/s cap binds first at 750
    // I/Os = 3,000 counted ops per second. Latency: 64 / 750 s.
    Simulation sim = single(io1_spec(960, 48000));
    RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 5);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 5; ++k) {
        CAPTURE(k);
        CHECK(s.throughput_mib_s[k] == near(750));
        CHECK(s.iops[k] == near(750));
        CHECK(s.ebs_iops[k] == near(3000));
        CHECK(s.bound[k] == code(Bound::volume_throughput));
        CHECK(s.latency_s[k] == near(64.0 / 750));
        CHECK(s.credits[k] == 0);
    }
    CHECK(std::isnan(r.totals[0].cliff_time_s));
    CHECK(r.totals[0].served_bytes == near(5 * 750 * MiB));
}

TEST_CASE("io1 at 48,000 IOPS: 16 KiB random reaches both 48,000 IOPS and 750 MiB/s (16 KiB per IOPS)") {
    // Demand: 256 / (0.5 ms + 16 KiB / 1,024 MiB/s) = 256 / 0.000515259 = 496,835 IOPS.
    // 48,000 x 16 KiB = 750 MiB/s: the two caps meet.
    Simulation sim = single(io1_spec(960, 48000));
    RunResult r = run1(sim, closed_loop(256, 16 * KiB), 3);
    for (std::size_t k = 0; k < 3; ++k) {
        CHECK(r.series[0].iops[k] == near(48000));
        CHECK(r.series[0].ebs_iops[k] == near(48000));
        CHECK(r.series[0].throughput_mib_s[k] == near(750));
        CHECK(iops_or_tput(r.series[0].bound[k]));
    }
}

TEST_CASE("io1 at 2,000 IOPS: 256 KiB random reaches 500 MiB/s at 2,000 IOPS") {
    // 40 GiB x 50 = 2,000 IOPS allowed. Demand: 64 / (0.5 ms + 256 KiB / 1,024 MiB/s)
    // = 64 / 0.000744140625 = 86,005 IOPS. 2,000 x 256 KiB = 500 MiB/s = the throughput cap.
    Simulation sim = single(io1_spec(40, 2000));
    RunResult r = run1(sim, closed_loop(64, 256 * KiB), 3);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 3; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(2000));
        CHECK(s.ebs_iops[k] == near(2000));
        CHECK(s.throughput_mib_s[k] == near(500));
        CHECK(iops_or_tput(s.bound[k]));
        CHECK(s.latency_s[k] == near(64.0 / 2000));  // 32 ms
    }
    SUBCASE("16 KiB random on the same volume: 2,000 IOPS = 31.25 MiB/s, IOPS-bound") {
        Simulation sim2 = single(io1_spec(40, 2000));
        RunResult r2 = run1(sim2, closed_loop(64, 16 * KiB), 2);
        CHECK(r2.series[0].iops[1] == near(2000));
        CHECK(r2.series[0].throughput_mib_s[1] == near(31.25));
        CHECK(r2.series[0].bound[1] == code(Bound::volume_iops));
    }
}

TEST_CASE("io1 at 32,000 IOPS caps at 500 MiB/s and at 64,000 IOPS at 1,000 MiB/s") {
    // 1 MiB sequential at QD 64 (43,344 MiB/s asked), 4 counted ops per MiB.
    SUBCASE("32,000 IOPS, 640 GiB: 500 MiB/s = 2,000 counted ops") {
        Simulation sim = single(io1_spec(640, 32000));
        RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
        CHECK(r.series[0].throughput_mib_s[2] == near(500));
        CHECK(r.series[0].ebs_iops[2] == near(2000));
        CHECK(r.series[0].bound[2] == code(Bound::volume_throughput));
    }
    SUBCASE("64,000 IOPS, 1,280 GiB: 1,000 MiB/s = 4,000 counted ops") {
        Simulation sim = single(io1_spec(1280, 64000));
        RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
        CHECK(r.series[0].throughput_mib_s[2] == near(1000));
        CHECK(r.series[0].ebs_iops[2] == near(4000));
        CHECK(r.series[0].bound[2] == code(Bound::volume_throughput));
    }
    SUBCASE("64,000 IOPS, 4 KiB random: 64,000 IOPS (250 MiB/s)") {
        // Demand: 256 / 0.000503815 = 508,125 IOPS.
        Simulation sim = single(io1_spec(1280, 64000));
        RunResult r = run1(sim, closed_loop(256, 4 * KiB), 3);
        CHECK(r.series[0].iops[2] == near(64000));
        CHECK(r.series[0].throughput_mib_s[2] == near(250));
        CHECK(r.series[0].bound[2] == code(Bound::volume_iops));
    }
}

TEST_CASE("io2 at 16,000 IOPS caps at 4,000 MiB/s, at 20,000 too") {
    // 1 MiB sequential at QD 64: io2 service time 0.25 ms + 1/1,024 s = 0.0012265625 s, so
    // 52,178 MiB/s asked. 4,000 MiB/s = 16,000 counted ops of 256 KiB.
    SUBCASE("16,000 IOPS: 4,000 MiB/s, the IOPS cap and the throughput cap meet") {
        Simulation sim = single(io2_spec(100, 16000));
        RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
        for (std::size_t k = 0; k < 3; ++k) {
            CHECK(r.series[0].throughput_mib_s[k] == near(4000));
            CHECK(r.series[0].iops[k] == near(4000));
            CHECK(r.series[0].ebs_iops[k] == near(16000));
            CHECK(iops_or_tput(r.series[0].bound[k]));
        }
    }
    SUBCASE("20,000 IOPS: 20,000 x 0.25 = 5,000 -> 4,000 MiB/s, throughput-bound") {
        Simulation sim = single(io2_spec(100, 20000));
        RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
        CHECK(r.series[0].throughput_mib_s[2] == near(4000));
        CHECK(r.series[0].ebs_iops[2] == near(16000));
        CHECK(r.series[0].bound[2] == code(Bound::volume_throughput));
    }
}

TEST_CASE("io2 at 10,000 IOPS: the 2,500 MiB/s cap is what 256 KiB counting lets through") {
    // Every I/O is counted in 256 KiB = 0.25 MiB units (sequential 1 MiB: 4 ops), so 10,000
    // counted ops carry at most 10,000 x 0.25 = 2,500 MiB/s, and the reported cap is exactly that
    // (AWS's 0.256 MiB/s per IOPS would give 2,560, which no I/O could reach: docs/model.md,
    // docs/ebs-model.md open question 13). Both limits meet; a tie reads as the IOPS limit.
    Simulation sim = single(io2_spec(10, 10000));
    RunResult r = run1(sim, closed_loop(64, MiB, Pattern::sequential), 3);
    CHECK(r.series[0].ebs_iops[2] == near(10000));
    CHECK(r.series[0].throughput_mib_s[2] == near(2500));
    CHECK(r.series[0].bound[2] == code(Bound::volume_iops));
    // 16 KiB random: 10,000 IOPS = 156.25 MiB/s.
    Simulation sim2 = single(io2_spec(10, 10000));
    RunResult r2 = run1(sim2, closed_loop(64, 16 * KiB), 3);
    CHECK(r2.series[0].iops[2] == near(10000));
    CHECK(r2.series[0].throughput_mib_s[2] == near(156.25));
}

TEST_CASE("io1 and io2 hold their caps indefinitely: no bucket, no cliff") {
    Simulation sim = single(io1_spec(100, 5000));
    RunResult r = run1(sim, closed_loop(64, 4 * KiB), 5000, false);
    CHECK(r.totals[0].served_counted == near(5000.0 * 5000));
    CHECK(std::isnan(r.totals[0].cliff_time_s));
    CHECK(r.totals[0].steps_bound[static_cast<int>(Bound::volume_iops)] == 5000);
    CHECK(burst_duration_s(sim.params(0), 1e6) == Inf);
}

TEST_CASE("io1/io2 IOPS per GiB ratio: io1 50, io2 1,000") {
    SUBCASE("io1 100 GiB: 5,000 accepted, 5,001 rejected") {
        CHECK(make_volume(io1_spec(100, 5000)).baseline_iops == 5000);
        std::string msg = volume_error(io1_spec(100, 5001));
        CHECK(contains(msg, "iops=5001"));
        CHECK(contains(msg, "io1"));
        CHECK(contains(msg, "50 IOPS per GiB"));
        CHECK(contains(msg, "size_gib=100"));
        CHECK(contains(msg, "5000"));  // what the size allows
    }
    SUBCASE("io2 10 GiB: 10,000 accepted, 10,001 rejected") {
        CHECK(make_volume(io2_spec(10, 10000)).baseline_iops == 10000);
        std::string msg = volume_error(io2_spec(10, 10001));
        CHECK(contains(msg, "iops=10001"));
        CHECK(contains(msg, "io2"));
        CHECK(contains(msg, "1000 IOPS per GiB"));
        CHECK(contains(msg, "size_gib=10"));
        CHECK(contains(msg, "10000"));
    }
    SUBCASE("io1 at 64,000 needs 1,280 GiB") {
        CHECK_NOTHROW(make_volume(io1_spec(1280, 64000)));
        CHECK(contains(volume_error(io1_spec(1279, 64000)), "iops=64000"));
    }
}

TEST_CASE("io1/io2 size and IOPS ranges") {
    SUBCASE("io1 size 4 to 16,384 GiB") {
        for (double size : {3.0, 0.0, -4.0, 16385.0}) {
            CAPTURE(size);
            std::string msg = volume_error(io1_spec(size, 100));
            CHECK(contains(msg, "size_gib="));
            CHECK(contains(msg, "16384"));
        }
        CHECK(contains(volume_error(io1_spec(3, 100)), "size_gib=3"));
    }
    SUBCASE("io2 size 4 to 65,536 GiB") {
        CHECK(contains(volume_error(io2_spec(3, 100)), "size_gib=3"));
        std::string msg = volume_error(io2_spec(65537, 1000));
        CHECK(contains(msg, "size_gib=65537"));
        CHECK(contains(msg, "65536"));
    }
    SUBCASE("io1 IOPS 100 to 64,000") {
        std::string lo = volume_error(io1_spec(100, 99));
        CHECK(contains(lo, "iops=99"));
        CHECK(contains(lo, "64000"));
        std::string hi = volume_error(io1_spec(16384, 64001));
        CHECK(contains(hi, "iops=64001"));
        CHECK(contains(hi, "64000"));
    }
    SUBCASE("io2 IOPS 100 to 256,000") {
        CHECK(contains(volume_error(io2_spec(100, 99)), "iops=99"));
        std::string hi = volume_error(io2_spec(65536, 256001));
        CHECK(contains(hi, "iops=256001"));
        CHECK(contains(hi, "256000"));
    }
    SUBCASE("whole numbers only") {
        CHECK(contains(volume_error(io1_spec(100, 1000.5)), "iops=1000.5"));
        CHECK(contains(volume_error(io2_spec(100.5, 1000)), "size_gib=100.5"));
    }
    SUBCASE("non-finite IOPS") {
        CHECK(contains(volume_error(io1_spec(100, Inf)), "iops"));
        CHECK(contains(volume_error(io2_spec(100, -Inf)), "iops"));
    }
}

TEST_CASE("io1/io2 need iops, and reject throughput and a burst balance") {
    SUBCASE("iops missing") {
        std::string m1 = volume_error(io1_spec(100, NaN));
        CHECK(contains(m1, "iops"));
        CHECK(contains(m1, "io1"));
        CHECK(contains(m1, "required"));
        std::string m2 = volume_error(io2_spec(100, NaN));
        CHECK(contains(m2, "iops"));
        CHECK(contains(m2, "io2"));
    }
    SUBCASE("throughput given") {
        VolumeSpec s = io1_spec(100, 2000);
        s.throughput_mib_s = 500;
        std::string msg = volume_error(s);
        CHECK(contains(msg, "throughput_mib_s=500"));
        CHECK(contains(msg, "io1"));
        VolumeSpec s2 = io2_spec(100, 2000);
        s2.throughput_mib_s = 512;
        CHECK(contains(volume_error(s2), "throughput_mib_s=512"));
    }
    SUBCASE("burst balance given") {
        VolumeSpec s = io1_spec(100, 2000);
        s.burst_balance_pct = 50;
        std::string msg = volume_error(s);
        CHECK(contains(msg, "burst_balance_pct=50"));
        VolumeSpec s2 = io2_spec(100, 2000);
        s2.burst_balance_pct = 100;
        CHECK(contains(volume_error(s2), "burst_balance_pct=100"));
    }
}

TEST_CASE("make_volume with nitro = false: io1/io2 at most 32,000 IOPS and 500 MiB/s") {
    SUBCASE("io1 64,000 -> 32,000 IOPS, 1,000 -> 500 MiB/s") {
        VolumeParams p = make_volume(io1_spec(1280, 64000), false);
        CHECK_FALSE(p.nitro);
        CHECK(p.baseline_iops == 32000);
        CHECK(p.burst_iops == 32000);
        CHECK(p.tput_burst_bytes_s == near(500 * MiB));
        CHECK(p.tput_base_bytes_s == near(500 * MiB));
    }
    SUBCASE("io2 10,000: IOPS kept, 2,500 -> 500 MiB/s") {
        VolumeParams p = make_volume(io2_spec(100, 10000), false);
        CHECK(p.baseline_iops == 10000);
        CHECK(p.tput_burst_bytes_s == near(500 * MiB));
    }
    SUBCASE("io2 64,000 is attachable and delivers 32,000") {
        VolumeParams p = make_volume(io2_spec(100, 64000), false);
        CHECK(p.baseline_iops == 32000);
        CHECK(p.tput_burst_bytes_s == near(500 * MiB));
    }
    SUBCASE("io2 above 64,000 is rejected") {
        std::string msg = volume_error(io2_spec(100, 64001), false);
        CHECK(contains(msg, "iops=64001"));
        CHECK(contains(msg, "Nitro"));
        CHECK_NOTHROW(make_volume(io2_spec(100, 64001), true));
    }
    SUBCASE("io1 at 20,000 is unchanged: 500 MiB/s either way") {
        VolumeParams p = make_volume(io1_spec(400, 20000), false);
        CHECK(p.baseline_iops == 20000);
        CHECK(p.tput_burst_bytes_s == near(500 * MiB));
    }
    SUBCASE("other types only carry the flag") {
        VolumeParams p = make_volume(gp3_spec(100, 16000, 1000), false);
        CHECK_FALSE(p.nitro);
        CHECK(p.baseline_iops == 16000);
        CHECK_FALSE(make_volume(st1_spec(1024), false).nitro);
        CHECK(make_volume(gp2_spec(100)).nitro);
    }
}

// ---------------------------------------------------------------------------------------------
// st1 / sc1
// ---------------------------------------------------------------------------------------------

TEST_CASE("st1 1 TiB: 40 MiB/s baseline, 250 MiB/s burst, 1 TiB of 1 MiB credits") {
    VolumeParams p = make_volume(st1_spec(1024));
    CHECK(p.type == VolumeType::st1);
    CHECK(p.io_unit_bytes == MiB);
    CHECK(p.baseline_iops == near(40));  // counted 1 MiB ops per second = MiB/s of credits
    CHECK(p.burst_iops == near(250));
    CHECK(p.credit_capacity == tib_credits);
    CHECK(p.initial_credits == tib_credits);  // starts full
    CHECK(p.tput_burst_bytes_s == near(250 * MiB));
    CHECK(p.tput_base_bytes_s == near(40 * MiB));
    // HDD service time: 5 ms + size / 250 MiB/s.
    CHECK(p.read_latency_s == near(0.005));
    CHECK(p.write_latency_s == near(0.005));
    CHECK(p.service_time_s(MiB, 0.5) == near(hdd_st_1m));
    // Closed forms: 1,048,576 / (250 - 40) = 4,993.219 s of burst; an empty bucket refills
    // at 40 MiB/s in 1,048,576 / 40 = 26,214.4 s.
    CHECK(burst_duration_s(p, 250) == near(tib_credits / 210));
    CHECK(burst_duration_s(p, 1000) == near(tib_credits / 210));  // demand above burst: burst rate
    CHECK(refill_time_s(p) == near(26214.4));
    CHECK(burst_duration_s(p, 40) == Inf);
}

TEST_CASE("st1 and sc1 rates scale per TiB up to their caps") {
    struct Row {
        VolumeType type;
        double size;
        double base, burst;  // MiB/s
    };
    const Row rows[] = {
        // st1: 40 / TiB (cap 500), 250 / TiB (cap 500).
        {VolumeType::st1, 125, 40.0 * 125 / 1024, 250.0 * 125 / 1024},  // 4.8828125, 30.517578125
        {VolumeType::st1, 512, 20, 125},
        {VolumeType::st1, 2048, 80, 500},  // burst cap reached at 2 TiB
        {VolumeType::st1, 4096, 160, 500},
        {VolumeType::st1, 12800, 500, 500},  // baseline cap reached at 12.5 TiB
        {VolumeType::st1, 16384, 500, 500},  // 640 -> 500
        // sc1: 12 / TiB (cap 192), 80 / TiB (cap 250).
        {VolumeType::sc1, 125, 12.0 * 125 / 1024, 80.0 * 125 / 1024},  // 1.46484375, 9.765625
        {VolumeType::sc1, 1024, 12, 80},
        {VolumeType::sc1, 3200, 37.5, 250},  // burst cap reached at 3.125 TiB
        {VolumeType::sc1, 16384, 192, 250},  // 192 at 16 TiB; 1,280 -> 250
    };
    for (const Row& row : rows) {
        CAPTURE(to_string(row.type));
        CAPTURE(row.size);
        VolumeParams p = make_volume(bucket_spec(row.type, row.size));
        CHECK(p.tput_base_bytes_s == near(row.base * MiB));
        CHECK(p.tput_burst_bytes_s == near(row.burst * MiB));
        // 1 MiB counting: the counted-op rates equal the MiB/s rates (max IOPS 500 / 250 never
        // binds below them).
        CHECK(p.baseline_iops == near(row.base));
        CHECK(p.burst_iops == near(row.burst));
        CHECK(p.credit_capacity == row.size * 1024);
        CHECK(p.io_unit_bytes == MiB);
    }
    // Where baseline == burst there is nothing to spend.
    CHECK(burst_duration_s(make_volume(st1_spec(12800)), 1000) == Inf);
}

TEST_CASE("st1 1 TiB, 1 MiB sequential: 250 MiB/s for 4,993.2 s, then 40 MiB/s") {
    // Demand: 32 / 0.009 s = 3,556 MiB/s. Caps while credits last: 250 counted ops (1 MiB each)
    // and 250 MiB/s; they meet. Credits: 1,048,576 - (250 - 40)(k + 1) at the end of step k,
    // so 46 are left after step 4,992 (210 x 4,993 = 1,048,530). Step 4,993 serves
    // 46 + 40 = 86 MiB; from step 4,994 on, 40 MiB/s.
    Simulation sim = single(st1_spec(1024));
    RunResult r = run1(sim, closed_loop(32, MiB, Pattern::sequential), 6000);
    const StepSeries& s = r.series[0];
    const VolumeTotals& t = r.totals[0];
    for (std::size_t k = 0; k < 4993; ++k) {
        CAPTURE(k);
        CHECK(s.throughput_mib_s[k] == near(250));
        CHECK(s.iops[k] == near(250));
        CHECK(s.ebs_iops[k] == near(250));
        CHECK(iops_or_tput(s.bound[k]));
        CHECK(s.credits[k] == near(tib_credits - 210.0 * static_cast<double>(k + 1), 1e-12, 1.0));
    }
    CHECK(s.credits[4992] == near(46, 1e-9));
    CHECK(s.throughput_mib_s[4993] == near(86, 1e-9));
    CHECK(s.credits[4993] == 0);
    for (std::size_t k = 4994; k < 6000; ++k) {
        CAPTURE(k);
        CHECK(s.throughput_mib_s[k] == near(40));
        CHECK(s.ebs_iops[k] == near(40));
        CHECK(s.credits[k] == 0);
        CHECK(s.latency_s[k] == near(32.0 / 40));
    }
    // BurstBalance = credits / 1,048,576 x 100. After 2,497 steps: 1,048,576 - 524,370 = 524,206,
    // 49.992 %.
    CHECK(s.credits[2496] / sim.params(0).credit_capacity * 100 == near(524206.0 / tib_credits * 100));
    // Cliff: 4,993 + 46 / 210 = 4,993.219 s, within one step of 1,048,576 / 210.
    CHECK(t.cliff_time_s == near(tib_credits / 210, 1e-9));
    CHECK(std::abs(t.cliff_time_s - 4993.2) <= 1.0);
    // Everything served: the full bucket plus 40 MiB/s earned over 6,000 s = 1,288,576 MiB.
    CHECK(t.served_bytes == near((tib_credits + 40.0 * 6000) * MiB));
    CHECK(t.served_counted == near(tib_credits + 40.0 * 6000));
    CHECK(t.credits_end == 0);
}

TEST_CASE("st1 1 TiB, 4 KiB random: each I/O costs a 1 MiB credit, 250 IOPS then 40 IOPS") {
    // Demand: 64 / 0.005015625 s = 12,760 IOPS. Each 4 KiB random I/O counts ceil(4 KiB / 1 MiB)
    // = 1 op: 250 IOPS while credits last (250 MiB/s of credits for 250 x 4 KiB = 0.9765625 MiB/s
    // of bytes), the same 4,993.2 s cliff, then 40 IOPS = 0.15625 MiB/s.
    Simulation sim = single(st1_spec(1024));
    RunResult r = run1(sim, closed_loop(64, 4 * KiB), 5500);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 4993; k += 7) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(250));
        CHECK(s.ebs_iops[k] == near(250));
        CHECK(s.throughput_mib_s[k] == near(0.9765625));
        CHECK(s.bound[k] == code(Bound::volume_iops));
        CHECK(s.credits[k] == near(tib_credits - 210.0 * static_cast<double>(k + 1), 1e-12, 1.0));
    }
    CHECK(s.iops[4993] == near(86, 1e-9));
    for (std::size_t k = 4994; k < 5500; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(40));
        CHECK(s.throughput_mib_s[k] == near(0.15625));
        CHECK(s.bound[k] == code(Bound::volume_iops));
    }
    CHECK(r.totals[0].cliff_time_s == near(tib_credits / 210, 1e-9));
}

TEST_CASE("HDD counting: 1 MiB units, sequential I/Os merge") {
    const double unit = MiB;
    CHECK(counted_ops_per_io(4 * KiB, unit, Pattern::random) == 1);
    CHECK(counted_ops_per_io(128 * KiB, unit, Pattern::random) == 1);
    CHECK(counted_ops_per_io(MiB, unit, Pattern::random) == 1);
    CHECK(counted_ops_per_io(1.5 * MiB, unit, Pattern::random) == 2);
    CHECK(counted_ops_per_io(2 * MiB, unit, Pattern::random) == 2);
    CHECK(counted_ops_per_io(128 * KiB, unit, Pattern::sequential) == 0.125);  // 8 of them: 1
    CHECK(8 * counted_ops_per_io(128 * KiB, unit, Pattern::sequential) == 1);
    CHECK(counted_ops_per_io(2 * MiB, unit, Pattern::sequential) == 2);
    // Under the 32 KiB merge floor an I/O counts one whole 1 MiB operation, sequential or not.
    CHECK(counted_ops_per_io(4 * KiB, unit, Pattern::sequential) == 1);
    CHECK(counted_ops_per_io(32 * KiB, unit, Pattern::sequential) == 1.0 / 32);
}

TEST_CASE("st1: 8 sequential 128 KiB I/Os count as one, 8 random ones as eight") {
    // st1 1 TiB at 50 %: 524,288 credits. One step with 8 I/Os = 1 MiB: limits do not bind.
    // Sequential: 1 counted op, credits 524,288 + 40 - 1 = 524,327.
    // Random: 8 counted ops, credits 524,288 + 40 - 8 = 524,320.
    const std::vector<double> ops{8};
    const std::vector<double> bytes{MiB};
    for (Pattern pat : {Pattern::sequential, Pattern::random}) {
        const bool seq = pat == Pattern::sequential;
        CAPTURE(seq);
        Simulation sim = single(st1_spec(1024, 50));
        CHECK(sim.credits(0) == 524288);
        RunResult r = run1(sim, open_loop(ops, bytes, pat), 1);
        CHECK(r.series[0].iops[0] == near(8));
        CHECK(r.series[0].throughput_mib_s[0] == near(1));
        CHECK(r.series[0].ebs_iops[0] == near(seq ? 1 : 8));
        CHECK(sim.credits(0) == near(seq ? 524327 : 524320));
        CHECK(r.series[0].bound[0] == code(Bound::demand));
    }
}

TEST_CASE("st1 1 TiB, 128 KiB at a deep queue: sequential reaches 250 MiB/s, random 31.25 MiB/s") {
    // Service time 0.005 + 128 KiB / 250 MiB/s = 0.0055 s; 64 in flight ask 11,636 I/Os/s.
    SUBCASE("sequential: 250 MiB/s = 2,000 I/Os = 250 counted ops") {
        Simulation sim = single(st1_spec(1024));
        RunResult r = run1(sim, closed_loop(64, 128 * KiB, Pattern::sequential), 3);
        CHECK(r.series[0].iops[2] == near(2000));
        CHECK(r.series[0].ebs_iops[2] == near(250));
        CHECK(r.series[0].throughput_mib_s[2] == near(250));
        CHECK(iops_or_tput(r.series[0].bound[2]));
        CHECK(sim.credits(0) == near(tib_credits - 3 * 210.0));
    }
    SUBCASE("random: 250 counted ops = 250 I/Os = 31.25 MiB/s, IOPS-bound") {
        Simulation sim = single(st1_spec(1024));
        RunResult r = run1(sim, closed_loop(64, 128 * KiB), 3);
        CHECK(r.series[0].iops[2] == near(250));
        CHECK(r.series[0].ebs_iops[2] == near(250));
        CHECK(r.series[0].throughput_mib_s[2] == near(31.25));
        CHECK(r.series[0].bound[2] == code(Bound::volume_iops));
        CHECK(sim.credits(0) == near(tib_credits - 3 * 210.0));  // the same credits for 1/8 the bytes
    }
}

TEST_CASE("st1 4 TiB: 500 MiB/s burst, 4 KiB random at 500 IOPS (the max IOPS)") {
    // burst min(500, 250 x 4) = 500 MiB/s; max 500 IOPS; baseline 160.
    Simulation sim = single(st1_spec(4096));
    RunResult r = run1(sim, closed_loop(64, 4 * KiB), 3);
    CHECK(r.series[0].iops[2] == near(500));
    CHECK(sim.credits(0) == near(4096.0 * 1024 - 3 * 340.0));  // spends 500 - 160
}

TEST_CASE("sc1 1 TiB from 1 %: 80 MiB/s for 154.2 s, then 12 MiB/s") {
    // 1 % of 1,048,576 = 10,485.76 credits, spent at 80 - 12 = 68 per second:
    // 10,485.76 / 68 = 154.202 s. After step 153: 10,485.76 - 68 x 154 = 13.76 left; step 154
    // serves 13.76 + 12 = 25.76 MiB; then 12 MiB/s.
    Simulation sim = single(sc1_spec(1024, 1));
    CHECK(sim.credits(0) == near(10485.76));
    RunResult r = run1(sim, closed_loop(32, MiB, Pattern::sequential), 200);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 154; ++k) {
        CAPTURE(k);
        CHECK(s.throughput_mib_s[k] == near(80));
        CHECK(s.credits[k] == near(10485.76 - 68.0 * static_cast<double>(k + 1), 1e-9, 1.0));
    }
    CHECK(s.throughput_mib_s[154] == near(25.76, 1e-9));
    for (std::size_t k = 155; k < 200; ++k) CHECK(s.throughput_mib_s[k] == near(12));
    CHECK(r.totals[0].cliff_time_s == near(10485.76 / 68, 1e-9));
    CHECK(r.totals[0].served_bytes == near((10485.76 + 12.0 * 200) * MiB, 1e-9));
}

TEST_CASE("sc1 16 TiB: 250 MiB/s burst, 192 MiB/s baseline, 250 IOPS max") {
    SUBCASE("full bucket, 1 MiB sequential: 250 MiB/s, spending 58 per second") {
        Simulation sim = single(sc1_spec(16384));
        RunResult r = run1(sim, closed_loop(32, MiB, Pattern::sequential), 10);
        CHECK(r.series[0].throughput_mib_s[9] == near(250));
        CHECK(sim.credits(0) == near(16384.0 * 1024 - 10 * 58.0));
    }
    SUBCASE("empty bucket: 192 MiB/s") {
        Simulation sim = single(sc1_spec(16384, 0));
        RunResult r = run1(sim, closed_loop(32, MiB, Pattern::sequential), 10);
        for (std::size_t k = 0; k < 10; ++k) CHECK(r.series[0].throughput_mib_s[k] == near(192));
        CHECK(sim.credits(0) == 0);
    }
    SUBCASE("4 KiB random: 250 IOPS") {
        Simulation sim = single(sc1_spec(16384));
        RunResult r = run1(sim, closed_loop(64, 4 * KiB), 3);
        CHECK(r.series[0].iops[2] == near(250));
        CHECK(r.series[0].bound[2] == code(Bound::volume_iops));
    }
}

TEST_CASE("st1 refills at its baseline while idle") {
    // Empty 1 TiB st1 earns 40 MiB of credits per second: 40,000 after 1,000 s, full after
    // 26,214.4 s (BurstBalance 100 %).
    Simulation sim = single(st1_spec(1024, 0));
    run1(sim, Idle{}, 1000);
    CHECK(sim.credits(0) == near(40000));
    run1(sim, Idle{}, 26000, false);
    CHECK(sim.credits(0) == tib_credits);
}

TEST_CASE("st1/sc1 configuration errors") {
    SUBCASE("sizes 125 to 16,384 GiB") {
        for (double size : {124.0, 100.0, 1.0, 0.0, 16385.0}) {
            CAPTURE(size);
            for (VolumeType t : {VolumeType::st1, VolumeType::sc1}) {
                std::string msg = volume_error(bucket_spec(t, size));
                CHECK(contains(msg, "size_gib="));
                CHECK(contains(msg, "125"));
                CHECK(contains(msg, "16384"));
            }
        }
        CHECK(contains(volume_error(st1_spec(124)), "size_gib=124"));
        CHECK(contains(volume_error(sc1_spec(16385)), "size_gib=16385"));
        CHECK(contains(volume_error(st1_spec(125.5)), "size_gib=125.5"));
        CHECK_NOTHROW(make_volume(st1_spec(125)));
        CHECK_NOTHROW(make_volume(sc1_spec(16384)));
    }
    SUBCASE("iops and throughput are not accepted") {
        for (VolumeType t : {VolumeType::st1, VolumeType::sc1}) {
            CAPTURE(to_string(t));
            VolumeSpec s = bucket_spec(t, 1024);
            s.iops = 500;
            std::string msg = volume_error(s);
            CHECK(contains(msg, "iops=500"));
            CHECK(contains(msg, std::string(to_string(t))));
            VolumeSpec s2 = bucket_spec(t, 1024);
            s2.throughput_mib_s = 250;
            CHECK(contains(volume_error(s2), "throughput_mib_s=250"));
        }
    }
    SUBCASE("burst balance 0 to 100") {
        CHECK(contains(volume_error(st1_spec(1024, 101)), "burst_balance_pct=101"));
        CHECK(contains(volume_error(sc1_spec(1024, -1)), "burst_balance_pct=-1"));
        CHECK(make_volume(sc1_spec(1024, 25)).initial_credits == near(tib_credits / 4));
    }
}

// ---------------------------------------------------------------------------------------------
// standard (magnetic)
// ---------------------------------------------------------------------------------------------

TEST_CASE("standard: 100 IOPS baseline, 200 burst, 360,000 credits, 40 / 90 MiB/s, 1 MiB units") {
    VolumeParams p = make_volume(standard_spec(500));
    CHECK(p.type == VolumeType::standard);
    CHECK(p.baseline_iops == 100);
    CHECK(p.burst_iops == 200);
    CHECK(p.credit_capacity == 360000);
    CHECK(p.initial_credits == 360000);
    CHECK(p.tput_burst_bytes_s == near(90 * MiB));
    CHECK(p.tput_base_bytes_s == near(40 * MiB));
    CHECK(p.io_unit_bytes == MiB);
    // 360,000 / (200 - 100) = 3,600 s of burst; an empty bucket refills in 3,600 s at idle.
    CHECK(burst_duration_s(p, 200) == near(3600));
    CHECK(refill_time_s(p) == near(3600));
    CHECK(make_volume(standard_spec(1000, 50)).initial_credits == 180000);
}

TEST_CASE("standard: 4 KiB random bursts at 200 IOPS for 3,600 s, then 100 IOPS") {
    // Demand: 32 / 0.005015625 = 6,380 IOPS. Credits: 360,000 - 100 (k + 1) -> 0 at the end of
    // step 3,599 exactly; then 100 IOPS (0.390625 MiB/s).
    Simulation sim = single(standard_spec(100));
    RunResult r = run1(sim, closed_loop(32, 4 * KiB), 4000);
    const StepSeries& s = r.series[0];
    for (std::size_t k = 0; k < 3600; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(200));
        CHECK(s.ebs_iops[k] == near(200));
        CHECK(s.throughput_mib_s[k] == near(0.78125));  // 200 x 4 KiB
        CHECK(s.credits[k] == near(360000 - 100.0 * static_cast<double>(k + 1), 1e-12, 1.0));
        CHECK(s.bound[k] == code(Bound::volume_iops));
    }
    for (std::size_t k = 3600; k < 4000; ++k) {
        CAPTURE(k);
        CHECK(s.iops[k] == near(100));
        CHECK(s.credits[k] == 0);
        CHECK(s.latency_s[k] == near(32.0 / 100));
    }
    CHECK(r.totals[0].cliff_time_s == near(3600));
    CHECK(r.totals[0].served_counted == near(360000 + 100.0 * 4000));
}

TEST_CASE("standard: 1 MiB sequential is held at 90 MiB/s, which spends no credits") {
    // 90 MiB/s = 90 counted 1 MiB ops per second, below the 100 earned: the bucket stays full.
    Simulation sim = single(standard_spec(100));
    RunResult r = run1(sim, closed_loop(32, MiB, Pattern::sequential), 100);
    for (std::size_t k = 0; k < 100; ++k) {
        CHECK(r.series[0].throughput_mib_s[k] == near(90));
        CHECK(r.series[0].bound[k] == code(Bound::volume_throughput));
    }
    CHECK(sim.credits(0) == 360000);
    SUBCASE("from an empty bucket: 40 MiB/s in the first step, then credits are back and 90") {
        // Step 0: no credits, 40 MiB/s cap: credits 0 + 100 - 40 = 60. Step 1: credits remain,
        // 90 MiB/s: 60 + 100 - 90 = 70; then +10 per step.
        Simulation sim0 = single(standard_spec(100, 0));
        RunResult r0 = run1(sim0, closed_loop(32, MiB, Pattern::sequential), 5);
        CHECK(r0.series[0].throughput_mib_s[0] == near(40));
        CHECK(r0.series[0].credits[0] == near(60));
        for (std::size_t k = 1; k < 5; ++k) CHECK(r0.series[0].throughput_mib_s[k] == near(90));
        CHECK(sim0.credits(0) == near(60 + 4 * 10.0));
    }
}

TEST_CASE("standard configuration errors") {
    CHECK_NOTHROW(make_volume(standard_spec(1)));
    CHECK_NOTHROW(make_volume(standard_spec(1024)));
    std::string big = volume_error(standard_spec(1025));
    CHECK(contains(big, "size_gib=1025"));
    CHECK(contains(big, "1024"));
    CHECK(contains(volume_error(standard_spec(0)), "size_gib=0"));
    VolumeSpec s = standard_spec(100);
    s.iops = 200;
    CHECK(contains(volume_error(s), "iops=200"));
    VolumeSpec s2 = standard_spec(100);
    s2.throughput_mib_s = 90;
    CHECK(contains(volume_error(s2), "throughput_mib_s=90"));
    CHECK(contains(volume_error(standard_spec(100, 100.5)), "burst_balance_pct=100.5"));
}

TEST_CASE("every type in one simulation without an instance: each as alone") {
    const std::vector<VolumeSpec> specs{gp2_spec(100),  gp3_spec(100),  io1_spec(100, 5000), io2_spec(100, 20000),
                                        st1_spec(1024), sc1_spec(1024), standard_spec(100)};
    // 4 KiB random at a deep queue: 3,000 / 3,000 / 5,000 / 20,000 / 250 / 80 / 200 IOPS.
    const double expect[] = {3000, 3000, 5000, 20000, 250, 80, 200};
    Simulation sim(specs);
    std::vector<Workload> ws(specs.size(), Workload{closed_loop(256, 4 * KiB)});
    RunResult r = sim.run(ws, 3);
    CHECK_FALSE(r.has_instance);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        CAPTURE(i);
        CHECK(r.series[i].iops[2] == near(expect[i]));
        Simulation alone = single(specs[i]);
        RunResult ra = run1(alone, closed_loop(256, 4 * KiB), 3);
        CHECK(same_series(r.series[i].iops, ra.series[0].iops));
        CHECK(same_series(r.series[i].credits, ra.series[0].credits));
    }
}
