#include <doctest/doctest.h>

#include <cmath>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

TEST_CASE("gp2 baseline is 3 IOPS per GiB between 100 and 16,000") {
    CHECK(gp2::baseline_iops(1) == 100);
    CHECK(gp2::baseline_iops(33) == 100);
    CHECK(gp2::baseline_iops(100) == 300);
    CHECK(gp2::baseline_iops(5334) == 16000);
    CHECK(gp2::baseline_iops(16384) == 16000);
}

TEST_CASE("gp2 baseline: the 100 and 16,000 IOPS corners") {
    // 33.33 GiB x 3 = 99.99 -> clamped to 100; 34 x 3 = 102 is above the floor.
    CHECK(gp2::baseline_iops(33.33) == 100);
    CHECK(gp2::baseline_iops(34) == 102);
    // 250 x 3 = 750; 334 x 3 = 1,002; 1,000 x 3 = 3,000 (= the burst ceiling).
    CHECK(gp2::baseline_iops(250) == 750);
    CHECK(gp2::baseline_iops(334) == 1002);
    CHECK(gp2::baseline_iops(1000) == 3000);
    // 5,333 x 3 = 15,999 is still below the cap; 5,334 x 3 = 16,002 is clamped.
    CHECK(gp2::baseline_iops(5333) == 15999);
}

TEST_CASE("gp2 throughput tier: 128 MiB/s up to 170 GiB, 250 MiB/s above") {
    CHECK(gp2::throughput_tier_mib_s(1) == 128);
    CHECK(gp2::throughput_tier_mib_s(170) == 128);
    CHECK(gp2::throughput_tier_mib_s(171) == 250);
    CHECK(gp2::throughput_tier_mib_s(334) == 250);
    CHECK(gp2::throughput_tier_mib_s(16384) == 250);
}

TEST_CASE("gp2 100 GiB: limits derived from the AWS rules") {
    VolumeParams p = make_volume(gp2_spec(100));
    CHECK(p.type == VolumeType::gp2);
    CHECK(p.size_gib == 100);
    CHECK(p.io_unit_bytes == 256 * KiB);
    CHECK(p.baseline_iops == 300);  // 3 x 100
    CHECK(p.burst_iops == 3000);    // below 1 TiB: bursts to 3,000
    CHECK(p.credit_capacity == 5.4e6);
    CHECK(p.initial_credits == 5.4e6);  // starts full
    CHECK(p.has_bucket());
    // With credits: min(128, 3,000 x 0.25 = 750) = 128 MiB/s.
    CHECK(p.tput_burst_bytes_s == 128 * MiB);
    // Without: min(128, 300 x 0.25 = 75) = 75 MiB/s (AWS's own example: 100 GiB -> 75 MiB/s).
    CHECK(p.tput_base_bytes_s == 75 * MiB);
}

TEST_CASE("gp2 throughput caps with and without credits, by size") {
    SUBCASE("1 GiB: 128 with credits, 100 IOPS x 0.25 = 25 MiB/s without") {
        VolumeParams p = make_volume(gp2_spec(1));
        CHECK(p.tput_burst_bytes_s == 128 * MiB);
        CHECK(p.tput_base_bytes_s == 25 * MiB);
    }
    SUBCASE("170 GiB: last size on the 128 tier; 510 x 0.25 = 127.5 MiB/s without credits") {
        VolumeParams p = make_volume(gp2_spec(170));
        CHECK(p.tput_burst_bytes_s == 128 * MiB);
        CHECK(p.tput_base_bytes_s == 127.5 * MiB);
    }
    SUBCASE("250 GiB: 250 with credits, 750 x 0.25 = 187.5 MiB/s without") {
        VolumeParams p = make_volume(gp2_spec(250));
        CHECK(p.tput_burst_bytes_s == 250 * MiB);
        CHECK(p.tput_base_bytes_s == 187.5 * MiB);
    }
    SUBCASE("334 GiB: 1,002 x 0.25 = 250.5 -> 250 MiB/s regardless of credits") {
        VolumeParams p = make_volume(gp2_spec(334));
        CHECK(p.tput_burst_bytes_s == 250 * MiB);
        CHECK(p.tput_base_bytes_s == 250 * MiB);
    }
    SUBCASE("1,000 GiB and 5,334 GiB: no burst above baseline, 250 MiB/s") {
        VolumeParams a = make_volume(gp2_spec(1000));
        CHECK(a.baseline_iops == 3000);
        CHECK(a.burst_iops == 3000);
        CHECK(a.tput_base_bytes_s == 250 * MiB);
        VolumeParams b = make_volume(gp2_spec(5334));
        CHECK(b.baseline_iops == 16000);
        CHECK(b.burst_iops == 16000);  // never below the baseline
        CHECK(b.tput_burst_bytes_s == 250 * MiB);
        CHECK(b.tput_base_bytes_s == 250 * MiB);
    }
}

