#pragma once
/// \file throttle.hpp
/// The volume's limit rule for one step: what share of what it is asked a volume serves, and
/// which of its limits (IOPS, throughput) binds. The step loop, its kernels and the closed forms
/// (burst.hpp) all take it from here.

#include "ebssim/bound.hpp"

namespace ebssim {

/// What a volume's own limits let through in one step: the fraction `f` (<= 1) of what it is
/// asked that it serves, and which limit bound. Whichever limit binds first wins; a tie goes to
/// the IOPS limit.
struct Throttle {
    double f = 1.0;
    Bound bound = Bound::demand;
};

/// The rounding margin of the limit rule: a limit binds when what is asked exceeds it by more
/// than 1e-12 of it, and the IOPS limit binds when its fraction is within 1e-12 of the
/// throughput limit's. Demand that meets a limit exactly (a backlog draining at the cap, 256 KiB
/// I/Os on io1/io2, whose throughput cap is 256 KiB x IOPS, binding both limits at once) lands a
/// rounding error either side of it from step to step; without the margin the bound would flip
/// at random, a step would leave a backlog of 1e-17 I/Os, and a jump (which predicts the state
/// of a stretch in closed form, a rounding error away from the stepped one) could disagree with
/// stepping on which limit bound. A step may so serve at most 1e-12 more than a cap.
inline constexpr double throttle_tie = 1.0 + 1e-12;

/// Whether `want` exceeds the limit `cap` (by more than the rounding margin, throttle_tie).
[[nodiscard, gnu::always_inline]] inline bool over_limit(double want, double cap) noexcept {
    return want > cap * throttle_tie;
}

/// The volume's limit rule: f = min(1, cap_counted / want_counted, cap_bytes / want_bytes), each
/// limit taken when over_limit().
[[nodiscard, gnu::always_inline]] inline Throttle throttle(double want_counted, double want_bytes, double cap_counted,
                                                           double cap_bytes) noexcept {
    // Most steps are within both limits (and so within the margin): the plain comparison tells
    // them, and only a step above a cap pays for the margin and the divisions.
    if (!(want_counted > cap_counted || want_bytes > cap_bytes)) return {};
    const bool over_cnt = over_limit(want_counted, cap_counted);
    const bool over_bytes = over_limit(want_bytes, cap_bytes);
    if (!(over_cnt || over_bytes)) return {};
    const double f_cnt = over_cnt ? cap_counted / want_counted : 1.0;
    const double f_bytes = over_bytes ? cap_bytes / want_bytes : 1.0;
    if (f_cnt < 1.0 && f_cnt <= f_bytes * throttle_tie) return {f_cnt, Bound::volume_iops};
    return {f_bytes, Bound::volume_throughput};
}

}  // namespace ebssim
