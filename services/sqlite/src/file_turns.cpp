#include "file_turns.hpp"

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/sessions/database_format.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace adk::sqlite {

namespace asio = boost::asio;

FileTurns::FileTurns(const std::string& path) : path_(path)
{
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw Error(errc::storage_failed, "cannot open the lock file '" + path + "' beside the database: " +
                                              std::strerror(errno) + ". Check that its folder is writable");
}

FileTurns::~FileTurns()
{
    ::close(fd_);
}

std::int64_t FileTurns::slot_of(const SessionKey& key)
{
    return static_cast<std::int64_t>(database::session_key_hash(key) >> 2);  // a non-negative file offset
}

bool FileTurns::try_lock(std::int64_t slot)
{
    std::lock_guard guard(mutex_);
    if (auto it = holders_.find(slot); it != holders_.end()) {
        ++it->second;  // this FileTurns holds the byte already (another session with the same hash)
        return true;
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = static_cast<off_t>(slot);
    lock.l_len = 1;
    if (::fcntl(fd_, F_OFD_SETLK, &lock) == 0) {
        holders_[slot] = 1;
        return true;
    }
    if (errno == EAGAIN || errno == EACCES || errno == EINTR)
        return false;
    throw Error(errc::storage_failed,
                "cannot lock the session's turn in '" + path_ + "': " + std::strerror(errno));
}

asio::awaitable<void> FileTurns::lock(std::int64_t slot)
{
    if (try_lock(slot))
        co_return;
    adk::Timer pause(co_await asio::this_coro::executor);
    auto wait = std::chrono::milliseconds(1);
    while (!try_lock(slot)) {
        pause.expires_after(wait);
        co_await pause.async_wait(asio::use_awaitable);
        wait = std::min(wait * 2, std::chrono::milliseconds(16));
    }
}

void FileTurns::unlock(std::int64_t slot)
{
    std::lock_guard guard(mutex_);
    auto it = holders_.find(slot);
    if (it == holders_.end() || --it->second > 0)
        return;
    holders_.erase(it);
    struct flock lock {};
    lock.l_type = F_UNLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = static_cast<off_t>(slot);
    lock.l_len = 1;
    ::fcntl(fd_, F_OFD_SETLK, &lock);
}

}  // namespace adk::sqlite
