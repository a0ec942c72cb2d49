#pragma once
/// \file error.hpp
/// The exception type of libebssim: a configuration or input that AWS (or the model) rejects
/// (ConfigError; WorkloadError when it is one workload of a run).

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ebssim {

/// Invalid input. Derives from std::invalid_argument so that pybind11 maps it to ValueError.
/// The message names the field, the value and the rule that was broken.
class ConfigError : public std::invalid_argument {
public:
    explicit ConfigError(const std::string& what) : std::invalid_argument(what) {}
};

/// Invalid input of one workload of a run (Simulation::run): which one, and why. The message
/// is the reason, prefixed "workload i: " in a run of several workloads; run_many reports the
/// index and the reason apart (FleetOutcome), so that a front end names the volume its own way.
class WorkloadError : public ConfigError {
public:
    WorkloadError(std::size_t workload, const std::string& reason, bool several)
        : ConfigError(several ? "workload " + std::to_string(workload) + ": " + reason : reason),
          workload_(workload),
          reason_(reason) {}
    [[nodiscard]] std::size_t workload() const noexcept { return workload_; }
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    std::size_t workload_;
    std::string reason_;
};

}  // namespace ebssim
