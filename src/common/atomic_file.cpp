// SPDX-License-Identifier: MIT
#include "tenet/common/atomic_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <streambuf>

#include "tenet/common/error.hpp"

namespace tenet {
namespace {

// The registry a signal handler reads: fixed storage, no allocation, and a slot's path is complete
// before its state says so (release/acquire), so the handler only ever unlinks whole paths.
constexpr int kSlots = 64;
constexpr std::size_t kMaxPath = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kArmed = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};
std::array<Slot, kSlots> slots;
constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};

// What each signal did before tenet's handler: it is restored before the signal is raised again.
std::array<struct sigaction, kSignals.size()> previous_actions;

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (Slot& slot : slots) {
    if (slot.state.load(std::memory_order_acquire) == kArmed) ::unlink(slot.path);  // async-signal-safe
  }
  // The previous action (the default one, in tenet), then the same signal: the process ends as it
  // would have without this handler, and its exit status says what ended it.
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    if (kSignals[i] == signal_number) ::sigaction(signal_number, &previous_actions[i], nullptr);
  }
  ::raise(signal_number);
}

/// Puts the handler in place for each signal that is neither ignored (nohup, a shell's background
/// job) nor already handled by it. Checked at every registration, not once: a test framework, for
/// one, swaps its own handlers in and out around each test.
void install_handlers() {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN || current.sa_handler == remove_temporaries_and_reraise) continue;
    previous_actions[i] = current;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&action.sa_mask);
    ::sigaction(kSignals[i], &action, nullptr);
  }
}

/// A streambuf over a C FILE: std::ofstream has no descriptor to fsync.
class FileBuffer : public std::streambuf {
 public:
  explicit FileBuffer(std::FILE* file) : file_(file) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return std::fputc(c, file_) == EOF ? traits_type::eof() : c;
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    return static_cast<std::streamsize>(std::fwrite(data, 1, static_cast<std::size_t>(count), file_));
  }

 private:
  std::FILE* file_;
};

[[noreturn]] void throw_cannot_write(const std::string& path, int error_number) {
  throw InputError(path, "", std::string("cannot write: ") + std::strerror(error_number));
}

}  // namespace

RemoveOnSignal::RemoveOnSignal(const std::string& path) {
  if (path.size() >= kMaxPath) return;
  install_handlers();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) {
      std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
      slots[i].state.store(kArmed, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
}

RemoveOnSignal::~RemoveOnSignal() {
  if (slot_ >= 0) slots[slot_].state.store(kFree, std::memory_order_release);
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& produce) {
  // The temporary name carries the pid so that parallel runs writing into one folder never share it.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const RemoveOnSignal guard(temporary);
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw_cannot_write(path, errno);
  bool ok = true;
  int saved = 0;  // the first failure's errno: a full disk says so, not what closing said after
  try {
    FileBuffer buffer(file);
    std::ostream out(&buffer);
    produce(out);
    ok = static_cast<bool>(out.flush());
    if (!ok) saved = errno;
  } catch (...) {
    std::fclose(file);
    std::remove(temporary.c_str());
    throw;
  }
  auto step = [&](bool succeeded) {
    if (!succeeded && saved == 0) saved = errno;
    ok = ok && succeeded;
  };
  step(std::fflush(file) == 0);
  step(::fsync(::fileno(file)) == 0);
  step(std::fclose(file) == 0);
  if (ok) step(std::rename(temporary.c_str(), path.c_str()) == 0);
  if (!ok) {
    std::remove(temporary.c_str());
    throw_cannot_write(path, saved != 0 ? saved : EIO);
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); });
}

std::string read_file(const std::string& path) {
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) throw InputError(path, "", "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path, "", "cannot read the file");
  return buffer.str();
}

}  // namespace tenet
