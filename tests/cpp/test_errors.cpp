// Invalid input is rejected with ConfigError, and the message names the field (and the value).

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

VolumeSpec gp2_with(double size_gib) { return gp2_spec(size_gib); }
VolumeSpec gp3_with(double size_gib) { return gp3_spec(size_gib); }

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// Message of make_volume(spec), or "<no ConfigError>".
std::string volume_error(const VolumeSpec& spec) {
    return config_error_message([&] { make_volume(spec); });
}

/// Message of a one-volume run of `w` for n_steps, or "<no ConfigError>".
std::string run_error(const Workload& w, std::int64_t n_steps) {
    Simulation sim = single(gp3_spec(100));
    return config_error_message([&] { run1(sim, w, n_steps); });
}

}  // namespace

TEST_CASE("ConfigError is an invalid_argument") {
    CHECK_THROWS_AS(make_volume(gp2_with(0)), std::invalid_argument);
    CHECK_THROWS_WITH_AS(make_volume(gp2_with(0)), doctest::Contains("size_gib"), ConfigError);
}

TEST_CASE("volume size out of range") {
    SUBCASE("gp2") {
        for (double size : {0.0, 0.5, -1.0, -100.0, 16385.0, 1e9}) {
            CAPTURE(size);
            std::string msg = volume_error(gp2_with(size));
            CHECK(contains(msg, "size_gib"));
            CHECK(contains(msg, "16384"));  // the rule: 1 to 16,384 GiB
        }
        CHECK(contains(volume_error(gp2_with(0)), "size_gib=0"));
        CHECK(contains(volume_error(gp2_with(-5)), "size_gib=-5"));
        CHECK(contains(volume_error(gp2_with(16385)), "size_gib=16385"));
    }
    SUBCASE("gp3") {
        for (double size : {0.0, -1.0, 65537.0}) {
            CAPTURE(size);
            std::string msg = volume_error(gp3_with(size));
            CHECK(contains(msg, "size_gib"));
            CHECK(contains(msg, "65536"));
        }
        // 16,385 GiB is fine for gp3 (64 TiB since 2025-09).
        CHECK(make_volume(gp3_with(16385)).size_gib == 16385);
    }
    SUBCASE("NaN and infinite sizes (NaN is also the default: the size is required)") {
        CHECK_THROWS_WITH_AS(make_volume(gp2_with(NaN)), doctest::Contains("size_gib"), ConfigError);
        CHECK_THROWS_WITH_AS(make_volume(gp3_with(NaN)), doctest::Contains("size_gib"), ConfigError);
        CHECK_THROWS_WITH_AS(make_volume(gp2_with(Inf)), doctest::Contains("size_gib"), ConfigError);
        CHECK_THROWS_WITH_AS(make_volume(gp3_with(-Inf)), doctest::Contains("size_gib"), ConfigError);
        CHECK_THROWS_WITH_AS(make_volume(VolumeSpec{}), doctest::Contains("size_gib"), ConfigError);
    }
}

TEST_CASE("gp2 rejects provisioned IOPS and throughput") {
    VolumeSpec s = gp2_spec(100);
    s.iops = 3000;
    std::string msg = volume_error(s);
    CHECK(contains(msg, "iops=3000"));
    CHECK(contains(msg, "gp2"));

    VolumeSpec t = gp2_spec(100);
    t.throughput_mib_s = 250;
    CHECK(contains(volume_error(t), "throughput_mib_s=250"));
}

TEST_CASE("gp2 burst_balance_pct must be 0..100") {
    for (double pct : {-1.0, 100.5, 1000.0, Inf, -Inf}) {
        CAPTURE(pct);
        CHECK(contains(volume_error(gp2_spec(100, pct)), "burst_balance_pct"));
    }
    CHECK(make_volume(gp2_spec(100, 0)).initial_credits == 0);
    CHECK(make_volume(gp2_spec(100, 100)).initial_credits == 5.4e6);
}

TEST_CASE("gp3 rejects a burst balance") {
    VolumeSpec s = gp3_spec(100);
    s.burst_balance_pct = 100;
    CHECK(contains(volume_error(s), "burst_balance_pct"));
}

