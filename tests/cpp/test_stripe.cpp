// Striped sets (RAID-0): what a member receives from the set's I/O (stripe.hpp).

#include <doctest/doctest.h>

#include <cmath>

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
