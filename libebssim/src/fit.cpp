#include "ebssim/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <Eigen/Dense>
#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include "ebssim/engine.hpp"
#include "ebssim/error.hpp"
#include "validate.hpp"

namespace ebssim::fit {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

double sum_sq(const Eigen::VectorXd& r) { return r.squaredNorm(); }

}  // namespace

// ------------------------------------------------------------------------------------------
// Levenberg-Marquardt
// ------------------------------------------------------------------------------------------

LsqResult levenberg_marquardt(const ResidualFn& f, std::size_t m, std::vector<double> x0,
                              const std::vector<double>& lower, const std::vector<double>& upper,
                              const std::vector<double>& step, const LsqOptions& options) {
    const std::size_t n = x0.size();
    if (lower.size() != n || upper.size() != n || step.size() != n) {
        throw ConfigError(
            fmt::format("levenberg_marquardt: x0 has {} parameters but lower, upper and step have "
                        "{}, {} and {}",
                        n, lower.size(), upper.size(), step.size()));
    }
    if (m == 0) throw ConfigError("levenberg_marquardt: no residuals to fit");
    for (std::size_t j = 0; j < n; ++j) {
        if (!(lower[j] <= x0[j] && x0[j] <= upper[j])) {
            throw ConfigError(fmt::format("levenberg_marquardt: x0[{}]={} is outside its bounds [{}, {}]", j, x0[j],
                                          lower[j], upper[j]));
        }
        if (!(step[j] > 0) || !std::isfinite(step[j])) {
            throw ConfigError(
                fmt::format("levenberg_marquardt: step[{}]={} must be a positive, finite number", j, step[j]));
        }
    }
    LsqResult res;
    std::vector<double> xv = std::move(x0);
    std::vector<double> rv(m);
    auto eval = [&](const std::vector<double>& x, Eigen::VectorXd& r) {
        std::fill(rv.begin(), rv.end(), 0.0);
        f(x, rv);
        ++res.evaluations;
        r = Eigen::Map<const Eigen::VectorXd>(rv.data(), static_cast<Eigen::Index>(m));
        return r.allFinite() ? sum_sq(r) : inf;
    };
    const auto ni = static_cast<Eigen::Index>(n);
    const auto mi = static_cast<Eigen::Index>(m);
    Eigen::VectorXd r(mi), r_try(mi), r_h(mi);
    double ssr = eval(xv, r);
    if (!std::isfinite(ssr)) throw ConfigError("levenberg_marquardt: the residuals at x0 are not finite");

    Eigen::MatrixXd J(mi, ni);
    auto jacobian = [&](const std::vector<double>& x) {
        std::vector<double> xh = x;
        for (std::size_t j = 0; j < n; ++j) {
            double h = step[j];
            if (x[j] + h > upper[j]) h = -h;  // at the upper bound: a backward difference
            if (x[j] + h < lower[j]) h = 0;   // a parameter pinned by its bounds
            const auto jj = static_cast<Eigen::Index>(j);
            if (h == 0) {
                J.col(jj).setZero();
                continue;
            }
            xh[j] = x[j] + h;
            const double s = eval(xh, r_h);
            J.col(jj) = std::isfinite(s) ? Eigen::VectorXd((r_h - r) / h) : Eigen::VectorXd::Zero(mi);
            xh[j] = x[j];
        }
    };

    double lambda = 1e-3;
    Eigen::VectorXd diag_max = Eigen::VectorXd::Zero(ni);
    for (int it = 0; it < options.max_iterations; ++it) {
        res.iterations = it + 1;
        jacobian(xv);
        const Eigen::VectorXd g = J.transpose() * r;
        const Eigen::VectorXd d = J.colwise().squaredNorm().transpose();
        diag_max = diag_max.cwiseMax(d);
        if (g.cwiseAbs().maxCoeff() <= 1e-300) {
            res.converged = true;
            break;
        }
        bool accepted = false;
        while (lambda < 1e16) {
            // (J^T J + lambda D) delta = -J^T r, solved as the least-squares problem [J; sqrt(lambda D)] delta = [-r;
            // 0].
            Eigen::MatrixXd A(mi + ni, ni);
            A.topRows(mi) = J;
            A.bottomRows(ni).setZero();
            for (Eigen::Index j = 0; j < ni; ++j) {
                A(mi + j, j) = std::sqrt(lambda * (diag_max(j) > 0 ? diag_max(j) : 1.0));
            }
            Eigen::VectorXd b = Eigen::VectorXd::Zero(mi + ni);
            b.head(mi) = -r;
            const Eigen::VectorXd delta = A.colPivHouseholderQr().solve(b);
            std::vector<double> xt = xv;
            double step_norm = 0, x_norm = 0;
            for (std::size_t j = 0; j < n; ++j) {
                xt[j] = std::clamp(xv[j] + delta(static_cast<Eigen::Index>(j)), lower[j], upper[j]);
                step_norm += (xt[j] - xv[j]) * (xt[j] - xv[j]);
                x_norm += xv[j] * xv[j];
            }
            if (std::sqrt(step_norm) <= options.xtol * (std::sqrt(x_norm) + options.xtol)) {
                res.converged = true;
                break;
            }
            const double s = eval(xt, r_try);
            if (s < ssr) {
                const double drop = (ssr - s) / std::max(ssr, 1e-300);
                xv = std::move(xt);
                r = r_try;
                ssr = s;
                lambda = std::max(lambda / 3.0, 1e-12);
                accepted = true;
                if (drop <= options.ftol) res.converged = true;
                break;
            }
            lambda *= 4.0;
        }
        if (res.converged || !accepted) {
            res.converged = res.converged || lambda >= 1e16;  // no step lowers the sum: a (local) minimum
            break;
        }
    }

    // Covariance on the determined parameters: zero Jacobian columns, and columns the pivoting QR
    // finds dependent on the others, are not determined.
    jacobian(xv);
    res.determined.assign(n, false);
    std::vector<Eigen::Index> cols;
    const double max_norm = J.colwise().norm().maxCoeff();
    for (std::size_t j = 0; j < n; ++j) {
        const auto jj = static_cast<Eigen::Index>(j);
        if (max_norm > 0 && J.col(jj).norm() > 1e-12 * max_norm) cols.push_back(jj);
    }
    Eigen::MatrixXd cov_full = Eigen::MatrixXd::Constant(ni, ni, nan);
    if (!cols.empty()) {
        Eigen::MatrixXd Jd(mi, static_cast<Eigen::Index>(cols.size()));
        // Scale columns to unit norm so that the rank test does not depend on the parameters' units.
        Eigen::VectorXd scale(static_cast<Eigen::Index>(cols.size()));
        for (std::size_t k = 0; k < cols.size(); ++k) {
            const auto kk = static_cast<Eigen::Index>(k);
            scale(kk) = J.col(cols[k]).norm();
            Jd.col(kk) = J.col(cols[k]) / scale(kk);
        }
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Jd);
        qr.setThreshold(1e-10);
        const Eigen::Index rank = qr.rank();
        std::vector<Eigen::Index> keep;
        for (Eigen::Index k = 0; k < rank; ++k) keep.push_back(qr.colsPermutation().indices()(k));
        std::sort(keep.begin(), keep.end());
        const int dof = static_cast<int>(m) - static_cast<int>(keep.size());
        res.dof = dof;
        Eigen::MatrixXd Jk(mi, static_cast<Eigen::Index>(keep.size()));
        for (std::size_t k = 0; k < keep.size(); ++k) Jk.col(static_cast<Eigen::Index>(k)) = Jd.col(keep[k]);
        // (J^T J)^-1 = R^-1 R^-T from Jk's QR (no normal equations: better conditioned).
        Eigen::HouseholderQR<Eigen::MatrixXd> qk(Jk);
        const auto p = static_cast<Eigen::Index>(keep.size());
        Eigen::MatrixXd R = qk.matrixQR().topRows(p).triangularView<Eigen::Upper>();
        Eigen::MatrixXd Rinv = R.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(p, p));
        const double s2 = dof > 0 ? ssr / dof : nan;
        Eigen::MatrixXd cov = Rinv * Rinv.transpose() * s2;
        for (std::size_t a = 0; a < keep.size(); ++a) {
            const Eigen::Index ja = cols[static_cast<std::size_t>(keep[a])];
            res.determined[static_cast<std::size_t>(ja)] = true;
            for (std::size_t b = 0; b < keep.size(); ++b) {
                const Eigen::Index jb = cols[static_cast<std::size_t>(keep[b])];
                cov_full(ja, jb) =
                    cov(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) / (scale(keep[a]) * scale(keep[b]));
            }
        }
    } else {
        res.dof = static_cast<int>(m);
    }
    res.x = xv;
    res.residuals.assign(r.data(), r.data() + m);
    res.ssr = ssr;
    res.covariance.assign(n * n, nan);
    res.se.assign(n, nan);
    for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < n; ++b) {
            res.covariance[a * n + b] = cov_full(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
        }
        const double v = res.covariance[a * n + a];
        res.se[a] = v >= 0 ? std::sqrt(v) : nan;
    }
    return res;
}

