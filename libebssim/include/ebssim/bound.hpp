#pragma once
/// \file bound.hpp
/// Bound: which limit held a volume (or an instance) back in a step, as the series and totals
/// report it.

#include <cstdint>
#include <string_view>

namespace ebssim {

/// Which limit held a volume back in a step.
enum class Bound : std::uint8_t {
    demand = 0,               ///< served everything it could (not throttled)
    volume_iops = 1,          ///< the volume's IOPS limit (gp2: burst or, without credits, baseline)
    volume_throughput = 2,    ///< the volume's throughput limit
    instance_iops = 3,        ///< the instance's EBS IOPS budget, shared with the other volumes
    instance_throughput = 4,  ///< the instance's EBS throughput budget
    /// the open loop's own bound on outstanding I/Os (OpenLoop::max_in_flight): at most
    /// max_in_flight / service time completions per second; the rest waits in the application
    max_in_flight = 5,
};
inline constexpr int n_bounds = 6;

/// The name of each Bound, indexed by its code (what results and reports print).
inline constexpr std::string_view bound_names[n_bounds] = {"demand",        "volume_iops",         "volume_throughput",
                                                           "instance_iops", "instance_throughput", "max_in_flight"};

}  // namespace ebssim
