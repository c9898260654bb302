#include "temp_dir.h"

#include <stdlib.h>

#include <stdexcept>
#include <system_error>

#include "cleanup_registry.h"

namespace locklab {

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::system_error(errno, std::generic_category(), "cannot create temp dir " + pattern);
  path_ = pattern;
  cleanup::add_dir(path_);
}

TempDir::~TempDir() {
  cleanup::remove_dir(path_);
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace locklab
