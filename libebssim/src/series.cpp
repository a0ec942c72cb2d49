#include "ebssim/series.hpp"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ebssim::detail {

void* series_alloc(std::size_t bytes) {
    constexpr std::size_t huge = std::size_t{2} << 20;  // 2 MiB pages
    void* p = nullptr;
    if (bytes >= 2 * huge) {
        std::size_t rounded = (bytes + huge - 1) / huge * huge;
        p = std::aligned_alloc(huge, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        // A hint only: without transparent huge pages the buffer works the same, just slower.
        if (p != nullptr) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    } else {
        p = std::malloc(bytes);
    }
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

}  // namespace ebssim::detail
