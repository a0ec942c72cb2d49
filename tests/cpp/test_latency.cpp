// Latency percentiles (ebssim/latency.hpp): in each step an I/O waits (mean - s), then takes a
// Gamma(shape, s / shape) service time; the run is the mixture of its steps weighted by the I/Os
// each completes. Reference values are computed here independently of the library: for the
// default shape 4 from the closed form P(4, x) = 1 - e^-x (1 + x + x^2/2 + x^3/6) and a bisection
// of our own; for shape 1 and 2 from their closed forms; for a non-integer shape from
// Boost.Math's gamma_p / gamma_p_inv (the single-component case only).

#include <doctest/doctest.h>

#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

using Vec = std::vector<double>;

// The cases below check the model's first-come-first-served special case (wait_cv 0: every I/O of
// a step waits its mean wait), whose quantiles are exact, with one service time for reads and
// writes given by its gamma shape (cv = 1 / sqrt(shape)); the wait's spread and the directions
// have cases of their own at the end.
constexpr double default_service_shape = 4.0;
LatencyModel fifo(double s, double shape = default_service_shape) {
    return {s, s, 1.0, 1.0 / std::sqrt(shape), 0.0, 0.0};
}
Vec latency_quantiles(const Vec& means, const Vec& weights, double s, const Vec& qs,
                      double shape = default_service_shape) {
    return ebssim::latency_quantiles(means, weights, {}, fifo(s, shape), qs);
}
LatencyMoments latency_moments(const Vec& means, const Vec& weights, double s, double shape = default_service_shape) {
    return ebssim::latency_moments(means, weights, {}, fifo(s, shape));
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// Regularized lower incomplete gamma of shape 4, closed form.
double p4(double x) {
    if (x <= 0) return 0.0;
    return 1.0 - std::exp(-x) * (1.0 + x + x * x / 2.0 + x * x * x / 6.0);
}

/// Smallest x with cdf(x) >= q, by bisection on [lo, hi] (cdf non-decreasing), to ~1 ulp.
template <class Cdf>
double bisect(Cdf&& cdf, double q, double lo, double hi) {
    for (int it = 0; it < 400 && hi - lo > 0; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        (cdf(mid) < q ? lo : hi) = mid;
    }
    return hi;
}

/// x_q with P(4, x_q) = q: the q-quantile of Gamma(4, 1).
double gamma4_inv(double q) { return bisect(p4, q, 0.0, 200.0); }

/// One mixture component: every I/O of the step waits `wait`, and the step completed `weight`.
struct Comp {
    double wait;
    double weight;
};

/// CDF of the exact (unbinned) mixture with Gamma(4, s/4) service.
double mixture_cdf(const std::vector<Comp>& comps, double s, double x) {
    double c = 0, total = 0;
    for (const Comp& k : comps) {
        c += k.weight * p4((x - k.wait) / (s / 4.0));
        total += k.weight;
    }
    return c / total;
}

/// q-quantile of the exact mixture, by our own bisection.
double mixture_quantile(const std::vector<Comp>& comps, double s, double q) {
    double max_wait = 0;
    for (const Comp& k : comps) max_wait = std::max(max_wait, k.wait);
    return bisect([&](double x) { return mixture_cdf(comps, s, x); }, q, 0.0, max_wait + 100.0 * s);
}

/// Run the library on components given as (wait, weight): mean latency = wait + s.
Vec run(const std::vector<Comp>& comps, double s, const Vec& qs, double shape = default_service_shape) {
    Vec means, weights;
    for (const Comp& k : comps) {
        means.push_back(k.wait + s);
        weights.push_back(k.weight);
    }
    return latency_quantiles(means, weights, s, qs, shape);
}

const Vec five_q = {0.5, 0.9, 0.95, 0.99, 0.999};

std::string lq_error(const Vec& means, const Vec& weights, double s, const Vec& qs,
                     double shape = default_service_shape) {
    return config_error_message([&] { latency_quantiles(means, weights, s, qs, shape); });
}

}  // namespace

