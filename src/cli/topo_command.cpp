// SPDX-License-Identifier: MIT
// `tenet topo generate` and `tenet topo info`.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/collective.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet::cli {
namespace {

struct GenerateOptions {
  std::string kind;
  std::string npus;
  std::string dims;
  std::string dimension;
  std::string board;
  std::string fanout;
  std::string spines;
  std::string degree;
  std::string seed;
  std::string switches;
  bool heterogeneous = false;
  bool unidirectional = false;
  std::string bandwidth;
  std::string latency;
  std::string name;
  std::string description;
  std::string output;
};

struct UnwindOptions {
  std::string topology;
  int degree = 1;
  bool unidirectional = false;
  std::string output;
};

struct InfoOptions {
  std::string topology;
  std::string size = "1GiB";
  std::string members;
  bool json = false;
  int threads = 0;
};

/// Splits "4x4", "4,4" or "4 x 4" into its parts; "" gives nothing.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ',') {
      parts.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

/// A number as JSON, kept as an integer when it is one, so the generator's own checks (integer,
/// range) apply and report the problem.
nlohmann::json number_value(const std::string& text, const std::string& option) {
  if (text.empty()) throw InputError("", option, "an empty value; expected a number");
  try {
    std::size_t used = 0;
    if (text.find_first_of(".eE") == std::string::npos) {
      long long integer = std::stoll(text, &used);
      if (used == text.size()) return integer;
    } else {
      double real = std::stod(text, &used);
      if (used == text.size()) return real;
    }
  } catch (const std::exception&) {
  }
  throw InputError("", option, "'" + text + "' is not a number");
}

nlohmann::json list_value(const std::string& text, const std::string& option) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& part : split_list(text)) list.push_back(number_value(part, option));
  return list;
}

/// A scalar for one value, a list for "50,25".
nlohmann::json scalar_or_list(const std::string& text, const std::string& option) {
  nlohmann::json list = list_value(text, option);
  return list.size() == 1 ? list[0] : list;
}

/// Rewrites the generator's JSON pointers ("/dims/1") into the options the user typed.
InputError as_option_error(const InputError& error) {
  static const std::vector<std::pair<std::string, std::string>> kOptionOf = {{"kind", "KIND"},
                                                                             {"npus", "--npus"},
                                                                             {"dims", "--dims"},
                                                                             {"dimension", "--dimension"},
                                                                             {"board", "--board"},
                                                                             {"fanout", "--fanout"},
                                                                             {"spines", "--spines"},
                                                                             {"degree", "--degree"},
                                                                             {"seed", "--seed"},
                                                                             {"switches", "--switches"},
                                                                             {"heterogeneous", "--heterogeneous"},
                                                                             {"bidirectional", "--unidirectional"},
                                                                             {"bandwidth_GBps", "--bandwidth"},
                                                                             {"latency_us", "--latency"}};
  std::vector<InputProblem> problems;
  for (InputProblem problem : error.problems()) {
    const std::string& where = problem.where;
    for (const auto& [field, option] : kOptionOf) {
      const std::string prefix = "/" + field;
      if (where.rfind(prefix, 0) != 0) continue;
      if (where.size() == prefix.size()) {
        problem.where = option;
      } else if (where[prefix.size()] == '/') {
        problem.where = option + " (value " + std::to_string(std::stoul(where.substr(prefix.size() + 1)) + 1) + ")";
      } else {
        continue;
      }
      break;
    }
    problems.push_back(problem);
  }
  return InputError("topo generate", problems);
}

