#include "expectation.h"

namespace locklab {

nlohmann::json expectation_json(const Expectation& expectation) {
  nlohmann::json out{{"verdict", verdict_name(expectation.verdict)}};
  if (!expectation.kinds.empty()) out["kinds"] = expectation.kinds;
  if (!expectation.absent.empty()) out["absent"] = expectation.absent;
  if (!expectation.classes.empty()) out["classes"] = expectation.classes;
  if (!expectation.incidents.empty()) out["incidents"] = expectation.incidents;
  if (!expectation.why.empty()) out["why"] = expectation.why;
  return out;
}

}  // namespace locklab