// ------------------------------------------------------------------------------------------
// Windows and levels
// ------------------------------------------------------------------------------------------

void validate(const Windows& w) {
    const std::size_t n = w.value.size();
    if (w.start_s.size() != n || w.end_s.size() != n || w.weight.size() != n) {
        throw ConfigError(
            fmt::format("windows: start_s, end_s, value and weight have {}, {}, {} and {} entries; "
                        "expected equal lengths",
                        w.start_s.size(), w.end_s.size(), n, w.weight.size()));
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(w.start_s[i]) || !std::isfinite(w.end_s[i]) || !(w.start_s[i] < w.end_s[i])) {
            throw ConfigError(
                fmt::format("window {}: ({}, {}] must be finite times with start < end", i, w.start_s[i], w.end_s[i]));
        }
        if (!std::isfinite(w.value[i]) || w.value[i] < 0) {
            throw ConfigError(fmt::format("window {}: value={} must be a finite rate >= 0", i, w.value[i]));
        }
        if (!std::isfinite(w.weight[i]) || !(w.weight[i] > 0)) {
            throw ConfigError(fmt::format("window {}: weight={} must be a finite number > 0", i, w.weight[i]));
        }
    }
}

LevelsFit fit_levels(const Windows& w, const std::vector<Segment>& segments, const std::vector<double>& level0,
                     const std::vector<double>& change0) {
    validate(w);
    const std::size_t K = segments.size(), F = change0.size(), n = w.size();
    if (K == 0) throw ConfigError("fit_levels: no segments");
    if (level0.size() != K) {
        throw ConfigError(fmt::format("fit_levels: {} segments but {} initial levels", K, level0.size()));
    }
    std::vector<double> lo(K + F), hi(K + F), step(K + F), x0(K + F);
    double span = 0;
    for (double v : w.value) span = std::max(span, v);
    for (std::size_t k = 0; k < K; ++k) {
        const Segment& s = segments[k];
        for (int c : {s.start_change, s.end_change}) {
            if (c >= static_cast<int>(F)) {
                throw ConfigError(fmt::format("fit_levels: segment {} refers to change time {} of {}", k, c, F));
            }
        }
        x0[k] = level0[k];
        lo[k] = -inf;
        hi[k] = inf;
        step[k] = 1e-6 * std::max({std::abs(level0[k]), span, 1e-9});
    }
    std::vector<double> dts;
    for (std::size_t i = 0; i < n; ++i) dts.push_back(w.end_s[i] - w.start_s[i]);
    std::nth_element(dts.begin(), dts.begin() + static_cast<std::ptrdiff_t>(n / 2), dts.end());
    const double median_dt = n ? dts[n / 2] : 1.0;
    for (std::size_t j = 0; j < F; ++j) {
        x0[K + j] = change0[j];
        lo[K + j] = -inf;
        hi[K + j] = inf;
        step[K + j] = 1e-4 * median_dt;
    }
    // A change time stays between the fixed ends of the segments on either side of it.
    for (const Segment& s : segments) {
        if (s.end_change >= 0 && s.start_change < 0) lo[K + static_cast<std::size_t>(s.end_change)] = s.start_s;
        if (s.start_change >= 0 && s.end_change < 0) hi[K + static_cast<std::size_t>(s.start_change)] = s.end_s;
    }
    for (std::size_t j = 0; j < F; ++j) {
        if (!(lo[K + j] <= x0[K + j] && x0[K + j] <= hi[K + j])) {
            throw ConfigError(fmt::format("fit_levels: change time {}={} lies outside its segments ({}, {})", j,
                                          x0[K + j], lo[K + j], hi[K + j]));
        }
    }
    // Which segments each window overlaps does not change much; it is recomputed each time (cheap).
    auto predict = [&](const std::vector<double>& x, std::vector<double>& pred) {
        pred.assign(n, 0.0);
        std::vector<double> cover(n, 0.0);
        for (std::size_t k = 0; k < K; ++k) {
            const Segment& s = segments[k];
            const double a = s.start_change >= 0 ? x[K + static_cast<std::size_t>(s.start_change)] : s.start_s;
            const double b = s.end_change >= 0 ? x[K + static_cast<std::size_t>(s.end_change)] : s.end_s;
            if (!(b > a)) continue;
            // Windows are sorted by start within a job but not across jobs: scan all (n x K is small).
            for (std::size_t i = 0; i < n; ++i) {
                const double o = std::min(b, w.end_s[i]) - std::max(a, w.start_s[i]);
                if (o > 0) {
                    pred[i] += x[k] * o;
                    cover[i] += o;
                }
            }
        }
        for (std::size_t i = 0; i < n; ++i) pred[i] /= (w.end_s[i] - w.start_s[i]);
        return cover;
    };
    // One series of windows is one rate: segments that overlap in time would add their levels in
    // the windows they share (concurrent jobs' logs are fitted one job at a time).
    {
        std::vector<std::pair<double, std::size_t>> starts;
        std::vector<double> ends(K);
        for (std::size_t k = 0; k < K; ++k) {
            const Segment& s = segments[k];
            const double a = s.start_change >= 0 ? x0[K + static_cast<std::size_t>(s.start_change)] : s.start_s;
            ends[k] = s.end_change >= 0 ? x0[K + static_cast<std::size_t>(s.end_change)] : s.end_s;
            starts.emplace_back(a, k);
        }
        std::sort(starts.begin(), starts.end());
        for (std::size_t i = 1; i < K; ++i) {
            const std::size_t p = starts[i - 1].second, k = starts[i].second;
            if (starts[i].first < ends[p] - 1e-9 * std::max(1.0, std::abs(ends[p]))) {
                throw ConfigError(fmt::format(
                    "fit_levels: segments {} ({}, {}) and {} ({}, {}) overlap: the windows are one rate, so "
                    "segments follow one another (fit concurrent jobs' windows one job at a time)",
                    p, starts[i - 1].first, ends[p], k, starts[i].first, ends[k]));
            }
        }
    }
    {
        std::vector<double> pred;
        const auto cover = predict(x0, pred);
        for (std::size_t i = 0; i < n; ++i) {
            if (cover[i] < 0.999 * (w.end_s[i] - w.start_s[i])) {
                throw ConfigError(fmt::format("fit_levels: window {} ({}, {}] is not covered by the segments", i,
                                              w.start_s[i], w.end_s[i]));
            }
        }
    }
    std::vector<double> sqw(n);
    for (std::size_t i = 0; i < n; ++i) sqw[i] = std::sqrt(w.weight[i]);
    std::vector<double> pred;
    ResidualFn f = [&](const std::vector<double>& x, std::vector<double>& r) {
        predict(x, pred);
        for (std::size_t i = 0; i < n; ++i) r[i] = sqw[i] * (pred[i] - w.value[i]);
    };
    LsqResult fit = levenberg_marquardt(f, n, x0, lo, hi, step);
    LevelsFit out;
    for (std::size_t k = 0; k < K; ++k) {
        out.level.push_back(fit.x[k]);
        out.level_se.push_back(fit.se[k]);
        out.level_determined.push_back(fit.determined[k]);
    }
    for (std::size_t j = 0; j < F; ++j) {
        out.change_s.push_back(fit.x[K + j]);
        out.change_se.push_back(fit.se[K + j]);
        out.change_determined.push_back(fit.determined[K + j]);
    }
    predict(fit.x, out.predicted);
    out.ssr = fit.ssr;
    out.dof = fit.dof;
    out.converged = fit.converged;
    return out;
}

