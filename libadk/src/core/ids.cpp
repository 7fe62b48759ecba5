#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>

#include <openssl/rand.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace adk {

namespace {

// Ids are capabilities here: whoever knows a session's or a run's id can follow it. So they come from
// OpenSSL's generator, which reseeds from the kernel; a per-thread buffer of its bytes keeps an id cheap.
// A forked child must not hand out the bytes its parent holds: a fork empties every buffer.
std::atomic<std::uint64_t> fork_generation{0};

void after_fork_in_child()
{
    fork_generation.fetch_add(1, std::memory_order_relaxed);
}

class RandomBuffer {
public:
    RandomBuffer() { static const int registered = pthread_atfork(nullptr, nullptr, after_fork_in_child); (void)registered; }

    void take(unsigned char* out, std::size_t n)
    {
        const std::uint64_t generation = fork_generation.load(std::memory_order_relaxed);
        if (generation != generation_ || used_ + n > bytes_.size()) {
            if (RAND_bytes(bytes_.data(), static_cast<int>(bytes_.size())) != 1)
                throw Error(errc::storage_failed, "OpenSSL's random generator failed (RAND_bytes): no id can be made");
            used_ = 0;
            generation_ = generation;
        }
        std::memcpy(out, bytes_.data() + used_, n);
        std::memset(bytes_.data() + used_, 0, n);  // a byte handed out is not kept
        used_ += n;
    }

private:
    std::array<unsigned char, 4096> bytes_{};
    std::size_t used_ = 4096;
    std::uint64_t generation_ = 0;
};

RandomBuffer& thread_random()
{
    thread_local RandomBuffer random;
    return random;
}

}  // namespace

std::string new_uuid()
{
    std::array<unsigned char, 16> b;
    thread_random().take(b.data(), b.size());
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant

    static constexpr char hex[] = "0123456789abcdef";
    std::string out(36, '-');
    std::size_t pos = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (pos == 8 || pos == 13 || pos == 18 || pos == 23)
            ++pos;
        out[pos++] = hex[b[i] >> 4];
        out[pos++] = hex[b[i] & 0xF];
    }
    return out;
}

void random_bytes(unsigned char* out, std::size_t n)
{
    while (n > 0) {
        const std::size_t take = n < 256 ? n : 256;
        thread_random().take(out, take);
        out += take;
        n -= take;
    }
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