TEST_SUITE("latency") {
    TEST_CASE("latency_quantiles: reference: the Gamma(4) quantiles used below") {
        // Our bisection of the closed form, against Boost's inverse and against known values:
        // the median of Gamma(4, 1) is 3.67206..., its 99th percentile 10.04512...
        CHECK(gamma4_inv(0.5) == near(3.672060748850896, 1e-12));
        CHECK(gamma4_inv(0.99) == near(10.045117514831608, 1e-12));
        for (double q : {0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999}) {
            CAPTURE(q);
            CHECK(gamma4_inv(q) == near(boost::math::gamma_p_inv(4.0, q), 1e-10));
        }
    }

    TEST_CASE("latency_quantiles: unthrottled: every step's mean is s, so the quantiles are s * x_q / 4") {
        // Gamma(4, s/4) has mean s and CV 1/2. 4 KiB: s = 0.503814697265625 ms.
        const double s = st_4k;
        const Vec means = {s, s, s, s};
        const Vec weights = {3000, 3000, 1, 2999.5};
        const Vec got = latency_quantiles(means, weights, s, five_q);
        REQUIRE(got.size() == five_q.size());
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(got[i] == near(s * gamma4_inv(five_q[i]) / 4.0, 1e-9));
        }
        // p50 = 0.918 s, p99 = 2.511 s
        CHECK(got[0] == near(s * 3.672060748850896 / 4.0, 1e-9));
        CHECK(got[0] / s == near(0.918015187212724, 1e-9));
        CHECK(got[3] / s == near(10.045117514831608 / 4.0, 1e-9));
    }

    TEST_CASE("latency_quantiles: a constant throttled wait shifts every quantile by the wait") {
        // gp3 at its 3,000 IOPS with 32 in flight: mean 32 / 3,000 s, wait = 32/3000 - s = 10.1629 ms.
        const double s = st_4k;
        const double mean = 32.0 / 3000.0;
        const double w = mean - s;
        const Vec got = latency_quantiles(Vec(100, mean), Vec(100, 3000.0), s, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(got[i] == near(w + s * gamma4_inv(five_q[i]) / 4.0, 1e-9));
        }
        // p50 = 10.1629 + 0.4625 = 10.6254 ms; p99.9 = 10.1629 + 1.6452 = 11.8081 ms
        CHECK(got[0] == near(0.010625361513031865, 1e-9));
        CHECK(got[4] == near(0.011808089190345367, 1e-9));
    }

    TEST_CASE("latency_quantiles: two components: the 100 GiB gp2 QD32 cliff run") {
        // 2,000 s at 3,000 IOPS (mean 32/3000 s) then 700 s at 300 IOPS (mean 32/300 s):
        // 6,000,000 of 6,210,000 I/Os are fast, f = 200/207 = 96.618 %.
        const double s = st_4k;
        const double scale = s / 4.0;
        const double fast = 32.0 / 3000.0, slow = 32.0 / 300.0;
        Vec means(2000, fast), weights(2000, 3000.0);
        means.insert(means.end(), 700, slow);
        weights.insert(weights.end(), 700, 300.0);
        const Vec got = latency_quantiles(means, weights, s, five_q);
        REQUIRE(got.size() == 5);
        const double f = 200.0 / 207.0;
        const double wf = fast - s, ws = slow - s;

        // p50, p90, p95 fall in the fast component (the slow one has no mass below ~96 ms):
        // F(x) = f P4((x - wf)/scale)  =>  x = wf + scale * x_{q/f}. 0.95/f = 0.98325.
        CHECK(got[0] == near(wf + scale * gamma4_inv(0.5 / f), 1e-9));
        CHECK(got[1] == near(wf + scale * gamma4_inv(0.9 / f), 1e-9));
        CHECK(got[2] == near(wf + scale * gamma4_inv(0.95 / f), 1e-9));
        // p99 and p99.9 in the slow one, where the fast component's CDF is 1:
        // F(x) = f + (1 - f) P4((x - ws)/scale)  =>  (0.99 - f)/(1 - f) = 4.93/7 = 0.704286.
        CHECK(got[3] == near(ws + scale * gamma4_inv((0.99 - f) / (1 - f)), 1e-9));
        CHECK(got[4] == near(ws + scale * gamma4_inv((0.999 - f) / (1 - f)), 1e-9));
        // So p50/p95 are near the fast mean latency and p99 near the slow one.
        CHECK(std::abs(got[0] - fast) < s);
        CHECK(std::abs(got[2] - fast) < 2 * s);
        CHECK(std::abs(got[3] - slow) < s);

        // The exact mixture CDF at each returned quantile equals q. Each component is alone in its bin
        // with identical waits, so binning changes nothing; only rounding and the 1e-12 bisection remain.
        const std::vector<Comp> comps = {{wf, 6e6}, {ws, 210000.0}};
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(mixture_cdf(comps, s, got[i]) == near(five_q[i], 1e-9));
            CHECK(got[i] == near(mixture_quantile(comps, s, five_q[i]), 1e-9));
        }
    }

    TEST_CASE("latency_quantiles: binning: waits spread continuously move a quantile by at most eps * (Q + s)") {
        // 5,000 steps with means log-spaced from s to 200 s and uneven weights; the library merges
        // steps whose log(1 + wait/s) differ by < 1/200 and uses the bin's weighted mean wait. Each
        // I/O's wait then moves by at most (s + wait) * eps, eps = e^(1/200) - 1 = 0.501 %, and since
        // wait <= latency X, the binned latency lies in [(1-eps) X - eps s, (1+eps) X + eps s]: every
        // quantile of the binned mixture is within eps * (Q + s) of the exact (unbinned) one's Q.
        const double s = 0.001;
        const int n = 5000;
        std::vector<Comp> comps;
        for (int k = 0; k < n; ++k) {
            const double mean = s * std::pow(200.0, k / double(n - 1));
            comps.push_back({mean - s, 1.0 + (k % 7) * 100.0 + (k % 13)});
        }
        const Vec qs = {0.01, 0.25, 0.5, 0.9, 0.99, 0.999};
        const Vec got = run(comps, s, qs);
        const double eps = std::expm1(1.0 / 200.0);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            const double exact = mixture_quantile(comps, s, qs[i]);
            CAPTURE(exact);
            CAPTURE(got[i]);
            CHECK(std::abs(got[i] - exact) <= eps * (exact + s) + 1e-12 * exact);
            // In CDF terms the error is small too (not a bound, a sanity check).
            CHECK(std::abs(mixture_cdf(comps, s, got[i]) - qs[i]) < 5e-4);
        }
    }

    TEST_CASE("latency_quantiles: binning: steps within one 0.5 % bin merge at their weighted mean wait") {
        // s = 0.5038 ms; means 10.00 and 10.01 ms: 200 ln(m/s) = 597.63 and 597.83, both bin 598.
        const double s = st_4k;
        const double w1 = 0.010 - s, w2 = 0.01001 - s;
        const double wbar = (1.0 * w1 + 3.0 * w2) / 4.0;
        const Vec got = run({{w1, 1.0}, {w2, 3.0}}, s, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(got[i] == near(wbar + s * gamma4_inv(five_q[i]) / 4.0, 1e-10));
        }
    }

    TEST_CASE("latency_quantiles: binning: steps a few bins apart stay separate components") {
        // means 10.0 and 10.2 ms: 200 ln(m/s) = 597.63 and 601.59, bins 598 and 602.
        const double s = st_4k;
        const std::vector<Comp> comps = {{0.010 - s, 1.0}, {0.0102 - s, 1.0}};
        const Vec got = run(comps, s, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(mixture_cdf(comps, s, got[i]) == near(five_q[i], 1e-9));
        }
    }

    TEST_CASE("latency_quantiles: the mixture does not depend on step order or on the units of the weights") {
        const double s = st_4k;
        Vec means, weights;
        for (int k = 0; k < 300; ++k) {
            means.push_back(s + 0.0001 * (k % 37) + 0.002 * (k % 5));
            weights.push_back(100.0 + k);
        }
        const Vec a = latency_quantiles(means, weights, s, five_q);
        Vec rm(means.rbegin(), means.rend()), rw(weights.rbegin(), weights.rend());
        const Vec b = latency_quantiles(rm, rw, s, five_q);
        Vec scaled = weights;
        for (double& x : scaled) x *= 0.001;  // I/Os per ms instead of per s
        const Vec c = latency_quantiles(means, scaled, s, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(b[i] == near(a[i], 1e-11));
            CHECK(c[i] == near(a[i], 1e-11));
        }
    }

    TEST_CASE("latency_quantiles: quantiles come back in the order asked, and none asked gives none") {
        const double s = st_4k;
        const Vec got = latency_quantiles(Vec{s}, Vec{1.0}, s, Vec{0.99, 0.5, 0.9});
        REQUIRE(got.size() == 3);
        CHECK(got[0] == near(s * gamma4_inv(0.99) / 4.0, 1e-9));
        CHECK(got[1] == near(s * gamma4_inv(0.5) / 4.0, 1e-9));
        CHECK(got[2] == near(s * gamma4_inv(0.9) / 4.0, 1e-9));
        CHECK(latency_quantiles(Vec{s}, Vec{1.0}, s, Vec{}).empty());
    }

    TEST_CASE("latency_quantiles: shape: 1 is exponential, 2 and 2.5 follow their gamma CDFs, the default is 4") {
        const double s = st_4k;
        const double w = 0.002;  // a constant wait of 2 ms
        const Vec qs = {0.1, 0.5, 0.9, 0.99};
        // shape 1: Exp(mean s), Q = w - s ln(1 - q)
        const Vec e = latency_quantiles(Vec{w + s}, Vec{5.0}, s, qs, 1.0);
        // shape 2: P(2, x) = 1 - e^-x (1 + x), scale s/2
        const Vec g2 = latency_quantiles(Vec{w + s}, Vec{5.0}, s, qs, 2.0);
        // shape 2.5: Boost's inverse as the reference for a non-integer shape, scale s/2.5
        const Vec g25 = latency_quantiles(Vec{w + s}, Vec{5.0}, s, qs, 2.5);
        const Vec def = latency_quantiles(Vec{w + s}, Vec{5.0}, s, qs);
        const Vec four = latency_quantiles(Vec{w + s}, Vec{5.0}, s, qs, 4.0);
        auto p2 = [](double x) { return x <= 0 ? 0.0 : 1.0 - std::exp(-x) * (1.0 + x); };
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            CHECK(e[i] == near(w - s * std::log1p(-qs[i]), 1e-9));
            CHECK(g2[i] == near(w + (s / 2.0) * bisect(p2, qs[i], 0.0, 200.0), 1e-9));
            CHECK(g25[i] == near(w + (s / 2.5) * boost::math::gamma_p_inv(2.5, qs[i]), 1e-9));
            CHECK(def[i] == four[i]);
            CHECK(four[i] == near(w + (s / 4.0) * gamma4_inv(qs[i]), 1e-9));
        }
        // A larger shape narrows the spread around the mean: p99 falls as the shape grows.
        CHECK(e[3] > g2[3]);
        CHECK(g2[3] > g25[3]);
        CHECK(g25[3] > four[3]);
    }

    TEST_CASE("latency_quantiles: nothing completed: every quantile is NaN") {
        const double s = st_4k;
        for (const Vec& q : {five_q, Vec{0.0, 1.0}}) {
            const Vec empty = latency_quantiles(Vec{}, Vec{}, s, q);
            const Vec zeros = latency_quantiles(Vec{0.01, 0.02}, Vec{0.0, 0.0}, s, q);
            const Vec nans = latency_quantiles(Vec{NaN, NaN}, Vec{300.0, 3000.0}, s, q);
            REQUIRE(empty.size() == q.size());
            REQUIRE(zeros.size() == q.size());
            REQUIRE(nans.size() == q.size());
            for (std::size_t i = 0; i < q.size(); ++i) {
                CHECK(std::isnan(empty[i]));
                CHECK(std::isnan(zeros[i]));
                CHECK(std::isnan(nans[i]));
            }
        }
    }

    TEST_CASE("latency_quantiles: NaN means and zero-weight steps are skipped") {
        const double s = st_4k;
        const double mean = 32.0 / 3000.0;
        const Vec ref = latency_quantiles(Vec{mean}, Vec{3000.0}, s, five_q);
        // Extra steps that complete nothing (latency NaN, as the engine reports them), a zero-weight
        // step with a huge mean, and a NaN mean with a weight. (A NaN weight is an error: below.)
        const Vec got = latency_quantiles(Vec{NaN, mean, 5.0, NaN}, Vec{0.0, 3000.0, 0.0, 12.0}, s, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(got[i] == near(ref[i], 1e-12));
            CHECK(got[i] == near(mean - s + s * gamma4_inv(five_q[i]) / 4.0, 1e-9));
        }
    }

    TEST_CASE("latency_quantiles: bad input is a ConfigError naming the field") {
        const double s = st_4k;
        const Vec m = {0.01, 0.02}, w = {1.0, 2.0};
        CHECK(lq_error(m, w, s, five_q) == "<no ConfigError>");

        const std::string lengths = lq_error(m, Vec{1.0, 2.0, 3.0}, s, five_q);
        CHECK(contains(lengths, "mean_latency_s has 2"));
        CHECK(contains(lengths, "completions has 3"));

        CHECK(contains(lq_error(m, w, 0.0, five_q), "read_service_s=0"));
        CHECK(contains(lq_error(m, w, -0.001, five_q), "read_service_s=-0.001"));
        CHECK(contains(lq_error(m, w, NaN, five_q), "read_service_s=nan"));
        CHECK(contains(lq_error(m, w, Inf, five_q), "read_service_s=inf"));

        // shape 0 is cv inf, shape 1e8 cv 1e-4 (below the smallest, 1e-3), shape -4 cv NaN.
        CHECK(contains(lq_error(m, w, s, five_q, 0.0), "service_cv=inf"));
        CHECK(contains(lq_error(m, w, s, five_q, 1e8), "service_cv=0.0001"));
        CHECK(contains(lq_error(m, w, s, five_q, -4.0), "service_cv=-nan"));
        CHECK(contains(lq_error(m, w, s, five_q, NaN), "service_cv=nan"));

        CHECK(contains(lq_error(m, w, s, Vec{0.5, -0.1}), "quantile -0.1"));
        CHECK(contains(lq_error(m, w, s, Vec{1.5}), "quantile 1.5"));
        CHECK(contains(lq_error(m, w, s, Vec{NaN}), "quantile nan"));
        CHECK(contains(lq_error(m, w, s, Vec{1.5}), "between 0 and 1"));

        // Validation comes first, even when nothing completed.
        CHECK(contains(lq_error(Vec{}, Vec{}, 0.0, five_q), "read_service_s=0"));
        CHECK(contains(lq_error(Vec{}, Vec{}, s, Vec{2.0}), "quantile 2"));
    }

    TEST_CASE("latency_quantiles: quantile 0 unthrottled is 0, quantile 1 is finite, past every other quantile") {
        const double s = st_4k;
        const double scale = s / 4.0;
        const Vec got = latency_quantiles(Vec{s, s}, Vec{1.0, 2.0}, s, Vec{0.0, 1.0 - 1e-9, 1.0});
        CHECK(within(got[0], 0.0, 1e-15));
        CHECK(std::isfinite(got[2]));
        CHECK(got[2] >= got[1]);
        // P(4, 60) = 1 - 3.4e-22 is 1 in double precision: the CDF reaches 1 before 60 scale units.
        CHECK(got[2] <= 60.0 * scale);

        const double w = 32.0 / 3000.0 - s;
        const Vec thr = latency_quantiles(Vec{w + s}, Vec{3000.0}, s, Vec{1.0 - 1e-9, 1.0});
        CHECK(std::isfinite(thr[1]));
        CHECK(thr[1] >= thr[0]);
        CHECK(thr[1] <= w + 60.0 * scale);
    }

    // With every I/O waiting w the distribution starts at w (like scipy's gamma.ppf(0) = loc, or
    // numpy's percentile 0 = the minimum), so p0 is the smallest wait.
    TEST_CASE("latency_quantiles: quantile 0 is the smallest wait when every I/O waits") {
        const double s = st_4k;
        const double w1 = 32.0 / 3000.0 - s, w2 = 32.0 / 300.0 - s;
        const Vec got = run({{w1, 6e6}, {w2, 210000.0}}, s, Vec{0.0});
        CHECK(got[0] == near(w1, 1e-9));
    }

    // Quantile 1 stays finite and near the largest wait even when summing the weights in another
    // order rounds differently: total (0.1 + 0.3) + 0.5 = 0.9 but the bins (waits 1, 2, 4 ms) add up
    // to (0.1 + 0.5) + 0.3 = 0.8999999999999999.
    TEST_CASE("latency_quantiles: quantile 1 of a mixture stays near its largest wait") {
        const double s = 0.001;
        const Vec got = latency_quantiles(Vec{0.002, 0.005, 0.003}, Vec{0.1, 0.3, 0.5}, s, Vec{1.0});
        CAPTURE(got[0]);
        CHECK(std::isfinite(got[0]));
        CHECK(got[0] <= 0.004 + 60.0 * s / 4.0);
    }

}  // TEST_SUITE

