#include "ebssim/latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <boost/math/special_functions/gamma.hpp>

#include "ebssim/bound.hpp"
#include "ebssim/error.hpp"
#include "validate.hpp"

namespace ebssim {

double submission_share(double depth, double submitting) {
    if (!(depth >= 1 && depth < std::numeric_limits<double>::infinity())) {
        throw ConfigError(fmt::format("depth={} must be a finite number >= 1 (the I/Os a job keeps in flight)", depth));
    }
    if (!(submitting >= 0 && submitting <= 1)) {
        throw ConfigError(
            fmt::format("submitting={} must be between 0 and 1 (the share of its time a held job "
                        "spends submitting)",
                        submitting));
    }
    return std::min(1.0, submitting / depth);
}

double instance_wait_cv_at(const WaitSpread& spread, double in_flight) {
    if (!(in_flight >= 0)) {
        throw ConfigError(
            fmt::format("in_flight={} must be a number >= 0 (the I/Os in flight while a limit holds them)", in_flight));
    }
    if (in_flight <= spread.shallow_in_flight) return spread.shallow_cv;
    if (in_flight >= spread.deep_in_flight) return spread.deep_cv;
    const double x =
        std::log(in_flight / spread.shallow_in_flight) / std::log(spread.deep_in_flight / spread.shallow_in_flight);
    return spread.shallow_cv + x * (spread.deep_cv - spread.shallow_cv);
}

double held_in_flight(std::span<const double> mean_latency_s, std::span<const double> iops, double service_s) {
    if (mean_latency_s.size() != iops.size()) {
        throw ConfigError(fmt::format("mean_latency_s has {} steps and iops {}: one value per step each",
                                      mean_latency_s.size(), iops.size()));
    }
    double held = 0, all = 0;
    std::size_t n_held = 0, n_all = 0;
    for (std::size_t k = 0; k < iops.size(); ++k) {
        const double m = mean_latency_s[k];
        const double r = iops[k];
        if (!(r > 0) || !std::isfinite(m) || !std::isfinite(r)) continue;
        all += r * m;
        ++n_all;
        if (m > service_s * (1 + 1e-5)) {  // above the service time by more than float32 rounding
            held += r * m;
            ++n_held;
        }
    }
    if (n_held > 0) return held / static_cast<double>(n_held);
    if (n_all > 0) return all / static_cast<double>(n_all);
    return std::numeric_limits<double>::quiet_NaN();
}

void check_latency_model(const LatencyModel& m) {
    auto service = [](double v, const char* name) {
        if (!(v > 0 && v <= max_service_time_s)) {
            throw ConfigError(
                fmt::format("{}={} must be > 0 and at most {:g} s (max_service_time_s)", name, v, max_service_time_s));
        }
    };
    service(m.read_service_s, "read_service_s");
    service(m.write_service_s, "write_service_s");
    if (!(m.read_fraction >= 0 && m.read_fraction <= 1)) {
        throw ConfigError(fmt::format("read_fraction={} must be between 0 and 1", m.read_fraction));
    }
    if (!(m.service_cv >= min_service_cv && m.service_cv <= max_cv)) {
        throw ConfigError(
            fmt::format("service_cv={} must be between {:g} and {:g} (the coefficient of variation of "
                        "the service time; {:g} is a constant service time for any purpose)",
                        m.service_cv, min_service_cv, max_cv, min_service_cv));
    }
    for (auto [v, name] : {std::pair{m.wait_cv, "wait_cv"}, std::pair{m.instance_wait_cv, "instance_wait_cv"}}) {
        if (!(v >= 0 && v <= max_cv)) {
            throw ConfigError(
                fmt::format("{}={} must be between 0 and {:g} (the coefficient of variation of the "
                            "wait under a limit; 0: every I/O waits the mean)",
                            name, v, max_cv));
        }
    }
    if (!(m.submission_share >= 0 && m.submission_share <= 1)) {
        throw ConfigError(
            fmt::format("submission_share={} must be between 0 and 1 (the share of the wait "
                        "before submission)",
                        m.submission_share));
    }
}

namespace {

void check_steps(std::span<const double> mean_latency_s, std::span<const double> completions,
                 std::span<const std::uint8_t> bound, const LatencyModel& model) {
    if (mean_latency_s.size() != completions.size()) {
        throw ConfigError(fmt::format("mean_latency_s has {} steps but completions has {}", mean_latency_s.size(),
                                      completions.size()));
    }
    if (!bound.empty() && bound.size() != completions.size()) {
        throw ConfigError(
            fmt::format("bound has {} steps but completions has {} (or give none)", bound.size(), completions.size()));
    }
    check_latency_model(model);
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
    for (const std::uint8_t b : bound) ok &= b < n_bounds;
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
            if (!bound.empty() && bound[k] >= n_bounds) {
                throw ConfigError(fmt::format("bound[{}]={} is not a Bound code (0 to {})", k, bound[k], n_bounds - 1));
            }
        }
    }
}

