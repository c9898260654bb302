// Which processes this test process is the parent of: servers a test (or a
// lab it started, with the test as subreaper) left running.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace locklab::test {

// The command names (`comm`) of this process's live, unreaped children.
inline std::vector<std::string> live_children() {
  std::vector<std::string> names;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid() && state != "Z") names.push_back(line.substr(open + 1, close - open - 1));
  }
  closedir(proc);
  return names;
}

}  // namespace locklab::test
