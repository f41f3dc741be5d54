// SPDX-License-Identifier: MIT
#pragma once
// One error family for everything a user can get wrong. The core throws; only the CLI prints and
// maps to exit codes, so library callers (tests, batch runs) can catch and carry on.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tenet {

/// Exit codes of the `tenet` binary.
enum class ExitStatus : int {
  kOk = 0,
  kFailure = 1,       ///< the run completed but a check failed (e.g. a schedule did not verify)
  kInputError = 2,    ///< bad input file, option or value: nothing was written
  kInternalError = 3  ///< a bug in tenet: please report it
};

/// One problem found in an input: where (a JSON pointer such as "/links/3/bandwidth_GBps", or an
/// option name such as "--size") and what is wrong, including what was expected and its units.
struct InputProblem {
  std::string where;
  std::string message;
};

/// Bad input. Collects every problem of one input so the user can fix them all in one edit.
/// what() renders one line per problem: `error: FILE: WHERE: MESSAGE`.
class InputError : public std::runtime_error {
 public:
  InputError(std::string source, std::vector<InputProblem> problems);
  InputError(std::string source, std::string where, std::string message);

  const std::string& source() const { return source_; }
  const std::vector<InputProblem>& problems() const { return problems_; }

 private:
  std::string source_;
  std::vector<InputProblem> problems_;
};

/// Accumulates problems while validating, then throws them all at once. Only the first
/// kMaxListed are kept: a systematic mistake in a large file (a million duplicate links) would
/// otherwise print a million lines; the rest are counted.
class ProblemList {
 public:
  static constexpr std::size_t kMaxListed = 20;

  explicit ProblemList(std::string source) : source_(std::move(source)) {}

  void add(std::string where, std::string message);
  bool empty() const { return added_ == 0; }
  /// Problems added so far, listed or not.
  std::size_t size() const { return added_; }
  /// Ends the list with "more problems not listed" at `where`, for a reader that stops looking
  /// once the list is full and so cannot count the rest.
  void note_unlisted(std::string where) { unlisted_at_ = std::move(where); }
  /// Throws InputError holding the listed problems, then "N more problems not listed" when
  /// there were more, if there is any.
  void throw_if_any() const;

 private:
  std::string source_;
  std::vector<InputProblem> problems_;
  std::size_t added_ = 0;
  std::optional<std::string> unlisted_at_;
};

/// Renders "error: SOURCE: WHERE: MESSAGE" (parts that are empty are left out).
std::string format_problem(const std::string& source, const InputProblem& problem);

/// Closest candidate to `word` by edit distance, or "" when none is close enough to suggest.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tenet
