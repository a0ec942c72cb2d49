// Reads and writes apart (directions.hpp): the reads served per step follow the engine's rule,
// one fraction of everything available served per step.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

TEST_CASE("split_served: a backlog served at the cap keeps its read share (hand-worked)") {
    // A cap of 100 I/Os a step. Step 0: 150 arrive, 60 of them reads; 100 served (f = 2/3),
    // 40 of the reads, 20 wait among the 50 left. Step 1: nothing arrives, the 50 are served
    // (f = 1), 20 of them reads. Bytes: 1 KiB an I/O, read or written.
    const std::vector<double> ops{150, 0}, bytes{150 * KiB, 0}, read_ops{60, 0}, read_bytes{60 * KiB, 0};
    const std::vector<double> served_ops{100, 50}, served_bytes{100 * KiB, 50 * KiB}, backlog{50, 0};
    std::vector<double> r_ops(2), r_bytes(2);
    split_served({ops, bytes, read_ops, read_bytes, 0.4}, {served_ops, served_bytes, backlog, 0.0}, r_ops, r_bytes);
    CHECK(r_ops[0] == doctest::Approx(40.0).epsilon(1e-15));
    CHECK(r_ops[1] == doctest::Approx(20.0).epsilon(1e-15));
    CHECK(r_bytes[0] == doctest::Approx(40 * KiB).epsilon(1e-15));
    CHECK(r_bytes[1] == doctest::Approx(20 * KiB).epsilon(1e-15));
}

TEST_CASE("split_served: a backlog carried in splits at read_fraction, and the engine's run agrees") {
    // A gp3 of 3,000 IOPS at dt = 1 s, 4 KiB I/Os: 6,000 arrive (all writes) in step 0, then
    // 1,000 reads a step. The run serves 3,000 a step: the writes backlog drains for two steps.
    Simulation sim({gp3_spec(100)});
    const std::vector<double> ops{6000, 1000, 1000, 1000}, read_ops{0, 1000, 1000, 1000};
    std::vector<double> bytes, read_bytes;
    for (double x : ops) bytes.push_back(x * 4 * KiB);
    for (double x : read_ops) read_bytes.push_back(x * 4 * KiB);
    const RunResult r = sim.run({open_loop(ops, bytes)}, 4, true);
    const StepSeries& s = r.series[0];
    std::vector<double> served_ops, served_bytes, backlog;
    for (std::size_t k = 0; k < 4; ++k) {
        served_ops.push_back(s.iops[k]);
        served_bytes.push_back(s.throughput_mib_s[k] * MiB);
        backlog.push_back(s.backlog_ops[k]);
    }
    std::vector<double> r_ops(4), r_bytes(4);
    split_served({ops, bytes, read_ops, read_bytes, 0.0},
                 {served_ops, served_bytes, backlog, r.totals[0].backlog_bytes}, r_ops, r_bytes);
    // Step 0: 3,000 served of 6,000, 3,000 wait. Step 1: 4,000 available, 3,000 served (f = 3/4):
    // 750 of the 1,000 reads, 250 wait. Step 2: 2,000 available (1,000 + 250 reads), all served.
    CHECK(served_ops[1] == doctest::Approx(3000));
    CHECK(r_ops[0] == 0.0);
    CHECK(r_ops[1] == doctest::Approx(750.0));
    CHECK(r_ops[2] == doctest::Approx(1250.0));
    CHECK(r_ops[3] == doctest::Approx(1000.0));
    CHECK(r_bytes[2] == doctest::Approx(1250.0 * 4 * KiB));
    // The same steps after a backlog carried in of 3,000 I/Os, a third of them reads (the
    // first step shows it: 3,000 + 3,000 available before step 0's own arrivals).
    const std::vector<double> backlog_in{6000, 4000, 2000, 0};
    std::vector<double> c_ops(4), c_bytes(4);
    const std::vector<double> served{3000, 3000, 3000, 3000}, zero_bytes(4, 0.0);
    split_served({ops, zero_bytes, read_ops, zero_bytes, 1.0 / 3.0}, {served, zero_bytes, backlog_in, 0.0}, c_ops,
                 c_bytes);
    // Before step 0: 3,000 waiting (6,000 after + 3,000 served - 6,000 arrived), 1,000 reads;
    // f = 3,000 / 9,000: 333.3 of them served.
    CHECK(c_ops[0] == doctest::Approx(1000.0 / 3.0));
}

TEST_CASE("split_served: arrays of another length or a read_fraction outside [0, 1] are refused") {
    const std::vector<double> two{1, 1}, three{1, 1, 1};
    std::vector<double> o(2), b(2);
    CHECK(config_error_message([&] {
              split_served({two, two, two, two, 1.0}, {two, two, three, 0.0}, o, b);
          }) == "backlog_ops has 3 steps but ops has 2: the arrays must have the same length");
    CHECK(config_error_message([&] {
              split_served({two, three, two, two, 1.0}, {two, two, two, 0.0}, o, b);
          }) == "bytes has 3 steps but ops has 2: the arrays must have the same length");
    CHECK(config_error_message([&] {
              split_served({two, two, two, two, 1.5}, {two, two, two, 0.0}, o, b);
          }) == "read_fraction=1.5 must be in [0, 1]");
}
