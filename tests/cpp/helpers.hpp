#pragma once
// Small helpers shared by the doctest files: spec builders, workloads, a tight Approx, and a
// way to capture a ConfigError message. Expected numbers in the tests are worked out by hand
// from docs/ebs-model.md, never read back from the library.

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
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

/// |x - value| <= abs_tol: for values that should be (about) zero, where a relative test is too tight.
inline bool within(double x, double value, double abs_tol) { return std::abs(x - value) <= abs_tol; }

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

/// Unloaded service time of the default HDD model (st1, sc1, standard): 5 ms + size / (250 MiB/s).
/// 1 MiB: 0.005 + 0.004 = 0.009 s. 4 KiB: 0.005 + 4096 / 262,144,000 = 0.005015625 s.
inline constexpr double hdd_st_1m = 0.005 + 1.0 / 250.0;
inline constexpr double hdd_st_4k = 0.005 + 4096.0 / (250.0 * MiB);

/// The spec without overshoot (VolumeSpec::overshoot_s = 0): for a test of another rule whose
/// hand-worked numbers assume the limits hold from the first step.
inline ebssim::VolumeSpec no_overshoot(ebssim::VolumeSpec s) {
    s.overshoot_s = 0;
    return s;
}

/// io1 / io2 with provisioned IOPS (NaN: leave unset, to test the error).
inline ebssim::VolumeSpec piops_spec(ebssim::VolumeType type, double size_gib, double iops) {
    ebssim::VolumeSpec s;
    s.type = type;
    s.size_gib = size_gib;
    s.iops = iops;
    return s;
}
inline ebssim::VolumeSpec io1_spec(double size_gib, double iops) {
    return piops_spec(ebssim::VolumeType::io1, size_gib, iops);
}
inline ebssim::VolumeSpec io2_spec(double size_gib, double iops) {
    return piops_spec(ebssim::VolumeType::io2, size_gib, iops);
}

/// st1, sc1 or standard: performance follows the size; only the initial BurstBalance is set.
inline ebssim::VolumeSpec bucket_spec(ebssim::VolumeType type, double size_gib,
                                      double burst_balance_pct = ebssim::unset) {
    ebssim::VolumeSpec s;
    s.type = type;
    s.size_gib = size_gib;
    s.burst_balance_pct = burst_balance_pct;
    return s;
}
inline ebssim::VolumeSpec st1_spec(double size_gib, double burst_balance_pct = ebssim::unset) {
    return bucket_spec(ebssim::VolumeType::st1, size_gib, burst_balance_pct);
}
inline ebssim::VolumeSpec sc1_spec(double size_gib, double burst_balance_pct = ebssim::unset) {
    return bucket_spec(ebssim::VolumeType::sc1, size_gib, burst_balance_pct);
}
inline ebssim::VolumeSpec standard_spec(double size_gib, double burst_balance_pct = ebssim::unset) {
    return bucket_spec(ebssim::VolumeType::standard, size_gib, burst_balance_pct);
}

/// A closed loop with an explicit unloaded service time: in_flight / service_time_s I/Os per second.
inline ebssim::ClosedLoop closed_loop_st(double in_flight, double io_bytes, double service_time_s,
                                         ebssim::Pattern pattern = ebssim::Pattern::random) {
    ebssim::ClosedLoop c = closed_loop(in_flight, io_bytes, pattern);
    c.service_time_s = service_time_s;
    return c;
}

/// Instance EBS limits as DescribeInstanceTypes gives them (MB/s decimal).
inline ebssim::InstanceSpec instance_spec(const std::string& name, double baseline_iops, double max_iops,
                                          double baseline_mb_s, double max_mb_s, bool nitro = true) {
    ebssim::InstanceSpec s;
    s.name = name;
    s.baseline_iops = baseline_iops;
    s.max_iops = max_iops;
    s.baseline_mb_s = baseline_mb_s;
    s.max_mb_s = max_mb_s;
    s.nitro = nitro;
    return s;
}
/// m5.large: 3,600 IOPS / 81.25 MB/s baseline, 18,750 IOPS / 593.75 MB/s for 30 minutes.
inline ebssim::InstanceSpec m5_large() { return instance_spec("m5.large", 3600, 18750, 81.25, 593.75); }
/// m5.xlarge: 6,000 IOPS / 143.75 MB/s baseline, 18,750 IOPS / 593.75 MB/s for 30 minutes.
inline ebssim::InstanceSpec m5_xlarge() { return instance_spec("m5.xlarge", 6000, 18750, 143.75, 593.75); }

/// Bound code as stored in the series.
inline constexpr std::uint8_t code(ebssim::Bound b) { return static_cast<std::uint8_t>(b); }

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
inline bool same_series(const ebssim::Column& a, const ebssim::Column& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (a[i] != b[i]) return false;
    }
    return true;
}

/// Sum of a per-second rate series times dt: the amount over the run.
inline double integrate(const ebssim::Column& per_s, double dt_s) {
    double s = 0;
    for (std::size_t k = 0; k < per_s.size(); ++k) s += per_s[k] * dt_s;
    return s;
}

}  // namespace ebssim_test
