// Boxed<T>: an optional value kept on the heap, with std::optional's interface (bool test, *, ->, value(),
// emplace, reset, ==). For members that are large and usually absent: a Part has six of them and carries at
// most one or two, so boxing them keeps a Part at 160 bytes instead of 816. Parts are copied into every
// request and stored with every event, so that size is paid per message per invocation.
#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace adk {

template <class T>
class Boxed {
public:
    using value_type = T;

    Boxed() noexcept = default;
    Boxed(std::nullopt_t) noexcept {}
    Boxed(T value) : ptr_(std::make_unique<T>(std::move(value))) {}
    Boxed(const Boxed& other) : ptr_(other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr) {}
    Boxed(Boxed&&) noexcept = default;
    Boxed& operator=(const Boxed& other)
    {
        if (this != &other)
            ptr_ = other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr;
        return *this;
    }
    Boxed& operator=(Boxed&&) noexcept = default;
    Boxed& operator=(std::nullopt_t) noexcept
    {
        ptr_.reset();
        return *this;
    }
    ~Boxed() = default;

    template <class... Args>
    T& emplace(Args&&... args)
    {
        ptr_ = std::make_unique<T>(std::forward<Args>(args)...);
        return *ptr_;
    }
    void reset() noexcept { ptr_.reset(); }

    bool has_value() const noexcept { return ptr_ != nullptr; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }

    T& operator*() noexcept { return *ptr_; }
    const T& operator*() const noexcept { return *ptr_; }
    T* operator->() noexcept { return ptr_.get(); }
    const T* operator->() const noexcept { return ptr_.get(); }
    T& value()
    {
        if (!ptr_)
            throw std::bad_optional_access();
        return *ptr_;
    }
    const T& value() const
    {
        if (!ptr_)
            throw std::bad_optional_access();
        return *ptr_;
    }

    friend bool operator==(const Boxed& a, const Boxed& b)
    {
        if (!a.ptr_ || !b.ptr_)
            return !a.ptr_ && !b.ptr_;
        return *a.ptr_ == *b.ptr_;
    }
    friend bool operator==(const Boxed& a, std::nullopt_t) noexcept { return !a.ptr_; }

private:
    std::unique_ptr<T> ptr_;
};

}  // namespace adk
