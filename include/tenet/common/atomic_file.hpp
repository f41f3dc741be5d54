// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace tenet {

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees a half-written file, even if tenet is killed midway. Throws InputError
/// (naming the path) when the folder cannot be written.
void write_file_atomically(const std::string& path, const std::string& contents);

/// The same, for contents too large to hold in memory at once: `produce` streams them to the
/// temporary file. An exception from `produce` removes the temporary file and propagates.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& produce);

/// Reads a whole file; throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

/// While alive, `path` is removed if SIGINT, SIGTERM or SIGHUP ends the process (the signal's
/// default action then proceeds as if tenet had no handler). The atomic writers hold one for their
/// temporary file, so an interrupted run leaves no `*.tmp.<pid>` behind. Holds at most 64 paths at a
/// time and paths shorter than 4096 bytes; others are simply not covered.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace tenet
