#include "cli_support.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

namespace tenet::cli {

void print_json(const nlohmann::json& document) { std::cout << document.dump(2) << '\n'; }

std::string Table::render() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string padding(width[c] - cell.size(), ' ');
            if (c == 0) {
        line += cell + padding;
      } else {
        line += numbers_ ? "  " + padding + cell : "  " + cell + padding;
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string text = render_row(headers_);
  for (const auto& row : rows_) text += render_row(row);
  return text;
}

void add_threads_option(CLI::App* command, int& threads) {
  command->add_option("--threads", threads, "Worker threads (0: all cores); results do not depend on it")
      ->check(CLI::Range(0, 1024))
      ->default_val(0);
}

std::unique_ptr<tbb::global_control> limit_threads(int threads) {
  if (threads <= 0) return nullptr;
  return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                               static_cast<std::size_t>(threads));
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace tenet::cli
