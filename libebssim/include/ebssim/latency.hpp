#pragma once
/// \file latency.hpp
/// Latency percentiles from per-step means: the model of how completions spread in time.
///
/// In a step whose mean latency is m, an I/O waits a fixed m - s for the rate the limit allows
/// and is then served in a gamma-distributed service time of mean s (shape k; k = 4 gives a
/// coefficient of variation of 0.5). Unthrottled (m = s) that is the service-time distribution;
/// throttled, it is shifted by the wait. Over a run the distribution is the mixture of the
/// steps, weighted by the I/Os each completes: a run fast while credits last and slow after has
/// its p50 near the service time and its p95 near the throttled latency.

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

namespace ebssim {

/// Longest unloaded service time accepted, seconds (a volume's latency_ms, a workload's own
/// service time, the transfer time of a 1 MiB I/O): ten seconds is far beyond any device's, and
/// above it a typo (ms given as us, 1e300) would make every result meaningless.
inline constexpr double max_service_time_s = 10.0;

/// Default gamma shape of the service-time distribution.
inline constexpr double default_service_shape = 4.0;
/// Largest shape accepted: coefficient of variation 1/sqrt(1e6) = 0.001, a service time that is
/// constant for any purpose, far below where Boost's incomplete gamma stops converging (near 1e11).
inline constexpr double max_service_shape = 1e6;

/// Mean latency of a closed loop's I/Os (Little's law over each user's cycle of latency plus
/// think time): outstanding / completions_per_s - think_time_s, never below the service time.
/// `outstanding` is the I/Os in flight (plus any queued backlog). NaN when nothing completes.
[[nodiscard]] inline double closed_loop_latency_s(double outstanding, double completions_per_s, double service_time_s,
                                                  double think_time_s) noexcept {
    if (!(completions_per_s > 0)) return std::numeric_limits<double>::quiet_NaN();
    return std::max(service_time_s, outstanding / completions_per_s - think_time_s);
}

/// Mean and standard deviation of the latency of the I/Os completed over a run, in the model of
/// latency_quantiles (exact: no binning): a step's I/Os take its wait max(0, m - s) plus a
/// Gamma(shape, s / shape) service time (variance s^2 / shape).
struct LatencyMoments {
    double mean_s;
    double stddev_s;
};
/// Same inputs and checks as latency_quantiles; NaN for both when nothing completed.
LatencyMoments latency_moments(std::span<const double> mean_latency_s, std::span<const double> completions,
                               double service_time_s, double shape = default_service_shape);

/// Quantiles (each in 0..1) of the latency of the I/Os completed over a run, seconds.
/// `mean_latency_s[k]` and `completions[k]` per step (steps whose mean is NaN or that complete
/// nothing are skipped; a completion count is finite and >= 0, a mean NaN or finite and >= 0);
/// `service_time_s` the unloaded service time s. Quantile 0 is the smallest wait; quantile 1
/// is read as 1 - 1e-12 (the gamma tail has no end). Throws ConfigError on bad input; returns
/// NaN for every quantile when nothing completed.
std::vector<double> latency_quantiles(std::span<const double> mean_latency_s, std::span<const double> completions,
                                      double service_time_s, std::span<const double> quantiles,
                                      double shape = default_service_shape);

}  // namespace ebssim
