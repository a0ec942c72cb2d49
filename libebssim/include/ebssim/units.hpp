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
/// The merge floor. AWS counts every I/O under 32 KiB as one operation, sequential or random;
/// only physically sequential I/Os of 32 KiB and more merge, up to the counting unit (EBS User
/// Guide, "I/O characteristics": 8 contiguous 32 KiB I/Os = 1 operation, 4 KiB sequential I/Os
/// one each). ebssim applies the same floor to the HDD types (docs/model.md, "Counting").
inline constexpr double merge_min_bytes = 32.0 * KiB;

}  // namespace ebssim::units
