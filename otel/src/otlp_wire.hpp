// Protocol Buffers' wire format and OTLP/JSON's values: what the encoders of traces and metrics share.
#pragma once

#include <adk/otel/otlp_traces.hpp>
#include <adk/telemetry/tracer.hpp>

#include <boost/json/value.hpp>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adk::otel::detail {

namespace json = boost::json;

// Protocol Buffers' wire format (https://protobuf.dev/programming-guides/encoding/): what OTLP's messages need.
class ProtoWriter {
public:
    enum Wire { varint_type = 0, fixed64_type = 1, length_type = 2, fixed32_type = 5 };

    // A varint's bytes, and how many there are (at most ten).
    static std::size_t varint_bytes(std::uint64_t v, char (&bytes)[10]) noexcept
    {
        std::size_t n = 0;
        while (v >= 0x80) {
            bytes[n++] = static_cast<char>((v & 0x7F) | 0x80);
            v >>= 7;
        }
        bytes[n++] = static_cast<char>(v);
        return n;
    }
    static std::size_t varint_size(std::uint64_t v) noexcept
    {
        char bytes[10];
        return varint_bytes(v, bytes);
    }
    // What a length-delimited field of `length` bytes takes, its tag and length included (fields below 16).
    static std::size_t field_size(std::size_t length) noexcept { return 1 + varint_size(length) + length; }

    void varint(std::uint64_t v)
    {
        char bytes[10];
        out.append(bytes, varint_bytes(v, bytes));
    }
    void tag(int field, Wire wire) { varint((static_cast<std::uint64_t>(field) << 3) | wire); }

    // proto3 leaves out a field at its default, except a oneof's (`always`).
    void uint_field(int field, std::uint64_t v, bool always = false)
    {
        if (v == 0 && !always)
            return;
        tag(field, varint_type);
        varint(v);
    }
    void int_field(int field, std::int64_t v, bool always = false)
    {
        uint_field(field, static_cast<std::uint64_t>(v), always);  // int64: two's complement, ten bytes when negative
    }
    void fixed64_field(int field, std::uint64_t v)
    {
        tag(field, fixed64_type);
        for (int i = 0; i < 8; ++i)
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    void fixed32_field(int field, std::uint32_t v)
    {
        tag(field, fixed32_type);
        for (int i = 0; i < 4; ++i)
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    void double_field(int field, double v) { fixed64_field(field, std::bit_cast<std::uint64_t>(v)); }
    void bytes_field(int field, std::string_view v, bool always = false)
    {
        if (v.empty() && !always)
            return;
        tag(field, length_type);
        varint(v.size());
        out.append(v);
    }
    void message_field(int field, const ProtoWriter& child) { bytes_field(field, child.out, true); }
    // A message written in place, without a writer of its own: begin_message() writes its tag and room for a
    // one-byte length and returns where its body starts; end_message() writes the length, moving the body when the
    // length needs more bytes (a body of 128 bytes or more).
    std::size_t begin_message(int field)
    {
        tag(field, length_type);
        out.push_back(0);
        return out.size();
    }
    void end_message(std::size_t body)
    {
        char bytes[10];
        const std::size_t n = varint_bytes(out.size() - body, bytes);
        out[body - 1] = bytes[0];
        if (n > 1)
            out.insert(body, bytes + 1, n - 1);
    }
    // The head of a length-delimited field whose `length` is known: its tag and length; the caller writes the body.
    void field_head(int field, std::size_t length)
    {
        tag(field, length_type);
        varint(length);
    }
    // A packed repeated fixed64 or double (proto3's default for repeated scalars).
    void packed_fixed64_field(int field, const std::vector<std::uint64_t>& values)
    {
        if (values.empty())
            return;
        tag(field, length_type);
        varint(values.size() * 8);
        for (std::uint64_t v : values)
            for (int i = 0; i < 8; ++i)
                out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    void packed_double_field(int field, const std::vector<double>& values)
    {
        std::vector<std::uint64_t> bits;
        bits.reserve(values.size());
        for (double v : values)
            bits.push_back(std::bit_cast<std::uint64_t>(v));
        packed_fixed64_field(field, bits);
    }

    std::string out;
};

inline std::string_view id_bytes(const auto& id)
{
    return {reinterpret_cast<const char*>(id.data()), id.size()};
}

inline bool all_zero(const telemetry::SpanId& id)
{
    for (auto b : id)
        if (b)
            return false;
    return true;
}

// AnyValue, as field `field` of `into`.
inline void proto_value(ProtoWriter& into, int field, const telemetry::AttributeValue& value)
{
    const std::size_t body = into.begin_message(field);
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                into.bytes_field(1, v, true);
            } else if constexpr (std::is_same_v<T, bool>) {
                into.uint_field(2, v ? 1 : 0, true);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                into.int_field(3, v, true);
            } else if constexpr (std::is_same_v<T, double>) {
                into.double_field(4, v);
            } else {
                const std::size_t array = into.begin_message(5);
                for (const auto& s : v) {
                    const std::size_t item = into.begin_message(1);
                    into.bytes_field(1, s, true);
                    into.end_message(item);
                }
                into.end_message(array);
            }
        },
        value);
    into.end_message(body);
}

