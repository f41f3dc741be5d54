#pragma once

#include <string>

namespace tenet {

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees a half-written file, even if tenet is killed midway. Throws InputError
/// (naming the path) when the folder cannot be written.
void write_file_atomically(const std::string& path, const std::string& contents);

/// Reads a whole file; throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace tenet
