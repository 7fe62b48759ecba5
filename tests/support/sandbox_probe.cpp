// Runs one piece of code in a SandboxedCodeExecutor and prints what came of it: "stdout: ..." lines, or
// "refused: <the error>". The sandbox tests start it where bubblewrap cannot make its namespaces.
#include <adk/core/error.hpp>
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <iostream>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: adk_sandbox_probe CODE\n";
        return 2;
    }
    boost::asio::io_context ioc;
    adk::SandboxedCodeExecutor sandbox;
    int status = 1;
    boost::asio::co_spawn(ioc, sandbox.run(adk::CodeExecutionInput(argv[1])),
                          [&](std::exception_ptr e, adk::CodeExecutionOutput out) {
                              try {
                                  if (e)
                                      std::rethrow_exception(e);
                                  std::cout << "stdout: " << out.stdout_text << "\n";
                                  status = 0;
                              } catch (const std::exception& error) {
                                  std::cout << "refused: " << error.what() << "\n";
                                  status = 3;
                              }
                          });
    ioc.run();
    return status;
}
