#include <adk/core/ids.hpp>

#include <chrono>
#include <cstdint>
#include <random>

namespace adk {

std::string new_uuid()
{
    thread_local std::mt19937_64 engine{[] {
        std::random_device device;
        std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
        return std::mt19937_64(seed);
    }()};
    std::uint64_t hi = engine();
    std::uint64_t lo = engine();
    hi = (hi & ~std::uint64_t{0xF000}) | 0x4000;                          // version 4
    lo = (lo & ~(std::uint64_t{0xC} << 60)) | (std::uint64_t{0x8} << 60);  // RFC 4122 variant

    static constexpr char hex[] = "0123456789abcdef";
    std::string out(36, '-');
    std::size_t pos = 0;
    auto put = [&](std::uint64_t word, int first_nibble, int count) {
        for (int i = 0; i < count; ++i, ++pos) {
            if (pos == 8 || pos == 13 || pos == 18 || pos == 23)
                ++pos;
            int shift = 60 - 4 * (first_nibble + i);
            out[pos] = hex[(word >> shift) & 0xF];
        }
    };
    put(hi, 0, 16);
    put(lo, 0, 16);
    return out;
}

std::string new_invocation_id()
{
    return "e-" + new_uuid();
}

double now_seconds()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace adk