// ------------------------------------------------------------------------------------------
// The engine as forward model
// ------------------------------------------------------------------------------------------

std::vector<double> simulate_windows(const VolumeSpec& spec, const std::optional<InstanceSpec>& instance,
                                     const std::vector<FitPhase>& phases, const Windows& windows, double dt_s,
                                     double* cliff_s, std::vector<std::uint8_t>* phase_bound,
                                     std::vector<double>* phase_iops) {
    detail::require_positive(dt_s, "dt_s");
    Simulation sim = instance ? Simulation({spec}, *instance, dt_s) : Simulation({spec}, dt_s);
    // Cumulative I/Os served at each step boundary: the rate is constant within a step.
    std::vector<double> cum{0.0};
    std::int64_t k_now = 0;
    double cliff = nan;
    if (phase_bound) phase_bound->clear();
    if (phase_iops) phase_iops->clear();
    for (std::size_t p = 0; p < phases.size(); ++p) {
        const FitPhase& ph = phases[p];
        if (!(std::isfinite(ph.start_s) && std::isfinite(ph.end_s) && ph.start_s >= 0 && ph.end_s > ph.start_s)) {
            throw ConfigError(
                fmt::format("phase {}: ({}, {}) must be finite times with 0 <= start < end", p, ph.start_s, ph.end_s));
        }
        if (!(ph.demand_iops > 0)) {
            throw ConfigError(fmt::format("phase {}: demand_iops={} must be > 0", p, ph.demand_iops));
        }
        const auto k0 = std::max(k_now, static_cast<std::int64_t>(std::llround(ph.start_s / dt_s)));
        const auto k1 = std::max(k0 + 1, static_cast<std::int64_t>(std::llround(ph.end_s / dt_s)));
        if (k0 > k_now) {  // a rest between phases
            RunResult rest = sim.run({Idle{}}, k0 - k_now, false);
            if (std::isnan(cliff)) cliff = rest.totals[0].cliff_time_s;
            cum.resize(static_cast<std::size_t>(k0) + 1, cum.back());
        }
        ClosedLoop w;
        w.in_flight = 1;
        w.io_bytes = ph.io_bytes;
        w.read_fraction = ph.read_fraction;
        w.pattern = ph.pattern;
        // The offered rate is all that matters to the rates: one user whose service time is 1 / demand.
        w.service_time_s = std::isinf(ph.demand_iops) ? 1e-9 : 1.0 / ph.demand_iops;
        RunResult run = sim.run({w}, k1 - k0, true);
        if (std::isnan(cliff)) cliff = run.totals[0].cliff_time_s;
        const StepSeries& s = run.series[0];
        double served = 0;
        for (std::size_t k = 0; k < s.iops.size(); ++k) {
            cum.push_back(cum.back() + s.iops[k] * dt_s);
            served += s.iops[k];
        }
        if (phase_iops) phase_iops->push_back(served / static_cast<double>(s.iops.size()));
        if (phase_bound) {
            std::int64_t best = -1;
            std::uint8_t which = 0;
            for (int b = 0; b < n_bounds; ++b) {
                if (run.totals[0].steps_bound[b] > best) {
                    best = run.totals[0].steps_bound[b];
                    which = static_cast<std::uint8_t>(b);
                }
            }
            phase_bound->push_back(which);
        }
        k_now = k1;
    }
    if (cliff_s) *cliff_s = cliff;
    auto C = [&](double t) {
        const double u = t / dt_s;
        if (u <= 0) return 0.0;
        const auto k = static_cast<std::size_t>(u);
        if (k + 1 >= cum.size()) return cum.back();
        return cum[k] + (u - static_cast<double>(k)) * (cum[k + 1] - cum[k]);
    };
    std::vector<double> out(windows.size());
    for (std::size_t i = 0; i < windows.size(); ++i) {
        out[i] = (C(windows.end_s[i]) - C(windows.start_s[i])) / (windows.end_s[i] - windows.start_s[i]);
    }
    return out;
}

