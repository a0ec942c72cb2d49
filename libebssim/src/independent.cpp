// The independent loop (Simulation::run_independent): volumes that share no budget, each
// stepped whole by one thread, alone through the scalar stepper (stepper.hpp, with its jumps)
// or in groups through the lockstep kernel (lockstep.hpp), and a recorded open loop's served
// steps through the served steps' kernel (served.hpp).

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ebssim/engine.hpp"
#include "lockstep.hpp"
#include "parallel.hpp"
#include "recorders.hpp"
#include "served.hpp"
#include "stepper.hpp"

namespace ebssim {

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): this file is the engine's

// The share of a trace's steps that equal the next one, estimated from at most 1,024 evenly
// spaced steps (so it costs nothing against the run, and depends on the trace alone: a volume's
// results do not depend on the other volumes); -1 for a run too short to bother.
double equal_share(const OpenLoop& o, std::int64_t n) {
    constexpr std::int64_t samples = 1024;
    if (n < 2 * samples) return -1;
    const std::int64_t stride = (n - 1) / samples;
    std::int64_t seen = 0, same = 0;
    for (std::int64_t k = 0; k + 1 < n; k += stride) {
        ++seen;
        same += pair_same_next(o.ops.data(), o.bytes.data(), k) ? 1 : 0;
    }
    return static_cast<double>(same) / static_cast<double>(seen);
}

// Whether a totals-only trace has runs of equal values long enough that the scalar loop, which
// jumps over them, beats the lockstep kernel, which steps every value: the kernel's speed does
// not depend on the runs, the jumping loop's grows with their length L, and the two break even
// at about L = 20, where about 95 % of the steps equal the next one (docs/performance.md, "Jumps
// or the lockstep kernel").
bool long_runs(const OpenLoop& o, std::int64_t n) { return equal_share(o, n) >= 0.95; }

// Whether a trace stepped alone is worth looking at for runs to jump (the looks every scan_every
// steps cost a noisy trace more than its few runs save: docs/performance.md, BM_Jump_scan): not
// when fewer than one step in scan_every equals the next.
bool has_runs(const OpenLoop& o, std::int64_t n) {
    const double share = equal_share(o, n);
    return share < 0 || share * static_cast<double>(scan_every) >= 1.0;
}

// How hard a trace presses on its volume: the mean I/Os a step of at most 1,024 evenly spaced
// steps, over the volume's baseline a step. The lockstep kernel steps a group much faster when
// none of its lanes is throttled (it skips the divisions), so volumes are grouped by this.
double load(const OpenLoop& o, const VolumeParams& p, std::int64_t n, double dt) {
    constexpr std::int64_t samples = 1024;
    const std::int64_t stride = std::max<std::int64_t>(1, n / samples);
    double sum = 0;
    std::int64_t seen = 0;
    for (std::int64_t k = 0; k < n; k += stride) {
        const double x = o.ops[static_cast<std::size_t>(k)];
        if (x >= 0 && x <= max_demand_per_step) sum += x;  // (a bad value is reported by the run)
        ++seen;
    }
    return seen > 0 ? sum / static_cast<double>(seen) / std::max(p.baseline_iops * dt, 1e-300) : 0.0;
}

// Steps [k0, k1) of one volume alone, with jumps: constant stretches go to run_constant, all of
// it for sources whose stretches are known, else the runs of equal values that a look every
// scan_every steps finds (a noisy trace pays one comparison per scan_every steps).
template <class Source, bool Over>
void step_range_jumping(Stepper<Source, Over>& st, std::int64_t k0, std::int64_t k1) {
    if constexpr (Source::runs_known) {
        for (std::int64_t k = k0; k < k1;) {
            const std::int64_t e = st.run_end(k, k1);
            st.run_constant(k, e);
            k = e;
        }
    } else {
        // The steps between runs go through a local copy of the stepper, as in step_all (its
        // address does not escape, so its fields stay in registers); the copy is handed back for
        // a run, which run_constant advances in place, and a new copy steps on after it.
        for (std::int64_t k = k0; k < k1;) {
            std::int64_t run_end = -1;
            {
                Stepper<Source, Over> local = st;
                while (k < k1) {
                    const std::int64_t stop = std::min(k1, k + scan_every);
                    for (; k < stop; ++k) {
                        local.offer(k);
                        local.commit(k, 1.0, Bound::demand);
                    }
                    // (Asked of st, whose source is the same: no call on the local copy that
                    // might not be inlined and so take its address.)
                    if (k + min_run <= k1 && st.same_next(k)) {
                        const std::int64_t e = st.run_end(k, k1);
                        if (e - k >= min_run) {
                            run_end = e;
                            break;
                        }
                    }
                }
                st = local;
            }
            if (run_end >= 0) {
                st.run_constant(k, run_end);
                k = run_end;
            }
        }
    }
}

