#pragma once
// Private to the library: the closed forms behind jumps over a backlog whose mix (operations and
// bytes per counted I/O) differs from the arrivals' (Stepper::jump_mixed in jumps.hpp).
//
// A throttled step serves the same amount s of the binding quantity (counted I/Os at the IOPS
// cap, bytes at the throughput cap) from a backlog B_j of it plus the arrivals a, in proportion
// (jumps.hpp's f = s / (B_j + a) applies to every component), so B_j = B_0 + j delta with
// delta = a - s, and the share of the backlog that was already there at the start (the "old"
// material) follows phi_{j+1} = phi_j B_j / (B_j + a). phi_n is a product of ratios of linear
// terms in j, a ratio of Gamma functions:
//
//   delta > 0:  phi_n = prod_{j<n} (u + j) / (u + v + j) = G(u, n, v),       u = B_0/delta, v = a/delta
//   delta < 0:  phi_n = prod_{j<n} (U - j) / (U + V - j) = G(U - n + 1, n, V), U = B_0/|delta|, V = a/|delta|
//
// with log G(x, n, v) = L_v(x) - L_v(x + n) and L_v(x) = lgamma(x + v) - lgamma(x). Evaluated as
// written, the lgamma differences lose everything to cancellation for the large arguments of a
// long backlog (lgamma(1e6) ~ 1.3e7: an ulp is 2e-9), so for x >= 10 the difference is taken
// term by term from Stirling's series, where each term is small or a log1p.

#include <algorithm>
#include <cmath>

#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/digamma.hpp>

namespace ebssim::detail {

namespace mixing_policy {
using NoThrow =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::pole_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;
}

/// Stirling's correction: lgamma(x) - ((x - 1/2) ln x - x + ln(2 pi) / 2), to about 2e-14 for
/// x >= 10 (the first omitted term is 691 / (360360 x^11)).
[[nodiscard]] inline double stirling_correction(double x) noexcept {
    const double r = 1.0 / x;
    const double r2 = r * r;
    return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 * (1.0 / 1188)))));
}

/// Terms summed one by one rather than by the series: a short product or sum is cheap, and the
/// series' terms, each of the size of v n / x, cancel to about 1 ulp of that.
inline constexpr double direct_terms = 64;

/// log prod_{j<n} (x + j) / (x + v + j) = -sum_{j<n} log1p(v / (x + j)) for x > 0, x + v > 0,
/// n >= 0 (whole), i.e. L_v(x) - L_v(x + n) with L_v(y) = lgamma(y + v) - lgamma(y); NaN outside
/// that domain. Terms with an argument below 10, and short products, are summed one by one; the
/// rest is the difference of Stirling's series at both ends,
/// L_v(z) = v ln z + (z + v - 1/2) log1p(v / z) - v + S(z + v) - S(z), rearranged so that every
/// term is of the size of the result: with y = x + n,
/// L_v(x) - L_v(y) = -v log1p(n / x) + (x + v - 1/2) log1p(v n / (x (y + v))) - n log1p(v / y) + S-terms.
[[nodiscard]] inline double log_rising_ratio(double x, double n, double v) noexcept {
    if (!(x > 0 && x + v > 0 && n >= 0)) return std::nan("");
    double sum = 0;
    while (n > 0 && (std::min(x, x + v) < 10 || n <= direct_terms)) {
        sum -= std::log1p(v / x);
        x += 1;
        n -= 1;
    }
    if (n == 0 || v == 0) return sum;
    const double y = x + n;
    const double t = (x + v - 0.5) * std::log1p(v * n / (x * (y + v))) - n * std::log1p(v / y);
    const double s =
        (stirling_correction(x + v) - stirling_correction(x)) - (stirling_correction(y + v) - stirling_correction(y));
    return sum - v * std::log1p(n / x) + t + s;
}

/// sum_{j<n} 1 / (x + j), x > 0, n >= 0 (whole): the limit of -log_rising_ratio(x, n, v) / v as
/// v -> 0, digamma(x + n) - digamma(x). Short sums are added up; for x >= 10 the difference of
/// the asymptotic series, psi(z) ~ ln z - 1/(2z) - 1/(12z^2) + 1/(120z^4) - 1/(252z^6), term by
/// term (to about 1/(240 x^8)); else Boost's digamma.
[[nodiscard]] inline double harmonic_sum(double x, double n) noexcept {
    if (n <= direct_terms) {
        double h = 0;
        for (double j = 0; j < n; j += 1) h += 1.0 / (x + j);
        return h;
    }
    if (x < 10) {
        const mixing_policy::NoThrow pol;
        return boost::math::digamma(x + n, pol) - boost::math::digamma(x, pol);
    }
    const double y = x + n;
    const double ix2 = 1 / (x * x), iy2 = 1 / (y * y);
    return std::log1p(n / x) + 0.5 * n / (x * y) + n * (x + y) * ix2 * iy2 / 12 - (ix2 * ix2 - iy2 * iy2) / 120 +
           (ix2 * ix2 * ix2 - iy2 * iy2 * iy2) / 252;
}

/// The share of a throttled backlog that was already there n steps earlier (phi_n above): B0 > 0
/// the backlog of the binding quantity, a > 0 its arrivals and delta = a - s its change per
/// step. Requires the backlog to stay positive through the n steps (B0 + (n - 1) delta > 0).
[[nodiscard]] inline double old_share(double B0, double a, double delta, double n) noexcept {
    if (delta == 0) return std::exp(n * std::log1p(-a / (B0 + a)));
    if (delta > 0) return std::exp(log_rising_ratio(B0 / delta, n, a / delta));
    const double U = B0 / -delta;
    return std::exp(log_rising_ratio(U - n + 1, n, a / -delta));
}

/// sum_{j<n} O_j with O_j = phi_j B_j the old material left before step j (same arguments, s the
/// amount served a step). From O_{j+1} (B_{j+1} + s) - O_j (B_j + s) = (a - 2 s) O_j, the sum
/// is Q_0 (R_n - 1) / (a - 2 s) with Q_0 = B0 (B0 + s) and R_n = prod_{j<n} (B_j + delta) /
/// (B_j + s), another ratio of Gamma functions, taken through expm1 so that a near 2 s keeps
/// its precision; a = 2 s exactly is the limit Q_0 sum_{j<n} 1 / (B_j + s).
[[nodiscard]] inline double old_sum(double B0, double a, double s, double n) noexcept {
    const double delta = a - s;
    const double eps = a - 2 * s;
    const double q0 = B0 * (B0 + s);
    if (delta == 0) return q0 * -std::expm1(n * std::log1p(-s / (B0 + s))) / s;  // eps = -s
    double log_r;
    if (delta > 0) {
        const double x = B0 / delta + 1;  // (B_j + delta) / delta = x + j
        const double v = (s - delta) / delta;
        if (eps == 0) return q0 * harmonic_sum(x, n) / delta;
        log_r = log_rising_ratio(x, n, v);
    } else {
        // (B_j + delta) / |delta| = U - 1 - j, (B_j + s) / |delta| = U + s / |delta| - j.
        const double U = B0 / -delta;
        const double w = (s - delta) / -delta;  // > 1
        log_r = log_rising_ratio(U - n, n, w);
    }
    return q0 * std::expm1(log_r) / eps;
}

}  // namespace ebssim::detail
