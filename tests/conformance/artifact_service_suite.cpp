#include "conformance/artifact_service_suite.hpp"

#include <adk/core/error.hpp>

#include "support/run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <set>

#include <string>
#include <vector>

namespace adk::test {

namespace {

std::optional<std::string> text_of(const std::optional<Part>& part)
{
    if (!part || !part->text)
        return std::nullopt;
    return *part->text;
}

void versions(ArtifactService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        ArtifactKey notes("app", "u", "s", "notes.txt");
        std::int64_t v0 = co_await svc.save_artifact(notes, Part::from_text("first"));
        std::int64_t v1 = co_await svc.save_artifact(notes, Part::from_text("second"));
        CHECK(v0 == 0);
        CHECK(v1 == 1);
        auto latest = co_await svc.load_artifact(notes);
        CHECK(text_of(latest) == "second");
        auto first = co_await svc.load_artifact(notes, 0);
        CHECK(text_of(first) == "first");
        auto past_end = co_await svc.load_artifact(notes, 2);
        CHECK(!past_end);
        auto negative = co_await svc.load_artifact(notes, -1);
        CHECK(!negative);
        auto listed = co_await svc.list_versions(notes);
        CHECK(listed == std::vector<std::int64_t>{0, 1});

        Part png = Part::from_bytes(std::string("\x89PNG\0\x01", 6), "image/png");
        co_await svc.save_artifact({"app", "u", "s", "logo.png"}, png);
        auto loaded = co_await svc.load_artifact({"app", "u", "s", "logo.png"});
        REQUIRE(loaded);
        CHECK(*loaded == png);  // bytes and MIME type, exactly

        auto missing = co_await svc.load_artifact({"app", "u", "s", "missing.txt"});
        CHECK(!missing);
        auto no_versions = co_await svc.list_versions({"app", "u", "s", "missing.txt"});
        CHECK(no_versions.empty());
        auto other_session = co_await svc.load_artifact({"app", "u", "other", "notes.txt"});
        CHECK(!other_session);
        auto other_user = co_await svc.load_artifact({"app", "v", "s", "notes.txt"});
        CHECK(!other_user);
        auto other_app = co_await svc.load_artifact({"other", "u", "s", "notes.txt"});
        CHECK(!other_app);

        bool refused = false;
        try {
            co_await svc.save_artifact({"app", "u", "s", ""}, Part::from_text("x"));
        } catch (const Error& e) {
            refused = e.code() == errc::invalid_argument;
        }
        CHECK(refused);
    }());
}

void scopes_and_listing(ArtifactService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await svc.save_artifact({"app", "u", "s1", "b.txt"}, Part::from_text("b"));
        co_await svc.save_artifact({"app", "u", "s1", "a.txt"}, Part::from_text("a"));
        co_await svc.save_artifact({"app", "u", "s1", "user:profile"}, Part::from_text("shared"));
        co_await svc.save_artifact({"app", "u", "s2", "c.txt"}, Part::from_text("c"));
        co_await svc.save_artifact({"app", "v", "s1", "d.txt"}, Part::from_text("d"));

        auto s1 = co_await svc.list_artifact_keys({"app", "u", "s1"});
        CHECK(s1 == std::vector<std::string>{"a.txt", "b.txt", "user:profile"});
        auto s2 = co_await svc.list_artifact_keys({"app", "u", "s2"});
        CHECK(s2 == std::vector<std::string>{"c.txt", "user:profile"});
        auto other_user = co_await svc.list_artifact_keys({"app", "v", "s1"});
        CHECK(other_user == std::vector<std::string>{"d.txt"});
        auto empty = co_await svc.list_artifact_keys({"app", "nobody", "s"});
        CHECK(empty.empty());

        // A user: file is the user's: every session sees the same versions.
        std::int64_t v = co_await svc.save_artifact({"app", "u", "s2", "user:profile"}, Part::from_text("newer"));
        CHECK(v == 1);
        auto from_s1 = co_await svc.load_artifact({"app", "u", "s1", "user:profile"});
        CHECK(text_of(from_s1) == "newer");
        auto from_v = co_await svc.load_artifact({"app", "v", "s1", "user:profile"});
        CHECK(!from_v);

        co_await svc.delete_artifact({"app", "u", "s1", "b.txt"});
        co_await svc.delete_artifact({"app", "u", "s1", "b.txt"});  // twice is fine
        auto after_delete = co_await svc.list_artifact_keys({"app", "u", "s1"});
        CHECK(after_delete == std::vector<std::string>{"a.txt", "user:profile"});
        auto deleted = co_await svc.load_artifact({"app", "u", "s1", "b.txt"});
        CHECK(!deleted);
        auto deleted_versions = co_await svc.list_versions({"app", "u", "s1", "b.txt"});
        CHECK(deleted_versions.empty());
        std::int64_t restarted = co_await svc.save_artifact({"app", "u", "s1", "b.txt"}, Part::from_text("b2"));
        CHECK(restarted == 0);  // a deleted file's versions start again

        co_await svc.delete_artifact({"app", "u", "s2", "user:profile"});
        auto shared_gone = co_await svc.load_artifact({"app", "u", "s1", "user:profile"});
        CHECK(!shared_gone);
    }());
}

