# adk_component(NAME <name> SOURCES <file>... [DEPENDS <target>...])
#
# A library beside libadk, from the folder that calls it: target adk_<name>, alias and export name
# adk::<name>, public headers in ./include/adk/ (installed with the package), the project's warnings, linked
# PUBLIC to adk::adk and to what DEPENDS names. The providers use it; the server, the CLI, SQLite, PostgreSQL,
# MCP and A2A will. Its include folder is recorded (global property ADK_PUBLIC_INCLUDE_DIRS) so that the
# tests compile each of its public headers on its own.
function(adk_component)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME" "SOURCES;DEPENDS")
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "adk_component: give NAME and SOURCES")
  endif()
  set(target adk_${arg_NAME})
  add_library(${target} STATIC ${arg_SOURCES})
  add_library(adk::${arg_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${arg_NAME})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC adk::adk ${arg_DEPENDS})
  adk_set_warnings(${target})
  adk_unity(${target})
  install(TARGETS ${target} EXPORT adkTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/adk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY ADK_PUBLIC_INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include)
  set_property(GLOBAL APPEND PROPERTY ADK_COMPONENT_TARGETS adk::${arg_NAME})
endfunction()
