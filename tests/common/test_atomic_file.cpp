// SPDX-License-Identifier: MIT
// Atomic writes: whole files or none, and no temporary file left by an interrupted run.

#include "../support/catch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tenet/common/atomic_file.hpp"

using namespace tenet;

namespace {

std::filesystem::path scratch_folder() {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("tenet-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return folder;
}

}  // namespace

TEST_CASE("a streamed write produces the same file as a whole one", "[atomic_file]") {
  const std::filesystem::path folder = scratch_folder();
  const std::string whole = (folder / "whole.txt").string();
  const std::string streamed = (folder / "streamed.txt").string();
  write_file_atomically(whole, std::string("line one\nline two\n"));
  write_file_atomically(streamed, [](std::ostream& out) {
    out << "line one\n"
        << "line "
        << "two\n";
  });
  CHECK(read_file(whole) == read_file(streamed));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a producer that throws leaves neither the file nor its temporary", "[atomic_file]") {
  const std::filesystem::path folder = scratch_folder();
  const std::string path = (folder / "out.txt").string();
  CHECK_THROWS_AS(write_file_atomically(path,
                                        [](std::ostream& out) {
                                          out << "half";
                                          throw std::runtime_error("stop");
                                        }),
                  std::runtime_error);
  CHECK(std::filesystem::is_empty(folder));
  std::filesystem::remove_all(folder);
}

TEST_CASE("SIGTERM or SIGINT during a write removes the temporary file, then ends the process", "[atomic_file]") {
  for (int signal_number : {SIGTERM, SIGINT}) {
    const std::filesystem::path folder = scratch_folder();
    const std::string temporary = (folder / "out.txt.tmp.1").string();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child stands for a tenet killed in the middle of writing: the file exists, registered,
      // and no other handler (Catch2 has its own) stands behind tenet's.
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      std::ofstream(temporary) << "partial";
      const RemoveOnSignal guard(temporary);
      ::raise(signal_number);
      ::_exit(0);  // not reached: the signal's default action ends the child
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK_FALSE(std::filesystem::exists(temporary));
    std::filesystem::remove_all(folder);
  }
}
