# kforge_add_plugin(<name> SOURCES <src>...)
#
# Builds a kforge plugin: a MODULE library named libkforge_<name>.so with hidden visibility that
# exports only its kforge_plugin_entry, links the kforge SDK and LibTorch, and leaves no symbol
# undefined (-Wl,--no-undefined), so a broken link shows up at build time, not inside a run.
function(kforge_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kforge_add_plugin(${name}): SOURCES is required")
  endif()
  set(target kforge_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "kforge_${name}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED KFORGE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${KFORGE_PLUGIN_OUTPUT_DIR})
  endif()
  if(TARGET kforge::sdk)
    target_link_libraries(${target} PRIVATE kforge::sdk)
  else()
    target_link_libraries(${target} PRIVATE kforge_sdk)
  endif()
  target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES} ${ARG_LIBRARIES})
  # --exclude-libs keeps template instantiations from static libraries out of the dynamic
  # symbol table: the entry point stays the only export.
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL)
  if(COMMAND kforge_use_pch)
    kforge_use_pch(${target})
  endif()
endfunction()
