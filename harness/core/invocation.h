// What the documents a command writes record about how it was run, so that
// the run can be repeated and dated.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace locklab {

// How this process was started, as suites, explorations and sweeps record it:
// {command_line: [argv...], working_directory}.
nlohmann::json current_invocation();

// The current time as results files record it: "2026-11-23T10:59:46Z".
std::string utc_now();

}  // namespace locklab
