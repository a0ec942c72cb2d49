#pragma once
// Private helpers for input validation; every message names the field and the value.

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "ebssim/error.hpp"

namespace ebssim::detail {

inline void require_finite(double value, std::string_view field) {
    if (!std::isfinite(value)) {
        throw ConfigError(fmt::format("{}={} must be a finite number", field, value));
    }
}

inline void require_positive(double value, std::string_view field) {
    require_finite(value, field);
    if (value <= 0) {
        throw ConfigError(fmt::format("{}={} must be > 0", field, value));
    }
}

}  // namespace ebssim::detail
