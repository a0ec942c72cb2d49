#include "ebssim/series.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace ebssim::detail {

namespace {

constexpr std::size_t granule = std::size_t{1} << 16;  // cached sizes are rounded to 64 KiB
// Smaller buffers go straight to malloc. Above this, glibc serves a buffer by mmap and returns
// it to the kernel when freed, so each run paid a fault per page again, which dominated short
// recorded runs before the cache took them (docs/performance.md, "The output buffer cache").
constexpr std::size_t pooled_min = 2 * granule;

// Output buffers above pooled_min are kept for reuse after they are freed: fresh memory costs a page
// fault per page (and the kernel zeroes it), which dominates recording long runs. The cache is
// bounded (EBSSIM_BUFFER_CACHE_MB, default 256 MiB); whatever does not fit is freed.
class BufferCache {
public:
    void* take(std::size_t bytes) {
        std::lock_guard<std::mutex> lock(mu_);
        std::size_t best = blocks_.size();
        for (std::size_t i = 0; i < blocks_.size(); ++i) {
            const Block& b = blocks_[i];
            if (b.bytes >= bytes && b.bytes <= 2 * bytes && (best == blocks_.size() || b.bytes < blocks_[best].bytes))
                best = i;
        }
        if (best == blocks_.size()) return nullptr;
        void* p = blocks_[best].p;
        cached_ -= blocks_[best].bytes;
        blocks_[best] = blocks_.back();
        blocks_.pop_back();
        return p;
    }
    bool give(void* p, std::size_t bytes) {
        std::lock_guard<std::mutex> lock(mu_);
        if (cached_ + bytes > limit_) return false;
        blocks_.push_back({p, bytes});
        cached_ += bytes;
        return true;
    }

private:
    struct Block {
        void* p;
        std::size_t bytes;
    };
    static std::size_t limit_from_env() {
        const char* s = std::getenv("EBSSIM_BUFFER_CACHE_MB");
        if (s == nullptr) return std::size_t{256} << 20;
        char* end = nullptr;
        unsigned long long mb = std::strtoull(s, &end, 10);
        return end != s ? static_cast<std::size_t>(mb) << 20 : std::size_t{256} << 20;
    }
    std::mutex mu_;
    std::vector<Block> blocks_;
    std::size_t cached_ = 0;
    std::size_t limit_ = limit_from_env();
};

BufferCache& cache() {
    static BufferCache* c = new BufferCache();  // never destroyed: buffers may outlive static destruction
    return *c;
}

std::size_t rounded(std::size_t bytes) { return (bytes + granule - 1) / granule * granule; }

}  // namespace

void* series_alloc(std::size_t bytes) {
    if (bytes < pooled_min) {
        void* p = std::malloc(bytes);
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    const std::size_t size = rounded(bytes);
    if (void* p = cache().take(size)) return p;
    // Transparent huge pages were tried (madvise): fewer faults, but a first call could stall
    // in the kernel's compaction (docs/performance.md), so plain pages plus the cache win.
    void* p = std::malloc(size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

void series_free(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    if (bytes >= pooled_min) {
        const std::size_t size = rounded(bytes);
        try {
            if (cache().give(p, size)) return;
        } catch (...) {  // bad_alloc growing the cache's list: free instead
        }
    }
    std::free(p);
}

}  // namespace ebssim::detail