// Whether the instance's limits held the step (the wait's spread is the instance's).
bool instance_held(std::span<const std::uint8_t> bound, std::size_t k) noexcept {
    if (bound.empty()) return false;
    const auto b = static_cast<Bound>(bound[k]);
    return b == Bound::instance_iops || b == Bound::instance_throughput;
}

// The directions a distribution mixes: (probability, mean service time).
struct Part {
    double p;
    double s;
};
std::vector<Part> parts_of(const LatencyModel& m, Direction d) {
    std::vector<Part> out;
    const double rf = m.read_fraction;
    if (d != Direction::write && rf > 0) out.push_back({d == Direction::read ? 1.0 : rf, m.read_service_s});
    if (d != Direction::read && rf < 1) out.push_back({d == Direction::write ? 1.0 : 1.0 - rf, m.write_service_s});
    return out;
}

// W + S of one step and direction: wait of mean w and cv cw, service of mean s and cv cs. The
// shifted gamma with the first three cumulants of the sum (a gamma of mean mu and cv c has
// cumulants mu, (c mu)^2, 2 c^4 mu^3).
struct ShiftedGamma {
    double shift, shape, scale;
    [[nodiscard]] double cdf(double x) const {
        return x > shift ? boost::math::gamma_p(shape, (x - shift) / scale) : 0.0;
    }
};
ShiftedGamma sum_of(double w, double cw, double s, double cs) noexcept {
    const double k2 = (cw * w) * (cw * w) + (cs * s) * (cs * s);
    if (cw == 0 || w == 0) return {w, 1.0 / (cs * cs), cs * cs * s};  // exact: the service shifted by w
    const double cw2 = cw * cw, cs2 = cs * cs;
    const double k3 = 2 * cw2 * cw2 * w * w * w + 2 * cs2 * cs2 * s * s * s;
    const double scale = k3 / (2 * k2);
    const double shape = k2 / (scale * scale);
    return {w + s - shape * scale, shape, scale};
}

}  // namespace

LatencyMoments latency_moments(std::span<const double> mean_latency_s, std::span<const double> completions,
                               std::span<const std::uint8_t> bound, const LatencyModel& model, Direction direction) {
    check_steps(mean_latency_s, completions, bound, model);
    const std::vector<Part> parts = parts_of(model, direction);
    const double sbar = model.mean_service_s();
    // A step's I/Os of direction d have mean w + s_d, w = max(0, m - s) less the wait before
    // submission (fio's slat: 0 unless the model has a submission_share); steps that complete
    // nothing drop out.
    double n = 0, sum = 0;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        const double c = completions[k];
        const double m = mean_latency_s[k];
        if (!(c > 0) || std::isnan(m)) continue;
        const double w = std::max(0.0, m - sbar) - submission_latency_s(m, model);
        for (const Part& d : parts) {
            n += c * d.p;
            sum += c * d.p * (w + d.s);
        }
    }
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (!(n > 0)) return {nan, nan};
    const double mean = sum / n;
    // Var = the spread of the step means + each step's own variance (cw w)^2 + (cs s_d)^2 (two
    // passes: no cancellation when the spread is small against the mean).
    double ss = 0;
    const double cs = model.service_cv;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        const double c = completions[k];
        const double m = mean_latency_s[k];
        if (!(c > 0) || std::isnan(m)) continue;
        const double w = std::max(0.0, m - sbar) - submission_latency_s(m, model);
        const double cw = instance_held(bound, k) ? model.instance_wait_cv : model.wait_cv;
        for (const Part& d : parts) {
            const double dev = w + d.s - mean;
            ss += c * d.p * (dev * dev + (cw * w) * (cw * w) + (cs * d.s) * (cs * d.s));
        }
    }
    return {mean, std::sqrt(ss / n)};
}