// Names that would leave a folder, or hold what no file name may: refused by every function, nothing stored.
void bad_names(ArtifactService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        const SessionKey session("app", "u", "s");
        const std::vector<std::string> names = {"../escape.txt", "a/../../escape.txt", "/etc/passwd", "..",
                                                ".", "a/./b", "a//b", "dir/", std::string("nul\0byte", 8),
                                                "back\\slash", "tab\tname", std::string(1025, 'x')};
        for (const auto& name : names) {
            asio::awaitable<std::int64_t> save = svc.save_artifact(ArtifactKey(session, name), Part::from_text("x"));
            std::optional<Error> saved = co_await error_of(std::move(save));
            REQUIRE(saved);
            CHECK(saved->code() == make_error_code(errc::invalid_argument));
            CHECK_THAT(saved->message(), Catch::Contains("refused") || Catch::Contains("needs a file name"));
            asio::awaitable<std::optional<Part>> load = svc.load_artifact(ArtifactKey(session, name));
            std::optional<Error> loaded = co_await error_of(std::move(load));
            CHECK(loaded);
        }
        for (const char* bad_session : {"..", "a/b", ""}) {
            asio::awaitable<std::int64_t> save = svc.save_artifact({"app", "u", bad_session, "ok.txt"}, Part::from_text("x"));
            std::optional<Error> refused = co_await error_of(std::move(save));
            CHECK(refused);
        }
        auto listed = co_await svc.list_artifact_keys(session);
        CHECK(listed.empty());
        // A name may hold folders of its own, and odd characters.
        const ArtifactKey nested_key(session, "reports/2026/q1 %.pdf");
        Part q1 = Part::from_text("q1");
        std::int64_t v = co_await svc.save_artifact(nested_key, std::move(q1));
        CHECK(v == 0);
        auto nested = co_await svc.list_artifact_keys(session);
        CHECK(nested == std::vector<std::string>{"reports/2026/q1 %.pdf"});
        auto back = co_await svc.load_artifact(nested_key);
        CHECK(text_of(back) == "q1");
    }());
}

// Saves from four threads at once: each gets a version of its own, and every version is kept.
void concurrent_saves(ArtifactService& svc)
{
    asio::thread_pool pool(4);
    const ArtifactKey log("app", "u", "s", "log.txt");
    std::vector<std::future<std::int64_t>> saved;
    for (int i = 0; i < 40; ++i) {
        auto one = [&svc, &log, i]() -> asio::awaitable<std::int64_t> {
            Part line = Part::from_text(std::to_string(i));
            co_return co_await svc.save_artifact(log, std::move(line));
        };
        saved.push_back(asio::co_spawn(pool, one, asio::use_future));
    }
    std::set<std::int64_t> versions;
    for (auto& f : saved)
        versions.insert(f.get());
    CHECK(versions.size() == 40);
    CHECK(*versions.begin() == 0);
    CHECK(*versions.rbegin() == 39);
    auto listed = asio::co_spawn(pool, svc.list_versions(log), asio::use_future).get();
    CHECK(listed.size() == 40);
    pool.join();  // a service's worker may still be letting go of the pool, which it posted to
}

}  // namespace

void artifact_service_suite(const ArtifactServiceFactory& make)
{
    SECTION("versions: saved from 0, the latest or a given one loaded, bytes kept exactly")
    {
        versions(*make());
    }
    SECTION("scopes: a session's files, the user's user: files shared by its sessions, listing, deleting")
    {
        scopes_and_listing(*make());
    }
    SECTION("names that leave their folder or hold NUL, backslash or control characters are refused")
    {
        bad_names(*make());
    }
    SECTION("saves from four threads each get a version of their own")
    {
        concurrent_saves(*make());
    }
}

}  // namespace adk::test
