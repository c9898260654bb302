// Output files that are never seen half-written.
#pragma once

#include <filesystem>
#include <string_view>

namespace locklab {

// Writes `text` to `path` through a temporary file next to it and a rename,
// so a reader finds the previous file or the complete new one, never a part.
// Creates missing parent directories. Throws std::runtime_error naming the
// file when it cannot be written; no temporary file is left then.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace locklab
