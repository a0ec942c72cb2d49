// Striped sets (RAID-0): what a member receives from the set's I/O (stripe.hpp).

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

TEST_CASE("stripe_split: I/Os that divide the chunk land whole on one member") {
    // 4 KiB at offsets that are multiples of 4 KiB, 512 KiB chunks: h = gcd(4096, 524288) = 4096,
    // (ceil(4096 / 4096) - 1) x 4096 / 524288 = 0 boundaries: one piece of 4 KiB, 1/2 on each of 2.
    const StripeSplit s = stripe_split(4096, 512 * 1024, 2);
    CHECK(s.pieces_per_io == 1);
    CHECK(s.piece_bytes == 4096);
    CHECK(s.member_share == 0.5);
    CHECK(s.members == 2);
    // 256 KiB aligned at 256 KiB in 512 KiB chunks: still one piece.
    CHECK(stripe_split(256 * 1024, 512 * 1024, 2).pieces_per_io == 1);
}

TEST_CASE("stripe_split: an I/O larger than a chunk becomes one piece per chunk") {
    // 1 MiB aligned at 1 MiB over 256 KiB chunks: h = 256 KiB, (4 - 1) x 256 / 256 = 3 boundaries,
    // 4 pieces of 256 KiB; on 4 members each carries 4 / 4 = 1 piece per set I/O.
    const StripeSplit s = stripe_split(1 << 20, 256 * 1024, 4);
    CHECK(s.pieces_per_io == 4);
    CHECK(s.piece_bytes == 256 * 1024);
    CHECK(s.member_share == 1);
    // On 2 members, each carries 2 pieces per set I/O.
    CHECK(stripe_split(1 << 20, 256 * 1024, 2).member_share == 2);
}

TEST_CASE("stripe_split: unaligned I/O crosses a boundary in proportion to its size") {
    // 12 KiB at multiples of 12 KiB, 8 KiB chunks: h = gcd(12288, 8192) = 4096,
    // (ceil(12288 / 4096) - 1) x 4096 / 8192 = 2 x 0.5 = 1 boundary: 2 pieces of 6 KiB on average
    // (offset 0 mod 8 KiB: 8 + 4 KiB; offset 4 KiB: 4 + 8 KiB).
    const StripeSplit s = stripe_split(12288, 8192, 3);
    CHECK(s.pieces_per_io == near(2));
    CHECK(s.piece_bytes == near(6144));
    // 4 KiB at 4 KiB alignment over 512 KiB chunks never crosses; at 1-byte alignment it crosses
    // (4096 - 1) / 524288 of the time: h = 1.
    CHECK(stripe_split(4096, 512 * 1024, 2, 1).pieces_per_io == near(1 + 4095.0 / 524288));
    // 256 KiB at 4 KiB alignment over 512 KiB chunks: (64 - 1) x 4096 / 524288 = 0.4921875.
    CHECK(stripe_split(256 * 1024, 512 * 1024, 2, 4096).pieces_per_io == near(1.4921875));
}

TEST_CASE("stripe_member_loop: each member carries its share of the set's I/Os in flight") {
    ClosedLoop set;
    set.in_flight = 256;  // fio iodepth 16 x numjobs 16 on /dev/md0
    set.io_bytes = 4096;
    set.read_fraction = 0;
    set.think_time_s = 0.001;
    const ClosedLoop m = stripe_member_loop(set, 512 * 1024, 2);
    CHECK(m.in_flight == 128);  // 256 x 1 piece / 2 members
    CHECK(m.io_bytes == 4096);
    CHECK(m.read_fraction == 0);
    CHECK(m.think_time_s == 0.001);
    CHECK(std::isnan(m.counted_per_io));  // the member's own rule at the piece's size
    // 1 MiB over 256 KiB chunks on 2 members: 4 pieces of 256 KiB, 32 x 4 / 2 = 64 in flight each;
    // a fixed counted_per_io of 8 per set I/O is 8 / 4 = 2 per piece.
    set.in_flight = 32;
    set.io_bytes = 1 << 20;
    set.counted_per_io = 8;
    const ClosedLoop big = stripe_member_loop(set, 256 * 1024, 2);
    CHECK(big.in_flight == 64);
    CHECK(big.io_bytes == 256 * 1024);
    CHECK(big.counted_per_io == 2);
}

TEST_CASE("validate_stripe: mdadm's rules, named") {
    CHECK_THROWS_WITH_AS(validate_stripe(6000, 2), doctest::Contains("chunk_bytes=6000 must be a multiple of 4 KiB"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(validate_stripe(0, 2), doctest::Contains("chunk_bytes=0 must be > 0"), ConfigError);
    CHECK_THROWS_WITH_AS(validate_stripe(512 * 1024, 0), doctest::Contains("members=0 must be >= 1"), ConfigError);
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_split(0, 512 * 1024, 2)), doctest::Contains("io_bytes=0 must be > 0"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_split(4096, 512 * 1024, 2, 0.5)),
                         doctest::Contains("align_bytes=0.5 must be a whole number of bytes"), ConfigError);
    // 12 KiB is not a power of 2 but is a multiple of 4 KiB: md's RAID-0 takes it.
    CHECK_NOTHROW(validate_stripe(12 * 1024, 3));
}