// KeyValue, as field `field` of `into`.
inline void proto_attribute(ProtoWriter& into, int field, std::string_view key, const telemetry::AttributeValue& value)
{
    const std::size_t body = into.begin_message(field);
    into.bytes_field(1, key);
    proto_value(into, 2, value);
    into.end_message(body);
}

// An Export*ServiceRequest of one resource (`resource`, the Resource's attributes) holding one scope's part
// (ScopeSpans, ScopeMetrics): its resource_spans / resource_metrics field 1, which holds Resource (1) and the scope's
// part (2). The scope's part is `scope_head` (its fields before the items), then `items`, each already encoded, as
// its repeated field `item_field`. Written once, into a buffer of its exact size: a batch's spans are copied once.
inline std::string export_request(const std::vector<ResourceAttribute>& resource, const ProtoWriter& scope_head,
                                  int item_field, std::span<const std::string> items = {})
{
    ProtoWriter resource_message;
    for (const ResourceAttribute& a : resource)
        proto_attribute(resource_message, 1, a.key, a.value);
    std::size_t scope_part = scope_head.out.size();
    for (const std::string& item : items)
        scope_part += ProtoWriter::field_size(item.size());
    const std::size_t resource_part =
        ProtoWriter::field_size(resource_message.out.size()) + ProtoWriter::field_size(scope_part);
    ProtoWriter request;
    request.out.reserve(ProtoWriter::field_size(resource_part));
    request.field_head(1, resource_part);
    request.message_field(1, resource_message);
    request.field_head(2, scope_part);
    request.out.append(scope_head.out);
    for (const std::string& item : items)
        request.bytes_field(item_field, item, true);
    return std::move(request.out);
}

// OTLP/JSON's AnyValue.
inline json::value json_value(const telemetry::AttributeValue& value)
{
    return std::visit(
        [](const auto& v) -> json::value {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return json::object{{"stringValue", v}};
            } else if constexpr (std::is_same_v<T, bool>) {
                return json::object{{"boolValue", v}};
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                return json::object{{"intValue", std::to_string(v)}};
            } else if constexpr (std::is_same_v<T, double>) {
                return json::object{{"doubleValue", v}};
            } else {
                json::array values;
                for (const auto& s : v)
                    values.push_back(json::object{{"stringValue", s}});
                return json::object{{"arrayValue", json::object{{"values", std::move(values)}}}};
            }
        },
        value);
}

// OTLP/JSON's Resource: {"attributes": [...]}.
inline json::object json_resource(const std::vector<ResourceAttribute>& resource)
{
    json::array attributes;
    for (const ResourceAttribute& a : resource)
        attributes.push_back(json::object{{"key", a.key}, {"value", json_value(a.value)}});
    return json::object{{"attributes", std::move(attributes)}};
}

}  // namespace adk::otel::detail