namespace {

struct SizeLimits {
    double lo, hi;
};

// The sizes AWS accepts for a type with a bucket, from the volume-type table (its one home).
SizeLimits size_limits(VolumeType t) {
    const VolumeTypeInfo& info = volume_type_info(t);
    if (info.has_bucket()) return {info.min_size_gib, info.max_size_gib};
    std::string with_bucket;
    for (const VolumeTypeInfo& i : volume_types()) {
        if (!i.has_bucket()) continue;
        if (!with_bucket.empty()) with_bucket += ", ";
        with_bucket += i.name;
    }
    throw ConfigError(
        fmt::format("fit_bucket_volume: type {} has no burst bucket; expected one of {}", to_string(t), with_bucket));
}

// The fit of the balance at one size: least squares through the engine.
struct AtSize {
    LsqResult lsq;
    double ssr = inf;
};

}  // namespace

BucketFit fit_bucket_volume(const BucketFitInput& in) {
    validate(in.observed);
    if (in.phases.empty()) throw ConfigError("fit_bucket_volume: no phases");
    const SizeLimits lim = size_limits(in.type);
    const std::size_t n = in.observed.size();
    if (n < 2) throw ConfigError(fmt::format("fit_bucket_volume: {} window(s): at least 2 are needed", n));
    std::vector<double> sqw(n);
    double scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sqw[i] = std::sqrt(in.observed.weight[i]);
        scale += in.observed.weight[i] * in.observed.value[i] * in.observed.value[i];
    }
    BucketFit out;
    auto spec_of = [&](double size, double bal) {
        VolumeSpec s;
        s.type = in.type;
        s.size_gib = size;
        s.burst_balance_pct = bal;
        return s;
    };
    auto residuals = [&](double size, double bal, std::vector<double>& r) {
        const auto pred = simulate_windows(spec_of(size, bal), in.instance, in.phases, in.observed, in.dt_s);
        ++out.engine_runs;
        for (std::size_t i = 0; i < n; ++i) r[i] = sqw[i] * (pred[i] - in.observed.value[i]);
    };
    auto ssr_at_balance = [&](double size, double bal) {
        std::vector<double> r(n);
        residuals(size, bal, r);
        double s = 0;
        for (double v : r) s += v * v;
        return s;
    };
    const double bal0 = std::clamp(std::isnan(in.balance_guess_pct) ? 50.0 : in.balance_guess_pct, 0.0, 100.0);
    std::map<double, AtSize> tried;
    auto at_size = [&](double size) -> const AtSize& {
        auto it = tried.find(size);
        if (it != tried.end()) return it->second;
        ResidualFn f = [&](const std::vector<double>& x, std::vector<double>& r) { residuals(size, x[0], r); };
        AtSize a;
        a.lsq = levenberg_marquardt(f, n, {bal0}, {0.0}, {100.0}, {1e-3});
        a.ssr = a.lsq.ssr;
        out.profile.push_back({size, a.ssr});
        return tried.emplace(size, std::move(a)).first->second;
    };
    const double tol = 1e-9 * scale + 1e-300;
    auto flat = [&](double a, double b) { return std::abs(a - b) <= tol + 1e-9 * std::min(a, b); };

    double best_size;
    if (!std::isnan(in.size_gib)) {
        best_size = in.size_gib;
        at_size(best_size);
        out.size_gib = {best_size, nan, best_size, best_size, true};
    } else {
        double s = std::isnan(in.size_guess_gib) ? lim.lo : std::clamp(std::round(in.size_guess_gib), lim.lo, lim.hi);
        const int budget = std::max(3, in.max_profile_sizes);
        auto ssr = [&](double size) { return at_size(size).ssr; };
        // Walk downhill over whole sizes.
        for (int k = 0; k < budget && static_cast<int>(tried.size()) < budget; ++k) {
            const double here = ssr(s);
            const double left = s > lim.lo ? ssr(s - 1) : inf;
            const double right = s < lim.hi ? ssr(s + 1) : inf;
            if (left < here && left <= right && !flat(left, here)) {
                s -= 1;
            } else if (right < here && !flat(right, here)) {
                s += 1;
            } else {
                break;
            }
        }
        // The flat stretch around the minimum: sizes the data cannot tell apart.
        const double best = ssr(s);
        double lo = s, hi = s;
        while (lo > lim.lo && static_cast<int>(tried.size()) < budget && flat(ssr(lo - 1), best)) lo -= 1;
        while (hi < lim.hi && static_cast<int>(tried.size()) < budget && flat(ssr(hi + 1), best)) hi += 1;
        best_size = s;
        if (lo == hi) {
            const double l = s > lim.lo ? ssr(s - 1) : nan, r = s < lim.hi ? ssr(s + 1) : nan;
            const double curv = (!std::isnan(l) && !std::isnan(r)) ? l - 2 * best + r : nan;
            const int dof = static_cast<int>(n) - 2;
            const double s2 = dof > 0 ? best / dof : nan;
            const double se = curv > 0 ? std::sqrt(2 * s2 / curv) : nan;
            out.size_gib = {s, se, s, s, true};
        } else {
            // Several whole sizes fit alike: the middle one is used, and the size is reported as an interval.
            best_size = std::round((lo + hi) / 2);
            at_size(best_size);
            out.size_gib = {nan, nan, lo, hi, false};
        }
    }
    const AtSize& fit = at_size(best_size);
    out.size_used_gib = best_size;
    double bal = fit.lsq.x[0];
    const double ssr0 = fit.ssr;
    auto same = [&](double b) { return flat(ssr_at_balance(best_size, b), ssr0); };
    // Flat on either side (a cliff in a stretch without data sits at a kink: one-sided derivatives differ).
    const double h = 1e-3;
    const bool flat_side =
        !fit.lsq.determined[0] || (bal - h >= 0 && same(bal - h)) || (bal + h <= 100 && same(bal + h));
    if (!flat_side) {
        out.balance_pct = {bal, fit.lsq.se[0], bal, bal, true};
    } else {
        // A flat direction: bisect for the ends of the balances that fit as well as the best.
        double lo = bal, hi = bal;
        if (same(0.0)) {
            lo = 0.0;
        } else {
            double a = 0.0, b = bal;
            for (int k = 0; k < 50 && b - a > 1e-9; ++k) {
                const double mid = (a + b) / 2;
                (same(mid) ? b : a) = mid;
            }
            lo = b;
        }
        if (same(100.0)) {
            hi = 100.0;
        } else {
            double a = bal, b = 100.0;
            for (int k = 0; k < 50 && b - a > 1e-9; ++k) {
                const double mid = (a + b) / 2;
                (same(mid) ? a : b) = mid;
            }
            hi = a;
        }
        if (lo > 0.0 && hi < 100.0) {
            bal = (lo + hi) / 2;
            out.balance_pct = {bal, (hi - lo) / std::sqrt(12.0), lo, hi, true};
        } else {
            out.balance_pct = {nan, nan, lo, hi, false};
            bal = lo > 0.0 ? lo : hi;  // the edge the data do pin down
        }
    }
    out.balance_used_pct = bal;
    double cliff = nan;
    out.predicted = simulate_windows(spec_of(best_size, bal), in.instance, in.phases, in.observed, in.dt_s, &cliff,
                                     &out.phase_bound, &out.phase_iops);
    ++out.engine_runs;
    auto cliff_at = [&](double b) {
        double c = nan;
        simulate_windows(spec_of(best_size, b), in.instance, in.phases, in.observed, in.dt_s, &c);
        ++out.engine_runs;
        return c;
    };
    if (out.balance_pct.determined && out.balance_pct.lower == out.balance_pct.upper) {
        const double hb = std::max(1e-4, 1e-3 * out.balance_pct.se);
        const double c_lo = cliff_at(std::max(0.0, bal - hb)), c_hi = cliff_at(std::min(100.0, bal + hb));
        const double slope = (c_hi - c_lo) / (std::min(100.0, bal + hb) - std::max(0.0, bal - hb));
        out.cliff_time_s = {cliff, std::abs(slope) * out.balance_pct.se, cliff, cliff, !std::isnan(cliff)};
    } else if (out.balance_pct.determined) {
        const double c_lo = cliff_at(out.balance_pct.lower), c_hi = cliff_at(out.balance_pct.upper);
        if (!std::isnan(c_lo) && !std::isnan(c_hi)) {
            out.cliff_time_s = {(c_lo + c_hi) / 2, std::abs(c_hi - c_lo) / std::sqrt(12.0), std::min(c_lo, c_hi),
                                std::max(c_lo, c_hi), true};
        } else {
            out.cliff_time_s = {nan, nan, c_lo, c_hi, false};
        }
    } else {
        const double c_lo = cliff_at(out.balance_pct.lower), c_hi = cliff_at(out.balance_pct.upper);
        out.cliff_time_s = {nan, nan, std::isnan(c_lo) ? c_hi : c_lo, std::isnan(c_hi) ? c_lo : c_hi, false};
        if (std::isnan(c_lo) && std::isnan(c_hi)) out.cliff_time_s.lower = out.cliff_time_s.upper = nan;
    }
    std::vector<double> r(n);
    out.ssr = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = sqw[i] * (out.predicted[i] - in.observed.value[i]);
        out.ssr += d * d;
    }
    out.dof = static_cast<int>(n) - (std::isnan(in.size_gib) ? 2 : 1);
    return out;
}

