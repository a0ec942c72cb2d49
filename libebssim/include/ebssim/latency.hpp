#pragma once
/// \file latency.hpp
/// Latency distributions from per-step means: the model of how the I/Os of a run spread in time
/// (docs/model.md, "Latency percentiles").
///
/// In a step whose mean latency is m (Little's law, the engine's), an I/O first waits W for the
/// limit that holds it back and is then served in S, its unloaded service time:
///   - S is gamma-distributed with mean s_r for a read and s_w for a write and coefficient of
///     variation service_cv (the volume family's: docs/model.md, "Service time");
///   - W is gamma-distributed with mean w = max(0, m - s), s = the I/O-weighted mean service time
///     (so a step's mean stays m exactly), and coefficient of variation wait_cv: the limiter does
///     not release the I/Os it holds back in arrival order (0: first come, first served, every
///     I/O waits w; 1: exponential waits, service in random order among many). By default the cv
///     depends on the platform (Nitro or Xen), on what binds (the volume's limits or the
///     instance's) and, under the instance's, on the I/Os in flight (WaitSpread).
/// W + S is a sum of two gammas; each step's distribution is the shifted gamma with its first
/// three cumulants (exact when either part is constant). Over a run the distribution is the
/// mixture of the steps, weighted by the I/Os each completes.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ebssim {

/// Longest unloaded service time accepted, seconds (a volume's latency_ms, a workload's own
/// service time, the transfer time of a 1 MiB I/O): ten seconds is far beyond any device's, and
/// above it a typo (ms given as us, 1e300) would make every result meaningless.
inline constexpr double max_service_time_s = 10.0;

/// Smallest coefficient of variation of the service time accepted (a gamma shape of 1e6: a
/// service time constant for any purpose, far below where Boost's incomplete gamma stops
/// converging), and the largest of either spread (10: a tail that no measured device shows).
inline constexpr double min_service_cv = 1e-3;
inline constexpr double max_cv = 10.0;

/// Default spread of the wait under a limit, by platform and by what binds (docs/model.md,
/// "Latency percentiles", with the measurements behind each). Under the volume's own limits one
/// coefficient of variation at any depth; under the instance's, one that grows with the I/Os in
/// flight on the volume: `shallow_cv` at `shallow_in_flight` or fewer, `deep_cv` at
/// `deep_in_flight` or more, linear in log(in flight) between the two (an assumption: the data
/// hold only the two ends).
struct WaitSpread {
    double volume_cv;          ///< under the volume's own limits
    double shallow_in_flight;  ///< under the instance's: I/Os in flight at or below which it spreads least
    double shallow_cv;         ///< the instance's cv there
    double deep_in_flight;     ///< I/Os in flight at or above which it spreads most
    double deep_cv;            ///< the instance's cv there
};
/// Nitro: 0.65 under a volume's caps with 256 libaio I/Os in flight (data set 05, the median fit of
/// 21 runs); under the instance's, 0.2 with 16 psync jobs (data set 03, fitted 0.193 +- 0.016) and
/// 0.65 with 256 (data set 05's runs r5b.large's throughput held: io2's two fitted 0.65 +- 0.04).
inline constexpr WaitSpread nitro_wait_spread{0.65, 16, 0.2, 256, 0.65};
/// Xen: 0.1 under either limit with 512 in flight (data set 01); no shallower run, so flat.
inline constexpr WaitSpread xen_wait_spread{0.1, 16, 0.1, 256, 0.1};
[[nodiscard]] constexpr WaitSpread default_wait_spread(bool nitro) noexcept {
    return nitro ? nitro_wait_spread : xen_wait_spread;
}

/// The spread's coefficient of variation under the instance's limits with `in_flight` I/Os in
/// flight (>= 0; infinity: a backlog without bound, the deep end). Throws ConfigError naming the
/// argument.
[[nodiscard]] double instance_wait_cv_at(const WaitSpread& spread, double in_flight);

/// The I/Os a run keeps in flight while a limit holds it, by Little's law: the mean, over the
/// steps whose mean latency exceeds `service_s` (something held their I/Os back), of iops x
/// mean latency; over every step that completes I/O when none was held; NaN when none completes.
/// A closed loop of N I/Os without think time gives N. `iops` per second, as the engine records.
[[nodiscard]] double held_in_flight(std::span<const double> mean_latency_s, std::span<const double> iops,
                                    double service_s);

/// fio's submission latency (slat) under a limit (docs/model.md, "Submission latency"). A job of
/// an asynchronous engine (libaio) submits one I/O at a time; while a limit holds the device's
/// queue full, io_submit blocks until a request frees, so each job spends a share of its time in
/// submission: `submitting`, measured as slat.mean x IOPS / jobs (Nitro r5b.large, 256 deep:
/// 0.84; Xen c4.xlarge, 512 deep: 0.75). One I/O of each job's `depth` is in submission that
/// share of the time, so by Little's law slat / lat = submitting / depth of the wait.
inline constexpr double nitro_submitting = 0.84;
inline constexpr double xen_submitting = 0.75;
[[nodiscard]] constexpr double default_submitting(bool nitro) noexcept {
    return nitro ? nitro_submitting : xen_submitting;
}

