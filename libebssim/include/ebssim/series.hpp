#pragma once
/// \file series.hpp
/// Series<T>: the per-step output buffer. Like std::vector, but resize() leaves the storage
/// uninitialised (the engine writes every element) and large buffers ask the kernel for
/// transparent huge pages, which removes most of the page-fault cost of recording long runs.

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace ebssim {

template <class T>
class Series {
public:
    Series() = default;
    explicit Series(std::size_t n) { resize(n); }

    /// Allocate n elements, uninitialised; previous contents are dropped.
    void resize(std::size_t n);

    [[nodiscard]] T* data() noexcept { return p_.get(); }
    [[nodiscard]] const T* data() const noexcept { return p_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
    T& operator[](std::size_t i) noexcept { return p_[i]; }
    const T& operator[](std::size_t i) const noexcept { return p_[i]; }
    T* begin() noexcept { return p_.get(); }
    T* end() noexcept { return p_.get() + n_; }
    const T* begin() const noexcept { return p_.get(); }
    const T* end() const noexcept { return p_.get() + n_; }

private:
    struct Free {
        void operator()(T* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<T[], Free> p_;
    std::size_t n_ = 0;
};

namespace detail {
/// Raw storage for Series: malloc'd (freed with std::free); huge-page aligned above 4 MiB.
void* series_alloc(std::size_t bytes);
}  // namespace detail

template <class T>
void Series<T>::resize(std::size_t n) {
    p_.reset();
    n_ = 0;
    if (n == 0) return;
    p_.reset(static_cast<T*>(detail::series_alloc(n * sizeof(T))));
    n_ = n;
}

}  // namespace ebssim