// ------------------------------------------------------------------------------------------
// Service time and its distribution
// ------------------------------------------------------------------------------------------

ServiceTimeFit fit_service_time(const std::vector<double>& io_bytes, const std::vector<double>& latency_s,
                                const std::vector<double>& weight, double default_per_byte_s) {
    const std::size_t n = io_bytes.size();
    if (latency_s.size() != n || weight.size() != n) {
        throw ConfigError(fmt::format("fit_service_time: io_bytes, latency_s and weight have {}, {} and {} entries", n,
                                      latency_s.size(), weight.size()));
    }
    if (n == 0) throw ConfigError("fit_service_time: no latencies to fit");
    for (std::size_t i = 0; i < n; ++i) {
        if (!(std::isfinite(io_bytes[i]) && io_bytes[i] > 0 && std::isfinite(latency_s[i]) && latency_s[i] > 0 &&
              std::isfinite(weight[i]) && weight[i] > 0)) {
            throw ConfigError(
                fmt::format("fit_service_time: point {} (io_bytes={}, latency_s={}, weight={}) must "
                            "be finite and > 0",
                            i, io_bytes[i], latency_s[i], weight[i]));
        }
    }
    ServiceTimeFit out;
    std::vector<double> sizes = io_bytes;
    std::sort(sizes.begin(), sizes.end());
    out.distinct_sizes = static_cast<int>(std::unique(sizes.begin(), sizes.end()) - sizes.begin());
    const auto ni = static_cast<Eigen::Index>(n);
    Eigen::VectorXd sw(ni), y(ni);
    for (Eigen::Index i = 0; i < ni; ++i) {
        sw(i) = std::sqrt(weight[static_cast<std::size_t>(i)]);
        y(i) = latency_s[static_cast<std::size_t>(i)];
    }
    if (out.distinct_sizes < 2) {
        // One size: intercept = weighted mean of (latency - default x bytes); per-byte not determined.
        double num = 0, den = 0;
        for (std::size_t i = 0; i < n; ++i) {
            num += weight[i] * (latency_s[i] - default_per_byte_s * io_bytes[i]);
            den += weight[i];
        }
        const double a = num / den;
        double ssr = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double d = latency_s[i] - default_per_byte_s * io_bytes[i] - a;
            ssr += weight[i] * d * d;
        }
        out.dof = static_cast<int>(n) - 1;
        out.ssr = ssr;
        const double se = out.dof > 0 ? std::sqrt(ssr / out.dof / den) : nan;
        out.intercept_s = {a, se, a, a, true};
        out.per_byte_s = {nan, nan, nan, nan, false};
        return out;
    }
    Eigen::MatrixXd X(ni, 2);
    for (Eigen::Index i = 0; i < ni; ++i) {
        X(i, 0) = sw(i);
        X(i, 1) = sw(i) * io_bytes[static_cast<std::size_t>(i)];
    }
    Eigen::VectorXd yw = sw.cwiseProduct(y);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(X);
    Eigen::VectorXd beta = qr.solve(yw);
    const double ssr = (X * beta - yw).squaredNorm();
    out.ssr = ssr;
    out.dof = static_cast<int>(n) - 2;
    Eigen::MatrixXd R = qr.matrixQR().topRows(2).triangularView<Eigen::Upper>();
    Eigen::MatrixXd Rinv = R.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(2, 2));
    Eigen::MatrixXd cov = Rinv * Rinv.transpose() * (out.dof > 0 ? ssr / out.dof : nan);
    out.intercept_s = {beta(0), std::sqrt(cov(0, 0)), beta(0), beta(0), true};
    out.per_byte_s = {beta(1), std::sqrt(cov(1, 1)), beta(1), beta(1), true};
    return out;
}

