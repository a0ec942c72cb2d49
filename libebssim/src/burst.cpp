#include "ebssim/burst.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

double checked_credits(const VolumeParams& p, double credits, double fallback) {
    if (std::isnan(credits)) return fallback;
    detail::require_finite(credits, "credits");
    if (credits < 0 || credits > p.credit_capacity) {
        throw ConfigError(fmt::format("credits={} is out of range 0 to {} (the bucket's capacity)", credits,
                                      p.credit_capacity));
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

double refill_time_s(const VolumeParams& p, double counted_iops, double credits) {
    check_iops(counted_iops);
    double c = checked_credits(p, credits, 0.0);
    if (!p.has_bucket()) return inf;
    double gain = p.baseline_iops - counted_iops;
    if (gain <= 0) return c >= p.credit_capacity ? 0.0 : inf;
    return (p.credit_capacity - c) / gain;
}

}  // namespace ebssim