TEST_CASE("stripe_member_trace: each step split at its own mean I/O size") {
    // 2 members, 256 KiB chunks. Step 0: 100 I/Os of 1 MiB: 4 pieces of 256 KiB, 2 on each member:
    // 100 x 2 = 200 member I/Os, 100 MiB / 2 = 50 MiB. Step 1: 300 I/Os of 16 KiB: one piece each,
    // 300 x 1 / 2 = 150. Step 2: nothing. Step 3: 10 I/Os, no bytes: 10 / 2 = 5 (whole on one member).
    const double mib = 1 << 20;
    const std::vector<double> ops = {100, 300, 0, 10};
    const std::vector<double> bytes = {100 * mib, 300 * 16384.0, 0, 0};
    const StripeMemberTrace t = stripe_member_trace(ops, bytes, 256 * 1024, 2);
    CHECK(t.ops == std::vector<double>{200, 150, 0, 5});
    CHECK(t.bytes == std::vector<double>{50 * mib, 150 * 16384.0, 0, 0});
    CHECK(t.member_share[0] == 2);
    CHECK(t.member_share[1] == 0.5);
    CHECK(std::isnan(t.member_share[2]));
    CHECK(t.member_share[3] == 0.5);
    CHECK(t.read_ops.empty());
    CHECK(t.max_in_flight == std::vector<double>{std::numeric_limits<double>::infinity()});  // no bound
}

TEST_CASE("stripe_member_trace: the bound on outstanding I/Os follows the step's share") {
    const double mib = 1 << 20;
    // One size throughout (1 MiB, share 2 on 2 members of 256 KiB chunks): one bound, 32 x 2 = 64.
    const std::vector<double> ops = {100, 0, 100};
    const std::vector<double> one_mib = {100 * mib, 0, 100 * mib};
    const std::vector<double> bound = {32};
    CHECK(stripe_member_trace(ops, one_mib, 256 * 1024, 2, bound).max_in_flight == std::vector<double>{64});
    // 16 KiB (share 0.5), nothing, 1 MiB (share 2): 32 x 0.5 = 16, the rest keeps 16, then 64.
    const std::vector<double> mixed = {100 * 16384.0, 0, 100 * mib};
    CHECK(stripe_member_trace(ops, mixed, 256 * 1024, 2, bound).max_in_flight == std::vector<double>{16, 16, 64});
    // A bound per step: 8 x 0.5 = 4, 10 x 0.5 = 5 (the share of step 0), 12 x 2 = 24; inf stays inf.
    const std::vector<double> steps = {8, 10, 12};
    CHECK(stripe_member_trace(ops, mixed, 256 * 1024, 2, steps).max_in_flight == std::vector<double>{4, 5, 24});
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> some = {inf, 10, 12};
    CHECK(stripe_member_trace(ops, mixed, 256 * 1024, 2, some).max_in_flight == std::vector<double>{inf, 5, 24});
    // Steps before the first I/O take its share: nothing, then 4 KiB on 4 members (1 / 4): 8 x 0.25 = 2.
    const std::vector<double> late = {0, 10};
    const std::vector<double> late_bytes = {0, 40960};
    CHECK(stripe_member_trace(late, late_bytes, 512 * 1024, 4, std::vector<double>{8}).max_in_flight ==
          std::vector<double>{2});
}

TEST_CASE("carried_member_shares: a step without I/O keeps the last share, the first one's before it") {
    const double n = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> gaps = {n, 2, n, n, 0.5, n};
    CHECK(carried_member_shares(gaps, 2) == std::vector<double>{2, 2, 2, 2, 0.5, 0.5});
    const std::vector<double> none = {n, n};
    CHECK(carried_member_shares(none, 4) == std::vector<double>{0.25, 0.25});  // no I/O at all: 1 / members
    CHECK(carried_member_shares(std::vector<double>{}, 2).empty());
    CHECK_THROWS_WITH_AS(static_cast<void>(carried_member_shares(none, 0)), doctest::Contains("members=0 must be"),
                         ConfigError);
}

TEST_CASE("stripe_member_trace: reads and writes split each at its own size") {
    // 100 reads of 1 MiB (2 on each of 2 members of 256 KiB chunks: 200) and 50 writes of 4 KiB
    // (1 / 2: 25): 225 member I/Os of the set's 150, a share of 225 / 150 = 1.5; the reads 200.
    const double mib = 1 << 20;
    const std::vector<double> ops = {150}, bytes = {100 * mib + 50 * 4096.0};
    const std::vector<double> rops = {100}, rbytes = {100 * mib};
    const StripeMemberTrace t = stripe_member_trace(ops, bytes, 256 * 1024, 2, {}, rops, rbytes);
    CHECK(t.ops[0] == 225);
    CHECK(t.read_ops[0] == 200);
    CHECK(t.read_bytes[0] == 50 * mib);
    CHECK(t.bytes[0] == near(50 * mib + 25 * 4096.0));
    CHECK(t.member_share[0] == 1.5);
}

TEST_CASE("stripe_member_trace: errors name the field and value") {
    const std::vector<double> ops = {10, 20}, bytes = {40960, 81920};
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 6000, 2)),
                         doctest::Contains("chunk_bytes=6000"), ConfigError);
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 4096, 0)), doctest::Contains("members=0"),
                         ConfigError);
    const std::vector<double> bad = {10, -1};
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(bad, bytes, 4096, 2)), doctest::Contains("ops[1]=-1"),
                         ConfigError);
    const std::vector<double> three = {1, 2, 3};
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 4096, 2, three)),
                         doctest::Contains("max_in_flight has 3 steps but the trace has 2"), ConfigError);
    const std::vector<double> zero = {0};
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 4096, 2, zero)),
                         doctest::Contains("max_in_flight[0]=0 must be a positive"), ConfigError);
    const std::vector<double> rops = {11, 0};
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 4096, 2, {}, rops, bytes)),
                         doctest::Contains("read_ops[0]=11 must be between 0 and the step's total 10"), ConfigError);
    CHECK_THROWS_WITH_AS(static_cast<void>(stripe_member_trace(ops, bytes, 4096, 2, {}, rops)),
                         doctest::Contains("read_ops is given without read_bytes"), ConfigError);
}