void run_generate(const GenerateOptions& options) {
  if (options.output != "-") check_output_path(options.output, "--output", {});
  nlohmann::json generator = {{"kind", options.kind}};
  if (!options.npus.empty()) generator["npus"] = number_value(options.npus, "--npus");
  if (!options.dims.empty()) generator["dims"] = list_value(options.dims, "--dims");
  if (!options.dimension.empty()) generator["dimension"] = number_value(options.dimension, "--dimension");
  if (!options.board.empty()) generator["board"] = list_value(options.board, "--board");
  if (!options.fanout.empty()) generator["fanout"] = list_value(options.fanout, "--fanout");
  if (!options.spines.empty()) generator["spines"] = number_value(options.spines, "--spines");
  if (!options.degree.empty()) generator["degree"] = number_value(options.degree, "--degree");
  if (!options.seed.empty()) generator["seed"] = number_value(options.seed, "--seed");
  if (!options.switches.empty()) generator["switches"] = number_value(options.switches, "--switches");
  if (options.heterogeneous) generator["heterogeneous"] = true;
  if (options.unidirectional) generator["bidirectional"] = false;
  if (!options.bandwidth.empty()) generator["bandwidth_GBps"] = scalar_or_list(options.bandwidth, "--bandwidth");
  if (!options.latency.empty()) generator["latency_us"] = scalar_or_list(options.latency, "--latency");

  Topology topology;
  try {
    topology = generate_topology(generator, LinkDefaults{}, "topo generate", "");
  } catch (const InputError& error) {
    throw as_option_error(error);
  }
  if (!options.name.empty()) topology.name = options.name;
  if (!options.description.empty()) topology.description = options.description;
  const std::string text = topology_to_text(topology);
  if (options.output.empty() || options.output == "-") {
    std::cout << text;
  } else {
    write_file_atomically(options.output, text);
    std::cerr << "wrote " << options.output << ": " << topology.npu_count() << " NPUs, " << topology.switch_count()
              << " switches, " << topology.link_count() << " directed links\n";
  }
}

std::string range_text(const RangeStats& range, const std::string& unit, int decimals) {
  if (range.min == range.max) return fixed(range.min, decimals) + unit;
  return fixed(range.min, decimals) + " to " + fixed(range.max, decimals) + unit + " (mean " +
         fixed(range.mean, decimals) + ")";
}

nlohmann::json range_json(const RangeStats& range) {
  return {{"min", range.min}, {"mean", range.mean}, {"max", range.max}};
}