TEST_CASE("gp3 IOPS: 3,000 to 80,000 and at most 500 per GiB") {
    SUBCASE("out of range") {
        for (double iops : {2999.0, 0.0, -3000.0, 80001.0, 1e6}) {
            CAPTURE(iops);
            std::string msg = volume_error(gp3_spec(1000, iops));
            CHECK(contains(msg, "iops"));
            CHECK(contains(msg, "80000"));
        }
        CHECK(contains(volume_error(gp3_spec(1000, 2999)), "iops=2999"));
    }
    SUBCASE("not finite") {
        CHECK(contains(volume_error(gp3_spec(100, Inf)), "iops"));
        CHECK(contains(volume_error(gp3_spec(100, -Inf)), "iops"));
    }
    SUBCASE("above 500 IOPS per GiB") {
        // 10 GiB allows 500 x 10 = 5,000 IOPS; 5,001 is too many.
        CHECK(make_volume(gp3_spec(10, 5000)).baseline_iops == 5000);
        std::string msg = volume_error(gp3_spec(10, 5001));
        CHECK(contains(msg, "iops=5001"));
        CHECK(contains(msg, "size_gib=10"));
        CHECK(contains(msg, "500"));
        // 159 GiB allows 79,500: 80,000 needs 160 GiB.
        CHECK(contains(volume_error(gp3_spec(159, 80000)), "iops=80000"));
        // 6 GiB allows 3,000 (500 x 6), so 3,001 is rejected although it is in range.
        CHECK(contains(volume_error(gp3_spec(6, 3001)), "iops=3001"));
    }
}

TEST_CASE("gp3 throughput: 125 to 2,000 MiB/s and at most 0.25 MiB/s per IOPS") {
    SUBCASE("out of range") {
        for (double tput : {124.0, 0.0, -1.0, 2001.0}) {
            CAPTURE(tput);
            std::string msg = volume_error(gp3_spec(1000, 16000, tput));
            CHECK(contains(msg, "throughput_mib_s"));
            CHECK(contains(msg, "2000"));
        }
        CHECK(contains(volume_error(gp3_spec(1000, 16000, Inf)), "throughput_mib_s"));
    }
    SUBCASE("above 0.25 MiB/s per IOPS") {
        // The default 3,000 IOPS allow 750 MiB/s.
        std::string msg = volume_error(gp3_spec(100, unset, 751));
        CHECK(contains(msg, "throughput_mib_s=751"));
        CHECK(contains(msg, "iops=3000"));
        CHECK(contains(msg, "0.25"));
        // 4,000 IOPS allow 1,000 MiB/s; 1,001 is rejected.
        CHECK(make_volume(gp3_spec(100, 4000, 1000)).tput_base_bytes_s == 1000 * MiB);
        CHECK(contains(volume_error(gp3_spec(100, 4000, 1001)), "throughput_mib_s=1001"));
        // 2,000 MiB/s needs 8,000 IOPS.
        CHECK(contains(volume_error(gp3_spec(100, 7999, 2000)), "throughput_mib_s=2000"));
    }
}

TEST_CASE("service-time model parameters must be positive and finite") {
    VolumeSpec s = gp3_spec(100);
    s.latency_ms = 0;
    CHECK(contains(volume_error(s), "latency_ms"));
    s.latency_ms = -1;
    CHECK(contains(volume_error(s), "latency_ms"));
    s.latency_ms = Inf;
    CHECK(contains(volume_error(s), "latency_ms"));
    VolumeSpec t = gp2_spec(100);
    t.transfer_mib_s = 0;
    CHECK(contains(volume_error(t), "transfer_mib_s"));
    t.transfer_mib_s = -Inf;
    CHECK(contains(volume_error(t), "transfer_mib_s"));
}

TEST_CASE("service times are at most max_service_time_s = 10 s") {
    // latency_ms up to 10,000 ms; a 1 MiB transfer in at most 10 s: transfer_mib_s >= 0.1.
    VolumeSpec s = gp3_spec(100);
    s.latency_ms = 10000;
    CHECK(volume_error(s) == "<no ConfigError>");
    for (double ms : {10000.001, 1e300}) {
        CAPTURE(ms);
        s.latency_ms = ms;
        const std::string msg = volume_error(s);
        CHECK(contains(msg, "latency_ms="));
        CHECK(contains(msg, "at most 10000 ms"));
    }
    VolumeSpec t = gp2_spec(100);
    t.transfer_mib_s = 0.1;
    CHECK(volume_error(t) == "<no ConfigError>");
    t.transfer_mib_s = 0.09;
    CHECK(contains(volume_error(t), "transfer_mib_s=0.09 must be at least 0.1 MiB/s"));
    ClosedLoop w = closed_loop(8, 4096);
    w.service_time_s = 10;
    CHECK(run_error(w, 1) == "<no ConfigError>");
    for (double st : {10.5, 1e300}) {
        CAPTURE(st);
        w.service_time_s = st;
        CHECK(contains(run_error(w, 1), "at most max_service_time_s=10 s"));
    }
    const std::vector<double> ops = {1};
    const std::vector<double> bytes = {4096};
    OpenLoop o = open_loop(ops, bytes);
    o.service_time_s = 11;
    CHECK(contains(run_error(o, 1), "service_time_s=11"));
}

