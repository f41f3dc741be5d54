#pragma once
// Helpers shared by the subcommands: the only place (with main.cpp) that knows about CLI11.

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>
#include <tbb/global_control.h>

#include "tenet/collective.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::cli {

/// Prints one JSON document on stdout, pretty-printed, with a final newline.
void print_json(const nlohmann::json& document);

/// A plain-text table with right-aligned numeric columns, for stdout.
class Table {
 public:
  /// With `numbers` the columns after the first are right-aligned; without, every column is text.
  explicit Table(std::vector<std::string> headers, bool numbers = true)
      : headers_(std::move(headers)), numbers_(numbers) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  bool numbers_;
};

/// printf-style number formatting without the iostream dance: fixed(3.14159, 2) == "3.14".
std::string fixed(double value, int decimals);

/// Thrown by a subcommand that finished but must exit non-zero (e.g. a schedule did not verify).
struct Exit {
  int code;
};

/// Adds `--threads N` (0 = all cores) to a subcommand.
void add_threads_option(CLI::App* command, int& threads);

/// Caps TBB's worker threads for the lifetime of the returned object (nothing when threads == 0).
std::unique_ptr<tbb::global_control> limit_threads(int threads);

/// The options every collective-running subcommand shares.
struct CollectiveOptions {
  std::string topology;
  std::string collective = "allreduce";
  std::string size = "64MiB";
  std::uint32_t chunks_per_npu = 1;
  std::string members;
};

/// Adds -t/--topology, -c/--collective, --size, --members and (when `chunks`) --chunks-per-npu.
void add_collective_options(CLI::App* command, CollectiveOptions& options, bool chunks);

/// The topology and the collective the options describe; InputError for anything wrong.
struct LoadedCollective {
  Topology topology;
  Collective collective;
};
LoadedCollective load_collective(const CollectiveOptions& options);

/// A comma-separated list of names, each one of `known` (an unknown one is an InputError naming
/// `option`, with a suggestion and `expected`). Empty entries are skipped.
std::vector<std::string> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                         const std::string& option, const std::string& what,
                                         const std::string& expected);

/// Peak resident memory of this process so far, MiB.
double peak_memory_MiB();

/// True when stderr is a terminal: progress lines go there only then.
bool stderr_is_terminal();

/// Registers the subcommands of each file.
void register_topo_command(CLI::App& app);
void register_synth_command(CLI::App& app);
void register_verify_command(CLI::App& app);
void register_batch_command(CLI::App& app);
void register_compare_command(CLI::App& app);
void register_simulate_command(CLI::App& app);
void register_baseline_command(CLI::App& app);

}  // namespace tenet::cli
