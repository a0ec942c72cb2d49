#include "isa.hpp"

#include <atomic>

namespace ebssim::detail {

namespace {

bool cpu_has(Isa isa) noexcept {
    __builtin_cpu_init();
    switch (isa) {
        case Isa::avx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl");
        case Isa::avx2: return __builtin_cpu_supports("avx2");
        default: return true;  // SSE2 is part of x86-64
    }
}

// The widest instruction set the CPU has; none (the scalar loop) when that is SSE2, whose two
// lanes step no faster than the scalar loop (bench/bench_engine.cpp, BM_Fleet isa:2).
Isa best_isa() noexcept {
    if (cpu_has(Isa::avx512)) return Isa::avx512;
    if (cpu_has(Isa::avx2)) return Isa::avx2;
    return Isa::none;
}

std::atomic<Isa> current_isa{best_isa()};

}  // namespace

Isa kernel_isa() noexcept { return current_isa.load(std::memory_order_relaxed); }

bool set_kernel_isa(Isa isa) noexcept {
    if (isa == Isa::automatic) isa = best_isa();
    if (!cpu_has(isa)) return false;
    current_isa.store(isa, std::memory_order_relaxed);
    return true;
}

}  // namespace ebssim::detail
