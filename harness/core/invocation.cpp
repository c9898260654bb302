#include "invocation.h"

#include <ctime>
#include <filesystem>
#include <fstream>

namespace locklab {

namespace fs = std::filesystem;
using nlohmann::json;

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

json current_invocation() {
  json command_line = json::array();
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  for (std::string arg; std::getline(in, arg, '\0');) command_line.push_back(arg);
  std::error_code error;
  return {{"command_line", command_line}, {"working_directory", fs::current_path(error).string()}};
}

}  // namespace locklab
