# Installs the build into a fresh prefix, configures and builds install_consumer/ against it with
# find_package(adk CONFIG REQUIRED), runs it and checks what it printed; removes the prefix when all went well.
file(REMOVE_RECURSE "${WORK_DIR}")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")

set(flags "")
if(SANITIZE)
  set(flags "-fsanitize=${SANITIZE}")
endif()
set(launcher "")
find_program(CCACHE ccache)
if(CCACHE)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
endif()
step(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G Ninja
     "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}" ${launcher})
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/consumer")

# The user's message is stored but not streamed back: 3 events streamed, 4 stored.
set(expected "counter: 1\ncounter: 2\ncounter: 3\nevents=4 count=3\n")
if(NOT step_output STREQUAL expected)
  message(FATAL_ERROR "the consumer printed:\n${step_output}\nexpected:\n${expected}")
endif()
message(STATUS "installed package found, built and ran:\n${step_output}")
# The prefix holds a copy of every library and of the adk program (1.3 GB in the dev preset): kept only when a
# step fails, for a look.
file(REMOVE_RECURSE "${WORK_DIR}")
