#pragma once
/// \file units.hpp
/// Byte units. Volume limits are in MiB/s (binary); instance limits are in MB/s (decimal).

namespace ebssim::units {

inline constexpr double KiB = 1024.0;
inline constexpr double MiB = 1024.0 * 1024.0;
inline constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double MB = 1.0e6;

/// EBS counts an SSD I/O of up to 256 KiB as one operation.
inline constexpr double ssd_io_unit_bytes = 256.0 * KiB;
/// EBS counts an HDD I/O of up to 1 MiB as one operation.
inline constexpr double hdd_io_unit_bytes = 1.0 * MiB;

}  // namespace ebssim::units
