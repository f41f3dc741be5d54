// SPDX-License-Identifier: MIT
// `tenet simulate`: replay a schedule file on a topology with the congestion-aware simulator.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <numeric>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/result.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet::cli {
namespace {

struct SimulateOptions {
  std::string topology;
  std::string schedule;
  std::string size;
  double gamma = 0.0;
  std::size_t top = 5;
  std::string members;
  bool json = false;
};

/// A link end as the topology file names it: the NPU's id in the file, or the switch's name.
nlohmann::json endpoint(const Topology& topology, NodeId node) {
  if (topology.is_npu(node)) return topology.original_npu_id(node);
  return topology.switch_name(node);
}

std::string endpoint_text(const Topology& topology, NodeId node) {
  return topology.is_npu(node) ? std::to_string(topology.original_npu_id(node)) : topology.switch_name(node);
}

std::string link_text(const Topology& topology, LinkId id) {
  std::string text = endpoint_text(topology, topology.link(id).src);
  text += " -> ";
  text += endpoint_text(topology, topology.link(id).dst);
  return text;
}

bool is_xml(const std::string& path) { return path.size() >= 4 && path.compare(path.size() - 4, 4, ".xml") == 0; }

/// A schedule file's transfers, and whether the file is a correct collective.
struct LoadedFile {
  Schedule schedule;
  bool verified = false;
  std::string verify_error;
  bool planned = true;  ///< the file has planned times (MSCCL XML has none)
};

LoadedFile load_json(const std::string& path, const Topology& topology) {
  Schedule schedule = load_schedule(path, topology);
  const VerifyResult verdict = verify_schedule(topology, schedule);
  return {std::move(schedule), verdict.ok, verdict.error, true};
}

/// An MSCCL algorithm, for `size` bytes (0: the size tenet's comment says it was made for).
LoadedFile load_xml(const std::string& path, const Topology& topology, std::uint64_t size,
                    const std::vector<NodeId>& members) {
  const std::string text = read_file(path);
  const MscclProgram program = parse_msccl_xml(text, path);
  if (size == 0 && !program.size_bytes) {
    throw InputError("", "--size",
                     "is required for '" + path +
                         "': the file does not say which collective size it was made for, e.g. --size 64MiB");
  }
  Schedule schedule = msccl_to_schedule(program, topology, size != 0 ? size : *program.size_bytes, path, members);
  // The file, not its conversion, is what the runtime runs: it is verified by executing it.
  const MscclVerifyResult verdict = verify_msccl_xml(text, &topology, true, members);
  if (verdict.beyond_limits) throw InputError(path, "", verdict.error);
  return {std::move(schedule), verdict.ok, verdict.error, false};
}

/// An MSCCL++ plan, for `size` bytes (0: 64 MiB, tenet's default collective size; a plan does
/// not say which size it was made for and runs for many).
LoadedFile load_plan(const std::string& path, const Topology& topology, std::uint64_t size,
                     const std::vector<NodeId>& members) {
  const std::string text = read_file(path);
  const MscclppVerifyResult verdict = verify_mscclpp_plan(text, path, &topology, members);
  Schedule schedule =
      mscclpp_plan_to_schedule(text, path, topology, size != 0 ? size : std::uint64_t{64} << 20, members);
  return {std::move(schedule), verdict.ok, verdict.error, false};
}

void run_simulate(const SimulateOptions& options) {
  check_gamma(options.gamma);
  const std::uint64_t size = options.size.empty() ? 0 : parse_size(options.size, "--size");
  const Topology topology = load_topology(options.topology);
  // Correctness does not depend on the size, so the schedule is verified as written.
  if (!options.members.empty() && !is_xml(options.schedule) && !is_plan_path(options.schedule)) {
    throw InputError("", "--members",
                     "applies to MSCCL XML files and MSCCL++ plans; a schedule file names its own members");
  }
  const std::vector<NodeId> members =
      options.members.empty() ? std::vector<NodeId>{} : parse_members(options.members, topology, "--members");
  const LoadedFile file = is_plan_path(options.schedule) ? load_plan(options.schedule, topology, size, members)
                          : is_xml(options.schedule)     ? load_xml(options.schedule, topology, size, members)
                                                         : load_json(options.schedule, topology);
  const Schedule& loaded = file.schedule;
  std::optional<Schedule> scaled;
  if (size != 0 && size != loaded.size_bytes()) scaled = loaded.resized(size);
  const Schedule& schedule = scaled ? *scaled : loaded;

  SimOptions sim_options;
  sim_options.gamma_us_per_byte = options.gamma;
  const auto started = std::chrono::steady_clock::now();
  ProgressLine line;
  line.show("simulating");  // at once: the first share comes after 16,384 transfers have finished
  sim_options.progress = simulation_progress(line, "simulating");
  const SimResult sim = simulate(topology, schedule, sim_options);
  line.clear();
  const double simulation_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();

  Collective collective;
  collective.kind = schedule.collective();
  collective.size_bytes = schedule.size_bytes();
  collective.chunks_per_npu = schedule.chunks_per_member();
  collective.members = schedule.members();
  const LowerBound bound = lower_bound(topology, collective, compute_diameter(topology, collective.members));

  // Busiest first: most bytes, then lowest id.
  std::vector<LinkId> order(sim.links.size());
  std::iota(order.begin(), order.end(), LinkId{0});
  const std::size_t shown = std::min(options.top, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                    [&](LinkId a, LinkId b) {
                      if (sim.links[a].bytes != sim.links[b].bytes) return sim.links[a].bytes > sim.links[b].bytes;
                      return a < b;
                    });
  order.resize(shown);
  auto utilization = [&](LinkId id) { return sim.time_us > 0.0 ? sim.links[id].busy_us / sim.time_us : 0.0; };
  const std::size_t links_used = static_cast<std::size_t>(
      std::count_if(sim.links.begin(), sim.links.end(), [](const LinkLoad& load) { return load.bytes > 0.0; }));

  CollectiveResult report;
  report.algorithm = schedule.algorithm();
  report.collective = schedule.collective();
  report.npus = static_cast<std::uint32_t>(schedule.members().size());
  report.size_bytes = schedule.size_bytes();
  report.time_us = sim.time_us;
  report.bound = bound;
  report.verified = file.verified;
  report.transfers = schedule.size();
  nlohmann::json busiest = nlohmann::json::array();
  for (LinkId id : order) {
    busiest.push_back({{"link", id},
                       {"src", endpoint(topology, topology.link(id).src)},
                       {"dst", endpoint(topology, topology.link(id).dst)},
                       {"bytes", sim.links[id].bytes},
                       {"busy_us", sim.links[id].busy_us},
                       {"utilization", utilization(id)}});
  }
  report.extra = {{"topology", topology.name},          {"chunks_per_npu", schedule.chunks_per_member()},
                  {"gamma_us_per_byte", options.gamma}, {"max_link_bytes", sim.max_link_bytes},
                  {"links_used", links_used},           {"busiest_links", busiest},
                  {"simulation_ms", simulation_ms}};
  if (file.planned) report.extra["planned_time_us"] = loaded.planned_time_us();
  if (scaled) report.extra["schedule_size_bytes"] = loaded.size_bytes();
  if (!schedule.notes.empty()) report.extra["notes"] = schedule.notes;
  if (!file.verified) report.extra["verify_error"] = file.verify_error;
  add_runtime_routes_facts(report.extra, schedule, topology, sim_options);

  if (options.json) {
    print_json(result_to_json(report));
  } else {
    std::string title = collective_name(schedule.collective());
    title += " of " + format_size(schedule.size_bytes());
    title += " on " + topology.name;
    title += ", " + std::to_string(report.npus) + " NPUs, " + std::to_string(schedule.size()) + " transfers";
    Table facts({"simulate " + schedule.algorithm(), title}, false);
    facts.add_row({"time", format_time_us(sim.time_us)});
    facts.add_row({"algorithm bandwidth", fixed(report.algbw_GBps(), 2) + " GB/s"});
    facts.add_row({"lower bound", bound_summary(bound, sim.time_us)});
    facts.add_row({"bound terms", bound_terms_text(bound)});
    if (scaled) {
      facts.add_row({"planned time",
                     format_time_us(loaded.planned_time_us()) + " (at " + format_size(loaded.size_bytes()) + ")"});
    } else if (file.planned) {
      facts.add_row({"planned time", format_time_us(loaded.planned_time_us())});
    }
    if (options.gamma > 0.0) facts.add_row({"reduction cost", fixed(options.gamma * 1e6, 3) + " ps per byte"});
    if (!order.empty()) {
      const LinkId max_link = order.front();
      std::string load_text = format_size(static_cast<std::uint64_t>(std::llround(sim.links[max_link].bytes)));
      load_text += " on " + link_text(topology, max_link);
      load_text += ", busy " + fixed(100.0 * utilization(max_link), 1) + "% of the time";
      facts.add_row({"max link load", load_text});
    }
    facts.add_row({"links used", std::to_string(links_used) + " of " + std::to_string(topology.link_count())});
    if (const std::string routes = runtime_routes_text(report.extra); !routes.empty())
      facts.add_row({"routes", routes});
    facts.add_row({"simulation", format_time_us(simulation_ms * 1e3)});
    facts.add_row({"verified", file.verified ? "yes" : "NO: " + file.verify_error});
    std::cout << facts.render();
    if (!order.empty()) {
      Table links({"busiest links", "bytes", "busy", "utilization"});
      for (LinkId id : order) {
        links.add_row({link_text(topology, id),
                       format_size(static_cast<std::uint64_t>(std::llround(sim.links[id].bytes))),
                       format_time_us(sim.links[id].busy_us), fixed(100.0 * utilization(id), 1) + "%"});
      }
      std::cout << "\n" << links.render();
    }
  }
  // A schedule that is not a correct collective: the time is shown, the exit code says it failed.
  if (!file.verified) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace

void register_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* simulate_command = app.add_subcommand(
      "simulate",
      "Replay a schedule file on a topology with the congestion-aware flow-level simulator (max-min\n"
      "fair sharing of link bandwidth); print its time, algorithm bandwidth, lower bound and link loads");
  simulate_command->add_option("-t,--topology", options->topology, "Topology file (JSON)")->required();
  simulate_command
      ->add_option(
          "SCHEDULE", options->schedule,
          "Schedule file written by tenet synth or baseline -o (.json), an MSCCL algorithm (.xml) or an MSCCL++ "
          "plan (.plan.json)")
      ->required();
  simulate_command->add_option(
      "--members", options->members,
      "The NPUs an MSCCL file's or MSCCL++ plan's ranks run on, e.g. 0,1,2,3 (default: all NPUs of the topology)");
  simulate_command->add_option("--size", options->size,
                               "Simulate the same schedule for another collective size, e.g. 1GiB (an .xml without "
                               "tenet's comment needs it; a .plan.json defaults to 64MiB)");
  simulate_command->add_option("--gamma", options->gamma,
                               "Reduction cost in microseconds per reduced byte (default 0, as in the papers)");
  simulate_command->add_option("--top", options->top, "Busiest links to list (default 5)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  simulate_command->add_flag("--json", options->json, "Print one JSON result object instead of the table");
  simulate_command->callback([options] { run_simulate(*options); });
}

}  // namespace tenet::cli
