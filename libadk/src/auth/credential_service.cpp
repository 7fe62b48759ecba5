#include <adk/auth/credential_service.hpp>

#include <boost/json/serialize.hpp>

#include <cstdint>
#include <cstdio>

namespace adk {

std::string credential_key_of(const json::object& auth_config)
{
    if (const json::value* key = auth_config.if_contains("credentialKey"); key && key->is_string() &&
                                                                           !key->get_string().empty())
        return std::string(key->get_string());
    // FNV-1a over the scheme and the raw credential: stable across processes, unlike std::hash.
    std::uint64_t hash = 14695981039346656037ull;
    for (const char* field : {"authScheme", "rawAuthCredential"}) {
        std::string text = auth_config.contains(field) ? json::serialize(auth_config.at(field)) : "null";
        for (unsigned char c : text)
            hash = (hash ^ c) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return std::string("adk_") + hex;
}

InMemoryCredentialService::InMemoryCredentialService(std::size_t max_credentials)
    : max_(max_credentials ? max_credentials : 1)
{
}

asio::awaitable<std::optional<json::object>> InMemoryCredentialService::load_credential(CredentialKey key)
{
    std::lock_guard lock(mutex_);
    auto it = credentials_.find(key);
    if (it == credentials_.end())
        co_return std::nullopt;
    auto stamp = used_.extract(it->second.used);
    stamp.key() = it->second.used = ++uses_;
    used_.insert(std::move(stamp));
    co_return it->second.auth_config;
}

asio::awaitable<void> InMemoryCredentialService::save_credential(CredentialKey key, json::object auth_config)
{
    std::lock_guard lock(mutex_);
    auto it = credentials_.find(key);
    if (it != credentials_.end()) {
        used_.erase(it->second.used);
    } else {
        if (credentials_.size() >= max_) {
            auto oldest = used_.begin();
            credentials_.erase(oldest->second);
            used_.erase(oldest);
        }
        it = credentials_.emplace(key, Kept()).first;
    }
    it->second.auth_config = std::move(auth_config);
    it->second.used = ++uses_;
    used_.emplace(it->second.used, std::move(key));
    co_return;
}

std::size_t InMemoryCredentialService::size() const
{
    std::lock_guard lock(mutex_);
    return credentials_.size();
}

}  // namespace adk
