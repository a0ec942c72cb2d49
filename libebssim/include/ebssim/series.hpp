#pragma once
/// \file series.hpp
/// Series<T>: the per-step output buffer. Like std::vector, but resize() leaves the storage
/// uninitialised (the engine writes every element), and large buffers are recycled through a
/// bounded cache once freed: page faults on fresh memory, not the step loop, dominate the cost
/// of recording long runs. A Series can also borrow a caller's buffer (borrow()), which it
/// writes but never frees.

#include <cstddef>

namespace ebssim {

template <class T>
class Series {
public:
    Series() = default;
    explicit Series(std::size_t n) { resize(n); }

    /// Allocate n elements, uninitialised; previous contents are dropped.
    void resize(std::size_t n);
    /// Use the caller's buffer of n elements (which must outlive this Series and every move of
    /// it); previous contents are dropped. The Series writes into it and never frees it.
    void borrow(T* p, std::size_t n) noexcept {
        release();
        p_ = p;
        n_ = p == nullptr ? 0 : n;
        owned_ = false;
    }
    /// True when the storage is the caller's (borrow()).
    [[nodiscard]] bool borrowed() const noexcept { return !owned_ && p_ != nullptr; }

    [[nodiscard]] T* data() noexcept { return p_; }
    [[nodiscard]] const T* data() const noexcept { return p_; }
    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
    T& operator[](std::size_t i) noexcept { return p_[i]; }
    const T& operator[](std::size_t i) const noexcept { return p_[i]; }
    T* begin() noexcept { return p_; }
    T* end() noexcept { return p_ + n_; }
    const T* begin() const noexcept { return p_; }
    const T* end() const noexcept { return p_ + n_; }

    Series(Series&& o) noexcept : p_(o.p_), n_(o.n_), owned_(o.owned_) {
        o.p_ = nullptr;
        o.n_ = 0;
        o.owned_ = true;
    }
    Series& operator=(Series&& o) noexcept {
        if (this != &o) {
            release();
            p_ = o.p_;
            n_ = o.n_;
            owned_ = o.owned_;
            o.p_ = nullptr;
            o.n_ = 0;
            o.owned_ = true;
        }
        return *this;
    }
    Series(const Series&) = delete;
    Series& operator=(const Series&) = delete;
    ~Series() { release(); }

private:
    void release() noexcept;
    T* p_ = nullptr;
    std::size_t n_ = 0;
    bool owned_ = true;  // false: a caller's buffer (borrow())
};

namespace detail {
/// Raw storage for Series; recycled through a bounded cache (EBSSIM_BUFFER_CACHE_MB) above 4 MiB.
void* series_alloc(std::size_t bytes);
/// Give back storage from series_alloc(bytes).
void series_free(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
void Series<T>::release() noexcept {
    if (owned_) detail::series_free(p_, n_ * sizeof(T));
    p_ = nullptr;
    n_ = 0;
    owned_ = true;
}

template <class T>
void Series<T>::resize(std::size_t n) {
    release();
    if (n == 0) return;
    p_ = static_cast<T*>(detail::series_alloc(n * sizeof(T)));
    n_ = n;
}

}  // namespace ebssim
