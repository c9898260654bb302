# embed_text(TARGET_SOURCES_VAR NAMESPACE FILE...) turns each text file (a Lua
# script, an HTML template) into a C++ header `<stem>_text.h` declaring
# `inline constexpr std::string_view NAMESPACE::<stem>` with the file's bytes,
# so the program carries its scripts and needs no data files at run time.
function(embed_text out_headers namespace)
  set(headers)
  foreach(src ${ARGN})
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    string(MAKE_C_IDENTIFIER ${stem} ident)
    set(header ${CMAKE_CURRENT_BINARY_DIR}/embedded/${ident}_text.h)
    add_custom_command(
      OUTPUT ${header}
      COMMAND ${CMAKE_COMMAND} -DIN=${abs} -DOUT=${header} -DNS=${namespace} -DIDENT=${ident}
              -P ${PROJECT_SOURCE_DIR}/cmake/EmbedTextFile.cmake
      DEPENDS ${abs} ${PROJECT_SOURCE_DIR}/cmake/EmbedTextFile.cmake
      VERBATIM)
    list(APPEND headers ${header})
  endforeach()
  set(${out_headers} ${headers} PARENT_SCOPE)
endfunction()
