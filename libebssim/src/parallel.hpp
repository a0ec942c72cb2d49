#pragma once
/// \file parallel.hpp
/// The parallel helpers of the step loops (private): how many threads a batch is worth, the
/// pool that hands items out to them (parallel_items), and the chunks between interrupt checks.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ebssim/interrupt.hpp"

namespace ebssim::detail {

// Work below which one more thread is not worth starting it (about a millisecond of stepping):
// runs this small stay in the calling thread.
inline constexpr std::int64_t min_volume_steps_per_thread = std::int64_t{1} << 16;

// Threads worth using for `items` items of `work` volume-steps in all, at most `threads`.
inline int useful_threads(int threads, std::size_t items, double work) {
    const double by_work = std::max(1.0, work / static_cast<double>(min_volume_steps_per_thread));
    return static_cast<int>(std::min({static_cast<double>(threads), static_cast<double>(items), by_work}));
}

// Calls work(i, check) for every i in [0, n_items) over `threads` threads, the calling thread
// one of them; each item is done whole by one thread (handed out in order by an atomic counter).
// `check` is the InterruptCheck the item's loop asks between chunks: a stop flag, which the
// calling thread's check also sets from `interrupt` (only the calling thread calls `interrupt`:
// it may take the GIL). The calling thread polls `interrupt` while it waits for the others. The
// first exception (an Interrupted from the check included) stops every thread; all are joined
// before it is rethrown, so the caller can undo what the items did.
template <class Work>
void parallel_items(std::size_t n_items, int threads, const InterruptCheck& interrupt, Work&& work) {
    if (threads <= 1 || n_items <= 1) {
        for (std::size_t i = 0; i < n_items; ++i) work(i, interrupt);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    std::exception_ptr first;
    int running = threads - 1;
    auto fail = [&](std::exception_ptr e) {
        {
            const std::lock_guard<std::mutex> lock(mu);
            if (!first) first = std::move(e);
        }
        stop.store(true, std::memory_order_relaxed);
    };
    auto loop = [&](const InterruptCheck& check) {
        try {
            for (std::size_t i = next.fetch_add(1); i < n_items && !stop.load(std::memory_order_relaxed);
                 i = next.fetch_add(1)) {
                work(i, check);
            }
        } catch (...) {
            fail(std::current_exception());
        }
    };
    const InterruptCheck worker_check = [&stop] { return stop.load(std::memory_order_relaxed); };
    bool interrupted = false;
    const InterruptCheck caller_check = [&] {
        if (stop.load(std::memory_order_relaxed)) return true;
        if (interrupt && interrupt()) {
            interrupted = true;
            return true;
        }
        return false;
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    try {
        for (int t = 1; t < threads; ++t) {
            pool.emplace_back([&] {
                loop(worker_check);
                const std::lock_guard<std::mutex> lock(mu);
                --running;
                cv.notify_all();
            });
        }
    } catch (...) {  // no more threads to be had: the ones started and this one do the work
        const std::lock_guard<std::mutex> lock(mu);
        running -= threads - 1 - static_cast<int>(pool.size());
    }
    loop(caller_check);
    {
        // Wait for the workers, asking `interrupt` every 10 ms (it rate-limits itself).
        std::unique_lock<std::mutex> lock(mu);
        while (!cv.wait_for(lock, std::chrono::milliseconds(10), [&] { return running == 0; })) {
            if (!interrupted && !stop.load(std::memory_order_relaxed) && interrupt) {
                lock.unlock();
                try {
                    if (interrupt()) {
                        interrupted = true;
                        fail(std::make_exception_ptr(Interrupted()));
                    }
                } catch (...) {
                    fail(std::current_exception());
                }
                lock.lock();
            }
        }
    }
    for (auto& t : pool) t.join();
    if (first) std::rethrow_exception(first);
}

// Steps between two interrupt checks of a loop that steps `volumes` volumes together.
inline std::int64_t steps_per_check(std::size_t volumes) {
    return std::max<std::int64_t>(1, interrupt_every_volume_steps / static_cast<std::int64_t>(volumes));
}

// Calls steps(k0, k1) over [0, n) in chunks of steps_per_check(volumes) and asks `interrupt`
// between chunks: the tight step loop itself stays free of the check.
template <class F>
inline void in_chunks(std::int64_t n, std::size_t volumes, const InterruptCheck& interrupt, F&& steps) {
    const std::int64_t chunk = steps_per_check(volumes);
    for (std::int64_t k0 = 0; k0 < n; k0 += chunk) {
        if (k0 > 0 && interrupt && interrupt()) throw Interrupted();
        steps(k0, std::min(n, k0 + chunk));
    }
}

}  // namespace ebssim::detail
