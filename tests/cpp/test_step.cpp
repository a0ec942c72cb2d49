// The step's arithmetic (libebssim/src/step.hpp), each rule on values worked out by hand; that
// the scalar stepper, its jumps, the lockstep lanes and the served steps' kernel agree to the bit
// is the business of test_jump.cpp, test_lockstep.cpp and the Python suite.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../../libebssim/src/step.hpp"
#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;
using detail::ScalarOps;

TEST_CASE("throttle: a limit binds beyond a rounding margin of 1e-12; a near tie goes to the IOPS limit") {
    // Asked exactly the cap, or a hair (1e-13 of it) above: served in full, demand-bound.
    for (double want : {300.0, 300.0 * (1 + 1e-13)}) {
        CAPTURE(want);
        const detail::Throttle t = detail::throttle(want, 0, 300, 1e9);
        CHECK(t.f == 1.0);
        CHECK(t.bound == Bound::demand);
    }
    // 1e-9 above: the cap binds, f = 300 / want.
    const double above = 300.0 * (1 + 1e-9);
    const detail::Throttle t = detail::throttle(above, 0, 300, 1e9);
    CHECK(t.bound == Bound::volume_iops);
    CHECK(t.f == 300.0 / above);
    // Both limits asked for 1.5x: f = 2/3 from either; the bytes' fraction 1e-14 smaller still
    // leaves the bound with the IOPS limit, 1e-9 smaller gives it to the throughput limit.
    const detail::Throttle tie = detail::throttle(450, 450 * 262144.0 * (1 + 1e-14), 300, 300 * 262144.0);
    CHECK(tie.bound == Bound::volume_iops);
    CHECK(tie.f == 300.0 / 450.0);
    const detail::Throttle bytes = detail::throttle(450, 450 * 262144.0 * (1 + 1e-9), 300, 300 * 262144.0);
    CHECK(bytes.bound == Bound::volume_throughput);
}

TEST_CASE("limits_at: the counted cap is the pool up to the burst, the byte cap falls to the baseline when empty") {
    // gp2 100 GiB at dt = 1 s: earns 300, bursts to 3,000; throughput 250 MiB/s either way on gp2,
    // so take st1-like caps to see the fall: 500 MiB/s with credits, 40 MiB/s without.
    const double hi = 500.0 * MiB, lo = 40.0 * MiB;
    auto at = [&](double credits) {
        return detail::limits_at<ScalarOps>(credits, detail::pool_of(credits, 300.0), 3000.0, hi, lo);
    };
    CHECK(at(0).counted == 300);  // an empty bucket grants what the step earns
    CHECK(at(0).bytes == lo);
    CHECK(at(1000).counted == 1300);  // a low balance: all of it plus the step's earnings
    CHECK(at(1000).bytes == hi);
    CHECK(at(5.4e6).counted == 3000);  // a full one: the burst
    CHECK(at(1e-300).bytes == hi);     // any credit at all keeps the burst throughput
}

TEST_CASE("bucket_after clamps to [0, capacity] and keeps NaN") {
    CHECK(detail::bucket_after<ScalarOps>(10.0, 12.0, 100.0) == 0);
    CHECK(detail::bucket_after<ScalarOps>(150.0, 20.0, 100.0) == 100);
    CHECK(detail::bucket_after<ScalarOps>(50.0, 20.0, 100.0) == 30);
    CHECK(std::isnan(detail::bucket_after<ScalarOps>(std::numeric_limits<double>::quiet_NaN(), 1.0, 100.0)));
}

TEST_CASE("served_counted is exactly the cap when the IOPS limit binds") {
    CHECK(detail::served_counted<ScalarOps>(true, 300.0, 0.3, 1000.0) == 300);
    CHECK(detail::served_counted<ScalarOps>(false, 300.0, 0.5, 400.0) == 200);
}

TEST_CASE("backlogs: an open loop keeps what was not served, a closed loop only the unserved part of its backlog") {
    CHECK(detail::open_backlog(450.0, 300.0) == 150);
    CHECK(detail::closed_backlog(80.0, 0.25) == 60);
}

TEST_CASE("service time and Little's law latency of an open loop") {
    // 0.5 ms latency and 250 MiB/s transfer: two 16 KiB I/Os take 0.5 ms + 16 KiB / 250 MiB/s each.
    const double inv_transfer = 1.0 / (250.0 * MiB);
    const double st = detail::model_service_time<ScalarOps>(0.5e-3, 2.0, 32768.0, inv_transfer);
    CHECK(st == near(0.5e-3 + 16384.0 / (250.0 * MiB)));
    CHECK(detail::model_service_time<ScalarOps>(0.5e-3, 0.0, 0.0, inv_transfer) == 0.5e-3);  // no I/O: the latency
    // 1,000 completions a second, 1 ms service, 5 I/Os waiting on average: (1 + 5) / 1000 = 6 ms.
    CHECK(detail::open_latency<ScalarOps>(1000.0, 1e-3, 5.0) == near(6e-3));
    CHECK(detail::open_latency<ScalarOps>(1000.0, 1e-3, 0.0) == 1e-3);  // nothing waits: the service time
    // Never below the service time.
    CHECK(detail::open_latency<ScalarOps>(1000.0, 2e-3, 1e-9) == near(2e-3));
    CHECK(detail::mean_waiting(4.0, 8.0) == 6);
    // max_in_flight 8 for 1 s at 2 ms a completion: at most 4,000 completions.
    CHECK(detail::in_flight_cap(8.0 * 1.0, 2e-3) == near(4000));
}