TEST_CASE("gp2 initial credits follow burst_balance_pct") {
    CHECK(make_volume(gp2_spec(100, 100)).initial_credits == 5.4e6);
    CHECK(make_volume(gp2_spec(100, 50)).initial_credits == 2.7e6);   // 5.4e6 x 0.5
    CHECK(make_volume(gp2_spec(100, 25)).initial_credits == 1.35e6);  // 5.4e6 x 0.25
    CHECK(make_volume(gp2_spec(100, 0)).initial_credits == 0);
    CHECK(make_volume(gp2_spec(100, 0.1)).initial_credits == near(5400));  // 5.4e6 x 0.001
}

TEST_CASE("gp2 size limits 1 and 16,384 GiB are accepted") {
    CHECK(make_volume(gp2_spec(1)).baseline_iops == 100);
    CHECK(make_volume(gp2_spec(16384)).baseline_iops == 16000);
}

TEST_CASE("gp3 defaults: 3,000 IOPS and 125 MiB/s at any size, no bucket") {
    for (double size : {1.0, 100.0, 65536.0}) {
        CAPTURE(size);
        VolumeParams p = make_volume(gp3_spec(size));
        CHECK(p.type == VolumeType::gp3);
        CHECK(p.baseline_iops == 3000);
        CHECK(p.burst_iops == 3000);
        CHECK_FALSE(p.has_bucket());
        CHECK(p.credit_capacity == 0);
        CHECK(p.initial_credits == 0);
        CHECK(p.tput_burst_bytes_s == 125 * MiB);
        CHECK(p.tput_base_bytes_s == 125 * MiB);
        CHECK(p.io_unit_bytes == 256 * KiB);
    }
}

TEST_CASE("gp3 provisioned limits at the edges of AWS's rules") {
    SUBCASE("80,000 IOPS needs 160 GiB (80,000 / 500); 2,000 MiB/s needs 8,000 IOPS (2,000 / 0.25)") {
        VolumeParams p = make_volume(gp3_spec(160, 80000, 2000));
        CHECK(p.baseline_iops == 80000);
        CHECK(p.burst_iops == 80000);
        CHECK(p.tput_burst_bytes_s == 2000 * MiB);
        CHECK(p.tput_base_bytes_s == 2000 * MiB);
    }
    SUBCASE("16 GiB: 500 x 16 = 8,000 IOPS and 0.25 x 8,000 = 2,000 MiB/s, both exactly at the limit") {
        VolumeParams p = make_volume(gp3_spec(16, 8000, 2000));
        CHECK(p.baseline_iops == 8000);
        CHECK(p.tput_base_bytes_s == 2000 * MiB);
    }
    SUBCASE("1 GiB keeps the included 3,000 IOPS (the 500/GiB ratio applies above the baseline)") {
        VolumeParams p = make_volume(gp3_spec(1, 3000));
        CHECK(p.baseline_iops == 3000);
    }
    SUBCASE("3,000 IOPS allow 0.25 x 3,000 = 750 MiB/s") {
        VolumeParams p = make_volume(gp3_spec(100, ebssim::unset, 750));
        CHECK(p.baseline_iops == 3000);
        CHECK(p.tput_base_bytes_s == 750 * MiB);
    }
}

TEST_CASE("default service time: 0.5 ms + size / (1024 MiB/s)") {
    VolumeParams p = make_volume(gp3_spec(100));
    CHECK(p.read_latency_s == near(0.0005));
    CHECK(p.write_latency_s == near(0.0005));
    CHECK(p.latency_cv == 0.5);
    CHECK(p.wait_cv == 0.65);                                 // Nitro's default
    CHECK(make_volume(gp3_spec(100), false).wait_cv == 0.1);  // Xen's
    CHECK(p.transfer_bytes_s == 1024 * MiB);
    CHECK(p.service_time_s(0, 0.3) == near(0.0005));
    // 4 KiB: 0.5e-3 + 4096 / 2^30 = 0.000503814697265625 s
    CHECK(p.service_time_s(4 * KiB, 1.0) == near(0.000503814697265625));
    // 1 MiB: 0.5e-3 + 1/1024 = 0.0014765625 s
    CHECK(p.service_time_s(MiB, 0.0) == near(0.0014765625));
}

