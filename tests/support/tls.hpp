// A self-signed certificate for loopback TLS tests, made at test time with the openssl program (once per
// test process). It names localhost and 127.0.0.1.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace adk::test {

struct TestCertificate {
    std::string cert_file;
    std::string key_file;
};

inline const TestCertificate& test_certificate()
{
    static const TestCertificate cert = [] {
        namespace fs = std::filesystem;
        const fs::path dir = fs::temp_directory_path() / ("adk-test-tls-" + std::to_string(::getpid()));
        fs::create_directories(dir);
        TestCertificate c{(dir / "cert.pem").string(), (dir / "key.pem").string()};
        const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -keyout '" + c.key_file + "' -out '" +
                                    c.cert_file + "' -days 2 -subj /CN=localhost -addext "
                                    "subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1";
        if (std::system(command.c_str()) != 0)
            FAIL("cannot make a test certificate with: " << command << " (install the openssl package)");
        return c;
    }();
    return cert;
}

}  // namespace adk::test
