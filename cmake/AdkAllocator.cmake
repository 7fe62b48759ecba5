# adk_link_allocator(<program>): links mimalloc (Debian's libmimalloc-dev) into one of adk's own programs (the adk
# command, and the benchmarks' runtime and server) so that it serves malloc and free for the whole process. An
# invocation allocates and frees a few hundred blocks (events, coroutine frames larger than Asio recycles, JSON);
# glibc's malloc takes the slow path for every block past its per-thread cache (1,032 bytes). Counted with
# callgrind (tools/bench/RESULTS.md, 2026-11-29): 18% fewer instructions per invocation in process, 12% served.
#
# Libraries are left alone: a program that embeds adk chooses its own allocator (linking mimalloc the same way
# works). Not with sanitizers (they replace malloc themselves) nor in the fuzzing build. -DADK_MIMALLOC=OFF keeps
# glibc's.
option(ADK_MIMALLOC "Link mimalloc into adk's programs (the adk command, the benchmarks)" ON)
set(ADK_MIMALLOC_IN_USE OFF)
if(ADK_MIMALLOC AND NOT ADK_SANITIZE AND NOT ADK_BUILD_FUZZERS)
  find_library(ADK_MIMALLOC_LIBRARY mimalloc)
  if(ADK_MIMALLOC_LIBRARY)
    set(ADK_MIMALLOC_IN_USE ON)
  else()
    message(WARNING "mimalloc not found: adk's programs use glibc's malloc (slower). Install libmimalloc-dev "
                    "(tools/setup.sh does), or configure with -DADK_MIMALLOC=OFF to silence this.")
  endif()
endif()

function(adk_link_allocator target)
  if(ADK_MIMALLOC_IN_USE)
    # Needed even though the program names none of its symbols: it must come before libc in the lookup order.
    target_link_libraries(${target} PRIVATE -Wl,--push-state,--no-as-needed ${ADK_MIMALLOC_LIBRARY} -Wl,--pop-state)
  endif()
endfunction()
