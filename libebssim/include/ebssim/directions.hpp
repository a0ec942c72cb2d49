#pragma once
/// \file directions.hpp
/// Reads and writes apart: what a run served of each in each step, for an open-loop trace that
/// splits its arrivals per step (the engine steps reads and writes together, as one flow).

#include <span>

namespace ebssim {

/// A trace's arrivals in each step, all and the reads among them (counts per step).
struct SplitArrivals {
    std::span<const double> ops, bytes;
    std::span<const double> read_ops, read_bytes;
    /// The share of reads in a backlog carried in from an earlier run: the trace's overall read
    /// share (OpenLoop::read_fraction), in [0, 1].
    double read_fraction = 1.0;
};

/// What the run of that trace served in each step (counts per step, the recorded iops and
/// throughput times dt), the I/Os waiting at the end of each step (the recorded backlog_ops),
/// and the bytes waiting at the end of the run (VolumeTotals::backlog_bytes).
struct SplitServed {
    std::span<const double> ops, bytes;
    std::span<const double> backlog_ops;
    double backlog_bytes_end = 0.0;
};

/// Reads served in each step, I/Os into read_ops and bytes into read_bytes, by the engine's step
/// rule: a step serves the same fraction f of everything available, the backlog and the
/// arrivals alike (a fluid queue, docs/model.md). f[k] = served / (served + waiting after), 1
/// where nothing was available; the reads waiting evolve as R[k+1] = (1 - f[k]) (R[k] + r[k])
/// and f[k] (R[k] + r[k]) of them are served (at most what the step served), the bytes alike.
/// R[0] is the backlog carried in (what was waiting before step 0, from the first step's
/// balance for I/Os and the run's for bytes) times read_fraction. Every span must have the
/// length of arrivals.ops (ConfigError naming the one that does not); read_fraction must be in
/// [0, 1].
void split_served(const SplitArrivals& arrivals, const SplitServed& served, std::span<double> read_ops,
                  std::span<double> read_bytes);

}  // namespace ebssim
