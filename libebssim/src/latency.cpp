#include "ebssim/latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <boost/math/special_functions/gamma.hpp>

#include "ebssim/error.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {

void check_steps(std::span<const double> mean_latency_s, std::span<const double> completions, double service_time_s,
                 double shape) {
    if (mean_latency_s.size() != completions.size()) {
        throw ConfigError(fmt::format("mean_latency_s has {} steps but completions has {}", mean_latency_s.size(),
                                      completions.size()));
    }
    detail::require_positive(service_time_s, "service_time_s");
    // One branch-free pass decides whether any step is wrong; only then a second finds the first
    // for the message. Completions are finite and >= 0; a mean latency is NaN (nothing completed:
    // the step is skipped) or finite and >= 0.
    constexpr double inf = std::numeric_limits<double>::infinity();
    bool ok = true;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        const double w = completions[k];
        const double m = mean_latency_s[k];
        ok &= (w >= 0) & (w < inf) & (((m >= 0) & (m < inf)) | std::isnan(m));
    }
    if (!ok) {
        for (std::size_t k = 0; k < completions.size(); ++k) {
            const double w = completions[k];
            const double m = mean_latency_s[k];
            if (!(w >= 0 && w < inf)) {
                throw ConfigError(fmt::format("completions[{}]={} must be a finite number >= 0", k, w));
            }
            if (!(std::isnan(m) || (m >= 0 && m < inf))) {
                throw ConfigError(fmt::format(
                    "mean_latency_s[{}]={} must be a finite number >= 0 (NaN: nothing completed in the step)", k, m));
            }
        }
    }
    detail::require_positive(shape, "shape");
    if (shape > max_service_shape) {
        throw ConfigError(
            fmt::format("shape={} is above {:g}, the largest gamma shape accepted (coefficient of "
                        "variation 0.001: a constant service time)",
                        shape, max_service_shape));
    }
}

}  // namespace

LatencyMoments latency_moments(std::span<const double> mean_latency_s, std::span<const double> completions,
                               double service_time_s, double shape) {
    check_steps(mean_latency_s, completions, service_time_s, shape);
    // A step's I/Os have mean wait + s = max(m, s); steps that complete nothing drop out.
    auto step_mean = [&](std::size_t k, double& w) {
        w = completions[k];
        const double m = mean_latency_s[k];
        if (!(w > 0) || std::isnan(m)) w = 0;
        return std::max(m, service_time_s);
    };
    double n = 0, sum = 0;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        double w;
        const double mk = step_mean(k, w);
        if (w > 0) {
            n += w;
            sum += w * mk;
        }
    }
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (!(n > 0)) return {nan, nan};
    const double mean = sum / n;
    // Var = Var(step means) + Var(service) = sum w (m_k - mean)^2 / n + s^2 / shape (two passes:
    // no cancellation when the spread is small against the mean).
    double ss = 0;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        double w;
        const double mk = step_mean(k, w);
        if (w > 0) ss += w * (mk - mean) * (mk - mean);
    }
    return {mean, std::sqrt(ss / n + service_time_s * service_time_s / shape)};
}

std::vector<double> latency_quantiles(std::span<const double> mean_latency_s, std::span<const double> completions,
                                      double service_time_s, std::span<const double> quantiles, double shape) {
    check_steps(mean_latency_s, completions, service_time_s, shape);
    for (double q : quantiles) {
        if (!(q >= 0 && q <= 1)) throw ConfigError(fmt::format("quantile {} must be between 0 and 1", q));
    }
    // Steps with about the same wait share one mixture component (bins 0.5 % wide on a log
    // scale of wait / service time), so a long run costs a few thousand components at most.
    struct Component {
        double weight = 0;
        double weighted_wait = 0;
    };
    std::map<long, Component> bins;
    double total = 0;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        const double w = completions[k];
        const double m = mean_latency_s[k];
        if (!(w > 0) || std::isnan(m)) continue;
        const double wait = std::max(0.0, m - service_time_s);
        Component& c = bins[std::lround(200.0 * std::log1p(wait / service_time_s))];
        c.weight += w;
        c.weighted_wait += w * wait;
        total += w;
    }
    std::vector<std::pair<double, double>> weight_by_wait;  // (wait, weight)
    weight_by_wait.reserve(bins.size());
    total = 0;  // re-summed in the order the CDF adds, so that the CDF reaches exactly 1
    for (const auto& [bin, c] : bins) {
        weight_by_wait.emplace_back(c.weighted_wait / c.weight, c.weight);
        total += c.weight;
    }
    std::vector<double> out(quantiles.size(), std::numeric_limits<double>::quiet_NaN());
    if (!(total > 0)) return out;

    const double scale = service_time_s / shape;  // gamma(shape, scale) has mean service_time_s
    auto cdf = [&](double x) {
        double c = 0;
        for (const auto& [wait, w] : weight_by_wait) {
            if (x > wait) c += w * boost::math::gamma_p(shape, (x - wait) / scale);
        }
        return c / total;
    };
    const double max_wait = weight_by_wait.back().first;
    for (std::size_t i = 0; i < quantiles.size(); ++i) {
        const double q = quantiles[i];
        if (q <= 0) {  // the fastest I/O: the smallest wait, with a service time that tends to 0
            out[i] = weight_by_wait.front().first;
            continue;
        }
        // The gamma tail has no end: quantile 1 is read as 1 - 1e-12, the largest latency to
        // one part in 10^12.
        const double qq = std::min(q, 1.0 - 1e-12);
        double lo = 0;
        // The largest quantile of any component bounds the mixture's from above.
        double hi = max_wait + scale * boost::math::gamma_p_inv(shape, qq) + service_time_s;
        while (cdf(hi) < qq && hi < 1e9) hi *= 2;
        for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; ++it) {
            const double mid = 0.5 * (lo + hi);
            (cdf(mid) < qq ? lo : hi) = mid;
        }
        out[i] = hi;
    }
    return out;
}

}  // namespace ebssim
