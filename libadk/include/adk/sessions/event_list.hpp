// EventList: a session's events, each held once and shared by every copy of the list. It reads as a
// std::vector<Event> does (size, [], at, front, back, iterators over const Event&), and a copy holds the same
// events, not copies of them: the copy of a session a service hands an invocation, the service's own, and the
// event the invocation appends to both are one Event each (about 750 bytes and its strings, per event, per copy).
// Events are immutable once in a list; edit() gives a list its own copy of one event to change.
#pragma once

#include <adk/core/event.hpp>

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <vector>

namespace adk {

class EventList {
    using Slots = std::vector<std::shared_ptr<const Event>>;

public:
    using value_type = Event;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = const Event&;
    using const_reference = const Event&;

    // A random-access iterator over the events, as const Event&.
    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using iterator_concept = std::random_access_iterator_tag;
        using value_type = Event;
        using difference_type = std::ptrdiff_t;
        using pointer = const Event*;
        using reference = const Event&;

        const_iterator() = default;
        explicit const_iterator(Slots::const_iterator it) : it_(it) {}

        reference operator*() const { return **it_; }
        pointer operator->() const { return it_->get(); }
        reference operator[](difference_type n) const { return *it_[n]; }
        const_iterator& operator++() { ++it_; return *this; }
        const_iterator operator++(int) { return const_iterator(it_++); }
        const_iterator& operator--() { --it_; return *this; }
        const_iterator operator--(int) { return const_iterator(it_--); }
        const_iterator& operator+=(difference_type n) { it_ += n; return *this; }
        const_iterator& operator-=(difference_type n) { it_ -= n; return *this; }
        friend const_iterator operator+(const_iterator i, difference_type n) { return i += n; }
        friend const_iterator operator+(difference_type n, const_iterator i) { return i += n; }
        friend const_iterator operator-(const_iterator i, difference_type n) { return i -= n; }
        friend difference_type operator-(const const_iterator& a, const const_iterator& b) { return a.it_ - b.it_; }
        friend bool operator==(const const_iterator&, const const_iterator&) = default;
        friend auto operator<=>(const const_iterator&, const const_iterator&) = default;

        // Where it stands in the list's slots (what erase() takes).
        Slots::const_iterator slot() const { return it_; }

    private:
        Slots::const_iterator it_;
    };
    using iterator = const_iterator;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;
    using reverse_iterator = const_reverse_iterator;

    EventList() = default;
    EventList(std::initializer_list<Event> events);
    explicit EventList(std::vector<Event> events);

    size_type size() const noexcept { return slots_.size(); }
    bool empty() const noexcept { return slots_.empty(); }
    const Event& operator[](size_type i) const { return *slots_[i]; }
    const Event& at(size_type i) const { return *slots_.at(i); }
    const Event& front() const { return *slots_.front(); }
    const Event& back() const { return *slots_.back(); }
    const_iterator begin() const noexcept { return const_iterator(slots_.begin()); }
    const_iterator end() const noexcept { return const_iterator(slots_.end()); }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    // The event at i as the list holds it, shared.
    const std::shared_ptr<const Event>& shared(size_type i) const { return slots_[i]; }

    // Appends a copy of `event` (or `event` itself, moved), held once from here on.
    void push_back(const Event& event) { slots_.push_back(std::make_shared<Event>(event)); }
    void push_back(Event&& event) { slots_.push_back(std::make_shared<Event>(std::move(event))); }
    // Appends an event held elsewhere too (a service's list and an invocation's share it); not null.
    void push_back(std::shared_ptr<const Event> event);
    template <class... Args>
    const Event& emplace_back(Args&&... args)
    {
        slots_.push_back(std::make_shared<Event>(Event(std::forward<Args>(args)...)));
        return *slots_.back();
    }
    // The event at i, for changing: a copy made for this list (no other holder of the event sees the change),
    // valid until the list changes. Rare (a test, a repair): each call copies the event.
    Event& edit(size_type i);

    void reserve(size_type n) { slots_.reserve(n); }
    void clear() noexcept { slots_.clear(); }
    const_iterator erase(const_iterator first, const_iterator last)
    {
        return const_iterator(slots_.erase(first.slot(), last.slot()));
    }
    const_iterator erase(const_iterator at) { return erase(at, std::next(at)); }
    // Removes the events `pred` holds true for; how many went.
    template <class Pred>
    size_type erase_if(Pred pred)
    {
        return std::erase_if(slots_, [&](const std::shared_ptr<const Event>& e) { return pred(*e); });
    }
    // Inserts copies of [first, last) before `at`.
    template <class It>
    void insert(const_iterator at, It first, It last)
    {
        Slots added;
        for (; first != last; ++first)
            added.push_back(std::make_shared<Event>(*first));
        slots_.insert(at.slot(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
    }

    // Equal when they hold equal events in the same order (shared or not).
    friend bool operator==(const EventList& a, const EventList& b);

private:
    Slots slots_;
};

}  // namespace adk
