# SPDX-License-Identifier: MIT
# tenet synth: summaries, JSON results, schedule files, and bad options.

tenet_cli_test(synth_torus EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allgather --size 1MiB
  STDOUT "verified             yes")
# The method row: what made the schedule.
tenet_cli_test(synth_method_matching EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allgather --size 1MiB
  STDOUT "method               greedy matching of chunks to links, event by event")
tenet_cli_test(synth_method_trees EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allreduce --size 64MiB
  STDOUT "method               spanning trees: 18, each member's data cut into")
tenet_cli_test(synth_fig15 EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --size 9MB --json
  STDOUT "\"time_us\": 82.0,")
tenet_cli_test(synth_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json -c allreduce --size 1MiB
  --chunks-per-npu 2 -o failed.json STDOUT "wrote                failed.json")
tenet_cli_test(synth_members EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-6x6.json -c reducescatter --members 0,5,30,35
  --json STDOUT "\"npus\": 4")
tenet_cli_test(synth_switch EXIT 0 ARGS synth -t ${TOPOLOGIES}/two-level-switch-8x4.json --switches unwind --unwind-degree 2
  --json STDOUT "\"unwind_degree\": 2")
tenet_cli_test(synth_degree_without_unwind EXIT 2 ARGS synth -t ${TOPOLOGIES}/two-level-switch-8x4.json --unwind-degree 2
  STDERR "error: --unwind-degree: applies to --switches unwind only")
tenet_cli_test(synth_bad_switches EXIT 2 ARGS synth -t ${TOPOLOGIES}/two-level-switch-8x4.json --switches unwound
  STDERR "error: --switches: unknown switch planning 'unwound' (did you mean 'unwind'?)")
tenet_cli_test(synth_fractional_chunks EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --chunks-per-npu 1.5
  STDERR "error: --chunks-per-npu: '1.5' is not a chunk count; expected auto or a whole number from 1 to 65536")
tenet_cli_test(synth_sub_byte_chunks EXIT 2 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c reducescatter --size 1KiB
  --chunks-per-npu 65536 -o never.json
  STDERR "error: --chunks-per-npu: 65536 chunks per NPU cut 1 KiB over 9 members into chunks of less than a byte; use at most 113 chunks per NPU"
  NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(synth_auto_chunks EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --json
  STDOUT "\"chunks_per_npu_auto\": true")
tenet_cli_test(synth_tacos EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --policy tacos --json
  STDOUT "\"policy\": \"tacos\"")
tenet_cli_test(synth_bad_collective EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allreduse
  STDERR "error: --collective: unknown collective 'allreduse' (did you mean 'allreduce'?)")
tenet_cli_test(synth_bad_policy EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --policy greedy
  STDERR "error: --policy: unknown policy 'greedy'")
tenet_cli_test(synth_bad_members EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --members 0,99 -o never.json
  STDERR "error: --members:" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(synth_bad_output EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -o schedule.txt
  STDERR "error: --output: 'schedule.txt': tenet writes schedules as .json")
tenet_cli_test(synth_missing_topology EXIT 2 ARGS synth -c allreduce STDERR "--topology is required")
tenet_cli_test(synth_bad_chunks EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --chunks-per-npu 0
  STDERR "--chunks-per-npu")

# tenet verify reads back what synth wrote; a schedule for another topology is refused.
tenet_cli_test(verify_written EXIT 0 ARGS verify -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  STDOUT "verified: allreduce of 16 NPUs")
tenet_cli_test(verify_other_topology EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json ${BAD}/../good/rfs-allreduce.json
  STDERR "rfs-allreduce.json")
tenet_cli_test(verify_xml EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json algo.xml
  STDERR "algo.xml: cannot open")
# On switches the plan is made on the physical links and its time is its replay on them.
tenet_cli_test(synth_switch_native EXIT 0 ARGS synth -t ${TOPOLOGIES}/fat-tree-8x4.json -c allreduce --size 64MiB
  --switches native
  STDOUT "native (planned on the physical links)")
tenet_cli_test(synth_switch_native_json EXIT 0 ARGS synth -t ${TOPOLOGIES}/fat-tree-8x4.json -c allreduce --size 64MiB
  --switches native --json
  STDOUT "\"switches\": \"native\"")
# With --switches unwind every degree is tried: on one 8-NPU switch the densest unwinding wins.
tenet_cli_test(synth_switch_degrees EXIT 0 ARGS synth -t ${TOPOLOGIES}/switch-8.json -c allreduce --size 64MiB
  --switches unwind --json STDOUT "\"unwind_degree\": 8")
tenet_cli_test(synth_bound_terms EXIT 0 ARGS synth -t ${TOPOLOGIES}/dgx1-2x8-bridge.json -c allgather --size 1MiB
  STDOUT "bound terms          ingress 12.99 us, cut 42.64 us (bandwidth 41.94 us), latency 4.8 us")
tenet_cli_test(synth_bound_json EXIT 0 ARGS synth -t ${TOPOLOGIES}/dgx1-2x8-bridge.json -c allgather --size 1MiB --json
  STDOUT "\"lower_bound_term\": \"cut\"")

# An output that is the input, an empty -o, a folder that does not exist: refused before any work.
configure_file(${TOPOLOGIES}/torus-4x4.json ${SCRATCH}/input-torus.json COPYONLY)
tenet_cli_test(synth_output_is_input EXIT 2 ARGS synth -t input-torus.json -o ./input-torus.json
  STDERR "error: --output: './input-torus.json' is the input file input-torus.json; tenet does not overwrite its input (choose another name)")
tenet_cli_test(baseline_output_is_input EXIT 2 ARGS baseline -t input-torus.json -a ring -o input-torus.json
  STDERR "is the input file input-torus.json; tenet does not overwrite its input")
tenet_cli_test(unwind_output_is_input EXIT 2 ARGS topo unwind input-torus.json -o input-torus.json
  STDERR "error: --output: 'input-torus.json' is the input file input-torus.json; tenet does not overwrite its input")
tenet_cli_test(input_untouched EXIT 0 ARGS topo info input-torus.json STDOUT "layout          torus 4x4")
set_tests_properties(cli.input_untouched PROPERTIES
  DEPENDS "cli.synth_output_is_input;cli.baseline_output_is_input;cli.unwind_output_is_input")
tenet_cli_test(synth_empty_output EXIT 2 EMPTY_LAST_ARG ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -o STDERR "error: --output: must name a file")
tenet_cli_test(generate_empty_output EXIT 2 EMPTY_LAST_ARG ARGS topo generate ring --npus 4 -o STDERR "error: --output: must name a file")
tenet_cli_test(synth_output_folder_missing EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -o nowhere/x.json
  STDERR "error: --output: 'nowhere/x.json': the folder nowhere does not exist")

# Trees that took routes of their own say so, with the schedule's time on the runtime's routes.
tenet_cli_test(synth_off_runtime_routes EXIT 0 ARGS synth -t ${TOPOLOGIES}/mi250-2x16-ib.json -c allgather --size 1GiB
  STDOUT "transfers on routes the runtime does not take by itself (an MSCCL file or MSCCL++ plan names no routes; on the runtime's the schedule takes ")
