// Asio's channels with a buffer that takes no memory until a message waits in it.
//
// Asio keeps a channel's buffered messages in a std::deque, and libstdc++ allocates a deque's first block (512
// bytes) and its map when the deque is made: every channel cost about 600 bytes of heap from its construction,
// even one that never buffers a message (a wake-up that its waiter is always there for). A paced stream holds
// several (its event stream, its follower's wake-up, its invocation's commit order). These channels make the
// deque at the first message that waits, and keep it from then on (a channel used as a pipe does not allocate
// at each message).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/experimental/channel_traits.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace adk {

namespace asio = boost::asio;

namespace detail {

// What Asio's channel uses of a std::deque, with the deque made at the first push_back.
template <class T>
class LazyDeque {
public:
    LazyDeque() = default;
    LazyDeque(LazyDeque&&) noexcept = default;
    LazyDeque& operator=(LazyDeque&&) noexcept = default;

    bool empty() const noexcept { return !deque_ || deque_->empty(); }
    std::size_t size() const noexcept { return deque_ ? deque_->size() : 0; }
    T& front() { return deque_->front(); }
    T& back() { return deque_->back(); }
    void push_back(const T& value) { made().push_back(value); }
    void push_back(T&& value) { made().push_back(std::move(value)); }
    void pop_front() { deque_->pop_front(); }
    void clear() noexcept
    {
        if (deque_)
            deque_->clear();
    }

private:
    std::deque<T>& made()
    {
        if (!deque_)
            deque_ = std::make_unique<std::deque<T>>();
        return *deque_;
    }

    std::unique_ptr<std::deque<T>> deque_;
};

}  // namespace detail

// Asio's channel traits (the same cancellation and closing), with the buffer above.
template <class... Signatures>
class ChannelTraits : public asio::experimental::channel_traits<Signatures...> {
public:
    template <class... Other>
    struct rebind {
        using other = ChannelTraits<Other...>;
    };

    template <class Element>
    struct container {
        using type = detail::LazyDeque<Element>;
    };
};

// asio::experimental::concurrent_channel, with a buffer made at its first waiting message.
template <class... Signatures>
using ConcurrentChannel =
    asio::experimental::basic_concurrent_channel<asio::any_io_executor, ChannelTraits<>, Signatures...>;

}  // namespace adk
