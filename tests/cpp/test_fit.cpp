// The fitter (ebssim/fit.hpp): numbers worked out by hand from the problems' definitions.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <boost/math/special_functions/gamma.hpp>

#include "ebssim/error.hpp"
#include "ebssim/fit.hpp"

using namespace ebssim;
using namespace ebssim::fit;

TEST_CASE("Levenberg-Marquardt: an exact straight line, its covariance, and a flat direction") {
    // y = 2 + 3 x at x = 0..4, plus +-0.1 alternating: least squares a = 2.02, b = 3 (symmetric noise),
    // residual variance s^2 = 0.05 / 3; var(b) = s^2 / sum (x - 2)^2 = s^2 / 10.
    const std::vector<double> xs{0, 1, 2, 3, 4}, noise{0.1, -0.1, 0.1, -0.1, 0.1};
    ResidualFn f = [&](const std::vector<double>& p, std::vector<double>& r) {
        for (std::size_t i = 0; i < xs.size(); ++i) r[i] = p[0] + p[1] * xs[i] + 0 * p[2] - (2 + 3 * xs[i] + noise[i]);
    };
    const double inf = std::numeric_limits<double>::infinity();
    auto res = levenberg_marquardt(f, 5, {0, 0, 1}, {-inf, -inf, -inf}, {inf, inf, inf}, {1e-6, 1e-6, 1e-6});
    CHECK(res.converged);
    CHECK(res.x[0] == doctest::Approx(2.02).epsilon(1e-9));
    CHECK(res.x[1] == doctest::Approx(3.0).epsilon(1e-9));
    CHECK(res.dof == 3);
    const double s2 = (0.05 - 5 * 0.02 * 0.02) / 3;  // ssr = sum (noise - 0.02)^2
    CHECK(res.ssr == doctest::Approx(0.05 - 5 * 0.02 * 0.02).epsilon(1e-9));
    CHECK(res.se[1] == doctest::Approx(std::sqrt(s2 / 10)).epsilon(1e-6));
    CHECK(res.se[0] == doctest::Approx(std::sqrt(s2 * (1.0 / 5 + 4.0 / 10))).epsilon(1e-6));
    // p[2] changes nothing: not determined, kept where it started
    CHECK_FALSE(res.determined[2]);
    CHECK(res.x[2] == 1.0);
    CHECK(std::isnan(res.se[2]));
}

TEST_CASE("Levenberg-Marquardt: bounds hold, bad input is refused") {
    ResidualFn f = [](const std::vector<double>& p, std::vector<double>& r) { r[0] = p[0] - 5; };
    auto res = levenberg_marquardt(f, 1, {0}, {-1}, {2}, {1e-6});
    CHECK(res.x[0] == 2.0);  // the minimum at 5 lies beyond the upper bound
    CHECK_THROWS_AS(levenberg_marquardt(f, 1, {3}, {-1}, {2}, {1e-6}), ConfigError);
    CHECK_THROWS_AS(levenberg_marquardt(f, 1, {0}, {-1}, {2}, {0}), ConfigError);
}

TEST_CASE("fit_levels: a change of rate inside a window is placed within it") {
    // 10 windows of 1 s; 100/s until t = 4.25, then 10/s: window (4, 5] averages 0.25 x 100 + 0.75 x 10 = 32.5.
    Windows w;
    for (int i = 0; i < 10; ++i) {
        w.start_s.push_back(i);
        w.end_s.push_back(i + 1);
        w.value.push_back(i < 4 ? 100.0 : i == 4 ? 32.5 : 10.0);
        w.weight.push_back(1.0);
    }
    std::vector<Segment> segs{{0, 0, -1, 0}, {0, 10, 0, -1}};
    auto r = fit_levels(w, segs, {90, 12}, {5.0});
    CHECK(r.level[0] == doctest::Approx(100).epsilon(1e-6));
    CHECK(r.level[1] == doctest::Approx(10).epsilon(1e-6));
    CHECK(r.change_s[0] == doctest::Approx(4.25).epsilon(1e-6));
}

TEST_CASE("fit_levels: segments that overlap are refused (one rate, not concurrent jobs)") {
    // Two jobs' logs at once: job A at 100/s and job B at 10/s over (0, 10]. As one series, each
    // window would be predicted as A + B = 110/s, which neither log measured.
    Windows w;
    for (int i = 0; i < 10; ++i) {
        w.start_s.push_back(i);
        w.end_s.push_back(i + 1);
        w.value.push_back(100.0);
        w.weight.push_back(1.0);
    }
    const std::vector<Segment> concurrent{{0, 10, -1, -1}, {0, 10, -1, -1}};
    CHECK_THROWS_WITH_AS(fit_levels(w, concurrent, {90, 12}, {}), doctest::Contains("overlap"), ConfigError);
    const std::vector<Segment> partly{{0, 6, -1, -1}, {5, 10, -1, -1}};
    CHECK_THROWS_WITH_AS(fit_levels(w, partly, {90, 12}, {}), doctest::Contains("segments 0 (0, 6) and 1 (5, 10)"),
                         ConfigError);
    // Back to back (one ends where the next starts): one rate, fitted.
    const std::vector<Segment> follow{{0, 5, -1, -1}, {5, 10, -1, -1}};
    const LevelsFit r = fit_levels(w, follow, {90, 12}, {});
    CHECK(r.level[0] == doctest::Approx(100).epsilon(1e-9));
    CHECK(r.level[1] == doctest::Approx(100).epsilon(1e-9));
}