TEST_CASE("io2's service time per direction: reads 0.44 ms, writes 0.335 ms, cv 0.12") {
    VolumeSpec s;
    s.type = VolumeType::io2;
    s.size_gib = 100;
    s.iops = 40000;
    VolumeParams p = make_volume(s);
    // 16 KiB read: 0.44 ms + 16 KiB / 1024 MiB/s = 0.44 + 1000 x 16 / 1,048,576 = 0.4552588 ms
    CHECK(p.service_time_s(16 * KiB, 1.0) == near(0.00044 + 16.0 / 1048576));
    // 16 KiB write: 0.335 + 0.0152588 = 0.3502588 ms; half and half: 0.3875 + 0.0152588 ms
    CHECK(p.service_time_s(16 * KiB, 0.0) == near(0.000335 + 16.0 / 1048576));
    CHECK(p.service_time_s(16 * KiB, 0.5) == near(0.0003875 + 16.0 / 1048576));
    CHECK(p.latency_cv == 0.12);
}

TEST_CASE("read_latency_ms, write_latency_ms, latency_cv, wait_cv; latency_ms sets both directions") {
    VolumeSpec s = gp2_spec(100);
    s.read_latency_ms = 0.4;
    s.write_latency_ms = 1.2;
    s.latency_cv = 0.2;
    s.wait_cv = 0.3;
    VolumeParams p = make_volume(s);
    CHECK(p.read_latency_s == near(0.0004));
    CHECK(p.write_latency_s == near(0.0012));
    CHECK(p.latency_at(0.75) == near(0.0006));  // 0.0012 + 0.75 x (0.0004 - 0.0012)
    CHECK(p.latency_cv == 0.2);
    CHECK(p.wait_cv == 0.3);
    s = gp2_spec(100);
    s.latency_ms = 2;
    p = make_volume(s);
    CHECK(p.read_latency_s == near(0.002));
    CHECK(p.write_latency_s == near(0.002));
    s.read_latency_ms = 1;
    CHECK(config_error_message([&] { (void)make_volume(s); }).find("latency_ms=2 sets reads and writes alike") !=
          std::string::npos);
    s = gp2_spec(100);
    s.write_latency_ms = 0;
    CHECK(config_error_message([&] { (void)make_volume(s); }).find("write_latency_ms=0 must be > 0") !=
          std::string::npos);
    s = gp2_spec(100);
    s.latency_cv = 0;
    CHECK(config_error_message([&] { (void)make_volume(s); }).find("latency_cv=0 must be between 0.001 and 10") !=
          std::string::npos);
    s = gp2_spec(100);
    s.wait_cv = -1;
    CHECK(config_error_message([&] { (void)make_volume(s); }).find("wait_cv=-1 must be between 0 and 10") !=
          std::string::npos);
}

TEST_CASE("service time from latency_ms and transfer_mib_s") {
    VolumeSpec s = gp2_spec(100);
    s.latency_ms = 2;
    s.transfer_mib_s = 512;
    VolumeParams p = make_volume(s);
    // 2 ms + 1 MiB / 512 MiB/s = 0.002 + 0.001953125 = 0.003953125 s
    CHECK(p.service_time_s(MiB, 0.5) == near(0.003953125));
}

TEST_CASE("volume type names") {
    CHECK(to_string(VolumeType::gp2) == "gp2");
    CHECK(to_string(VolumeType::gp3) == "gp3");
    CHECK(parse_volume_type("gp2") == VolumeType::gp2);
    CHECK(parse_volume_type("gp3") == VolumeType::gp3);
    std::string msg = config_error_message([] { parse_volume_type("io9"); });
    CHECK(msg.find("io9") != std::string::npos);
    CHECK(msg.find("gp2") != std::string::npos);
    CHECK(msg.find("gp3") != std::string::npos);
}

TEST_CASE("volume type table: every type once, in AWS's order, names that parse back") {
    const auto types = volume_types();
    REQUIRE(types.size() == 7);
    const char* names[] = {"gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"};
    for (std::size_t i = 0; i < types.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(types[i].name == names[i]);
        CHECK(static_cast<std::size_t>(types[i].type) == i);
        CHECK(&volume_type_info(types[i].type) == &types[i]);
        CHECK(to_string(types[i].type) == names[i]);
        CHECK(parse_volume_type(names[i]) == types[i].type);
        CHECK(!types[i].description.empty());
    }
    // The error lists the table's names, in its order.
    CHECK(config_error_message([] { parse_volume_type("gp4"); }) ==
          "volume type 'gp4' is not an EBS volume type; known types: gp2, gp3, io1, io2, st1, sc1, standard");
}

