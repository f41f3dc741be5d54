// SPDX-License-Identifier: MIT
#include "tenet/common/error.hpp"

#include <algorithm>
#include <numeric>

namespace tenet {
namespace {

std::string render_all(const std::string& source, const std::vector<InputProblem>& problems) {
  std::string text;
  for (const InputProblem& problem : problems) {
    if (!text.empty()) text += '\n';
    text += format_problem(source, problem);
  }
  return text;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string format_problem(const std::string& source, const InputProblem& problem) {
  std::string line = "error: ";
  if (!source.empty()) line += source + ": ";
  if (!problem.where.empty()) line += problem.where + ": ";
  return line + problem.message;
}

InputError::InputError(std::string source, std::vector<InputProblem> problems)
    : std::runtime_error(render_all(source, problems)), source_(std::move(source)), problems_(std::move(problems)) {}

InputError::InputError(std::string source, std::string where, std::string message)
    : InputError(std::move(source), std::vector<InputProblem>{{std::move(where), std::move(message)}}) {}

void ProblemList::add(std::string where, std::string message) {
  ++added_;
  if (problems_.size() < kMaxListed) problems_.push_back({std::move(where), std::move(message)});
}

void ProblemList::throw_if_any() const {
  if (added_ == 0) return;
  std::vector<InputProblem> listed = problems_;
  if (unlisted_at_) {
    listed.push_back({*unlisted_at_, "more problems not listed; fix the ones above first"});
  } else if (added_ > problems_.size()) {
    listed.push_back(
        {"", std::to_string(added_ - problems_.size()) + " more problems not listed; fix the ones above first"});
  }
  throw InputError(source_, std::move(listed));
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace tenet
