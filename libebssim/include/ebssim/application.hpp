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

/// The seconds into a step of dt seconds at which a backlog is gone: `backlog_before` I/Os waiting
/// at its start and `arrived` more arriving evenly over it, served at `rate` I/Os per second:
/// backlog_before / (rate - arrived / dt), at most dt; dt when the rate does not exceed the
/// arrivals' (the backlog does not shrink), 0 without a backlog.
[[nodiscard]] inline double drain_time_s(double backlog_before, double arrived, double rate, double dt) noexcept {
    if (!(backlog_before > 0)) return 0.0;
    const double net = rate - arrived / dt;
    if (!(net > 0)) return dt;
    const double t = backlog_before / net;
    return t < dt ? t : dt;
}

/// The mean latency at the device of a step in which the backlog of an application held at its
/// bound runs out. While the backlog lasts the device is fed max_in_flight I/Os at the rate of
/// the step before, `rate` (the step held there: max_in_flight / rate at the device); once it is
/// gone, the step's remaining I/Os arrive at a device that keeps up and take `service_s`. The
/// backlog runs out drain_time_s into the step, so of the step's iops x dt I/Os, rate x that
/// time wait at the device and the rest do not. (The steady rule, device_latency_s above, would
/// count every I/O of such a step at max_in_flight / its own, lower, rate.) At most the steady
/// rule's value, at least service_s.
[[nodiscard]] inline double drained_device_latency_s(double steady_s, double iops, double dt, double backlog_before,
                                                     double arrived, double rate, double max_in_flight,
                                                     double service_s) noexcept {
    const double served = iops * dt;
    double drained = rate * drain_time_s(backlog_before, arrived, rate, dt);
    drained = drained < served ? drained : served;
    const double mean = (drained * (max_in_flight / rate) + (served - drained) * service_s) / served;
    const double at_most = mean < steady_s ? mean : steady_s;
    return at_most > service_s ? at_most : service_s;
}

/// device_latency_s of each step of a run: its recorded latency_s and iops (one value per step),
/// and the bound of each step (max_in_flight: one value for the whole run, or one per step).
/// With the run's backlog_ops and arrivals (one value per step each; empty: not known), a step
/// whose backlog runs out, after a step that held the application at its bound (its device
/// latency max_in_flight / its rate), takes drained_device_latency_s with the run's mean service
/// time `service_s` and step `dt`; the first step (whose backlog before is not known) and every
/// other step take the steady rule. Throws ConfigError when the lengths disagree.
void device_latency_s(std::span<const double> latency_s, std::span<const double> iops,
                      std::span<const double> max_in_flight, std::span<double> out,
                      std::span<const double> backlog_ops = {}, std::span<const double> arrivals = {},
                      double service_s = 0, double dt = 1);

}  // namespace ebssim
