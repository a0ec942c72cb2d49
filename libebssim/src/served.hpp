#pragma once
// Private to the library: the kernel of the steps of one open-loop trace that its volume serves
// in full from an empty backlog (independent.cpp's step_all hands them to it), and the helper thread
// that writes their recorded values while the kernel goes on.
//
// Such a step is commit()'s with f = 1, no instance and no backlog: available = 0 + arrivals,
// served = 1 x available, waiting = 0, so latency = service time. What is left of the step is
// the chain of credits, c' = clamp((c + earned) - counted), the test that the step is within
// the volume's limits at c (counted <= min(burst, c + earned), bytes <= the throughput cap at c),
// and the totals' sums in step order. Everything else depends on the step's input alone; the
// kernel computes it for a block of steps ahead, in loops the compiler vectorises. The kernel
// does the operations of offer() and commit(), in their order, so its results are theirs to
// the last bit (tests/cpp/test_lockstep.cpp steps the same runs both ways, on every instruction
// set the CPU has, with and without the helper thread).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "ebssim/workload.hpp"
#include "recorders.hpp"
#include "step.hpp"

namespace ebssim::detail {

/// What a served step's outputs depend on besides the credits: its input and the volume's
/// constants.
struct ServedInput {
    const double* ops = nullptr;
    const double* bytes = nullptr;
    IoCounting count;
    double own_service_time_s = 0;  // NaN: the volume's model at the mean I/O size
    double latency_s = 0, inv_transfer = 0, inv_dt = 0;
};

class ServedFiller;

/// A volume's running sums over its steps (the VolumeTotals that are sums), kept by the stepper
/// and carried into and out of the kernel.
struct RunningSums {
    double demanded_ops = 0, demanded_bytes = 0, served_ops = 0, served_bytes = 0, served_counted = 0,
           latency_ops_s = 0;
};

struct ServedRun {
    ServedInput in;
    StepLimits lim;    // the volume's limits per step (those of Stepper)
    bool dry = false;  // a cliff episode is open (CliffTracker::dry)
    // Where the steps are recorded: nothing (out null), the direct sink, or out->record; with a
    // filler (direct sink only), the kernel writes the credits and the filler the rest.
    VolumeRecorder* out = nullptr;
    bool direct = false;
    VolumeRecorder::Sink sink{};
    ServedFiller* filler = nullptr;
    // In and out: the credits and the totals' sums.
    double credits = 0;
    RunningSums sums;
    // Out: the steps taken and the counted I/Os served in the last of them.
    std::int64_t taken = 0;
    double last_counted = 0;
};

/// Takes steps k, k + 1, ... (before k1) while each is served in full from an empty backlog and
/// leaves the cliff episodes as they are (the bucket neither runs dry nor earns again); returns
/// the first step not taken. Requires an empty backlog (+0) at k and no max_in_flight.
std::int64_t serve(ServedRun& r, std::int64_t k, std::int64_t k1) noexcept;

/// A helper thread that writes the recorded values of stretches of served steps, all but the
/// credits (the only value that depends on the steps before), into a direct sink while the
/// kernel goes on: on a second core, recording a noisy trace then costs the stepping thread
/// little more than not recording it. The values are the kernel's own (one function writes
/// them for both), so results do not depend on whether a filler ran.
///
/// For any other recording (some series, one value per interval, float32, extremes), the filler
/// keeps a window of every value of `window` steps (two buffers, in turns): the step loop records
/// into the window as a direct sink (window_sink), and hands each window, once its steps are
/// taken, to the filler, which writes its values into the recorder (Recorder::record_steps, the
/// same values as record() of each step) while the loop fills the other buffer. The recorder is
/// the filler's alone until finish().
class ServedFiller {
public:
    ServedFiller(const ServedInput& in, const VolumeRecorder::Sink& sink);
    ServedFiller(const ServedInput& in, VolumeRecorder& recorder, std::int64_t window);
    ~ServedFiller();  // stops the thread (a stretch not yet written is left as it is) and joins it
    ServedFiller(const ServedFiller&) = delete;
    ServedFiller& operator=(const ServedFiller&) = delete;
    ServedFiller(ServedFiller&&) = delete;
    ServedFiller& operator=(ServedFiller&&) = delete;

    /// Hands over steps [k0, k1) to be written; false, and nothing handed over, when the queue
    /// is full (the caller writes them itself).
    bool push(std::int64_t k0, std::int64_t k1) noexcept;
    /// Returns when every stretch handed over is written (and the thread has ended).
    void finish() noexcept;

    /// A windowed filler: the steps of a window; the sink that writes steps [w x window, (w + 1)
    /// x window) into window w's buffer, once the window that last used it is recorded (waits).
    [[nodiscard]] std::int64_t window() const noexcept { return window_; }
    [[nodiscard]] VolumeRecorder::Sink window_sink(std::int64_t w) noexcept;
    /// Hands over steps [k0, k1) of one window, all taken, to be recorded (waits for room).
    void push_window(std::int64_t k0, std::int64_t k1) noexcept;

private:
    struct Task {
        std::int64_t k0, k1;
        bool record;  // a window's steps to record (else a stretch to write)
    };
    void work() noexcept;
    bool push_task(const Task& t) noexcept;
    void wake() noexcept;
    [[nodiscard]] VolumeRecorder::Sink sink_of(std::int64_t w) noexcept;

    static constexpr std::size_t capacity = 64;
    ServedInput in_;
    VolumeRecorder::Sink sink_;
    VolumeRecorder* recorder_ = nullptr;  // windowed: where the windows go
    std::int64_t window_ = 0;
    std::vector<double> values_;             // windowed: 2 buffers x 6 series x window
    std::vector<std::uint8_t> bounds_;       // and 2 x window bound codes
    std::atomic<std::int64_t> recorded_{0};  // windows recorded (by the helper)
    std::unique_ptr<std::array<Task, capacity>> queue_;
    std::atomic<std::size_t> head_{0};  // stretches handed over (written by the kernel's thread)
    std::atomic<std::size_t> tail_{0};  // stretches written (by the helper)
    std::atomic<int> state_{0};         // 0 running, 1 finish what is handed over, 2 stop now
    // Bumped and notified to wake the helper (a hand-over while it sleeps, a finish); it sleeps on it.
    std::atomic<std::uint32_t> signal_{0};
    std::atomic<bool> sleeping_{false};  // the helper is (about to be) asleep on signal_
    std::thread thread_;
};

/// For tests and benchmarks, between runs (not while one is running): whether the step loop hands
/// served steps to the kernel (default) or steps them through offer() and commit() like the others.
void set_served_kernel(bool on) noexcept;
[[nodiscard]] bool served_kernel() noexcept;

/// Steps a run must have for a filler to be worth a thread.
inline constexpr std::int64_t served_filler_min_steps = std::int64_t{1} << 16;

}  // namespace ebssim::detail