TEST_CASE("volume type table: the EC2 console's defaults for a new volume") {
    // 8 GiB gp2, gp3 and standard; 100 GiB and 3,000 IOPS io1 and io2; the 125 GiB minimum st1 and sc1.
    CHECK(volume_type_info(VolumeType::gp2).default_size_gib == 8);
    CHECK(volume_type_info(VolumeType::gp3).default_size_gib == 8);
    CHECK(volume_type_info(VolumeType::standard).default_size_gib == 8);
    CHECK(volume_type_info(VolumeType::io1).default_size_gib == 100);
    CHECK(volume_type_info(VolumeType::io2).default_size_gib == 100);
    CHECK(volume_type_info(VolumeType::io1).default_iops == 3000);
    CHECK(volume_type_info(VolumeType::io2).default_iops == 3000);
    CHECK(volume_type_info(VolumeType::st1).default_size_gib == 125);
    CHECK(volume_type_info(VolumeType::sc1).default_size_gib == 125);
    // gp3's included 3,000 IOPS and 125 MiB/s; the other types provision no throughput.
    CHECK(volume_type_info(VolumeType::gp3).default_iops == 3000);
    CHECK(volume_type_info(VolumeType::gp3).default_throughput_mib_s == 125);
    for (auto t : {VolumeType::gp2, VolumeType::st1, VolumeType::sc1, VolumeType::standard}) {
        CAPTURE(to_string(t));
        CHECK(std::isnan(volume_type_info(t).default_iops));
        CHECK(std::isnan(volume_type_info(t).default_throughput_mib_s));
    }
}

TEST_CASE("volume type table agrees with make_volume") {
    for (const VolumeTypeInfo& t : volume_types()) {
        CAPTURE(t.name);
        // The console's defaults make a volume AWS accepts ...
        VolumeSpec s{t.type, t.default_size_gib, t.default_iops, t.default_throughput_mib_s};
        const VolumeParams p = make_volume(s);
        // ... which counts in the table's unit and has a bucket exactly when the table says so.
        CHECK(p.io_unit_bytes == t.io_unit_bytes);
        CHECK(p.has_bucket() == t.has_bucket());
        CHECK(t.io_unit_bytes == (t.media == Media::ssd ? 256 * KiB : MiB));
        // The size range is AWS's: its ends are accepted, one GiB beyond them is not.
        // io1/io2 require IOPS: their 100 minimum fits the smallest size (4 GiB x 50 per GiB).
        const bool piops = t.type == VolumeType::io1 || t.type == VolumeType::io2;
        const double iops = piops ? 100 : unset;
        s = VolumeSpec{t.type, t.min_size_gib, iops};
        CHECK_NOTHROW(make_volume(s));
        s.size_gib = t.max_size_gib;
        CHECK_NOTHROW(make_volume(s));
        s.size_gib = t.max_size_gib + 1;
        CHECK_THROWS_AS(make_volume(s), ConfigError);
        s.size_gib = t.min_size_gib - 1;
        CHECK_THROWS_AS(make_volume(s), ConfigError);
    }
    CHECK(volume_type_info(VolumeType::gp2).bucket == BucketKind::io_credits);
    CHECK(volume_type_info(VolumeType::standard).bucket == BucketKind::io_credits);
    CHECK(volume_type_info(VolumeType::st1).bucket == BucketKind::throughput_credits);
    CHECK(volume_type_info(VolumeType::sc1).bucket == BucketKind::throughput_credits);
    CHECK(to_string(Media::hdd) == "hdd");
    CHECK(to_string(BucketKind::throughput_credits) == "throughput_credits");
}

