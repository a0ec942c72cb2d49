// Reads and writes apart (directions.hpp): the engine's step rule, one fraction of everything
// available served per step, applied to the reads alone, forward over the run.

#include "ebssim/directions.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include <fmt/format.h>

#include "ebssim/error.hpp"

namespace ebssim {

void split_served(const SplitArrivals& arrivals, const SplitServed& served, std::span<double> read_ops,
                  std::span<double> read_bytes) {
    const std::size_t n = arrivals.ops.size();
    const std::pair<const char*, std::size_t> sizes[] = {
        {"bytes", arrivals.bytes.size()},           {"read_ops", arrivals.read_ops.size()},
        {"read_bytes", arrivals.read_bytes.size()}, {"served_ops", served.ops.size()},
        {"served_bytes", served.bytes.size()},      {"backlog_ops", served.backlog_ops.size()},
        {"out read_ops", read_ops.size()},          {"out read_bytes", read_bytes.size()},
    };
    for (const auto& [name, size] : sizes) {
        if (size != n) {
            throw ConfigError(
                fmt::format("{} has {} steps but ops has {}: the arrays must have the same length", name, size, n));
        }
    }
    if (!(arrivals.read_fraction >= 0.0 && arrivals.read_fraction <= 1.0)) {
        throw ConfigError(fmt::format("read_fraction={} must be in [0, 1]", arrivals.read_fraction));
    }
    if (n == 0) return;
    // What was waiting before step 0: for I/Os the first step's balance (waiting after = before
    // + arrived - served), for bytes the run's, which is all there is of them.
    const double before_ops = served.backlog_ops[0] + served.ops[0] - arrivals.ops[0];
    double net_bytes = 0.0;
    for (std::size_t k = 0; k < n; ++k) net_bytes += arrivals.bytes[k] - served.bytes[k];
    const double before_bytes = served.backlog_bytes_end - net_bytes;
    double waiting_ops = std::max(before_ops, 0.0) * arrivals.read_fraction;
    double waiting_bytes = std::max(before_bytes, 0.0) * arrivals.read_fraction;
    for (std::size_t k = 0; k < n; ++k) {
        const double available = served.ops[k] + served.backlog_ops[k];
        const double f = available > 0.0 ? std::clamp(served.ops[k] / available, 0.0, 1.0) : 1.0;
        const double ops = waiting_ops + arrivals.read_ops[k];
        const double bytes = waiting_bytes + arrivals.read_bytes[k];
        read_ops[k] = std::min(f * ops, served.ops[k]);
        read_bytes[k] = std::min(f * bytes, served.bytes[k]);
        waiting_ops = (1.0 - f) * ops;
        waiting_bytes = (1.0 - f) * bytes;
    }
}

}  // namespace ebssim
