#include <doctest/doctest.h>

#include "ebssim/ebssim.hpp"

using namespace ebssim;

TEST_CASE("gp2 baseline is 3 IOPS per GiB between 100 and 16,000") {
    CHECK(gp2::baseline_iops(1) == 100);
    CHECK(gp2::baseline_iops(33) == 100);
    CHECK(gp2::baseline_iops(100) == 300);
    CHECK(gp2::baseline_iops(5334) == 16000);
    CHECK(gp2::baseline_iops(16384) == 16000);
}
