#pragma once
/// \file stripe.hpp
/// Striped sets: a RAID-0 (Linux md or LVM striping) of `members` volumes with chunks of
/// `chunk_bytes`, and what its members receive from the set's I/O (the one home of the rule).

#include <cstdint>
#include <span>
#include <vector>

#include "ebssim/workload.hpp"

namespace ebssim {

/// mdadm's granularity of a RAID-0 chunk: "In any case it must be a multiple of 4KB" (mdadm(8),
/// --chunk; RAID4/5/6/10 also need a power of 2, RAID-0 does not). LVM's stripe size is a power
/// of 2 of at least 4 KiB, so every LVM stripe size is an md chunk too.
inline constexpr double stripe_chunk_granularity_bytes = 4096;
/// mdadm's default chunk when creating an array: 512 KiB (mdadm(8), --chunk).
inline constexpr double default_stripe_chunk_bytes = 512.0 * 1024;

/// What one set-level I/O becomes on the members of a striped set.
///
/// Chunk k of the set's address space lies on member k mod members, at member offset
/// (k div members) x chunk: an I/O is split at every chunk boundary it crosses, and each piece
/// (at most a chunk) is one I/O of the member that holds it, counted there by that member's rule
/// (IoCounting). An I/O of b bytes at an offset that is a multiple of `align` crosses, on
/// average over offsets, (ceil(b / h) - 1) x h / chunk boundaries, h = gcd(align, chunk) (the
/// residues of the offset modulo the chunk are the multiples of h, equally likely). With fio's
/// default (offsets multiples of the block size, random or from 0 in a sequential stream) and b
/// dividing the chunk, that is 0: every I/O lands whole on one member.
///
/// Random offsets spread the pieces evenly over the members: each member receives
/// pieces_per_io / members of the set's I/Os' pieces, and, in a closed loop, carries that share
/// of the set's I/Os in flight. A sequential stream walks the members chunk by chunk, so over
/// time each member also receives 1 / members of its pieces, as contiguous I/O of its own.
struct StripeSplit {
    double pieces_per_io = 1;  ///< member I/Os per set I/O: the chunks it covers, on average
    double piece_bytes = 0;    ///< bytes of each member I/O: io_bytes / pieces_per_io
    double member_share = 1;   ///< pieces_per_io / members: member I/Os per set I/O on each member
    std::int32_t members = 1;
};

/// Check a striped set's layout: members >= 1, chunk_bytes a positive multiple of 4 KiB (mdadm's
/// rule). Throws ConfigError naming the field, value and rule.
void validate_stripe(double chunk_bytes, std::int64_t members);

/// What a set I/O of io_bytes at offsets that are multiples of align_bytes becomes on the members
/// (StripeSplit). align_bytes 0 (the default) means io_bytes rounded to whole bytes (fio's default
/// blockalign). Throws ConfigError for an invalid layout, io_bytes not > 0 or finite, or an
/// alignment that is not a whole number of bytes >= 1.
[[nodiscard]] StripeSplit stripe_split(double io_bytes, double chunk_bytes, std::int64_t members,
                                       double align_bytes = 0);

/// The closed loop each member of a striped set runs for a closed loop `set` on the set, the
/// members alike (symmetric): in_flight x member_share I/Os of piece_bytes, the set's mix,
/// pattern, think time and (if set) service time; counted_per_io left to the member's rule at
/// the piece's size unless the set loop fixes it (then it is per set I/O, divided by
/// pieces_per_io). A set I/O completes when its slowest piece does; with alike members every
/// member serves the same rate, so the set completes members / pieces_per_io set I/Os per member
/// I/O, and its latency is a member's (docs/model.md, "Striped sets").
[[nodiscard]] ClosedLoop stripe_member_loop(const ClosedLoop& set, double chunk_bytes, std::int64_t members);

/// What each member of a striped set receives, step by step, from an open-loop trace on the set
/// (stripe_member_trace).
struct StripeMemberTrace {
    std::vector<double> ops;           ///< I/Os each member receives in each step
    std::vector<double> bytes;         ///< bytes each member receives in each step: the set's / members
    std::vector<double> read_ops;      ///< the reads among ops (empty unless the set's reads are given)
    std::vector<double> read_bytes;    ///< the reads' bytes (empty unless the set's reads are given)
    std::vector<double> member_share;  ///< member I/Os per set I/O in each step: ops / set ops (NaN: no I/O)
    /// Each member's bound on outstanding I/Os: one value when it is the same in every step (an
    /// unbounded trace: infinity), else one per step.
    std::vector<double> max_in_flight;
};

/// The open loop each member of a striped set runs for a trace (per-step I/Os and bytes, e.g.
/// an md device's counters) on the set, the members alike (symmetric): the open-loop
/// counterpart of stripe_member_loop. In each step the set's I/Os are taken at the step's mean
/// size (bytes / ops, offsets multiples of it, as stripe_split's default): a member receives
/// ops x member_share I/Os (ops / members where the step has I/Os but no bytes) and bytes /
/// members bytes; a step without I/O gives none. With read_ops and read_bytes (both or neither,
/// as long as ops), reads and writes are split each at its own mean size and summed, and the
/// member's reads are returned too. member_share is then the member's I/Os over the set's.
///
/// max_in_flight (empty: no bound; one value; or one per step, infinity: none in that step)
/// bounds the set I/Os outstanding: a member carries member_share of them (as in_flight in a
/// closed loop), so its bound is max_in_flight x member_share of the step. A step without I/O
/// keeps the share of the last step with I/O (its backlog is that step's I/Os; the steps before
/// the first I/O take the first one's, and a trace without I/O 1 / members). The pattern, read
/// fraction and service time are the set trace's (the caller carries them). Throws ConfigError
/// for an invalid layout or trace (validate_trace), reads above the totals or a bound not > 0
/// (naming the field, index and value).
/// The member share of each step (or recorded interval) where one without I/O (NaN) keeps the
/// share of the last one with I/O, the ones before the first I/O take the first one's, and a
/// trace without I/O 1 / members: the rule stripe_member_trace bounds a member's outstanding
/// I/Os by, and a set's result counts its I/Os by.
[[nodiscard]] std::vector<double> carried_member_shares(std::span<const double> member_share, std::int64_t members);

[[nodiscard]] StripeMemberTrace stripe_member_trace(std::span<const double> ops, std::span<const double> bytes,
                                                    double chunk_bytes, std::int64_t members,
                                                    std::span<const double> max_in_flight = {},
                                                    std::span<const double> read_ops = {},
                                                    std::span<const double> read_bytes = {});

}  // namespace ebssim
