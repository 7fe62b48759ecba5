# Profile-guided optimization with GCC (tools/pgo.sh runs all three steps):
#   -DADK_PGO=generate   an instrumented build: its programs write what they ran into ADK_PGO_DIR when they exit
#   (train: run the programs on the work they are to be fast at)
#   -DADK_PGO=use        the same build directory configured again: every unit compiled with those counts (hot code
#                        laid out together, cold code moved apart, branches and calls arranged for the paths taken)
# Both steps must build in one directory: GCC names each profile after its object file's path. Code the training
# never ran is optimized as without a profile (-fprofile-partial-training), not for size: a library's users run
# paths a benchmark does not. The server has worker threads beside its event loop, so the counters are updated
# atomically, and -fprofile-correction smooths what is left inconsistent.
set(ADK_PGO "" CACHE STRING "Profile-guided optimization (GCC): generate, use, or empty for none (tools/pgo.sh)")
set(ADK_PGO_DIR "${CMAKE_BINARY_DIR}/pgo-profiles" CACHE PATH "Where ADK_PGO=generate's programs write their profiles")
set_property(CACHE ADK_PGO PROPERTY STRINGS "" generate use)
if(ADK_PGO)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "ADK_PGO=${ADK_PGO}: profile-guided optimization is set up for GCC, not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(ADK_PGO STREQUAL "generate")
    add_compile_options(-fprofile-generate=${ADK_PGO_DIR} -fprofile-update=atomic)
    add_link_options(-fprofile-generate=${ADK_PGO_DIR})
  elseif(ADK_PGO STREQUAL "use")
    if(NOT EXISTS ${ADK_PGO_DIR})
      message(FATAL_ERROR "ADK_PGO=use: no profiles in ${ADK_PGO_DIR}; build with -DADK_PGO=generate and train first")
    endif()
    # -Wno-missing-profile: units the training never entered (tests, other providers) are expected.
    add_compile_options(-fprofile-use=${ADK_PGO_DIR} -fprofile-partial-training -fprofile-correction
                        -Wno-missing-profile)
    add_link_options(-fprofile-use=${ADK_PGO_DIR})
  else()
    message(FATAL_ERROR "ADK_PGO=${ADK_PGO}: give generate, use, or nothing")
  endif()
endif()
