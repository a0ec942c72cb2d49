#pragma once
/// \file isa.hpp
/// The instruction set every kernel runs with, chosen in one place (private): the lockstep kernel
/// (lockstep.cpp) and the served steps' kernel and its helper (served.cpp) ask kernel_isa().

#include <cstdint>

namespace ebssim::detail {

/// The widest the CPU has (AVX-512: 8 lanes per instruction, AVX2: 4), or none on a CPU with
/// only SSE2 (2 lanes, no faster than the scalar loop: the lockstep kernel is then not used),
/// unless a test or benchmark chose another.
enum class Isa : std::uint8_t { automatic, none, sse2, avx2, avx512 };
[[nodiscard]] Isa kernel_isa() noexcept;
/// For tests and benchmarks, between runs (not while one is running): run the kernels with `isa`
/// (automatic: the default above). False, and no change, when the CPU lacks it.
bool set_kernel_isa(Isa isa) noexcept;
/// Whether the kernels may use AVX2 (AVX2 or AVX-512 chosen).
[[nodiscard]] inline bool kernels_use_avx2() noexcept {
    const Isa isa = kernel_isa();
    return isa == Isa::avx2 || isa == Isa::avx512;
}

}  // namespace ebssim::detail