// Steps [0, n) of one volume alone, every step (RunOptions::jump off), asking `interrupt`
// between chunks; returns input_ok(). The loop steps a copy of the stepper: a local whose address
// nothing takes (no lambda captures it, no out-of-line call sees it), so GCC keeps its fields in
// registers across the stores that commit() makes through s_ and tot_ (the volume's state and
// totals). Stepping the variant's stepper in place, as before the jumps, was fine until the same
// visit also handed that stepper to the jump path (run_constant is noinline; the chunk lambdas
// may be compiled out of line): it escapes, GCC can no longer tell s_ and tot_ from pointers into
// it, and the loop reloaded s_, tot_ and the constants and stored the scratch fields (a_, av_*,
// pool_, cap_cnt_, f_, bound_) to memory in every step, which made the closed and open loops
// markedly slower (docs/performance.md, "The scalar step loop on a copy of the stepper"). A copy
// stepped inside the chunk lambda fixed the closed loop only: GCC compiled the open loop's lambda
// out of line, so the copy escaped again. Copying is cheap (references and scalars); the state
// and totals it writes are the caller's. noinline: inlined into the visit, step_all slowed the
// piecewise source's loop; out of line, it leaves that loop and the others as they were.
// A helper thread for step_all's served steps (served.hpp, ServedFiller), which writes their
// recorded values but the credits, for a recorded open loop long enough to be worth a thread when
// there is a core to spare; none (empty) otherwise. It lives in step_all's caller: an object with
// a destructor in step_all itself made GCC keep the step loop's values in memory (a throttled
// trace stepped slower: docs/performance.md, "Served steps").
// Another recording than the default (some series, every N steps, float32, extremes) gets a
// windowed filler: the loop records every value of a window of steps as the default would, and
// the filler hands each window to the recorder while the loop goes on in the other buffer.
constexpr std::int64_t served_window = std::int64_t{1} << 15;
static_assert(interrupt_every_volume_steps % served_window == 0);

template <class Source, bool Over>
void served_filler(const Stepper<Source, Over>& st, std::int64_t n, bool spare_core,
                   std::optional<detail::ServedFiller>& filler) {
    if constexpr (std::is_same_v<Source, OpenSource>) {
        if (spare_core && n >= detail::served_filler_min_steps && st.recorder() != nullptr && st.can_serve_at_all()) {
            try {
                if (st.records_direct()) {
                    filler.emplace(st.served().in, st.direct_sink());
                } else {
                    filler.emplace(st.served().in, *st.recorder(), served_window);
                }
            } catch (const std::system_error&) {  // no thread to be had: the kernel writes them
            } catch (const std::bad_alloc&) {     // no room for the window: record step by step
            }
        }
    }
}

template <class Source, bool Over>
[[gnu::noinline]] bool step_all(const Stepper<Source, Over>& st0, std::int64_t n, const InterruptCheck& interrupt,
                                detail::ServedFiller* filler) {
    Stepper<Source, Over> st = st0;
    const std::int64_t check = steps_per_check(1);
    const std::int64_t window = filler != nullptr ? filler->window() : 0;  // a windowed filler's
    const std::int64_t chunk = window > 0 ? window : check;
    std::int64_t next_try = 0, backoff = 1;
    for (std::int64_t k0 = 0; k0 < n; k0 += chunk) {
        if (k0 > 0 && k0 % check == 0 && interrupt && interrupt()) throw Interrupted();
        const std::int64_t k1 = std::min(n, k0 + chunk);
        if (window > 0) st.record_into(filler->window_sink(k0 / window));
        if constexpr (std::is_same_v<Source, OpenSource>) {
            // Steps served in full go to the kernel of served.hpp, on a copy of what it needs (st
            // stays a local whose address nothing takes), the others through offer() and commit().
            // A stretch that ends within a few steps makes the next look wait (doubling), so that
            // a throttled trace pays little for the looks. The kernel's call costs the loop some
            // registers: a throttled trace, with few steps served, steps slower than before the
            // kernel (docs/performance.md); a separate function for these steps was slower
            // still (GCC spilled its loop's values), and so was an object with a destructor here.
            for (std::int64_t k = k0; k < k1;) {
                for (; k < k1; ++k) {
                    if (k >= next_try && st.can_serve()) break;
                    st.offer(k);
                    st.commit(k, 1.0, Bound::demand);
                }
                if (k == k1) break;
                detail::ServedRun r = st.served();
                r.filler = filler;
                const std::int64_t e = detail::serve(r, k, k1);
                st.served_done(r);
                if (e - k < served_min_stretch) {
                    next_try = e + backoff;
                    backoff = std::min(2 * backoff, served_max_backoff);
                } else {
                    backoff = 1;
                }
                k = e;
                if (k < k1) {  // the step that ended the stretch
                    st.offer(k);
                    st.commit(k, 1.0, Bound::demand);
                    ++k;
                }
            }
        } else {
            for (std::int64_t k = k0; k < k1; ++k) {
                st.offer(k);
                st.commit(k, 1.0, Bound::demand);
            }
        }
        if (window > 0) filler->push_window(k0, k1);
    }
    st.flush();
    return st.input_ok();
}

}  // namespace

