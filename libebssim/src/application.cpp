// What the device sees of an open loop that bounds its outstanding I/Os (application.hpp).

#include "ebssim/application.hpp"

#include <cstddef>

#include <fmt/format.h>

#include "ebssim/error.hpp"

namespace ebssim {

void device_latency_s(std::span<const double> latency_s, std::span<const double> iops,
                      std::span<const double> max_in_flight, std::span<double> out) {
    const std::size_t n = latency_s.size();
    if (iops.size() != n || out.size() != n) {
        throw ConfigError(fmt::format("latency_s has {} steps but iops has {} and out {}: one value per step", n,
                                      iops.size(), out.size()));
    }
    if (max_in_flight.size() != 1 && max_in_flight.size() != n) {
        throw ConfigError(fmt::format("max_in_flight has {} values for {} steps: one for the run, or one per step",
                                      max_in_flight.size(), n));
    }
    const bool each = max_in_flight.size() == n && n != 1;
    for (std::size_t k = 0; k < n; ++k) {
        out[k] = device_latency_s(latency_s[k], iops[k], max_in_flight[each ? k : 0]);
    }
}

}  // namespace ebssim
