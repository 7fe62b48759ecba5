// Typed state for workflow nodes: a struct described with BOOST_DESCRIBE_STRUCT, whose public members are state
// keys of their names.
//
//   struct Ticket {
//       std::string customer;
//       int attempts = 0;
//   };
//   BOOST_DESCRIBE_STRUCT(Ticket, (), (customer, attempts))
//
//   auto retry = wf::typed_function_node<Ticket>(
//       "retry", [](wf::NodeContext&, json::value, Ticket& ticket) -> asio::awaitable<json::value> {
//           ++ticket.attempts;  // stored as state key "attempts" with the node's output
//           co_return json::value(ticket.customer);
//       });
#pragma once

#include <adk/core/error.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/describe/members.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <boost/mp11/algorithm.hpp>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

namespace adk::workflow {

template <class State>
using StateMembers = boost::describe::describe_members<State, boost::describe::mod_public>;

// The state as a State, as the node sees it: each member from the state key of its name; a key the state does
// not hold leaves the member as State{} has it. Throws adk::Error naming the key when its value does not convert.
template <class State>
State read_state(const NodeContext& ctx)
{
    State state{};
    boost::mp11::mp_for_each<StateMembers<State>>([&](auto member) {
        std::optional<json::value> value = ctx.state(member.name);
        if (!value)
            return;
        using T = std::remove_cvref_t<decltype(state.*member.pointer)>;
        try {
            state.*member.pointer = json::value_to<T>(*value);
        } catch (const std::exception& e) {
            throw Error(errc::invalid_argument, std::string("node '") + ctx.node_name() + "': state key '" +
                                                    member.name + "' holds " + json::serialize(*value).substr(0, 200) +
                                                    ", which its typed state cannot take (" + e.what() + ")");
        }
    });
    return state;
}

// Stores each member of `state` whose value the state does not hold yet (NodeContext::set_state).
template <class State>
void write_state(NodeContext& ctx, const State& state)
{
    boost::mp11::mp_for_each<StateMembers<State>>([&](auto member) {
        json::value value = json::value_from(state.*member.pointer);
        std::optional<json::value> now = ctx.state(member.name);
        if (!now || *now != value)
            ctx.set_state(member.name, std::move(value));
    });
}

template <class State>
using TypedFunction = std::function<asio::awaitable<json::value>(NodeContext&, json::value, State&)>;

// A FunctionNode whose function also gets the state as a State (read_state), and whose changes to it are stored
// when it returns (write_state): with its output, as every change a node makes.
template <class State>
std::shared_ptr<FunctionNode> typed_function_node(std::string name, TypedFunction<State> fn, NodeOptions options = {})
{
    if (!fn)
        throw Error(errc::invalid_argument, "typed_function_node '" + name + "' was given no function");
    return function_node(
        std::move(name),
        [fn = std::move(fn)](NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
            State state = read_state<State>(ctx);
            json::value output = co_await fn(ctx, std::move(input), state);
            write_state(ctx, state);
            co_return output;
        },
        std::move(options));
}

}  // namespace adk::workflow
