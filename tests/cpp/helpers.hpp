#pragma once
// Small helpers shared by the doctest files: spec builders, workloads, a tight Approx, and a
// way to capture a ConfigError message. Expected numbers in the tests are worked out by hand
// from docs/ebs-model.md, never read back from the library.

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ebssim/ebssim.hpp"

namespace ebssim_test {

inline constexpr double KiB = 1024.0;
inline constexpr double MiB = 1024.0 * 1024.0;
inline constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double Inf = std::numeric_limits<double>::infinity();

/// Unloaded service time of the default SSD model: 0.5 ms + size / (1024 MiB/s).
/// 4 KiB: 0.5e-3 + 4096 / 2^30 = 0.000503814697265625 s.
inline constexpr double st_4k = 0.0005 + 4096.0 / (1024.0 * MiB);
/// 1 MiB: 0.5e-3 + 2^20 / 2^30 = 0.5e-3 + 1/1024 = 0.0014765625 s.
inline constexpr double st_1m = 0.0005 + 1.0 / 1024.0;

/// Relative comparison, tight by default. `scale` lets values near zero compare absolutely.
inline doctest::Approx near(double value, double rel = 1e-9, double scale = 0.0) {
    return doctest::Approx(value).epsilon(rel).scale(scale);
}

inline ebssim::VolumeSpec gp2_spec(double size_gib, double burst_balance_pct = ebssim::unset) {
    ebssim::VolumeSpec s;
    s.type = ebssim::VolumeType::gp2;
    s.size_gib = size_gib;
    s.burst_balance_pct = burst_balance_pct;
    return s;
}

inline ebssim::VolumeSpec gp3_spec(double size_gib, double iops = ebssim::unset,
                                   double throughput_mib_s = ebssim::unset) {
    ebssim::VolumeSpec s;
    s.type = ebssim::VolumeType::gp3;
    s.size_gib = size_gib;
    s.iops = iops;
    s.throughput_mib_s = throughput_mib_s;
    return s;
}

inline ebssim::ClosedLoop closed_loop(double in_flight, double io_bytes,
                                      ebssim::Pattern pattern = ebssim::Pattern::random) {
    ebssim::ClosedLoop c;
    c.in_flight = in_flight;
    c.io_bytes = io_bytes;
    c.pattern = pattern;
    return c;
}

inline ebssim::OpenLoop open_loop(const std::vector<double>& ops, const std::vector<double>& bytes,
                                  ebssim::Pattern pattern = ebssim::Pattern::random) {
    ebssim::OpenLoop o;
    o.ops = ops;
    o.bytes = bytes;
    o.pattern = pattern;
    return o;
}

/// One-volume simulation.
inline ebssim::Simulation single(const ebssim::VolumeSpec& spec, double dt_s = 1.0) {
    return ebssim::Simulation(std::vector<ebssim::VolumeSpec>{spec}, dt_s);
}

/// One-volume run with one workload.
inline ebssim::RunResult run1(ebssim::Simulation& sim, const ebssim::Workload& w, std::int64_t n_steps,
                              bool record = true) {
    return sim.run(std::vector<ebssim::Workload>{w}, n_steps, record);
}

/// Runs `f`; returns the message of the ConfigError it throws, or "<no ConfigError>".
template <class F>
std::string config_error_message(F&& f) {
    try {
        std::forward<F>(f)();
    } catch (const ebssim::ConfigError& e) {
        return e.what();
    }
    return "<no ConfigError>";
}

/// Element-wise equality that treats NaN == NaN (latency is NaN in steps that complete nothing).
inline bool same_series(const ebssim::Series<double>& a, const ebssim::Series<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (a[i] != b[i]) return false;
    }
    return true;
}

/// Sum of a per-second rate series times dt: the amount over the run.
inline double integrate(const ebssim::Series<double>& per_s, double dt_s) {
    double s = 0;
    for (double x : per_s) s += x * dt_s;
    return s;
}

}  // namespace ebssim_test
