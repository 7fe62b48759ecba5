// JoinedText: a streamed answer's text, joined piece by piece, without the room a growing string keeps.
//
// libstdc++ at least doubles a std::string's room each time it grows, so an answer joined in one string held
// on average about a third more than its text (a 48 KB answer in 64 KB) for as long as the model streamed it.
// Here the pieces fill blocks whose room doubles from 256 bytes up to 4 KiB and then stays: what is held past
// the text is at most one block. The text is joined once, at its exact size, when the answer is whole.
// Private to libadk.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace adk::detail {

class JoinedText {
public:
    static constexpr std::size_t first_block = 256;
    static constexpr std::size_t max_block = 4096;

    void append(std::string_view piece)
    {
        size_ += piece.size();
        while (!piece.empty()) {
            if (blocks_.empty() || blocks_.back().size() == room_) {
                room_ = blocks_.empty() ? first_block : std::min(max_block, room_ * 2);
                blocks_.emplace_back().reserve(room_);
            }
            std::string& last = blocks_.back();
            const std::size_t n = std::min(piece.size(), room_ - last.size());
            last.append(piece.data(), n);
            piece.remove_prefix(n);
        }
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // The text joined, at its size; leaves this empty.
    std::string take()
    {
        std::string out;
        out.reserve(size_);
        for (const std::string& block : blocks_)
            out += block;
        blocks_.clear();
        blocks_.shrink_to_fit();
        size_ = 0;
        room_ = 0;
        return out;
    }

private:
    std::vector<std::string> blocks_;  // each full but the last
    std::size_t size_ = 0;
    std::size_t room_ = 0;  // the last block's
};

}  // namespace adk::detail