TEST_CASE("an I/O moves at least one byte (a mean size may be fractional)") {
    for (double b : {0.5, 0.999, 1e-300}) {
        CAPTURE(b);
        CHECK(contains(run_error(closed_loop(4, b), 1), "must be at least 1 byte"));
        PhasedClosedLoop ph;
        ph.loop = closed_loop(4, b);
        const std::vector<double> users = {4};
        const std::vector<double> think = {0};
        ph.in_flight = users;
        ph.think_time_s = think;
        CHECK(contains(run_error(ph, 1), "io_bytes="));
    }
    CHECK(run_error(closed_loop(4, 1), 1) == "<no ConfigError>");
    CHECK(run_error(closed_loop(4, 1.5), 1) == "<no ConfigError>");
}

TEST_CASE("unknown volume type name") {
    CHECK_THROWS_AS(parse_volume_type("gp4"), ConfigError);
    CHECK_THROWS_AS(parse_volume_type(""), ConfigError);
    CHECK_THROWS_AS(parse_volume_type("GP2"), ConfigError);
}

TEST_CASE("simulation step dt must be a positive finite number") {
    const std::vector<VolumeSpec> specs = {gp2_spec(100)};
    for (double dt : {0.0, -1.0, NaN, Inf, -Inf}) {
        CAPTURE(dt);
        std::string msg = config_error_message([&] { Simulation sim(specs, dt); });
        CHECK(contains(msg, "dt_s"));
    }
}

TEST_CASE("a simulation needs at least one volume, all valid, and the bad one is named") {
    CHECK_THROWS_WITH_AS(Simulation(std::vector<VolumeSpec>{}), doctest::Contains("volumes"), ConfigError);
    // One volume: the volume's own message.
    CHECK_THROWS_WITH_AS(Simulation(std::vector<VolumeSpec>{gp2_spec(0)}), doctest::Contains("size_gib=0"),
                         ConfigError);
    // Several: the index comes first.
    const std::vector<VolumeSpec> specs = {gp2_spec(100), gp3_spec(10, 6000)};
    std::string msg = config_error_message([&] { Simulation sim(specs); });
    CHECK(contains(msg, "volume 1"));
    CHECK(contains(msg, "iops=6000"));
}

TEST_CASE("open-loop demand must be finite and non-negative") {
    const std::vector<double> good = {1, 1, 1};
    const std::vector<double> good_bytes = {4096, 4096, 4096};
    SUBCASE("ops") {
        for (double bad : {-1.0, NaN, Inf, -Inf}) {
            CAPTURE(bad);
            const std::vector<double> ops = {1, bad, 1};
            std::string msg = run_error(open_loop(ops, good_bytes), 3);
            CHECK(contains(msg, "ops[1]"));
        }
    }
    SUBCASE("bytes") {
        for (double bad : {-4096.0, NaN, Inf}) {
            CAPTURE(bad);
            const std::vector<double> bytes = {4096, 4096, bad};
            std::string msg = run_error(open_loop(good, bytes), 3);
            CHECK(contains(msg, "bytes[2]"));
        }
    }
    SUBCASE("above max_demand_per_step (1e15), so that sums stay finite") {
        const std::vector<double> ops = {1, 2e15, 1};
        CHECK(contains(run_error(open_loop(ops, good_bytes), 3), "ops[1]"));
        const std::vector<double> bytes = {4096, 4096, 1e16};
        CHECK(contains(run_error(open_loop(good, bytes), 3), "bytes[2]"));
        const std::vector<double> at_limit = {1, max_demand_per_step, 1};
        CHECK(run_error(open_loop(good, at_limit), 3) == "<no ConfigError>");
    }
    SUBCASE("bytes without any I/O") {
        const std::vector<double> ops = {1, 0, 1};
        std::string msg = run_error(open_loop(ops, good_bytes), 3);
        CHECK(contains(msg, "bytes[1]"));
        CHECK(contains(msg, "ops[1]=0"));
    }
    SUBCASE("zero demand is fine") {
        const std::vector<double> zeros = {0, 0, 0};
        CHECK(run_error(open_loop(zeros, zeros), 3) == "<no ConfigError>");
    }
}

TEST_CASE("open-loop array lengths") {
    const std::vector<double> three = {1, 1, 1};
    const std::vector<double> two = {4096, 4096};
    const std::vector<double> three_bytes = {4096, 4096, 4096};
    SUBCASE("ops and bytes differ") {
        std::string msg = run_error(open_loop(three, two), 3);
        CHECK(contains(msg, "ops"));
        CHECK(contains(msg, "bytes"));
        CHECK(contains(msg, "3"));
        CHECK(contains(msg, "2"));
    }
    SUBCASE("ops length != n_steps") {
        std::string msg = run_error(open_loop(three, three_bytes), 4);
        CHECK(contains(msg, "ops"));
        CHECK(contains(msg, "n_steps=4"));
        CHECK(contains(run_error(open_loop(three, three_bytes), 2), "n_steps=2"));
    }
}