TEST_SUITE("latency") {
    TEST_CASE("closed_loop_latency_s: Little's law over latency plus think time, at least the service time") {
        CHECK(closed_loop_latency_s(32, 3000, st_4k, 0) == near(32.0 / 3000));
        CHECK(closed_loop_latency_s(4, 300, st_4k, 0.001) == near(4.0 / 300 - 0.001));
        CHECK(closed_loop_latency_s(4, 1e6, st_4k, 0) == st_4k);  // never below the service time
        CHECK(std::isnan(closed_loop_latency_s(4, 0, st_4k, 0)));
    }

    TEST_CASE("latency_moments: mean and standard deviation of the mixture") {
        const double s = 0.001;
        // Unthrottled: Gamma(4, s / 4): mean s, standard deviation s / sqrt(4) = s / 2.
        LatencyMoments m = latency_moments(Vec{s, s}, Vec{3.0, 5.0}, s);
        CHECK(m.mean_s == near(s));
        CHECK(m.stddev_s == near(s / 2));
        // Half the I/Os at s, half at 3 s: mean 2 s; variance s^2 (the step means) + s^2 / 4.
        m = latency_moments(Vec{s, 3 * s}, Vec{1.0, 1.0}, s);
        CHECK(m.mean_s == near(2 * s));
        CHECK(m.stddev_s == near(s * std::sqrt(1.25)));
        // Shape 1: exponential, standard deviation s.
        CHECK(latency_moments(Vec{s}, Vec{1.0}, s, 1.0).stddev_s == near(s));
        // A mean below the service time reads as the service time; NaN and empty steps drop out.
        m = latency_moments(Vec{0.5 * s, std::nan(""), 9.0}, Vec{2.0, 4.0, 0.0}, s);
        CHECK(m.mean_s == near(s));
        CHECK(std::isnan(latency_moments(Vec{}, Vec{}, s).mean_s));
        CHECK(std::isnan(latency_moments(Vec{s}, Vec{0.0}, s).stddev_s));
        CHECK(config_error_message([&] {
                  (void)latency_moments(Vec{s}, Vec{1.0, 2.0}, s);
              }).find("2") != std::string::npos);
        CHECK(config_error_message([&] { (void)latency_moments(Vec{s}, Vec{-1.0}, s); }).find("completions[0]=-1") !=
              std::string::npos);
        CHECK(config_error_message([&] { (void)latency_moments(Vec{s}, Vec{1.0}, s, 0.0); }).find("service_cv=inf") !=
              std::string::npos);
    }

    TEST_CASE("latency_quantiles and latency_moments: completions finite and >= 0, a mean latency NaN or >= 0") {
        const double s = 0.001;
        const double inf = std::numeric_limits<double>::infinity();
        const double nan = std::nan("");
        const std::vector<double> q = {0.5};
        auto message = [&](const Vec& m, const Vec& c) {
            const std::string a = config_error_message([&] { (void)latency_moments(m, c, s); });
            const std::string b = config_error_message([&] { (void)latency_quantiles(m, c, s, q); });
            CHECK(a == b);
            return a;
        };
        CHECK(message(Vec{s, s}, Vec{1.0, nan}).find("completions[1]=nan must be a finite number >= 0") !=
              std::string::npos);
        CHECK(message(Vec{s, s}, Vec{inf, 1.0}).find("completions[0]=inf") != std::string::npos);
        CHECK(message(Vec{s, -s}, Vec{1.0, 1.0}).find("mean_latency_s[1]=-0.001 must be a finite number >= 0") !=
              std::string::npos);
        CHECK(message(Vec{inf, s}, Vec{1.0, 1.0}).find("mean_latency_s[0]=inf") != std::string::npos);
        // A NaN mean (nothing completed in the step) is skipped, whatever its weight says.
        CHECK(latency_moments(Vec{s, nan}, Vec{1.0, 3.0}, s).mean_s == near(s));
    }

}  // TEST_SUITE

