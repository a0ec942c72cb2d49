#pragma once
// Private to the library: the lockstep kernel, which steps up to `lockstep_lanes` independent
// open-loop volumes (no instance, totals only) together, one loop over time with each volume's
// state in one lane of a SIMD vector. It is a second implementation of
// Stepper<OpenSource>::offer/commit(g = 1) in stepper.hpp, written branch-free, and gives the
// same results to the last bit (docs/design.md, "The lockstep kernel"): a change to the step
// rule must be made in both, and tests/cpp/test_lockstep.cpp fails until it is.

#include <cstddef>
#include <cstdint>
#include <span>

#include "cliffs.hpp"
#include "ebssim/totals.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "isa.hpp"
#include "step.hpp"

namespace ebssim::detail {

/// Volumes stepped together by one kernel: one AVX-512 vector of doubles, two AVX2 ones.
inline constexpr std::size_t lockstep_lanes = 8;

/// The AVX-512 step's form: chosen as it goes (automatic: the branchy form, which skips the
/// divisions no lane needs, where few steps need them, else the branch-free one), or one of the
/// two always. For tests and benchmarks, between runs; both forms give the same results.
enum class LockstepForm : std::uint8_t { automatic, branchy, branch_free };
void set_lockstep_form(LockstepForm form) noexcept;

/// One volume of a lockstep group: where its limits, state, workload and totals live.
struct LockstepVolume {
    const VolumeParams* params;
    VolumeState* state;
    OvershootState* overshoot;
    const OpenLoop* workload;
    VolumeTotals* totals;
};

/// Per-lane arrays, aligned so that a whole array loads as one vector.
using LaneArray = double[lockstep_lanes];
using LaneMask = std::int64_t[lockstep_lanes];  // all bits set: true

/// Up to lockstep_lanes volumes stepped together. A group of fewer volumes is padded with copies
/// of its first volume whose results go to scratch space. Usage: construct, step(k0, k1) over
/// consecutive chunks of [0, n), then finish().
class LockstepGroup {
public:
    LockstepGroup(std::span<const LockstepVolume> volumes, double dt, double t0);
    LockstepGroup(const LockstepGroup&) = delete;
    LockstepGroup& operator=(const LockstepGroup&) = delete;

    /// Steps k0 .. k1 - 1 of the run (every lane).
    void step(std::int64_t k0, std::int64_t k1);
    /// Writes the state and totals back to the volumes; false when some step of some volume's
    /// trace was invalid (trace_step_ok), in which case the caller undoes the run.
    bool finish();

    // The kernel's data, public to lockstep.cpp's kernel function (a free function so that it can
    // be compiled for several instruction sets).
    struct Data {
        // Limits, per step (Stepper's constructor).
        alignas(64) LaneArray earned, burst_cap, tput_hi, tput_lo, capacity;
        alignas(64) LaneMask bucket;  // has a credit bucket
        // Service time: a fixed one (has_st), else latency + mean size x inv_transfer.
        alignas(64) LaneArray st_fixed, latency, inv_transfer;
        alignas(64) LaneMask has_st;
        // max_in_flight x dt, and whether it is finite (a bound applies).
        alignas(64) LaneArray mif_dt;
        alignas(64) LaneMask mif_finite;
        // The counting rule's parameters (IoCounting).
        alignas(64) LaneArray unit, merge_min, inv_unit;
        alignas(64) LaneMask sequential;
        // State.
        alignas(64) LaneArray credits, backlog_ops, backlog_bytes, backlog_counted;
        alignas(64) LaneMask dry;  // a cliff episode is open (mirror of cliffs[l].dry())
        // Overshoot (Stepper<Source, true>): the depth, the caps' inverses, the seconds saved.
        alignas(64) LaneArray overshoot_s, inv_burst_cap, inv_tput_hi, inv_tput_lo, overshoot_iops_s, overshoot_bytes_s;
        // Totals, from 0 at the start of the run.
        alignas(64) LaneArray demanded_ops, demanded_bytes, served_ops, served_bytes, served_counted, latency_ops_s;
        alignas(64) LaneMask steps_iops, steps_tput, steps_mif;  // steps bound by each limit
        alignas(64) LaneMask ok;                                 // every trace value so far was valid
        const double* ops[lockstep_lanes];
        const double* bytes[lockstep_lanes];
        IoCounting count[lockstep_lanes];
        CliffTracker cliffs[lockstep_lanes];
        VolumeTotals* totals[lockstep_lanes];  // where each lane's cliff episodes go
        bool any_mif = false;                  // some lane has a finite max_in_flight
        bool any_overshoot = false;            // some lane's volume overshoots
        bool any_sequential = false;           // some lane counts sequential I/O
        std::size_t used = lockstep_lanes;     // lanes holding real volumes (the first ones)
        bool any_model_st = false;             // some lane's service time follows the mean I/O size
        bool branchy = false;                  // AVX-512: the step form the last steps chose (steps())
        // set_lockstep_form's, read by each step() call.
        LockstepForm form = LockstepForm::automatic;
        double dt = 1, t0 = 0, inv_dt = 1;
    };

private:
    Data d_{};
    std::size_t used_;  // lanes holding real volumes
    LockstepVolume volumes_[lockstep_lanes];
    std::int64_t steps_ = 0;
    VolumeTotals pad_totals_[lockstep_lanes];  // the padding lanes' cliff episodes
};

}  // namespace ebssim::detail