TEST_CASE("closed-loop parameters") {
    SUBCASE("in_flight must be > 0") {
        for (double n : {0.0, -1.0, NaN, Inf}) {
            CAPTURE(n);
            CHECK(contains(run_error(closed_loop(n, 4096), 1), "in_flight"));
        }
    }
    SUBCASE("io_bytes must be > 0 and at most 1 GiB") {
        for (double b : {0.0, -4096.0, NaN, 2.0 * 1024 * MiB}) {
            CAPTURE(b);
            CHECK(contains(run_error(closed_loop(8, b), 1), "io_bytes"));
        }
    }
    SUBCASE("read_fraction must be in 0..1") {
        for (double rf : {-0.1, 1.1, NaN}) {
            CAPTURE(rf);
            ClosedLoop w = closed_loop(8, 4096);
            w.read_fraction = rf;
            CHECK(contains(run_error(w, 1), "read_fraction"));
        }
    }
    SUBCASE("service_time_s, when given, must be > 0") {
        for (double st : {0.0, -0.001, Inf}) {
            CAPTURE(st);
            ClosedLoop w = closed_loop(8, 4096);
            w.service_time_s = st;
            CHECK(contains(run_error(w, 1), "service_time_s"));
        }
    }
}

TEST_CASE("open-loop read_fraction and service_time_s") {
    const std::vector<double> ops = {1};
    const std::vector<double> bytes = {4096};
    OpenLoop w = open_loop(ops, bytes);
    w.read_fraction = 2;
    CHECK(contains(run_error(w, 1), "read_fraction"));
    OpenLoop v = open_loop(ops, bytes);
    v.service_time_s = -1;
    CHECK(contains(run_error(v, 1), "service_time_s"));
}

TEST_CASE("run: one workload per volume, n_steps >= 0") {
    const std::vector<VolumeSpec> specs = {gp2_spec(100), gp3_spec(100)};
    Simulation sim(specs);
    SUBCASE("too few workloads") {
        std::string msg = config_error_message([&] { sim.run({Idle{}}, 1); });
        CHECK(contains(msg, "workloads"));
        CHECK(contains(msg, "1"));
        CHECK(contains(msg, "2"));
    }
    SUBCASE("too many workloads") {
        CHECK(contains(config_error_message([&] { sim.run({Idle{}, Idle{}, Idle{}}, 1); }), "workloads"));
    }
    SUBCASE("negative n_steps") {
        CHECK(contains(config_error_message([&] { sim.run({Idle{}, Idle{}}, -1); }), "n_steps=-1"));
    }
    SUBCASE("too many recorded steps") {
        // 2 volumes x 49 bytes = 98 per step; 2^32 / 98 = 43,826,196.9 steps fit in 4 GiB.
        std::string msg = config_error_message([&] { sim.run({Idle{}, Idle{}}, 43'826'197, true); });
        CHECK(contains(msg, "n_steps=43826197"));
        CHECK(contains(msg, "max_memory_bytes"));
    }
    SUBCASE("the bad workload is named by index") {
        std::string msg = config_error_message([&] { sim.run({Idle{}, closed_loop(0, 4096)}, 1); });
        CHECK(contains(msg, "workload 1"));
        CHECK(contains(msg, "in_flight"));
    }
}

TEST_CASE("a rejected run leaves the simulation untouched") {
    Simulation sim = single(gp2_spec(100));
    run1(sim, closed_loop(32, 4096), 10);
    const double credits = sim.credits(0);
    const std::vector<double> ops = {1, 2};
    const std::vector<double> bytes = {4096, -1};
    CHECK_THROWS_AS(run1(sim, open_loop(ops, bytes), 2), ConfigError);
    CHECK_THROWS_AS(run1(sim, closed_loop(-1, 4096), 5), ConfigError);
    CHECK(sim.credits(0) == credits);
    CHECK(sim.time_s() == 10);
    // 5.4e6 - 10 x 2,700
    CHECK(credits == 5.4e6 - 27000);
}

TEST_CASE("burst closed forms reject bad arguments") {
    VolumeParams p = make_volume(gp2_spec(100));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, -1); }), "counted_iops"));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, NaN); }), "counted_iops"));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, Inf); }), "counted_iops"));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, 3000, -1); }), "credits"));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, 3000, 5.4e6 + 1); }), "credits"));
    CHECK(contains(config_error_message([&] { burst_duration_s(p, 3000, Inf); }), "credits"));
    CHECK(contains(config_error_message([&] { refill_time_s(p, -5); }), "counted_iops"));
    CHECK(contains(config_error_message([&] { refill_time_s(p, 0, 6e6); }), "credits"));
}
