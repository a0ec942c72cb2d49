#include "ebssim/stripe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "ebssim/error.hpp"
#include "ebssim/workload.hpp"
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

namespace {

// Member I/Os for `ops` set I/Os of `bytes` in all: ops x member_share at the mean size.
double member_ops(double ops, double bytes, double chunk_bytes, std::int64_t members) {
    if (ops == 0) return 0;
    if (bytes == 0) return ops / static_cast<double>(members);  // no size known: each I/O whole on one member
    const double mean = bytes / ops;
    // Offsets multiples of the mean size (stripe_split's default), at least a byte.
    const double align = std::max(1.0, std::round(mean));
    return ops * stripe_split(mean, chunk_bytes, members, align).member_share;
}

}  // namespace

std::vector<double> carried_member_shares(std::span<const double> member_share, std::int64_t members) {
    if (members < 1) throw ConfigError(fmt::format("members={} must be at least 1", members));
    const auto first = std::find_if(member_share.begin(), member_share.end(), [](double s) { return !std::isnan(s); });
    double share = first == member_share.end() ? 1 / static_cast<double>(members) : *first;
    std::vector<double> out(member_share.size());
    for (std::size_t i = 0; i < member_share.size(); ++i) {
        if (!std::isnan(member_share[i])) share = member_share[i];
        out[i] = share;
    }
    return out;
}

StripeMemberTrace stripe_member_trace(std::span<const double> ops, std::span<const double> bytes, double chunk_bytes,
                                      std::int64_t members, std::span<const double> max_in_flight,
                                      std::span<const double> read_ops, std::span<const double> read_bytes) {
    validate_stripe(chunk_bytes, members);
    validate_trace(ops, bytes);
    const std::size_t n = ops.size();
    if (read_ops.empty() != read_bytes.empty()) {
        throw ConfigError(fmt::format("{} is given without {}: a per-step read/write split needs both",
                                      read_ops.empty() ? "read_bytes" : "read_ops",
                                      read_ops.empty() ? "read_ops" : "read_bytes"));
    }
    const bool reads = !read_ops.empty();
    if (reads) {
        for (auto [name, r, total] :
             {std::tuple{"read_ops", read_ops, ops}, std::tuple{"read_bytes", read_bytes, bytes}}) {
            if (r.size() != n) {
                throw ConfigError(fmt::format("{} has {} steps but the trace has {}: same length", name, r.size(), n));
            }
            for (std::size_t i = 0; i < n; ++i) {
                if (!(r[i] >= 0 && r[i] <= total[i])) {
                    throw ConfigError(
                        fmt::format("{}[{}]={} must be between 0 and the step's total {}", name, i, r[i], total[i]));
                }
            }
        }
    }
    if (max_in_flight.size() > 1 && max_in_flight.size() != n) {
        throw ConfigError(
            fmt::format("max_in_flight has {} steps but the trace has {}: give one bound, or one per step",
                        max_in_flight.size(), n));
    }
    for (std::size_t i = 0; i < max_in_flight.size(); ++i) {
        if (!(max_in_flight[i] > 0)) {
            throw ConfigError(fmt::format("max_in_flight[{}]={} must be a positive number of I/Os (inf: no bound)", i,
                                          max_in_flight[i]));
        }
    }
    const double nm = static_cast<double>(members);
    StripeMemberTrace out;
    out.ops.resize(n);
    out.bytes.resize(n);
    out.member_share.resize(n);
    if (reads) {
        out.read_ops.resize(n);
        out.read_bytes.resize(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (reads) {
            // Reads and writes each at their own mean size (a write's remainder: at least 0).
            const double r = member_ops(read_ops[i], read_bytes[i], chunk_bytes, members);
            const double w =
                member_ops(ops[i] - read_ops[i], std::max(0.0, bytes[i] - read_bytes[i]), chunk_bytes, members);
            out.read_ops[i] = r;
            out.read_bytes[i] = read_bytes[i] / nm;
            out.ops[i] = r + w;
        } else {
            out.ops[i] = member_ops(ops[i], bytes[i], chunk_bytes, members);
        }
        out.bytes[i] = bytes[i] / nm;
        out.member_share[i] = ops[i] > 0 ? out.ops[i] / ops[i] : std::numeric_limits<double>::quiet_NaN();
    }
    // The bound: max_in_flight x the share of the step's I/Os, or of the last step with I/O.
    if (max_in_flight.empty()) {
        out.max_in_flight = {std::numeric_limits<double>::infinity()};
        return out;
    }
    const std::vector<double> share = carried_member_shares(out.member_share, members);
    std::vector<double> bound(n);
    for (std::size_t i = 0; i < n; ++i) bound[i] = max_in_flight[max_in_flight.size() == 1 ? 0 : i] * share[i];
    if (n > 0 && std::all_of(bound.begin(), bound.end(), [&](double b) { return b == bound[0]; })) bound.resize(1);
    if (n == 0) bound = {max_in_flight[0] / nm};
    out.max_in_flight = std::move(bound);
    return out;
}

}  // namespace ebssim
