// What the device sees of an open loop that bounds its outstanding I/Os (application.hpp).

#include "ebssim/application.hpp"

#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "ebssim/error.hpp"

namespace ebssim {

void device_latency_s(std::span<const double> latency_s, std::span<const double> iops,
                      std::span<const double> max_in_flight, std::span<double> out, std::span<const double> backlog_ops,
                      std::span<const double> arrivals, double service_s, double dt) {
    const std::size_t n = latency_s.size();
    if (iops.size() != n || out.size() != n) {
        throw ConfigError(fmt::format("latency_s has {} steps but iops has {} and out {}: one value per step", n,
                                      iops.size(), out.size()));
    }
    if (max_in_flight.size() != 1 && max_in_flight.size() != n) {
        throw ConfigError(fmt::format("max_in_flight has {} values for {} steps: one for the run, or one per step",
                                      max_in_flight.size(), n));
    }
    const bool drains = !backlog_ops.empty() || !arrivals.empty();
    if (drains && (backlog_ops.size() != n || arrivals.size() != n)) {
        throw ConfigError(fmt::format("backlog_ops has {} steps and arrivals {} for {} steps: one value per step each",
                                      backlog_ops.size(), arrivals.size(), n));
    }
    if (drains && !(service_s > 0 && std::isfinite(service_s) && dt > 0 && std::isfinite(dt))) {
        throw ConfigError(fmt::format("service_s={} and dt={} must be positive numbers of seconds", service_s, dt));
    }
    const bool each = max_in_flight.size() == n && n != 1;
    for (std::size_t k = 0; k < n; ++k) {
        const double bound = max_in_flight[each ? k : 0];
        out[k] = device_latency_s(latency_s[k], iops[k], bound);
        if (!drains || k == 0 || !std::isfinite(bound)) continue;
        const double rate = iops[k - 1];
        // The backlog ran out in this step, and the step before held the application at its
        // bound: the device was fed `bound` I/Os at that step's rate until the backlog was gone.
        const bool ran_out = backlog_ops[k - 1] > 0 && !(backlog_ops[k] > 0) && iops[k] > 0 && rate > iops[k];
        if (ran_out && max_in_flight[each ? k - 1 : 0] / rate < latency_s[k - 1]) {
            out[k] =
                drained_device_latency_s(out[k], iops[k], dt, backlog_ops[k - 1], arrivals[k], rate, bound, service_s);
        }
    }
}

}  // namespace ebssim
