// FileTurns: session turns across processes that share a database file. Each session is one byte of a lock
// file, chosen by a stable 62-bit hash of its key, locked with a Linux open-file-description lock
// (F_OFD_SETLK): it excludes every other open of the file, in this process or another, and the kernel drops
// it when the process dies. Taking a turn never blocks a thread: a held byte is polled with a growing pause.
// Two sessions whose hashes collide share a byte: the count of holders per byte keeps them correct.
#pragma once

#include <adk/sessions/session.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace adk::sqlite {

class FileTurns {
public:
    // Opens (creating) the lock file.
    explicit FileTurns(const std::string& path);
    FileTurns(const FileTurns&) = delete;
    FileTurns& operator=(const FileTurns&) = delete;
    ~FileTurns();

    static std::int64_t slot_of(const SessionKey& key);

    // Waits until the slot is this FileTurns' (polling), then returns.
    boost::asio::awaitable<void> lock(std::int64_t slot);
    void unlock(std::int64_t slot);

private:
    bool try_lock(std::int64_t slot);

    std::string path_;
    int fd_ = -1;
    std::mutex mutex_;
    std::map<std::int64_t, int> holders_;  // slot -> holders in this FileTurns
};

}  // namespace adk::sqlite
