#include "ebssim/burst.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/latency.hpp"
#include "step.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

double checked_credits(const VolumeParams& p, double credits, double fallback) {
    if (std::isnan(credits)) return fallback;
    detail::require_finite(credits, "credits");
    if (credits < 0 || credits > p.credit_capacity) {
        throw ConfigError(
            fmt::format("credits={} is out of range 0 to {} (the bucket's capacity)", credits, p.credit_capacity));
    }
    return credits;
}

void check_iops(double counted_iops) {
    detail::require_finite(counted_iops, "counted_iops");
    if (counted_iops < 0) throw ConfigError(fmt::format("counted_iops={} must be >= 0", counted_iops));
}
}  // namespace

double burst_duration_s(const VolumeParams& p, double counted_iops, double credits) {
    check_iops(counted_iops);
    double c = checked_credits(p, credits, p.initial_credits);
    if (!p.has_bucket()) return inf;
    double drain = std::min(counted_iops, p.burst_iops) - p.baseline_iops;
    if (drain <= 0) return inf;
    return c / drain;
}

ClosedLoopRate closed_loop_rate(const VolumeParams& p, const ClosedLoop& w, bool with_credits) {
    validate_workload(Workload{w}, 0);
    ClosedLoopRate r;
    const double st = service_time_s(p, w);
    const double per = counted_per_io(p, w);
    r.offered_iops = offered_iops(p, w);
    // The engine's step (step.hpp) per second: with credits the pool is unbounded and the byte
    // cap the burst's; without, the bucket grants only what it earns, the baseline.
    const detail::StepLimits lim = detail::StepLimits::of(p, 1.0);
    const double credits = with_credits ? 1.0 : 0.0;
    const double pool = with_credits ? inf : detail::pool_of(0.0, lim.earned);
    const detail::Caps<detail::ScalarOps> caps =
        detail::limits_at<detail::ScalarOps>(credits, pool, lim.burst_cap, lim.tput_hi, lim.tput_lo);
    const double cap_counted = caps.counted;
    const double cap_bytes = caps.bytes;
    const double want_counted = r.offered_iops * per;
    const double want_bytes = r.offered_iops * w.io_bytes;
    const detail::Throttle t = detail::throttle(want_counted, want_bytes, cap_counted, cap_bytes);
    r.bound = t.bound;
    r.iops = t.f * r.offered_iops;
    // As in the engine: exactly the cap when the IOPS limit binds.
    r.counted_iops =
        detail::served_counted<detail::ScalarOps>(t.bound == Bound::volume_iops, cap_counted, t.f, want_counted);
    r.throughput_bytes_s = t.f * want_bytes;
    r.latency_s = closed_loop_latency_s(w.in_flight, r.iops, st, w.think_time_s);
    return r;
}

double cliff_time_s(const VolumeParams& p, const ClosedLoop& w, double credits) {
    const ClosedLoopRate r = closed_loop_rate(p, w, true);
    return burst_duration_s(p, r.counted_iops, credits);
}

double cliff_time_s(const VolumeParams& p, const SteadyOpenLoop& w, double credits) {
    detail::require_finite(w.iops, "iops");
    detail::require_finite(w.bytes_per_s, "bytes_per_s");
    if (w.iops < 0) throw ConfigError(fmt::format("iops={} must be >= 0", w.iops));
    if (w.bytes_per_s < 0) throw ConfigError(fmt::format("bytes_per_s={} must be >= 0", w.bytes_per_s));
    if (w.iops == 0 && w.bytes_per_s > 0) {
        throw ConfigError(fmt::format("bytes_per_s={} with iops=0: bytes need at least one I/O", w.bytes_per_s));
    }
    if (!(w.read_fraction >= 0 && w.read_fraction <= 1)) {
        throw ConfigError(fmt::format("read_fraction={} must be in [0, 1]", w.read_fraction));
    }
    if (!(w.max_in_flight > 0)) throw ConfigError(fmt::format("max_in_flight={} must be > 0", w.max_in_flight));
    if (!std::isnan(w.service_time_s) && !(w.service_time_s > 0 && std::isfinite(w.service_time_s))) {
        throw ConfigError(fmt::format("service_time_s={} must be > 0", w.service_time_s));
    }
    if (w.iops == 0) return burst_duration_s(p, 0.0, credits);
    // The engine's step (stepper.hpp, offer) per second, with credits: the burst caps, the
    // limit rule, then the application's bound on outstanding I/Os.
    const double want_counted = IoCounting(p, w.pattern)(w.iops, w.bytes_per_s);
    const detail::StepLimits lim = detail::StepLimits::of(p, 1.0);
    const detail::Caps<detail::ScalarOps> caps =
        detail::limits_at<detail::ScalarOps>(1.0, inf, lim.burst_cap, lim.tput_hi, lim.tput_lo);
    const detail::Throttle t = detail::throttle(want_counted, w.bytes_per_s, caps.counted, caps.bytes);
    double served =
        detail::served_counted<detail::ScalarOps>(t.bound == Bound::volume_iops, caps.counted, t.f, want_counted);
    if (w.max_in_flight < inf) {
        const double st =
            std::isnan(w.service_time_s) ? p.service_time_s(w.bytes_per_s / w.iops, w.read_fraction) : w.service_time_s;
        const double cap_ops = detail::in_flight_cap(w.max_in_flight, st);
        if (cap_ops < t.f * w.iops) served = cap_ops / w.iops * want_counted;
    }
    return burst_duration_s(p, served, credits);
}

double refill_time_s(const VolumeParams& p, double counted_iops, double credits) {
    check_iops(counted_iops);
    double c = checked_credits(p, credits, 0.0);
    if (!p.has_bucket()) return inf;
    double gain = p.baseline_iops - counted_iops;
    if (gain <= 0) return c >= p.credit_capacity ? 0.0 : inf;
    return (p.credit_capacity - c) / gain;
}

}  // namespace ebssim
