#pragma once
/// \file application.hpp
/// An open loop whose application bounds its outstanding I/Os (OpenLoop::max_in_flight): what
/// the device sees apart from what waits in the application. The engine's latency of an open
/// loop counts from arrival (latency_s, Little's law over every I/O that arrived and has not
/// completed); the device holds at most max_in_flight of them, and its own latency (what the
/// volume's latency metrics and fio's clat would show) is that part of the outstanding I/Os
/// over the completion rate. The rest is the wait in the application.

#include <span>

namespace ebssim {

/// The mean latency at the device of a step's I/Os: the step's mean latency from arrival,
/// `latency_s` (I/Os outstanding L = latency_s x iops, by Little's law), with at most
/// `max_in_flight` of the L at the device, so min(L, max_in_flight) / iops = min(latency_s,
/// max_in_flight / iops). At least the service time: latency_s is, and max_in_flight / iops is
/// too, since a step completes at most max_in_flight / service time I/Os per second
/// (in_flight_cap). NaN where nothing completed (latency_s is NaN there); latency_s itself
/// without a bound (max_in_flight infinity).
[[nodiscard]] inline double device_latency_s(double latency_s, double iops, double max_in_flight) noexcept {
    if (!(iops > 0)) return latency_s;
    const double at_device = max_in_flight / iops;
    return at_device < latency_s ? at_device : latency_s;
}

/// device_latency_s of each step of a run: its recorded latency_s and iops (one value per step),
/// and the bound of each step (max_in_flight: one value for the whole run, or one per step).
/// Throws ConfigError when the lengths disagree.
void device_latency_s(std::span<const double> latency_s, std::span<const double> iops,
                      std::span<const double> max_in_flight, std::span<double> out);

}  // namespace ebssim