TEST_CASE("fit_bucket_volume: a 100 GiB gp2 from its own engine's rates") {
    // A saturating load: 3,000 IOPS until 5.4e6 x 10 % / 2,700 = 200 s, then 300.
    Windows w;
    for (int i = 0; i < 300; ++i) {
        w.start_s.push_back(i);
        w.end_s.push_back(i + 1);
        w.value.push_back(i < 200 ? 3000.0 : 300.0);
        w.weight.push_back(1.0);
    }
    BucketFitInput in;
    in.type = VolumeType::gp2;
    in.size_guess_gib = 90;
    in.balance_guess_pct = 9;
    in.phases = {FitPhase{0, 300}};
    in.observed = w;
    in.dt_s = 0.1;
    auto r = fit_bucket_volume(in);
    CHECK(r.size_gib.value == 100);
    CHECK(r.balance_pct.value == doctest::Approx(10).epsilon(1e-4));
    CHECK(r.cliff_time_s.value == doctest::Approx(200).epsilon(1e-4));
}

TEST_CASE("fit_bucket_volume: the sizes come from the volume-type table, and a type without a bucket is refused") {
    auto input = [](VolumeType type, double guess) {
        BucketFitInput in;
        in.type = type;
        in.size_guess_gib = guess;
        in.phases = {FitPhase{0, 2}};
        in.observed.start_s = {0, 1};
        in.observed.end_s = {1, 2};
        in.observed.value = {10, 10};
        in.observed.weight = {1, 1};
        in.max_profile_sizes = 4;
        return in;
    };
    // A guess outside the type's range starts the profile at its end: st1 125 to 16,384 GiB,
    // standard 1 to 1,024 (volume.hpp's table); every size tried is one AWS accepts.
    const BucketFit st1 = fit_bucket_volume(input(VolumeType::st1, 1));
    CHECK(st1.size_gib.lower >= 125);
    CHECK(st1.size_gib.upper <= 16384);
    const BucketFit standard = fit_bucket_volume(input(VolumeType::standard, 5000));
    CHECK(standard.size_gib.lower >= 1);
    CHECK(standard.size_gib.upper <= 1024);
    std::string msg;
    try {
        (void)fit_bucket_volume(input(VolumeType::gp3, 100));
    } catch (const ConfigError& e) {
        msg = e.what();
    }
    CHECK(msg.find("type gp3 has no burst bucket; expected one of gp2, st1, sc1, standard") != std::string::npos);
}

TEST_CASE("fit_gamma: the bins of a known gamma give back its shape and mean") {
    // Gamma(shape 4, mean 1 ms): 1e6 latencies binned at 0.1 ms, counts from the CDF (Boost.Math).
    const double k = 4, mean = 1e-3, theta = mean / k;
    std::vector<double> lo, hi, n;
    for (int i = 0; i < 60; ++i) {
        const double a = i * 1e-4, b = (i + 1) * 1e-4;
        lo.push_back(a);
        hi.push_back(i == 59 ? std::numeric_limits<double>::infinity() : b);
        const double pb = i == 59 ? 1.0 : boost::math::gamma_p(k, b / theta);
        n.push_back(1e6 * (pb - boost::math::gamma_p(k, a / theta)));
    }
    auto g = fit_gamma(lo, hi, n);
    CHECK(g.converged);
    CHECK(g.shape.value == doctest::Approx(4).epsilon(1e-3));
    CHECK(g.mean_s.value == doctest::Approx(1e-3).epsilon(1e-3));
    CHECK(g.shape.se > 0);
}

TEST_CASE("fit_service_time: intercept and per-byte term of exact points") {
    // s(b) = 0.2 ms + b / 1,000 MiB/s at 4 KiB, 64 KiB, 1 MiB
    const double per_byte = 1.0 / (1000.0 * 1048576.0);
    std::vector<double> b{4096, 65536, 1048576}, s, wt{1, 1, 1};
    for (double x : b) s.push_back(2e-4 + x * per_byte);
    auto r = fit_service_time(b, s, wt, 1e-9);
    CHECK(r.intercept_s.value == doctest::Approx(2e-4).epsilon(1e-9));
    CHECK(r.per_byte_s.value == doctest::Approx(per_byte).epsilon(1e-9));
    // One size: the default per-byte term, the intercept the rest.
    auto one = fit_service_time({4096}, {s[0]}, {1}, per_byte);
    CHECK_FALSE(one.per_byte_s.determined);
    CHECK(one.intercept_s.value == doctest::Approx(2e-4).epsilon(1e-9));
}
