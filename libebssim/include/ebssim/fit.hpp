#pragma once
/// \file fit.hpp
/// Calibration: fitting the model to measured rates (fio logs) and latencies.
///
/// - levenberg_marquardt: bounded nonlinear least squares (Levenberg-Marquardt on Eigen's QR),
///   parameter covariance from the Jacobian, and which parameters the data do not determine.
/// - fit_levels: piecewise-constant levels and the times they change, fitted to window means.
/// - fit_bucket_volume: the engine as forward model: a bucket volume's size (whole GiB, profiled)
///   and starting balance fitted to measured rates over fio's phases.
/// - fit_service_time: unloaded service time s(b) = intercept + b x per_byte (weighted linear LS).
/// - fit_gamma: maximum likelihood of the gamma service-time distribution from binned latencies.
///
/// Eigen is used inside fit.cpp only: this header's interface is plain std::vector.

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ebssim/instance.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"

namespace ebssim::fit {

/// r = f(x): fill `residuals` (size m) for parameters x.
using ResidualFn = std::function<void(const std::vector<double>& x, std::vector<double>& residuals)>;

/// Options of levenberg_marquardt.
struct LsqOptions {
    int max_iterations = 100;
    double ftol = 1e-12;  ///< stop when the sum of squares falls by less than this fraction
    double xtol = 1e-10;  ///< stop when the step is below this fraction of |x| (+ xtol)
};

/// A least-squares fit.
struct LsqResult {
    std::vector<double> x;           ///< fitted parameters
    std::vector<double> se;          ///< standard errors (NaN where not determined)
    std::vector<double> covariance;  ///< n x n, row-major: s^2 (J^T J)^-1 on the determined parameters, NaN elsewhere
    std::vector<bool> determined;    ///< false: the data do not constrain this parameter (flat direction)
    std::vector<double> residuals;   ///< at x
    double ssr = 0;                  ///< sum of squared residuals
    int dof = 0;                     ///< residuals - determined parameters
    int iterations = 0;
    int evaluations = 0;
    bool converged = false;
};

/// Minimise sum(r(x)^2) over lower <= x <= upper by Levenberg-Marquardt (Marquardt's scaling,
/// steps solved with Eigen's column-pivoting QR, bounds by projection). The Jacobian is taken by
/// finite differences of `step` (per parameter; forward, or backward at an upper bound). A
/// parameter whose Jacobian column is zero, or that the QR finds dependent on others, is not
/// determined: it keeps its value and gets NaN standard error. Covariance = s^2 (J^T J)^-1 with
/// s^2 = ssr / dof (dof > 0), else NaN. Throws ConfigError on inconsistent sizes or x0 outside
/// its bounds.
LsqResult levenberg_marquardt(const ResidualFn& f, std::size_t m, std::vector<double> x0,
                              const std::vector<double>& lower, const std::vector<double>& upper,
                              const std::vector<double>& step, const LsqOptions& options = {});

/// Measured mean rates over windows on one clock: window k covers (start_s[k], end_s[k]] and
/// its mean rate is value[k]; weight[k] multiplies its squared residual.
struct Windows {
    std::vector<double> start_s;
    std::vector<double> end_s;
    std::vector<double> value;
    std::vector<double> weight;
    [[nodiscard]] std::size_t size() const noexcept { return value.size(); }
};
/// Checks sizes, finite values, start < end, weight > 0 and value >= 0 (ConfigError naming the window).
void validate(const Windows& w);

/// A segment of constant level: it starts at a fixed time or at free change time `start_change`
/// (an index into the change times), and ends likewise.
struct Segment {
    double start_s = 0;
    double end_s = 0;
    int start_change = -1;  ///< -1: fixed start_s
    int end_change = -1;    ///< -1: fixed end_s
};

/// Levels and change times fitted to window means.
struct LevelsFit {
    std::vector<double> level, level_se;      ///< per segment
    std::vector<double> change_s, change_se;  ///< per free change time
    std::vector<bool> level_determined, change_determined;
    std::vector<double> predicted;  ///< per window
    double ssr = 0;
    int dof = 0;
    bool converged = false;
};
/// Fit piecewise-constant levels (one per segment) and the free change times between them to
/// the windows: a window's prediction is the exact mean of the piecewise-constant rate over it.
/// The windows are one rate, so the segments follow one another: segments that overlap (the
/// jobs of one phase, each with its own log) and windows not covered by any segment are
/// ConfigErrors.
LevelsFit fit_levels(const Windows& w, const std::vector<Segment>& segments, const std::vector<double>& level0,
                     const std::vector<double>& change0);

/// One stretch of load on the volume during a fit: the jobs of one fio phase together.
struct FitPhase {
    double start_s = 0;
    double end_s = 0;
    double io_bytes = 4096;  ///< mean bytes per I/O
    double read_fraction = 1;
    Pattern pattern = Pattern::random;
    /// I/Os per second the jobs offer, unthrottled; +inf: more than any limit (a saturating
    /// workload, e.g. fio at a deep queue).
    double demand_iops = std::numeric_limits<double>::infinity();
};

/// Input of fit_bucket_volume.
struct BucketFitInput {
    VolumeType type = VolumeType::gp2;  ///< gp2, st1, sc1 or standard
    double size_gib = unset;            ///< known size; NaN: fitted (whole GiB, profiled)
    double size_guess_gib = unset;      ///< where the profile starts (NaN: the type's minimum)
    double balance_guess_pct = 50;      ///< where the fit of the starting balance starts
    std::vector<FitPhase> phases;       ///< in time order, not overlapping; gaps between them are rests
    Windows observed;                   ///< measured application I/Os per second on the same clock
    double dt_s = 0.1;                  ///< engine step
    std::optional<InstanceSpec> instance;
    int max_profile_sizes = 400;  ///< sizes tried at most
};

/// A parameter as fitted: value, standard error, and the interval the data allow.
struct ParamFit {
    double value = unset;  ///< NaN: not determined (only bounded)
    double se = unset;     ///< standard error (NaN: not determined, or no degrees of freedom)
    double lower = unset;  ///< lowest value consistent with the data
    double upper = unset;  ///< highest value consistent with the data
    bool determined = false;
};

/// Output of fit_bucket_volume.
struct BucketFit {
    ParamFit size_gib;
    ParamFit balance_pct;      ///< BurstBalance at time 0, percent
    ParamFit cliff_time_s;     ///< when the bucket first runs dry (NaN value: not in the fitted run)
    double size_used_gib = 0;  ///< the whole size the other results are for
    double balance_used_pct = 0;
    std::vector<double> predicted;             ///< per window, the engine's mean rate
    std::vector<std::uint8_t> phase_bound;     ///< per phase, the Bound that held most of its steps
    std::vector<double> phase_iops;            ///< per phase, mean served I/Os per second
    std::vector<std::vector<double>> profile;  ///< (size, ssr) pairs tried
    double ssr = 0;
    int dof = 0;
    int engine_runs = 0;
};

/// Fit a bucket volume's size and starting balance with the engine as forward model: for each
/// whole size tried, Levenberg-Marquardt fits the balance; the size with the least weighted
/// squared residual wins, and its standard error comes from the profile's curvature. Where the
/// squared residual does not change (a cliff in a stretch without data, no cliff at all, a
/// baseline clamped at its minimum), the parameter is reported as an interval, and as not
/// determined when the interval reaches a limit of the type.
BucketFit fit_bucket_volume(const BucketFitInput& in);

/// Mean served I/Os per second over each window when `spec` runs the phases (the forward model of
/// fit_bucket_volume, for any volume type). Also returns the cliff time (NaN: none) in `cliff_s`.
std::vector<double> simulate_windows(const VolumeSpec& spec, const std::optional<InstanceSpec>& instance,
                                     const std::vector<FitPhase>& phases, const Windows& windows, double dt_s,
                                     double* cliff_s = nullptr, std::vector<std::uint8_t>* phase_bound = nullptr,
                                     std::vector<double>* phase_iops = nullptr);

/// Unloaded service time against I/O size: s(b) = intercept_s + b x per_byte_s, weighted linear
/// least squares over (bytes, mean latency, weight) points.
struct ServiceTimeFit {
    ParamFit intercept_s;
    ParamFit per_byte_s;
    double ssr = 0;
    int dof = 0;
    int distinct_sizes = 0;
};
/// With one distinct I/O size the two terms cannot be separated: per_byte_s is then the given
/// default (not determined) and the intercept is the mean latency less default x bytes.
ServiceTimeFit fit_service_time(const std::vector<double>& io_bytes, const std::vector<double>& latency_s,
                                const std::vector<double>& weight, double default_per_byte_s);

/// Maximum likelihood fit of a gamma distribution (shape, mean) to binned latencies: counts[i]
/// latencies in [lower_s[i], upper_s[i]) (upper may be +inf). The Boost.Math gamma CDF gives each
/// bin's probability; Newton steps on the log-likelihood in (log shape, log mean); standard
/// errors from the observed information.
struct GammaFit {
    ParamFit shape;
    ParamFit mean_s;
    double log_likelihood = 0;
    double total = 0;  ///< latencies counted
    bool converged = false;
};
GammaFit fit_gamma(const std::vector<double>& lower_s, const std::vector<double>& upper_s,
                   const std::vector<double>& counts);

}  // namespace ebssim::fit