std::vector<double> latency_quantiles(std::span<const double> mean_latency_s, std::span<const double> completions,
                                      std::span<const std::uint8_t> bound, const LatencyModel& model,
                                      std::span<const double> quantiles, Direction direction) {
    check_steps(mean_latency_s, completions, bound, model);
    for (double q : quantiles) {
        if (!(q >= 0 && q <= 1)) throw ConfigError(fmt::format("quantile {} must be between 0 and 1", q));
    }
    const std::vector<Part> parts = parts_of(model, direction);
    const double sbar = model.mean_service_s();
    // The wait after submission (fio's clat), as latency_moments. Steps with about the same wait
    // under the same kind of limit share one mixture component
    // (bins 0.5 % wide on a log scale of wait / mean service time).
    struct Bin {
        double weight = 0;
        double weighted_wait = 0;
    };
    std::map<std::pair<bool, long>, Bin> bins;
    for (std::size_t k = 0; k < completions.size(); ++k) {
        const double c = completions[k];
        const double m = mean_latency_s[k];
        if (!(c > 0) || std::isnan(m)) continue;
        const double wait = std::max(0.0, m - sbar) - submission_latency_s(m, model);
        Bin& b = bins[{instance_held(bound, k), std::lround(200.0 * std::log1p(wait / sbar))}];
        b.weight += c;
        b.weighted_wait += c * wait;
    }
    struct Component {
        double weight;
        ShiftedGamma dist;
    };
    std::vector<Component> comps;
    comps.reserve(bins.size() * parts.size());
    double total = 0;  // summed in the order the CDF adds, so that the CDF reaches exactly 1
    double lowest = std::numeric_limits<double>::infinity(), highest = 0;
    for (const auto& [key, b] : bins) {
        const double w = b.weighted_wait / b.weight;
        const double cw = key.first ? model.instance_wait_cv : model.wait_cv;
        for (const Part& d : parts) {
            const ShiftedGamma g = sum_of(w, cw, d.s, model.service_cv);
            comps.push_back({b.weight * d.p, g});
            total += b.weight * d.p;
            lowest = std::min(lowest, std::max(0.0, g.shift));
            highest = std::max(highest, w + d.s);
        }
    }
    std::vector<double> out(quantiles.size(), std::numeric_limits<double>::quiet_NaN());
    if (!(total > 0)) return out;

    auto cdf = [&](double x) {
        double c = 0;
        for (const Component& k : comps) c += k.weight * k.dist.cdf(x);
        return c / total;
    };
    for (std::size_t i = 0; i < quantiles.size(); ++i) {
        const double q = quantiles[i];
        if (q <= 0) {  // the fastest I/O: the smallest shift, a service time that tends to 0
            out[i] = lowest;
            continue;
        }
        // The gamma tail has no end: quantile 1 is read as 1 - 1e-12, the largest latency to
        // one part in 10^12.
        const double qq = std::min(q, 1.0 - 1e-12);
        double lo = 0;
        double hi = 2 * highest;
        while (cdf(hi) < qq && hi < 1e12) hi *= 2;
        for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
            const double mid = 0.5 * (lo + hi);
            (cdf(mid) < qq ? lo : hi) = mid;
        }
        out[i] = hi;
    }
    return out;
}

}  // namespace ebssim
