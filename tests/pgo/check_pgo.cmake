# ADK_PGO (cmake/AdkProfile.cmake) as a user meets it at configure time: generate and use put GCC's profile flags
# on every compile command, with the profile directory given; use without profiles, and a value that is neither,
# are refused with what to do. Configures the source tree into WORK_DIR (no build).
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# configure(NAME EXPECT_RC ARGS...): sets configure_output and commands (the compile commands, when it configured).
function(configure name expect)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/${name}" -G Ninja
                    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DADK_BUILD_TESTS=OFF
                    -DADK_BUILD_SAMPLES=OFF -DADK_BUILD_TOOLS=OFF ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: configure failed (${rc}):\n${out}\n${err}")
  elseif(expect STREQUAL "refused" AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: configure succeeded where it must refuse:\n${out}")
  endif()
  set(configure_output "${out}${err}" PARENT_SCOPE)
  set(commands "")
  if(EXISTS "${WORK_DIR}/${name}/compile_commands.json")
    file(READ "${WORK_DIR}/${name}/compile_commands.json" commands)
  endif()
  set(commands "${commands}" PARENT_SCOPE)
endfunction()

# expect_on_every_command(NAME FLAG): FLAG is on each compile command of libadk's sources (and there are some).
function(expect_on_every_command name flag)
  string(REGEX MATCHALL "\"command\": \"[^\"]*libadk/src/[^\"]*\"" lines "${commands}")
  list(LENGTH lines total)
  if(total EQUAL 0)
    message(FATAL_ERROR "${name}: no compile command of libadk's sources in compile_commands.json")
  endif()
  foreach(line IN LISTS lines)
    string(FIND "${line}" "${flag}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${name}: a compile command lacks ${flag}: ${line}")
    endif()
  endforeach()
endfunction()

function(expect_nowhere name flag)
  string(FIND "${commands}" "${flag}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${name}: ${flag} is on a compile command")
  endif()
endfunction()

# CMake wraps a long message at spaces and indents what follows, so whitespace is compared as one space.
function(expect_said name text)
  string(REGEX REPLACE "[ \t\r\n]+" " " said "${configure_output}")
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${text}")
  string(FIND "${said}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: configure did not say \"${text}\":\n${configure_output}")
  endif()
endfunction()

set(profiles "${WORK_DIR}/profiles")

configure(none ok)
expect_nowhere(none "-fprofile-")

configure(generate ok -DADK_PGO=generate "-DADK_PGO_DIR=${profiles}")
expect_on_every_command(generate "-fprofile-generate=${profiles}")
expect_on_every_command(generate "-fprofile-update=atomic")
expect_nowhere(generate "-fprofile-use")

configure(use_without_profiles refused -DADK_PGO=use "-DADK_PGO_DIR=${profiles}")
expect_said(use_without_profiles "no profiles in ${profiles}")

file(MAKE_DIRECTORY "${profiles}")
configure(use ok -DADK_PGO=use "-DADK_PGO_DIR=${profiles}")
expect_on_every_command(use "-fprofile-use=${profiles}")
expect_on_every_command(use "-fprofile-partial-training")
expect_on_every_command(use "-fprofile-correction")
expect_nowhere(use "-fprofile-generate")

configure(unknown refused -DADK_PGO=sometimes)
expect_said(unknown "give generate, use, or nothing")

file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "ADK_PGO: none, generate, use, and the two refusals as expected")