TEST_CASE("counted_ops_per_io: SSD I/Os count in 256 KiB units") {
    const double unit = 256 * KiB;
    SUBCASE("random I/Os count ceil(size / 256 KiB), at least one") {
        CHECK(counted_ops_per_io(4 * KiB, unit, Pattern::random) == 1);
        CHECK(counted_ops_per_io(32 * KiB, unit, Pattern::random) == 1);   // AWS: any I/O under 32 KiB = 1 op
        CHECK(counted_ops_per_io(256 * KiB, unit, Pattern::random) == 1);  // exactly the unit: not 2
        CHECK(counted_ops_per_io(257 * KiB, unit, Pattern::random) == 2);  // ceil(257/256) = 2
        CHECK(counted_ops_per_io(512 * KiB, unit, Pattern::random) == 2);
        CHECK(counted_ops_per_io(MiB, unit, Pattern::random) == 4);  // 1,024 / 256
        CHECK(counted_ops_per_io(1, unit, Pattern::random) == 1);
    }
    SUBCASE("sequential I/Os of 32 KiB and more merge: size / 256 KiB") {
        CHECK(counted_ops_per_io(32 * KiB, unit, Pattern::sequential) == 0.125);  // 8 x 32 KiB = 1 op
        CHECK(counted_ops_per_io(64 * KiB, unit, Pattern::sequential) == 0.25);
        CHECK(counted_ops_per_io(256 * KiB, unit, Pattern::sequential) == 1);
        CHECK(counted_ops_per_io(384 * KiB, unit, Pattern::sequential) == 1.5);  // split, the rest merges
        CHECK(counted_ops_per_io(MiB, unit, Pattern::sequential) == 4);
    }
    SUBCASE("sequential I/Os under 32 KiB do not merge: one operation each") {
        CHECK(counted_ops_per_io(4 * KiB, unit, Pattern::sequential) == 1);
        CHECK(counted_ops_per_io(16 * KiB, unit, Pattern::sequential) == 1);
        CHECK(counted_ops_per_io(32 * KiB - 1, unit, Pattern::sequential) == 1);
        CHECK(counted_ops_per_io(512, unit, Pattern::sequential) == 1);
    }
    SUBCASE("HDD unit of 1 MiB") {
        CHECK(counted_ops_per_io(128 * KiB, MiB, Pattern::random) == 1);
        CHECK(counted_ops_per_io(128 * KiB, MiB, Pattern::sequential) == 0.125);  // 8 x 128 KiB = 1 op
    }
}

TEST_CASE("counting: the user guide's examples (EBS User Guide, I/O characteristics)") {
    const VolumeParams p = make_volume(gp3_spec(100));
    CHECK(p.io_unit_bytes == 256 * KiB);
    CHECK(p.merge_min_bytes == 32 * KiB);
    CHECK(units::merge_min_bytes == 32 * KiB);
    // 8 contiguous 32 KiB I/Os = 1 operation; 8 random 32 KiB I/Os = 8.
    CHECK(8 * counted_ops_per_io(p, 32 * KiB, Pattern::sequential) == 1);
    CHECK(8 * counted_ops_per_io(p, 32 * KiB, Pattern::random) == 8);
    // One 1,024 KiB I/O = 4 operations, random or sequential.
    CHECK(counted_ops_per_io(p, 1024 * KiB, Pattern::random) == 4);
    CHECK(counted_ops_per_io(p, 1024 * KiB, Pattern::sequential) == 4);
    // Any I/O under 32 KiB = 1 operation: 4 KiB sequential I/Os count one each.
    CHECK(counted_ops_per_io(p, 4 * KiB, Pattern::sequential) == 1);
    CHECK(counted_ops_per_io(p, 4 * KiB, Pattern::random) == 1);
}

TEST_CASE("IoCounting: an open-loop step counts by its mean I/O size") {
    const VolumeParams p = make_volume(gp2_spec(100));
    const IoCounting seq(p, Pattern::sequential);
    const IoCounting rnd(p, Pattern::random);
    CHECK(seq(10, 10 * 4 * KiB) == 10);         // mean 4 KiB: under the floor, one each
    CHECK(seq(8, 8 * 32 * KiB) == 1);           // mean 32 KiB: merged
    CHECK(seq(2, 4 * KiB + 60 * KiB) == 0.25);  // mean 32 KiB: merged, 64 KiB / 256 KiB
    CHECK(rnd(8, 8 * 32 * KiB) == 8);
    CHECK(rnd(100, 100 * 512 * KiB) == 200);  // split: ceil(512 / 256) each
    CHECK(rnd(3, 3 * 256 * KiB) == 3);        // exactly the unit: one each
    CHECK(seq(0, 0) == 0);
    CHECK(rnd(0, 0) == 0);
    // One rule: the single-I/O form is the step form with one I/O.
    for (double size : {512.0, 4 * KiB, 31 * KiB, 32 * KiB, 100 * KiB, 256 * KiB, 300 * KiB, MiB}) {
        CHECK(seq(1, size) == counted_ops_per_io(p, size, Pattern::sequential));
        CHECK(rnd(1, size) == counted_ops_per_io(p, size, Pattern::random));
    }
    // The floor is a parameter: 0 merges every sequential I/O (the rule before AWS's floor).
    CHECK(IoCounting(256 * KiB, Pattern::sequential, 0.0)(1, 4 * KiB) == 1.0 / 64);
}