// The wait's spread (wait_cv), the directions and the kind of limit that binds.
TEST_SUITE("latency") {
    using U8 = std::vector<std::uint8_t>;
    const std::vector<double> qs = {0.1, 0.5, 0.9, 0.99, 0.999};

    TEST_CASE("wait spread: an exponential wait (cv 1) behind a near-constant service time") {
        // s = 0.5 ms with cv 1e-3 (constant for any purpose), mean latency 20.5 ms: w = 20 ms,
        // Exp(20 ms) waits: Q(q) = s - w ln(1 - q) (p50 = 0.5 + 20 ln 2 = 14.36 ms, p99 = 92.60 ms).
        const double s = 0.0005, w = 0.020;
        const LatencyModel m{s, s, 1.0, 1e-3, 1.0, 0.0};
        const Vec got = ebssim::latency_quantiles(Vec{w + s}, Vec{100.0}, {}, m, qs);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            CHECK(got[i] == near(s - w * std::log1p(-qs[i]), 1e-5));
        }
        const LatencyMoments mm = ebssim::latency_moments(Vec{w + s}, Vec{100.0}, {}, m);
        CHECK(mm.mean_s == near(w + s, 1e-12));  // the mean stays Little's
        CHECK(mm.stddev_s == near(std::sqrt(w * w + 1e-6 * s * s), 1e-12));
    }

    TEST_CASE("wait spread: wait and service both Gamma(4) of the same mean sum to Gamma(8) exactly") {
        // Two independent Gamma(4, s/4) sum to Gamma(8, s/4): the three-cumulant shifted gamma is
        // exact here (shift 0, shape 8, scale s/4).
        const double s = 0.002;
        const LatencyModel m{s, s, 1.0, 0.5, 0.5, 0.0};
        const Vec got = ebssim::latency_quantiles(Vec{2 * s}, Vec{7.0}, {}, m, qs);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            CHECK(got[i] == near(s / 4 * boost::math::gamma_p_inv(8.0, qs[i]), 1e-9));
        }
        // Its standard deviation: sqrt(8) s / 4.
        CHECK(ebssim::latency_moments(Vec{2 * s}, Vec{7.0}, {}, m).stddev_s == near(std::sqrt(8.0) * s / 4, 1e-12));
    }

    TEST_CASE("wait spread: a step the instance holds back takes instance_wait_cv, others wait_cv") {
        // Same step twice: bound volume_iops (1) with wait_cv 0.65, bound instance_iops (3) with
        // instance_wait_cv 0: the second is the first-come-first-served case, w + Gamma(4, s/4).
        const double s = 0.001, w = 0.030;
        const LatencyModel m{s, s, 1.0, 0.5, 0.65, 0.0};
        const Vec inst = ebssim::latency_quantiles(Vec{w + s}, Vec{5.0}, U8{3}, m, qs);
        const Vec vol = ebssim::latency_quantiles(Vec{w + s}, Vec{5.0}, U8{1}, m, qs);
        const Vec none = ebssim::latency_quantiles(Vec{w + s}, Vec{5.0}, {}, m, qs);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            CHECK(inst[i] == near(w + s / 4 * gamma4_inv(qs[i]), 1e-9));
            CHECK(vol[i] == none[i]);  // no bound series: the volume's spread
        }
        CHECK(vol[3] > 2.5 * (w + s));  // cv 0.65: p99 near 3 x the mean, as measured on Nitro
        CHECK(inst[3] < 1.1 * (w + s));
        CHECK(contains(config_error_message([&] { (void)ebssim::latency_quantiles(Vec{s}, Vec{1.0}, U8{6}, m, qs); }),
                       "bound[0]=6"));
        CHECK(contains(config_error_message([&] {
                           (void)ebssim::latency_quantiles(Vec{s}, Vec{1.0}, U8{1, 1}, m, qs);
                       }),
                       "bound has 2 steps but completions has 1"));
    }

    TEST_CASE("directions: reads and writes wait alike and are served in their own times") {
        // Reads 1 ms, writes 3 ms, a quarter reads: the mean service time is 0.25 + 2.25 = 2.5 ms.
        // A step of mean 10 ms waits 7.5 ms: reads average 8.5 ms, writes 10.5 ms, all 10 ms.
        const double sr = 0.001, sw = 0.003;
        const LatencyModel m{sr, sw, 0.25, 0.5, 0.0, 0.0};
        CHECK(m.mean_service_s() == near(0.0025, 1e-15));
        const Vec mean{0.010}, n{40.0};
        CHECK(ebssim::latency_moments(mean, n, {}, m, Direction::read).mean_s == near(0.0085, 1e-12));
        CHECK(ebssim::latency_moments(mean, n, {}, m, Direction::write).mean_s == near(0.0105, 1e-12));
        CHECK(ebssim::latency_moments(mean, n, {}, m, Direction::all).mean_s == near(0.010, 1e-12));
        const Vec r = ebssim::latency_quantiles(mean, n, {}, m, qs, Direction::read);
        const Vec wr = ebssim::latency_quantiles(mean, n, {}, m, qs, Direction::write);
        const Vec all = ebssim::latency_quantiles(mean, n, {}, m, qs, Direction::all);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CAPTURE(qs[i]);
            CHECK(r[i] == near(0.0075 + sr / 4 * gamma4_inv(qs[i]), 1e-9));
            CHECK(wr[i] == near(0.0075 + sw / 4 * gamma4_inv(qs[i]), 1e-9));
            // The mixture's CDF at its own quantile: 0.25 P4((x - w) / (sr/4)) + 0.75 P4((x - w) / (sw/4)).
            const double x = all[i] - 0.0075;
            CHECK(0.25 * p4(x / (sr / 4)) + 0.75 * p4(x / (sw / 4)) == near(qs[i], 1e-9));
        }
        // All reads: no writes to describe, and the other way round.
        const LatencyModel reads{sr, sw, 1.0, 0.5, 0.0, 0.0};
        CHECK(std::isnan(ebssim::latency_quantiles(mean, n, {}, reads, qs, Direction::write)[0]));
        CHECK(std::isnan(ebssim::latency_moments(mean, n, {}, reads, Direction::write).mean_s));
    }

    TEST_CASE("latency model: bad values are ConfigErrors naming the field") {
        const double s = 0.001;
        auto msg = [&](LatencyModel m) {
            return config_error_message([&] { (void)ebssim::latency_moments(Vec{s}, Vec{1.0}, {}, m); });
        };
        CHECK(contains(msg({s, 0.0, 0.5, 0.5, 0.5, 0.5}), "write_service_s=0"));
        CHECK(contains(msg({s, 11.0, 0.5, 0.5, 0.5, 0.5}), "write_service_s=11"));
        CHECK(contains(msg({s, s, 1.5, 0.5, 0.5, 0.5}), "read_fraction=1.5"));
        CHECK(contains(msg({s, s, 1.0, 11.0, 0.5, 0.5}), "service_cv=11"));
        CHECK(contains(msg({s, s, 1.0, 0.5, -0.1, 0.5}), "wait_cv=-0.1"));
        CHECK(contains(msg({s, s, 1.0, 0.5, 0.5, NaN}), "instance_wait_cv=nan"));
    }

    TEST_CASE("submission share: submitting / depth, at most 1; Nitro 0.84, Xen 0.75") {
        CHECK(default_submitting(true) == 0.84);
        CHECK(default_submitting(false) == 0.75);
        // 05: 16 jobs x iodepth 16 on r5b.large: 0.84 / 16 = 0.0525 of each wait is slat.
        CHECK(submission_share(16, default_submitting(true)) == near(0.0525, 1e-15));
        // 01: iodepth 32 on c4.xlarge (Xen): 0.75 / 32 = 0.0234375.
        CHECK(submission_share(32, default_submitting(false)) == near(0.0234375, 1e-15));
        CHECK(submission_share(1, 1.0) == 1.0);
        CHECK(submission_share(1, 0.0) == 0.0);
        CHECK(contains(config_error_message([] { (void)submission_share(0.5, 0.84); }), "depth=0.5"));
        CHECK(contains(config_error_message([] { (void)submission_share(Inf, 0.84); }), "depth=inf"));
        CHECK(contains(config_error_message([] { (void)submission_share(16, 1.5); }), "submitting=1.5"));
        CHECK(contains(config_error_message([] { (void)submission_share(16, NaN); }), "submitting=nan"));
    }

    TEST_CASE("submission share: the wait before submission leaves clat's quantiles and moments") {
        // gp3 at 3,000 IOPS with 32 in flight: mean 32 / 3,000 s, wait 32/3000 - s = 10.1629 ms; a
        // share 0.0525 of it is slat: 0.0525 x 10.1629 = 0.53355 ms; clat waits the other
        // 0.9475 x 10.1629 = 9.62931 ms, then the service (FIFO wait: every I/O waits that).
        const double s = st_4k;
        const double mean = 32.0 / 3000.0;
        LatencyModel model = fifo(s);
        model.submission_share = 0.0525;
        CHECK(submission_latency_s(mean, model) == near(0.0525 * (mean - s), 1e-12));
        CHECK(submission_latency_s(mean, model) == near(0.53355e-3, 1e-4));
        CHECK(submission_latency_s(0.5 * s, model) == 0.0);  // no wait: no slat
        CHECK(std::isnan(submission_latency_s(NaN, model)));
        const double w = 0.9475 * (mean - s);
        const Vec got = ebssim::latency_quantiles(Vec(10, mean), Vec(10, 3000.0), {}, model, five_q);
        for (std::size_t i = 0; i < five_q.size(); ++i) {
            CAPTURE(five_q[i]);
            CHECK(got[i] == near(w + s * gamma4_inv(five_q[i]) / 4.0, 1e-9));
        }
        // p50 = 9.62931 + 0.46250 = 10.09181 ms
        CHECK(got[0] == near(10.09181e-3, 1e-5));
        // The mean is clat's: lat less slat, 10.66667 - 0.53355 = 10.13312 ms; the spread is the
        // service's alone (s / 2: shape 4), the wait being constant.
        const LatencyMoments m = ebssim::latency_moments(Vec(10, mean), Vec(10, 3000.0), {}, model);
        CHECK(m.mean_s == near(mean - 0.0525 * (mean - s), 1e-12));
        CHECK(m.mean_s == near(10.13312e-3, 1e-5));
        CHECK(m.stddev_s == near(s / 2, 1e-9));
        // Share 0: the whole latency, as before.
        CHECK(ebssim::latency_moments(Vec(10, mean), Vec(10, 3000.0), {}, fifo(s)).mean_s == near(mean, 1e-12));
        model.submission_share = 1.5;
        CHECK(contains(config_error_message([&] { (void)ebssim::latency_moments(Vec{s}, Vec{1.0}, {}, model); }),
                       "submission_share=1.5"));
    }

    TEST_CASE("default wait spread: Nitro volume 0.65; instance 0.2 up to 16 in flight, 0.65 from 256; Xen 0.1") {
        CHECK(default_wait_spread(true).volume_cv == 0.65);
        CHECK(default_wait_spread(false).volume_cv == 0.1);
        const WaitSpread nitro = default_wait_spread(true);
        CHECK(instance_wait_cv_at(nitro, 0) == 0.2);
        CHECK(instance_wait_cv_at(nitro, 1) == 0.2);
        CHECK(instance_wait_cv_at(nitro, 16) == 0.2);
        // Linear in log(in flight): 64 is halfway from 16 to 256, 0.2 + 0.45 / 2; 32 a quarter.
        CHECK(instance_wait_cv_at(nitro, 64) == near(0.425, 1e-12));
        CHECK(instance_wait_cv_at(nitro, 32) == near(0.3125, 1e-12));
        CHECK(instance_wait_cv_at(nitro, 256) == 0.65);
        CHECK(instance_wait_cv_at(nitro, 1e6) == 0.65);
        CHECK(instance_wait_cv_at(nitro, std::numeric_limits<double>::infinity()) == 0.65);
        for (double n : {1.0, 64.0, 512.0}) CHECK(instance_wait_cv_at(default_wait_spread(false), n) == 0.1);
        for (double bad : {-1.0, NaN}) {
            CAPTURE(bad);
            CHECK(contains(config_error_message([&] { (void)instance_wait_cv_at(nitro, bad); }), "in_flight="));
        }
    }

    TEST_CASE("held_in_flight: Little's law over the steps a limit holds") {
        const double s = 0.0005;
        // A closed loop of 16: unheld at 32,000 IOPS (latency = the service time), then held at
        // 1,000 IOPS (16 ms): the held steps give 1,000 x 0.016 = 16.
        CHECK(held_in_flight(Vec{s, 0.016, 0.016}, Vec{32000, 1000, 1000}, s) == near(16.0, 1e-12));
        // Held steps of 8 and 24 in flight: their mean, 16; the idle step (no I/O) drops out.
        CHECK(held_in_flight(Vec{0.008, NaN, 0.024}, Vec{1000, 0, 1000}, s) == near(16.0, 1e-12));
        // Nothing held: every step that completes I/O, 2,000 x 0.5 ms = 1 and 4,000 x 0.5 ms = 2.
        CHECK(held_in_flight(Vec{s, s}, Vec{2000, 4000}, s) == near(1.5, 1e-12));
        CHECK(std::isnan(held_in_flight(Vec{NaN}, Vec{0.0}, s)));
        CHECK(contains(config_error_message([&] {
                           (void)held_in_flight(Vec{s, s}, Vec{1.0}, s);
                       }),
                       "one value per step"));
    }
}  // TEST_SUITE
