#include "atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace locklab {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, std::string_view text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  // The pid keeps two lab processes writing the same output apart.
  fs::path partial = path;
  partial += ".partial-" + std::to_string(::getpid());
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::error_code ignored;
      fs::remove(partial, ignored);
      throw std::runtime_error("cannot write " + path.string() + ": " + why);
    }
  }
  std::error_code error;
  fs::rename(partial, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw std::runtime_error("cannot write " + path.string() + ": " + error.message());
  }
}

}  // namespace locklab
