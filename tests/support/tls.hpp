// A self-signed certificate for loopback TLS tests, made at test time with the openssl program (once per
// test process). It names localhost and 127.0.0.1.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace adk::test {

struct TestCertificate {
    std::string cert_file;
    std::string key_file;
    std::filesystem::path dir;
    ::pid_t owner = 0;

    explicit TestCertificate(std::filesystem::path directory)
        : cert_file((directory / "cert.pem").string()), key_file((directory / "key.pem").string()),
          dir(std::move(directory)), owner(::getpid())
    {
        std::filesystem::create_directories(dir);
        const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -keyout '" + key_file + "' -out '" +
                                    cert_file + "' -days 2 -subj /CN=localhost -addext "
                                    "subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1";
        if (std::system(command.c_str()) != 0)
            FAIL("cannot make a test certificate with: " << command << " (install the openssl package)");
    }
    TestCertificate(const TestCertificate&) = delete;
    TestCertificate& operator=(const TestCertificate&) = delete;

    // The directory goes with the process that made it (a forked child that exits leaves it to its parent).
    ~TestCertificate()
    {
        std::error_code ignored;
        if (::getpid() == owner)
            std::filesystem::remove_all(dir, ignored);
    }
};

inline const TestCertificate& test_certificate()
{
    static const TestCertificate cert{std::filesystem::temp_directory_path() /
                                      ("adk-test-tls-" + std::to_string(::getpid()))};
    return cert;
}

}  // namespace adk::test
