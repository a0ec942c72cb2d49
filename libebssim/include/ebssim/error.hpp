#pragma once
/// \file error.hpp
/// The one exception type of libebssim: a configuration or input that AWS (or the model) rejects.

#include <stdexcept>
#include <string>

namespace ebssim {

/// Invalid input. Derives from std::invalid_argument so that pybind11 maps it to ValueError.
/// The message names the field, the value and the rule that was broken.
class ConfigError : public std::invalid_argument {
public:
    explicit ConfigError(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace ebssim
