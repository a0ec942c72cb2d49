#include "ebssim/stripe.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "ebssim/error.hpp"
#include "validate.hpp"

namespace ebssim {

void validate_stripe(double chunk_bytes, std::int64_t members) {
    if (members < 1) {
        throw ConfigError(fmt::format("members={} must be >= 1 (a striped set has at least one volume)", members));
    }
    detail::require_positive(chunk_bytes, "chunk_bytes");
    // Whole multiples of 4 KiB up to 2^53 bytes: beyond that a double no longer holds every integer.
    const double k = chunk_bytes / stripe_chunk_granularity_bytes;
    if (k != std::floor(k) || chunk_bytes > 9.007199254740992e15) {
        throw ConfigError(
            fmt::format("chunk_bytes={} must be a multiple of 4 KiB (4096 bytes): mdadm's rule for a "
                        "RAID-0 chunk (\"In any case it must be a multiple of 4KB\")",
                        chunk_bytes));
    }
}

StripeSplit stripe_split(double io_bytes, double chunk_bytes, std::int64_t members, double align_bytes) {
    validate_stripe(chunk_bytes, members);
    detail::require_positive(io_bytes, "io_bytes");
    detail::require_finite(align_bytes, "align_bytes");
    if (align_bytes < 0) throw ConfigError(fmt::format("align_bytes={} must be >= 0 (0: io_bytes)", align_bytes));
    const double align = align_bytes == 0 ? std::round(io_bytes) : align_bytes;
    if (align < 1 || align != std::floor(align) || align > 9.007199254740992e15) {
        throw ConfigError(fmt::format("align_bytes={} must be a whole number of bytes >= 1 (io_bytes={} when 0)",
                                      align_bytes, io_bytes));
    }
    const auto h =
        static_cast<double>(std::gcd(static_cast<std::int64_t>(align), static_cast<std::int64_t>(chunk_bytes)));
    // Boundaries crossed on average: the multiples of h strictly inside an interval of io_bytes,
    // ceil(io_bytes / h) - 1, over the chunk / h equally likely residues of the offset.
    const double crossed = (std::ceil(io_bytes / h - 1e-9) - 1) * h / chunk_bytes;
    StripeSplit s;
    s.members = static_cast<std::int32_t>(members);
    s.pieces_per_io = 1 + crossed;
    s.piece_bytes = io_bytes / s.pieces_per_io;
    s.member_share = s.pieces_per_io / static_cast<double>(members);
    return s;
}

ClosedLoop stripe_member_loop(const ClosedLoop& set, double chunk_bytes, std::int64_t members) {
    const StripeSplit s = stripe_split(set.io_bytes, chunk_bytes, members);
    ClosedLoop m = set;
    m.in_flight = set.in_flight * s.member_share;
    m.io_bytes = s.piece_bytes;
    if (!std::isnan(set.counted_per_io)) m.counted_per_io = set.counted_per_io / s.pieces_per_io;
    return m;
}

}  // namespace ebssim
