// Shared by the suite tests: reading files, running programs, and reading
// JUnit XML the way a CI system does (with Python's XML parser).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "temp_dir.h"

namespace locklab::suite_test {

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  return nlohmann::json::parse(slurp(path));
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

// Runs `command` through the shell with stdin closed; captures both outputs.
inline Outcome run_command(const std::string& command) {
  TempDir dir("suite-test-cmd");
  const std::string full = command + " >" + (dir.path() / "out").string() + " 2>" +
                           (dir.path() / "err").string() + " </dev/null";
  const int raw = std::system(full.c_str());
  Outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(dir.path() / "out");
  o.err = slurp(dir.path() / "err");
  return o;
}

// The structure of a JUnit file as junit_to_json.py reads it; fails the
// test (and returns null) when the file is not well-formed XML.
inline nlohmann::json parse_junit(const std::filesystem::path& file) {
  Outcome o = run_command("/usr/bin/python3 " + std::string(JUNIT_TO_JSON) + " " + file.string());
  EXPECT_EQ(o.status, 0) << o.err;
  if (o.status != 0) return nullptr;
  return nlohmann::json::parse(o.out);
}

}  // namespace locklab::suite_test
