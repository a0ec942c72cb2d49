#include "ebssim/instance.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/units.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {
void require_pct(double v, std::string_view field) {
    detail::require_finite(v, field);
    if (v < 0 || v > 100) throw ConfigError(fmt::format("{}={} is out of range 0 to 100", field, v));
}
}  // namespace

InstanceParams make_instance(const InstanceSpec& s) {
    const std::string who = s.name.empty() ? std::string("instance") : fmt::format("instance {}", s.name);
    for (auto [v, f] : {std::pair{s.baseline_iops, "baseline_iops"}, std::pair{s.max_iops, "max_iops"},
                        std::pair{s.baseline_mb_s, "baseline_mb_s"}, std::pair{s.max_mb_s, "max_mb_s"}}) {
        if (std::isnan(v)) {
            throw ConfigError(
                fmt::format("{}: {} is missing: the instance is not EBS-optimized or its limits are "
                            "unknown",
                            who, f));
        }
        detail::require_positive(v, f);
    }
    if (s.max_iops < s.baseline_iops) {
        throw ConfigError(fmt::format("{}: max_iops={} is below baseline_iops={}", who, s.max_iops, s.baseline_iops));
    }
    if (s.max_mb_s < s.baseline_mb_s) {
        throw ConfigError(fmt::format("{}: max_mb_s={} is below baseline_mb_s={}", who, s.max_mb_s, s.baseline_mb_s));
    }
    detail::require_positive(s.burst_s, "burst_s");
    detail::require_positive(s.refill_s, "refill_s");
    require_pct(s.io_balance_pct, "io_balance_pct");
    require_pct(s.byte_balance_pct, "byte_balance_pct");
    if (!std::isnan(s.wait_cv) && !(s.wait_cv >= 0 && s.wait_cv <= max_cv)) {
        throw ConfigError(
            fmt::format("{}: wait_cv={} must be between 0 and {:g} (the coefficient of variation of the wait of "
                        "I/Os the instance's limits hold back)",
                        who, s.wait_cv, max_cv));
    }

    InstanceParams p;
    p.name = s.name;
    p.nitro = s.nitro;
    p.share = s.share;
    p.baseline_iops = s.baseline_iops;
    p.max_iops = s.max_iops;
    p.baseline_bytes_s = s.baseline_mb_s * units::MB;
    p.max_bytes_s = s.max_mb_s * units::MB;
    // Assumption (docs/model.md): the bucket holds the excess over baseline for burst_s seconds
    // and refills from empty in refill_s at idle.
    p.io_capacity = (p.max_iops - p.baseline_iops) * s.burst_s;
    p.bytes_capacity = (p.max_bytes_s - p.baseline_bytes_s) * s.burst_s;
    p.io_earn_idle = p.io_capacity / s.refill_s;
    p.bytes_earn_idle = p.bytes_capacity / s.refill_s;
    p.io_initial = p.io_capacity * s.io_balance_pct / 100.0;
    p.bytes_initial = p.bytes_capacity * s.byte_balance_pct / 100.0;
    p.wait_cv = s.wait_cv;  // NaN: the platform's, by the I/Os in flight (instance_wait_cv_at)
    return p;
}

}  // namespace ebssim
