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

asio::awaitable<std::optional<json::object>> InMemoryCredentialService::load_credential(CredentialKey key)
{
    std::lock_guard lock(mutex_);
    auto it = credentials_.find(key);
    if (it == credentials_.end())
        co_return std::nullopt;
    co_return it->second;
}

asio::awaitable<void> InMemoryCredentialService::save_credential(CredentialKey key, json::object auth_config)
{
    std::lock_guard lock(mutex_);
    credentials_.insert_or_assign(std::move(key), std::move(auth_config));
    co_return;
}

}  // namespace adk
