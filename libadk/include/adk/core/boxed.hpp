// Boxed<T>: an optional value kept on the heap, with std::optional's interface (bool test, *, ->, value(),
// value_or, emplace, reset, assignment of a value or of an optional, == with a box, a value or nullopt, and a
// conversion to std::optional). For members that are large and usually absent: a Part has six of them and
// carries at most one or two, so boxing them keeps a Part at 160 bytes instead of 816; an Event's rare members
// (an error, a transfer, a route, ...) keep it at 744 instead of 976. Parts and events are copied into every
// request and stored with every session, so that size is paid per message per invocation.
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
    // From a std::optional: on the heap only when it holds a value (what a field filled from a parsed optional needs).
    Boxed(std::optional<T> value) : ptr_(value ? std::make_unique<T>(std::move(*value)) : nullptr) {}
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
    // As std::optional's: a value (or what makes one) put in place.
    template <class U>
        requires(!std::is_same_v<std::remove_cvref_t<U>, Boxed> && !std::is_same_v<std::remove_cvref_t<U>, std::nullopt_t> &&
                 std::is_constructible_v<T, U>)
    Boxed& operator=(U&& value)
    {
        if (ptr_)
            *ptr_ = std::forward<U>(value);
        else
            ptr_ = std::make_unique<T>(std::forward<U>(value));
        return *this;
    }
    Boxed& operator=(std::optional<T> value)
    {
        if (!value)
            ptr_.reset();
        else
            *this = std::move(*value);
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
    // As std::optional compares with a value: equal when it holds one equal to `b`.
    template <class U>
        requires(!std::is_same_v<std::remove_cvref_t<U>, Boxed> && !std::is_same_v<std::remove_cvref_t<U>, std::nullopt_t> &&
                 !std::is_same_v<std::remove_cvref_t<U>, std::optional<T>>)
    friend bool operator==(const Boxed& a, const U& b)
    {
        return a.ptr_ && *a.ptr_ == b;
    }
    // And with an optional: both empty, or both holding equal values.
    friend bool operator==(const Boxed& a, const std::optional<T>& b)
    {
        return a.ptr_ ? b && *a.ptr_ == *b : !b;
    }

    template <class U>
    T value_or(U&& fallback) const
    {
        return ptr_ ? *ptr_ : static_cast<T>(std::forward<U>(fallback));
    }
    // A copy as a std::optional (for an API that takes one).
    operator std::optional<T>() const  // NOLINT(google-explicit-constructor): as an optional member converted
    {
        return ptr_ ? std::optional<T>(*ptr_) : std::nullopt;
    }

private:
    std::unique_ptr<T> ptr_;
};

}  // namespace adk
