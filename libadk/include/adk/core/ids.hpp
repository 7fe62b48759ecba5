// Identifiers and clocks shared by events, sessions and invocations.
#pragma once

#include <cstddef>
#include <string>

namespace adk {

// A random (version 4) UUID in its 36-character text form, from a cryptographic generator (OpenSSL's
// RAND_bytes, drawn 4 KiB at a time per thread): no id tells anything about the next one.
std::string new_uuid();

// n random bytes from the same generator (trace and span ids).
void random_bytes(unsigned char* out, std::size_t n);

// "e-" followed by a UUID, the form ADK gives invocation ids.
std::string new_invocation_id();

// Seconds since the Unix epoch, with sub-second precision: ADK's timestamp format.
double now_seconds();

}  // namespace adk
