// The closed forms behind jumps over a backlog of another mix than the arrivals'
// (libebssim/src/mixing.hpp), against the products and sums they stand for, added up term by
// term in long double, and against hand-worked telescoping sums.

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "../../libebssim/src/mixing.hpp"

using namespace ebssim::detail;

namespace {

// log prod_{j<n} (x + j) / (x + v + j), term by term.
long double log_ratio_brute(double x, std::int64_t n, double v) {
    long double s = 0;
    for (std::int64_t j = 0; j < n; ++j)
        s += std::log1p(static_cast<long double>(v) / (x + static_cast<long double>(j)));
    return -s;
}

// phi_n and sum_{j<n} O_j by the recurrences themselves: the backlog B_j = B0 + j (a - s) of
// which the share phi_j was there at the start, phi_{j+1} = phi_j B_j / (B_j + a).
struct Brute {
    long double phi, sum_o;
};
Brute brute(double B0, double a, double s, std::int64_t n) {
    long double phi = 1, sum = 0;
    for (std::int64_t j = 0; j < n; ++j) {
        const long double b = B0 + static_cast<long double>(j) * (static_cast<long double>(a) - s);
        sum += phi * b;
        phi *= b / (b + a);
    }
    return {phi, sum};
}

}  // namespace

TEST_CASE("mixing: log_rising_ratio equals the product term by term, small and large arguments") {
    // Whole-number cases by hand: prod_{j<3} (1 + j) / (2 + j) = (1 x 2 x 3) / (2 x 3 x 4) = 1/4.
    CHECK(log_rising_ratio(1, 3, 1) == doctest::Approx(std::log(0.25)).epsilon(1e-15));
    // prod_{j<n} (1000 + j) / (1004 + j) = (1000 x 1001 x 1002 x 1003) / ((1000+n)...(1003+n)),
    // n = 1000: the ratio of the first four factors over the last four.
    const double p = (1000.0 * 1001 * 1002 * 1003) / (2000.0 * 2001 * 2002 * 2003);
    CHECK(std::exp(log_rising_ratio(1000, 1000, 4)) == doctest::Approx(p).epsilon(1e-14));
    std::mt19937_64 rng(7);
    auto logu = [&](double lo, double hi) {
        return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
    };
    for (int i = 0; i < 2000; ++i) {
        const double x = logu(0.01, 1e7);
        const double v = (i % 3 == 0 ? -1 : 1) * logu(1e-6, 1e4);
        if (!(x + v > 0)) continue;
        const auto n = static_cast<std::int64_t>(logu(1, 5000));
        CAPTURE(x);
        CAPTURE(v);
        CAPTURE(n);
        const long double want = log_ratio_brute(x, n, v);
        const double got = log_rising_ratio(x, static_cast<double>(n), v);
        // Absolute 1e-13 on the log (the relative precision of exp of it), and relative 1e-11
        // where the log is small (what old_sum divides by a - 2 s).
        CHECK(std::abs(got - static_cast<double>(want)) <= 1e-13 + 1e-11 * std::abs(static_cast<double>(want)));
    }
    CHECK(std::isnan(log_rising_ratio(0, 1, 1)));
    CHECK(std::isnan(log_rising_ratio(1, 1, -1)));
}

TEST_CASE("mixing: old_share and old_sum follow the recurrences (growing, draining, steady, a = 2 s)") {
    // Hand-worked: B0 = 1e6, a = 4,000, s = 3,000: delta = 1,000, u = 1,000, v = 4, so
    // phi_n = (1000 x 1001 x 1002 x 1003) / ((1000+n)(1001+n)(1002+n)(1003+n)) and
    // O_j = phi_j B_j = 1000 C / ((1001+j)(1002+j)(1003+j)), C = 1000 x 1001 x 1002 x 1003, whose
    // sum telescopes: 1 / (k(k+1)(k+2)) = (1/(k(k+1)) - 1/((k+1)(k+2))) / 2, so
    // sum_{j<n} O_j = 1000 C (1/(1001 x 1002) - 1/((1001+n)(1002+n))) / 2.
    const double C = 1000.0 * 1001 * 1002 * 1003;
    const double m = 1000;
    CHECK(old_share(1e6, 4000, 1000, m) ==
          doctest::Approx(C / ((1000 + m) * (1001 + m) * (1002 + m) * (1003 + m))).epsilon(1e-13));
    CHECK(old_sum(1e6, 4000, 3000, m) ==
          doctest::Approx(1000 * C * (1 / (1001.0 * 1002) - 1 / ((1001 + m) * (1002 + m))) / 2).epsilon(1e-13));
    // a = 2 s: Q = O_j (B_j + s) stays B0 (B0 + s), so sum O_j = Q sum 1 / (B_j + s). B0 = 3,000,
    // a = 2,000, s = 1,000: B_j + s = 1,000 (4 + j); n = 3: Q / 1000 x (1/4 + 1/5 + 1/6).
    CHECK(old_sum(3000, 2000, 1000, 3) ==
          doctest::Approx(3000.0 * 4000 / 1000 * (0.25 + 0.2 + 1.0 / 6)).epsilon(1e-15));
    std::mt19937_64 rng(11);
    auto logu = [&](double lo, double hi) {
        return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
    };
    for (int i = 0; i < 1000; ++i) {
        const double B0 = logu(1, 1e9);
        const double a = logu(1, 1e6);
        // Served: above and below the arrivals, equal to them (a steady backlog), half of them.
        const int kind = i % 4;
        const double s = kind == 0 ? a * logu(1.0001, 10) : kind == 1 ? a / logu(1.0001, 10) : kind == 2 ? a : a / 2;
        const double delta = a - s;
        // Steps while the backlog stays positive, at most 20,000.
        double n_max = 20000;
        if (delta < 0) n_max = std::min(n_max, std::floor((B0 - 1e-9 * B0) / -delta));
        if (n_max < 1) continue;
        const auto n = static_cast<std::int64_t>(std::uniform_real_distribution<double>(1, n_max)(rng));
        CAPTURE(B0);
        CAPTURE(a);
        CAPTURE(s);
        CAPTURE(n);
        const Brute b = brute(B0, a, s, n);
        const double share = old_share(B0, a, delta, static_cast<double>(n));
        CHECK(std::abs(share - static_cast<double>(b.phi)) <= 1e-11 * static_cast<double>(b.phi) + 1e-300);
        const double sum = old_sum(B0, a, s, static_cast<double>(n));
        CHECK(std::abs(sum - static_cast<double>(b.sum_o)) <= 1e-11 * static_cast<double>(b.sum_o));
    }
}
