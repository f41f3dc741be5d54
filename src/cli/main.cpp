// SPDX-License-Identifier: MIT
// The tenet command line: parses options with CLI11, hands plain values to the library, and maps
// its errors to exit codes. Subcommands live one per file.

#include <iostream>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "tenet/common/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "tenet: synthesizes collective algorithms (all-gather, reduce-scatter, all-reduce) for a network\n"
      "topology, compares them with the classic algorithms, and writes them for the MSCCL runtime.",
      "tenet"};
  app.set_version_flag("--version", std::string("tenet ") + TENET_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  tenet::cli::register_synth_command(app);
  tenet::cli::register_topo_command(app);
  tenet::cli::register_verify_command(app);
  tenet::cli::register_batch_command(app);
  tenet::cli::register_compare_command(app);
  tenet::cli::register_simulate_command(app);
  tenet::cli::register_baseline_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const tenet::cli::Exit& exit) {
    return exit.code;
  } catch (const CLI::ParseError& error) {
    // CLI11 runs subcommand callbacks inside parse(): tenet's own errors arrive here wrapped.
    std::cerr << "error: " << error.what() << "\n"
              << "Run with --help for the options.\n";
    return static_cast<int>(tenet::ExitStatus::kInputError);
  } catch (const tenet::InputError& error) {
    std::cerr << error.what() << "\n";
    return static_cast<int>(tenet::ExitStatus::kInputError);
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory; try a smaller topology or fewer chunks per NPU\n";
    return static_cast<int>(tenet::ExitStatus::kFailure);
  } catch (const std::exception& error) {
    std::cerr << "internal error: " << error.what() << "\nThis is a bug in tenet; please report it.\n";
    return static_cast<int>(tenet::ExitStatus::kInternalError);
  }
  return static_cast<int>(tenet::ExitStatus::kOk);
}