/// The share of a held I/O's wait that fio reports as submission latency: submitting / depth, at
/// most 1, for a job of `depth` I/Os in flight (>= 1) of an asynchronous engine; `submitting` in
/// 0..1 (default_submitting). Throws ConfigError naming the argument.
[[nodiscard]] double submission_share(double depth, double submitting);

/// The latency model of one run: service times per direction, their spread, the waits' spread.
struct LatencyModel {
    double read_service_s = 0;                            ///< mean unloaded service time of a read, seconds (> 0)
    double write_service_s = 0;                           ///< of a write
    double read_fraction = 1;                             ///< share of the I/Os that are reads, 0..1
    double service_cv = 0.5;                              ///< coefficient of variation of the service time
    double wait_cv = nitro_wait_spread.volume_cv;         ///< of the wait under the volume's limits
    double instance_wait_cv = nitro_wait_spread.deep_cv;  ///< of the wait under the instance's limits
    /// Share (0..1) of each I/O's wait spent before it was submitted (fio's slat: submission_share).
    /// latency_quantiles and latency_moments describe the rest, wait x (1 - share) + service (fio's
    /// clat); 0 (the default): the whole latency.
    double submission_share = 0;

    /// The I/O-weighted mean service time (what the engine's Little's law uses). Exactly the
    /// service time when both directions take the same.
    [[nodiscard]] double mean_service_s() const noexcept {
        return read_service_s == write_service_s ? read_service_s
                                                 : write_service_s + read_fraction * (read_service_s - write_service_s);
    }
};

/// fio's mean submission latency (slat) in a step of mean latency `mean_latency_s`: the model's
/// submission_share of the step's wait, max(0, m - s) with s the mean service time. The step's
/// clat then averages m minus this (docs/model.md, "Submission latency"). NaN stays NaN.
[[nodiscard]] inline double submission_latency_s(double mean_latency_s, const LatencyModel& model) noexcept {
    if (std::isnan(mean_latency_s)) return mean_latency_s;
    return model.submission_share * std::max(0.0, mean_latency_s - model.mean_service_s());
}

/// Which I/Os a distribution describes.
enum class Direction : std::uint8_t { all = 0, read = 1, write = 2 };

/// Mean latency of a closed loop's I/Os (Little's law over each user's cycle of latency plus
/// think time): outstanding / completions_per_s - think_time_s, never below the service time.
/// `outstanding` is the I/Os in flight (plus any queued backlog). NaN when nothing completes.
[[nodiscard]] inline double closed_loop_latency_s(double outstanding, double completions_per_s, double service_time_s,
                                                  double think_time_s) noexcept {
    if (!(completions_per_s > 0)) return std::numeric_limits<double>::quiet_NaN();
    return std::max(service_time_s, outstanding / completions_per_s - think_time_s);
}

/// Mean and standard deviation of the latency of the I/Os completed over a run (exact, no
/// binning).
struct LatencyMoments {
    double mean_s;
    double stddev_s;
};

/// Per-step inputs: `mean_latency_s[k]` and `completions[k]` (steps whose mean is NaN or that
/// complete nothing are skipped; a completion count is finite and >= 0, a mean NaN or finite and
/// >= 0); `bound[k]` the Bound code of the step (empty: every step is held by the volume, if at
/// all). Throws ConfigError on bad input; NaN when nothing completed.
LatencyMoments latency_moments(std::span<const double> mean_latency_s, std::span<const double> completions,
                               std::span<const std::uint8_t> bound, const LatencyModel& model,
                               Direction direction = Direction::all);

/// Quantiles (each in 0..1) of the latency of the I/Os completed over a run, seconds. Quantile 0
/// is the smallest latency the model allows; quantile 1 is read as 1 - 1e-12 (the gamma tail has
/// no end). Inputs as latency_moments. Steps whose waits agree within 0.5 % share one mixture
/// component (docs/model.md), so a long run costs a few thousand components at most.
std::vector<double> latency_quantiles(std::span<const double> mean_latency_s, std::span<const double> completions,
                                      std::span<const std::uint8_t> bound, const LatencyModel& model,
                                      std::span<const double> quantiles, Direction direction = Direction::all);

/// Checks a model (service times > 0 and at most max_service_time_s, read_fraction in 0..1,
/// service_cv in [min_service_cv, max_cv], the wait cvs in [0, max_cv]); throws ConfigError
/// naming the field.
void check_latency_model(const LatencyModel& model);

}  // namespace ebssim