void run_info(const InfoOptions& options) {
  const std::uint64_t size = parse_size(options.size, "--size");
  auto thread_limit = limit_threads(options.threads);
  const Topology topology = load_topology(options.topology);
  const TopologyStats stats = compute_stats(topology);
  std::vector<NodeId> failed_original;
  if (!topology.original_npu_ids.empty()) {
    NodeId next = 0;
    for (NodeId original : topology.original_npu_ids) {
      while (next < original) failed_original.push_back(next++);
      next = original + 1;
    }
  }

  struct BoundRow {
    CollectiveKind kind;
    LowerBound bound;
  };
  std::vector<NodeId> members;
  if (!options.members.empty()) members = parse_members(options.members, topology, "--members");
  // The latency bound must span the participants only: the whole network's diameter could
  // overstate it for a sub-collective.
  const Diameter diameter = members.empty() ? stats.diameter : compute_diameter(topology, members);
  std::vector<BoundRow> bounds;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
    Collective collective;
    collective.kind = kind;
    collective.size_bytes = size;
    collective.members = members;
    bounds.push_back({kind, lower_bound(topology, collective, diameter)});
  }

  if (options.json) {
    nlohmann::json document = {
        {"name", topology.name},
        {"description", topology.description},
        {"npus", stats.npus},
        {"switches", stats.switches},
        {"links", stats.links},
        {"layout", GridLayout{topology.layout.dims, topology.layout.wraps}.describe()},
        {"layout_detected", topology.layout.detected},
        {"npu_out_degree", range_json(stats.npu_out_degree)},
        {"link_bandwidth_GBps", range_json(stats.link_bandwidth_GBps)},
        {"link_latency_us", range_json(stats.link_latency_us)},
        {"npu_ingress_GBps", range_json(stats.npu_ingress_GBps)},
        {"diameter_hops", stats.diameter.hops},
        {"diameter_latency_us", stats.diameter.latency_us},
        {"diameter_exact", stats.diameter.exact},
        {"failed_npus", failed_original},
        {"size_bytes", size},
        {"members", members.empty() ? stats.npus : members.size()},
    };
    nlohmann::json rows = nlohmann::json::array();
    for (const BoundRow& row : bounds) {
      rows.push_back({{"collective", collective_name(row.kind)},
                      {"lower_bound_us", row.bound.total_us},
                      {"lower_bound_term", row.bound.binding_name()},
                      {"lower_bound_terms", lower_bound_terms_json(row.bound)},
                      {"ingress_bound_us", row.bound.ingress_us},
                      {"cut_bound_us", row.bound.cut_us},
                      {"groups_bound_us", row.bound.groups_us},
                      {"latency_bound_us", row.bound.latency_us},
                      {"cut_bandwidth_GBps", row.bound.cut.cut_bandwidth_GBps},
                      {"cut_crossing_share", row.bound.cut.crossing_share},
                      {"cut_members_outside", row.bound.cut.members_outside},
                      {"cut_max_flows", row.bound.cut.max_flows}});
    }
    document["lower_bounds"] = rows;
    print_json(document);
    return;
  }

  Table facts({"topology", topology.name + (topology.description.empty() ? "" : ": " + topology.description)}, false);
  facts.add_row({"NPUs", std::to_string(stats.npus)});
  facts.add_row({"switches", std::to_string(stats.switches)});
  facts.add_row({"links", std::to_string(stats.links) + " directed"});
  if (topology.layout.is_grid()) facts.add_row({"layout", topology.layout.describe()});
  if (!failed_original.empty()) {
    std::string list;
    for (NodeId id : failed_original) {
      if (!list.empty()) list += ", ";
      list += std::to_string(id);
    }
    facts.add_row({"failed NPUs", list + " (survivors renumbered 0.." + std::to_string(stats.npus - 1) + ")"});
  }
  facts.add_row({"NPU out-degree", range_text(stats.npu_out_degree, "", 1)});
  facts.add_row({"link bandwidth", range_text(stats.link_bandwidth_GBps, " GB/s", 1)});
  facts.add_row({"link latency", range_text(stats.link_latency_us, " us", 2)});
  facts.add_row({"NPU ingress", range_text(stats.npu_ingress_GBps, " GB/s", 1)});
  facts.add_row({"diameter", std::string(stats.diameter.exact ? "" : ">= ") + std::to_string(stats.diameter.hops) +
                                 " hops, " + (stats.diameter.exact ? "" : ">= ") + fixed(stats.diameter.latency_us, 2) +
                                 " us"});
  std::cout << facts.render() << "\nlower bounds for " << format_size(size) << " (" << size << " B)";
  if (!members.empty()) std::cout << " among " << members.size() << " members";
  std::cout << ":\n";
  Table table(
      {"collective", "bound", "binds", "ingress bound", "cut bound", "groups bound", "latency bound", "tightest cut"});
  std::vector<std::string> notes;
  for (const BoundRow& row : bounds) {
    const CutBound& cut = row.bound.cut;
    // The cut behind the cut term, in words: the share of the data that crosses it, its bandwidth.
    std::string cut_text = "-";
    if (cut.cut_bandwidth_GBps > 0.0) {
      cut_text = "size";
      if (cut.members_outside != 0) {
        cut_text = std::to_string(cut.members_outside) + "/" + std::to_string(cut.members) + " x size";
      }
      cut_text += " / " + fixed(cut.cut_bandwidth_GBps, 2) + " GB/s";
    }
    table.add_row({collective_name(row.kind), format_time_us(row.bound.total_us), row.bound.binding_name(),
                   format_time_us(row.bound.ingress_us), format_time_us(row.bound.cut_us),
                   row.bound.groups.groups != 0 ? format_time_us(row.bound.groups_us) : "-",
                   format_time_us(row.bound.latency_us), cut_text});
    if (!cut.exact) notes.push_back(collective_name(row.kind) + ": " + cut_coverage_note(cut));
  }
  std::cout << table.render();
  for (const std::string& note : notes) std::cout << "note: " << note << "\n";
}

void run_unwind(const UnwindOptions& options) {
  if (options.output != "-") check_output_path(options.output, "--output", {options.topology});
  const Topology topology = load_topology(options.topology);
  check_unwind_degree(topology, static_cast<std::uint32_t>(options.degree), "--degree");
  const Topology unwound = unwind_switches(topology, options.degree, !options.unidirectional);
  const std::string text = topology_to_text(unwound);
  if (options.output.empty() || options.output == "-") {
    std::cout << text;
    return;
  }
  write_file_atomically(options.output, text);
  std::cerr << "wrote " << options.output << ": " << unwound.npu_count() << " NPUs, " << unwound.link_count()
            << " directed links (" << topology.switch_count()
            << (topology.switch_count() == 1 ? " switch" : " switches") << " unwound at degree " << options.degree
            << ")\n";
}

}  // namespace