namespace {

using NoThrow =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

double gamma_cdf(double shape, double scale, double x) {
    if (!(x > 0)) return 0.0;
    if (std::isinf(x)) return 1.0;
    return boost::math::gamma_p(shape, x / scale, NoThrow());
}

}  // namespace

GammaFit fit_gamma(const std::vector<double>& lower_s, const std::vector<double>& upper_s,
                   const std::vector<double>& counts) {
    const std::size_t n = counts.size();
    if (lower_s.size() != n || upper_s.size() != n) {
        throw ConfigError(fmt::format("fit_gamma: lower_s, upper_s and counts have {}, {} and {} entries",
                                      lower_s.size(), upper_s.size(), n));
    }
    GammaFit out;
    double m1 = 0, m2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!(std::isfinite(lower_s[i]) && lower_s[i] >= 0 && upper_s[i] > lower_s[i] && std::isfinite(counts[i]) &&
              counts[i] >= 0)) {
            throw ConfigError(
                fmt::format("fit_gamma: bin {} [{}, {}) with count {}: expected 0 <= lower < upper and "
                            "a finite count >= 0",
                            i, lower_s[i], upper_s[i], counts[i]));
        }
        const double mid = std::isinf(upper_s[i]) ? lower_s[i] : (lower_s[i] + upper_s[i]) / 2;
        out.total += counts[i];
        m1 += counts[i] * mid;
        m2 += counts[i] * mid * mid;
    }
    if (!(out.total > 0)) throw ConfigError("fit_gamma: the bins hold no latencies");
    m1 /= out.total;
    const double var = std::max(m2 / out.total - m1 * m1, 1e-6 * m1 * m1);
    if (!(m1 > 0)) throw ConfigError("fit_gamma: every latency is in a bin starting at 0: no scale to fit");
    // Parameters (log shape, log mean).
    auto loglik = [&](double u, double v) {
        const double k = std::exp(u), mean = std::exp(v), theta = mean / k;
        double ll = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (counts[i] == 0) continue;
            const double p = gamma_cdf(k, theta, upper_s[i]) - gamma_cdf(k, theta, lower_s[i]);
            ll += counts[i] * std::log(std::max(p, 1e-300));
        }
        return ll;
    };
    double u = std::log(std::clamp(m1 * m1 / var, 0.05, 1e5)), v = std::log(m1);
    double ll = loglik(u, v);
    const double h = 1e-4;
    Eigen::Matrix2d H;
    Eigen::Vector2d g;
    auto derivs = [&](double uu, double vv) {
        const double f0 = loglik(uu, vv);
        const double fu1 = loglik(uu + h, vv), fu0 = loglik(uu - h, vv);
        const double fv1 = loglik(uu, vv + h), fv0 = loglik(uu, vv - h);
        const double fuv =
            loglik(uu + h, vv + h) - loglik(uu + h, vv - h) - loglik(uu - h, vv + h) + loglik(uu - h, vv - h);
        g << (fu1 - fu0) / (2 * h), (fv1 - fv0) / (2 * h);
        H << (fu1 - 2 * f0 + fu0) / (h * h), fuv / (4 * h * h), fuv / (4 * h * h), (fv1 - 2 * f0 + fv0) / (h * h);
    };
    for (int it = 0; it < 100; ++it) {
        derivs(u, v);
        // Newton on the concave part, gradient ascent where the Hessian is not negative definite.
        Eigen::Vector2d dir;
        Eigen::LLT<Eigen::Matrix2d> llt(-H);
        if (llt.info() == Eigen::Success) {
            dir = llt.solve(g);
        } else {
            dir = g / std::max(1.0, g.norm());
        }
        double t = 1.0;
        bool moved = false;
        for (int ls = 0; ls < 40; ++ls, t /= 2) {
            const double uu = std::clamp(u + t * dir(0), std::log(1e-3), std::log(1e7)), vv = v + t * dir(1);
            const double l2 = loglik(uu, vv);
            if (l2 > ll) {
                const bool small = std::abs(uu - u) < 1e-10 && std::abs(vv - v) < 1e-10;
                u = uu;
                v = vv;
                moved = !small;
                ll = l2;
                break;
            }
        }
        if (!moved || g.norm() < 1e-9 * std::max(1.0, out.total)) {
            out.converged = true;
            break;
        }
    }
    derivs(u, v);
    Eigen::Matrix2d info = -H;
    const double k = std::exp(u), mean = std::exp(v);
    double se_u = nan, se_v = nan;
    if (Eigen::LLT<Eigen::Matrix2d>(info).info() == Eigen::Success) {
        const Eigen::Matrix2d cov = info.inverse();
        se_u = std::sqrt(cov(0, 0));
        se_v = std::sqrt(cov(1, 1));
    }
    out.shape = {k, k * se_u, k, k, true};
    out.mean_s = {mean, mean * se_v, mean, mean, true};
    out.log_likelihood = ll;
    return out;
}

}  // namespace ebssim::fit
