# The headers most of the lab's files include (nlohmann/json and the standard
# library it brings), parsed once per build rather than once per file: a
# test file compiled in 3.9 s instead of 5.0 s, and a build from nothing took
# 6 min 4 s instead of 7 min 16 s on two cores (docs/PERFORMANCE.md).
# Two sets, since a precompiled header holds only for the optimization it was
# made with: the lab's (the build type's) and the tests' (-O0, with
# GoogleTest and RapidCheck).
#
# locklab_precompiled(TARGET...) lets each TARGET, a library or program of the
# lab, reuse the lab's set; locklab_test() gives every test the tests' set.
add_library(locklab_precompiled_headers OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled.cpp)
target_link_libraries(locklab_precompiled_headers PRIVATE nlohmann_json::nlohmann_json)
set(LOCKLAB_PRECOMPILED_HEADERS
    <nlohmann/json.hpp> <algorithm> <chrono> <filesystem> <functional> <map> <memory> <mutex>
    <optional> <set> <stdexcept> <string> <string_view> <vector>)
target_precompile_headers(locklab_precompiled_headers PRIVATE ${LOCKLAB_PRECOMPILED_HEADERS})

function(locklab_precompiled)
  foreach(target ${ARGN})
    target_precompile_headers(${target} REUSE_FROM locklab_precompiled_headers)
  endforeach()
endfunction()
