# SPDX-License-Identifier: MIT
# tenet baseline: summaries, closed-form times, JSON results, schedule files, not-applicable
# answers and bad options.

tenet_cli_test(baseline_ring_torus EXIT 0 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring -c allreduce --size 1MiB
  STDOUT "note                 bidirectional ring, Hamiltonian snake on the torus 4x4")
# Swing Sec. 2.3.1 on a 64-NPU ring, two directions: 63 (0.5 us + 64 MB / (2 * 64 * 50 GB/s)).
tenet_cli_test(baseline_ring_closed_form EXIT 0 ARGS baseline -t ${TOPOLOGIES}/ring-64.json -a ring -c reducescatter
  --size 64MB --json STDOUT "\"time_us\": 661.5,")
tenet_cli_test(baseline_ring_tree EXIT 0 ARGS baseline -t ${TOPOLOGIES}/tree-2x2x4.json -a ring -c allgather
  STDOUT "depth-first order over the switches")
tenet_cli_test(baseline_direct_fc EXIT 0 ARGS baseline -t ${TOPOLOGIES}/fully-connected-64.json -a direct -c allgather
  --size 64MB --json STDOUT "\"time_us\": 20.5,")
tenet_cli_test(baseline_rhd_members EXIT 0 ARGS baseline -t ${TOPOLOGIES}/tree-2x2x4.json -a rhd -c allgather
  --members 0-5 -o rhd-members.json STDOUT "wrote                rhd-members.json")
tenet_cli_test(baseline_write_failed EXIT 0 ARGS baseline -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json -a rhd
  -o baseline-failed.json STDOUT "verified             yes")
tenet_cli_test(baseline_rhd_written_verifies EXIT 0 ARGS verify -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json
  baseline-failed.json STDOUT "verified: allreduce of 14 NPUs")
set_tests_properties(cli.baseline_rhd_written_verifies PROPERTIES DEPENDS cli.baseline_write_failed)
tenet_cli_test(baseline_not_applicable EXIT 0 ARGS baseline -t ${TOPOLOGIES}/mesh-128x128.json -a direct
  STDOUT "applicable  no: direct on 16384 members needs 536838144 transfers")
tenet_cli_test(baseline_not_applicable_json EXIT 0 ARGS baseline -t ${TOPOLOGIES}/mesh-128x128.json -a direct --json
  STDOUT "\"applicable\": false,")
tenet_cli_test(baseline_unknown EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a rign -o never.json
  STDERR "error: --algorithm: unknown algorithm 'rign' (did you mean 'ring'?)" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(baseline_missing_algorithm EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json
  STDERR "--algorithm is required")
tenet_cli_test(baseline_bad_output EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring -o schedule.txt
  STDERR "error: --output: 'schedule.txt': tenet writes schedules as .json")
tenet_cli_test(baseline_bad_members EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring --members 0,99
  STDERR "error: --members:")
# A ring over two DGX-1: its two directions share the one bridge, so simulated it takes almost
# twice the cut bound.
tenet_cli_test(baseline_cut_bound EXIT 0 ARGS baseline -t ${TOPOLOGIES}/dgx1-2x8-bridge.json -a ring -c allgather
  --size 64MiB STDOUT "lower bound          2.685 ms, cut binds (time / bound 1.894)
bound terms          ingress 787.1 us, cut 2.685 ms (bandwidth 2.684 ms), latency 4.8 us")
tenet_cli_test(baseline_not_applicable_output EXIT 2 ARGS baseline -t ${TOPOLOGIES}/switch-8.json -a bucket -o never.json
  STDERR "error: --algorithm: bucket does not apply here, so there is nothing to write to never.json")
