#include <adk/mcp/jsonrpc.hpp>

#include <adk/core/error.hpp>
#include <adk/core/json_limits.hpp>

#include <boost/json/serialize.hpp>

#include <limits>

namespace adk::mcp::jsonrpc {

namespace {

Invalid invalid(Id id, std::string why)
{
    return Invalid(std::move(id), RpcError(code::invalid_request, "Invalid Request: " + std::move(why)));
}

// A request id as written: a string, or an integer that fits int64 (JSON-RPC's numbers "SHOULD NOT contain
// fractional parts"; a fraction, a boolean or null is refused).
std::optional<Id> read_id(const json::value& v)
{
    if (v.is_string())
        return Id(std::string(v.get_string()));
    if (v.is_int64())
        return Id(v.get_int64());
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return Id(static_cast<std::int64_t>(v.get_uint64()));
    return std::nullopt;
}

std::optional<json::value> read_params(const json::object& o, bool& bad)
{
    const json::value* p = o.if_contains("params");
    if (!p)
        return std::nullopt;
    if (!p->is_object() && !p->is_array()) {
        bad = true;
        return std::nullopt;
    }
    return *p;
}

}  // namespace

json::value Id::to_json() const
{
    if (const auto* n = std::get_if<std::int64_t>(&v_))
        return *n;
    if (const auto* s = std::get_if<std::string>(&v_))
        return json::string(*s);
    return nullptr;
}

std::string Id::to_string() const
{
    return json::serialize(to_json());
}

Response Response::success(Id id, json::value result)
{
    Response r;
    r.id = std::move(id);
    r.result = std::move(result);
    return r;
}

Response Response::failure(Id id, RpcError error)
{
    Response r;
    r.id = std::move(id);
    r.error = std::move(error);
    return r;
}

Item decode_value(const json::value& v)
{
    const json::object* o = v.if_object();
    if (!o)
        return invalid(Id(), "a message is a JSON object");
    // The id first, so that an error about the rest can name it.
    const json::value* id_value = o->if_contains("id");
    std::optional<Id> id = id_value ? read_id(*id_value) : std::nullopt;
    const json::value* version = o->if_contains("jsonrpc");
    if (!version || !version->is_string() || version->get_string() != "2.0")
        return invalid(id.value_or(Id()), "\"jsonrpc\" must be \"2.0\"");

    if (const json::value* method = o->if_contains("method")) {
        if (!method->is_string())
            return invalid(id.value_or(Id()), "\"method\" must be a string");
        bool bad_params = false;
        std::optional<json::value> params = read_params(*o, bad_params);
        if (bad_params)
            return invalid(id.value_or(Id()), "\"params\" must be an object or an array");
        if (!id_value)
            return Notification(std::string(method->get_string()), std::move(params));
        if (!id)
            return invalid(Id(), "a request's \"id\" must be a string or an integer");
        return Request(std::move(*id), std::string(method->get_string()), std::move(params));
    }

    const json::value* result = o->if_contains("result");
    const json::value* error = o->if_contains("error");
    if (!result && !error)
        return invalid(id.value_or(Id()), "a message has a \"method\", a \"result\" or an \"error\"");
    if (result && error)
        return invalid(id.value_or(Id()), "a response has a \"result\" or an \"error\", not both");
    if (!id_value)
        return invalid(Id(), "a response has an \"id\"");
    if (!id && !(error && id_value->is_null()))
        return invalid(Id(), "a response's \"id\" must be a string or an integer (null only for an error)");
    if (result)
        return Response::success(std::move(*id), *result);
    const json::object* e = error->if_object();
    const json::value* c = e ? e->if_contains("code") : nullptr;
    const json::value* m = e ? e->if_contains("message") : nullptr;
    if (!c || !(c->is_int64() || (c->is_uint64() && c->get_uint64() <= static_cast<std::uint64_t>(
                                                                      std::numeric_limits<std::int64_t>::max()))))
        return invalid(id.value_or(Id()), "an error has an integer \"code\"");
    if (!m || !m->is_string())
        return invalid(id.value_or(Id()), "an error has a string \"message\"");
    std::optional<json::value> data;
    if (const json::value* d = e->if_contains("data"))
        data = *d;
    const std::int64_t code_value = c->is_int64() ? c->get_int64() : static_cast<std::int64_t>(c->get_uint64());
    return Response::failure(id.value_or(Id()), RpcError(code_value, std::string(m->get_string()), std::move(data)));
}

Decoded decode(std::string_view text)
{
    Decoded out;
    boost::system::error_code ec;
    json::value v = parse_json(text, ec);
    if (ec) {
        out.items.emplace_back(Invalid(Id(), RpcError(code::parse_error, "Parse error: " + ec.message())));
        return out;
    }
    try {
        check_json(v, "the message", max_read_json_depth);  // a number JSON cannot hold (1e400) is refused too
    } catch (const Error& e) {
        out.items.emplace_back(Invalid(Id(), RpcError(code::parse_error, "Parse error: " + e.message())));
        return out;
    }
    if (const json::array* batch = v.if_array()) {
        out.batch = true;
        if (batch->empty())
            out.items.emplace_back(invalid(Id(), "an empty batch"));
        for (const json::value& element : *batch)
            out.items.push_back(decode_value(element));
        return out;
    }
    out.items.push_back(decode_value(v));
    return out;
}

json::value to_json(const Message& message)
{
    json::object o;
    o["jsonrpc"] = "2.0";
    if (const auto* r = std::get_if<Request>(&message)) {
        o["id"] = r->id.to_json();
        o["method"] = r->method;
        if (r->params)
            o["params"] = *r->params;
    } else if (const auto* n = std::get_if<Notification>(&message)) {
        o["method"] = n->method;
        if (n->params)
            o["params"] = *n->params;
    } else {
        const auto& res = std::get<Response>(message);
        o["id"] = res.id.to_json();
        if (res.result) {
            o["result"] = *res.result;
        } else {
            json::object e{{"code", res.error->code}, {"message", res.error->message}};
            if (res.error->data)
                e["data"] = *res.error->data;
            o["error"] = std::move(e);
        }
    }
    return o;
}

json::value to_json(const Invalid& invalid)
{
    return to_json(Message(Response::failure(invalid.id, invalid.error)));
}

std::string encode(const Message& message)
{
    return json::serialize(to_json(message));
}

}  // namespace adk::mcp::jsonrpc