void register_topo_command(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Generate topology files and inspect them");
  topo->require_subcommand(1);

  auto generate_options = std::make_shared<GenerateOptions>();
  CLI::App* generate = topo->add_subcommand(
      "generate",
      "Write the topology file of a generated network (links expanded). Kinds and their parameters:\n"
      "  ring --npus N [--unidirectional]   fully_connected --npus N   switch --npus N\n"
      "  mesh|torus|hyperx --dims 4x4[x4]   hypercube --dimension D   hypercube_3d --dims 4x4x4\n"
      "  two_level_switch --dims 8x4        ring_fc_switch --dims 2x4x8   dragonfly --dims 4x5\n"
      "  hammingmesh --dims 4x4 [--board 2x2]   fat_tree --dims 4x8 [--spines 2]   tree --fanout 2x2x4\n"
      "  random --npus N [--degree 3] [--seed 1] [--switches 0] [--heterogeneous]\n"
      "Bandwidth and latency take one value or one per dimension/level: --bandwidth 200,100,50");
  generate->add_option("KIND", generate_options->kind, "Topology kind (see above)")->required();
  generate->add_option("--npus", generate_options->npus, "Number of NPUs (ring, fully_connected, switch, random)");
  generate->add_option("--dims", generate_options->dims, "Sizes per dimension, e.g. 4x4 or 2x4x8");
  generate->add_option("--dimension", generate_options->dimension, "Binary hypercube dimension D (2^D NPUs)");
  generate->add_option("--board", generate_options->board, "HammingMesh board size (default 2x2)");
  generate->add_option("--fanout", generate_options->fanout, "Tree fan-out per level from the root, e.g. 2x4");
  generate->add_option("--spines", generate_options->spines, "Fat tree spine switches (default 1)");
  generate->add_option("--degree", generate_options->degree, "Random graph average NPU degree (default 3)");
  generate->add_option("--seed", generate_options->seed, "Random graph seed (default 1)");
  generate->add_option("--switches", generate_options->switches, "Random graph switch count (default 0)");
  generate->add_flag("--heterogeneous", generate_options->heterogeneous, "Random graph: mixed link speeds");
  generate->add_flag("--unidirectional", generate_options->unidirectional, "Ring: one-way links");
  generate->add_option("--bandwidth", generate_options->bandwidth, "Link bandwidth in GB/s (default 50)");
  generate->add_option("--latency", generate_options->latency, "Link latency in microseconds (default 0.5)");
  generate->add_option("--name", generate_options->name, "Topology name written to the file");
  generate->add_option("--description", generate_options->description, "Description written to the file");
  generate->add_option("-o,--output", generate_options->output, "Output file (default: stdout)")
      ->check(non_empty_path());
  generate->callback([generate_options] { run_generate(*generate_options); });

  auto info_options = std::make_shared<InfoOptions>();
  CLI::App* info =
      topo->add_subcommand("info",
                           "Summarize a topology file: counts, degrees, bandwidths, diameter, and the lower bounds of\n"
                           "all-gather, reduce-scatter and all-reduce for --size");
  info->add_option("TOPOLOGY", info_options->topology, "Topology file (JSON)")->required();
  info->add_option("--size", info_options->size, "Collective size for the lower bounds, e.g. 64MiB (default 1GiB)");
  info->add_flag("--json", info_options->json, "Print one JSON document instead of the table");
  info->add_option("--members", info_options->members, "Bound a sub-collective of these NPUs (file ids), e.g. 0,1,4-7");
  add_threads_option(info, info_options->threads);
  info->callback([info_options] { run_info(*info_options); });

  auto unwind_options = std::make_shared<UnwindOptions>();
  CLI::App* unwind = topo->add_subcommand(
      "unwind",
      "Replace every switch by point-to-point links (TACOS Sec. IV-G): each NPU gets links to the next\n"
      "--degree NPUs around its switch, each with 1/degree of the port bandwidth; writes the result");
  unwind->add_option("TOPOLOGY", unwind_options->topology, "Topology file (JSON)")->required();
  unwind->add_option("-d,--degree", unwind_options->degree, "Links per NPU per switch group (default 1)")
      ->check(CLI::Range(1, 4096));
  unwind->add_flag("--unidirectional", unwind_options->unidirectional,
                   "At degree 1, a one-way ring instead of a bidirectional one");
  unwind->add_option("-o,--output", unwind_options->output, "Output file (default: stdout)")->check(non_empty_path());
  unwind->callback([unwind_options] { run_unwind(*unwind_options); });
}

}  // namespace tenet::cli
