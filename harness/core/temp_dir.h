// A private directory under the system temp dir, removed with everything in
// it when the owner is destroyed (or when the lab is interrupted).
#pragma once

#include <filesystem>
#include <string>

namespace locklab {

class TempDir {
 public:
  // Creates a fresh directory named `prefix-XXXXXX`; throws on failure.
  explicit TempDir(const std::string& prefix = "locklab");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Keeps the directory after destruction (for post-mortems).
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace locklab