bool Simulation::run_independent(const std::vector<Workload>& ws, std::int64_t n, RunResult& r,
                                 const detail::Recorders& recs, const InterruptCheck& interrupt, int threads,
                                 const RunOptions& options) {
    // Volumes that share no budget are independent. The work comes in items, each stepped whole
    // by one thread: groups of totals-only open loops for the lockstep kernel (lockstep.hpp),
    // lockstep_lanes at a time (the last group padded; a last single volume goes to the scalar
    // loop, which is faster for one), and every other volume alone, through the scalar loop,
    // which keeps its state in registers and its source type known at compile time. Each volume
    // gives the same results, to the last bit, whichever item and thread steps it.
    // Closed-form jumps (options.jump) apply to the volumes stepped alone, so a totals-only
    // OpenLoop trace goes to the lockstep kernel only when it has few runs of equal values to
    // jump over (long_runs); lockstep = false sends every volume through the scalar loop.
    VolumeRecorder* const rec = recs.volumes;
    constexpr std::size_t lanes = detail::lockstep_lanes;
    std::vector<detail::LockstepVolume> open;
    std::vector<std::size_t> scalar;
    const bool lockstep = rec == nullptr && options.lockstep && detail::kernel_isa() != detail::Isa::none;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const auto* o = std::get_if<OpenLoop>(&ws[i]);
        // (A trace whose bound changes per step is the scalar stepper's only: StepBoundSource.)
        if (o != nullptr && o->max_in_flight_steps.empty() && lockstep && !(options.jump && long_runs(*o, n))) {
            open.push_back({&params_[i], &state_[i], &overshoot_[i], o, &r.totals[i]});
        } else {
            scalar.push_back(i);
        }
    }
    if (open.size() > lanes) {
        // Volumes of similar load side by side: groups whose lanes are rarely throttled skip
        // the throttle's divisions (lockstep.cpp); results do not depend on the grouping.
        std::vector<std::pair<double, std::size_t>> key(open.size());
        for (std::size_t j = 0; j < open.size(); ++j) {
            key[j] = {load(*open[j].workload, *open[j].params, n, dt_s_), j};
        }
        std::sort(key.begin(), key.end());
        std::vector<detail::LockstepVolume> sorted(open.size());
        for (std::size_t j = 0; j < open.size(); ++j) sorted[j] = open[key[j].second];
        open.swap(sorted);
    }
    if (open.size() % lanes == 1) {  // nothing to step it with
        scalar.push_back(static_cast<std::size_t>(open.back().state - state_.data()));
        open.pop_back();
    }
    const std::size_t groups = (open.size() + lanes - 1) / lanes;
    const std::size_t items = groups + scalar.size();
    std::vector<char> ok(items, 1);
    const int used = useful_threads(threads, items, static_cast<double>(n) * static_cast<double>(size()));
    // A core for each item's helper thread (the served steps' filler of a recorded open loop).
    const bool spare_core = static_cast<std::size_t>(threads) >= 2 * items;
    parallel_items(items, used, interrupt, [&](std::size_t item, const InterruptCheck& check) {
        if (item < groups) {
            // The group keeps its volumes' state and totals in its own (aligned) arrays while it
            // steps and writes them back at the end.
            const std::size_t g = item * lanes;
            const std::span<const detail::LockstepVolume> members(open.data() + g, std::min(lanes, open.size() - g));
            detail::LockstepGroup group(members, dt_s_, r.t0_s);
            in_chunks(n, lanes, check, [&group](std::int64_t k0, std::int64_t k1) { group.step(k0, k1); });
            ok[item] = group.finish() ? 1 : 0;
            return;
        }
        // One volume, on copies of its state and totals (no cache line shared with another
        // thread's volume), written back at its end.
        const std::size_t i = scalar[item - groups];
        State state = state_[i];
        OvershootState over = overshoot_[i];
        VolumeTotals totals;
        // The recorder too is a copy (its interval sums are written in every step), written back.
        std::optional<VolumeRecorder> recorder;
        if (rec != nullptr) recorder.emplace(rec[i]);
        AnyStepper any =
            make_stepper(params_[i], state, over, ws[i], dt_s_, r.t0_s, recorder ? &*recorder : nullptr, totals);
        const auto* trace = std::get_if<OpenLoop>(&ws[i]);
        const bool jump = options.jump && (trace == nullptr || has_runs(*trace, n));
        ok[item] = std::visit(
            [n, &check, jump, spare_core](auto& st) {
                if (!jump) {
                    std::optional<detail::ServedFiller> filler;
                    served_filler(st, n, spare_core, filler);
                    const bool input_ok = step_all(st, n, check, filler ? &*filler : nullptr);  // on a copy
                    if (filler) filler->finish();
                    return input_ok;
                }
                in_chunks(n, 1, check, [&st](std::int64_t k0, std::int64_t k1) { step_range_jumping(st, k0, k1); });
                st.flush();
                return st.input_ok();
            },
            any);
        state_[i] = state;
        overshoot_[i] = over;
        r.totals[i] = std::move(totals);
        if (recorder) rec[i] = *recorder;
    });
    return std::all_of(ok.begin(), ok.end(), [](char x) { return x != 0; });
}

}  // namespace ebssim
