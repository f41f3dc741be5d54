# SPDX-License-Identifier: MIT
# tenet simulate: replays of schedule files, and the inputs it refuses.

tenet_cli_test(simulate_table EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  STDOUT "verified             yes")
tenet_cli_test(simulate_busiest EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --top 1 STDOUT "0 -> 1         1 MiB  5.243 us        43.0%")
tenet_cli_test(simulate_json EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --json STDOUT "\"max_link_bytes\": 1048576.0,")
tenet_cli_test(simulate_gamma EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --gamma 1e-6 --size 1GiB --json STDOUT "\"schedule_size_bytes\": 1048576,")
tenet_cli_test(simulate_other_topology EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json ${BAD}/../good/rfs-allreduce.json
  STDERR "rfs-allreduce.json: /topology_fingerprint: the schedule was made for topology 'ring-fc-switch-2x4x2'")
tenet_cli_test(simulate_bad_file EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json ${BAD}/truncated.json
  STDERR "truncated.json: invalid JSON: parse error at line 1")
tenet_cli_test(simulate_missing_file EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json nothere.json
  STDERR "error: nothere.json: cannot open")
# MSCCL XML: the program's sends and receives become transfers; the file itself is verified.
tenet_cli_test(simulate_xml EXIT 0 ARGS simulate -t ${CMAKE_CURRENT_SOURCE_DIR}/msccl/ring-3.json
  ${CMAKE_CURRENT_SOURCE_DIR}/msccl/spec-ring.xml --size 3KiB
  STDOUT "allgather of 3 KiB on ring-3, 3 NPUs, 6 transfers")
tenet_cli_test(simulate_xml_without_size EXIT 2 ARGS simulate -t ${CMAKE_CURRENT_SOURCE_DIR}/msccl/ring-3.json
  ${CMAKE_CURRENT_SOURCE_DIR}/msccl/spec-ring.xml
  STDERR "error: --size: is required for '${CMAKE_CURRENT_SOURCE_DIR}/msccl/spec-ring.xml': the file does not say")
tenet_cli_test(simulate_xml_bad_file EXIT 2 ARGS simulate -t ${CMAKE_CURRENT_SOURCE_DIR}/msccl/ring-3.json
  ${CMAKE_CURRENT_SOURCE_DIR}/msccl/tab.xml --size 3KiB
  STDERR "tab.xml: line 9: tab character: the runtime's reader skips only spaces and newlines")
tenet_cli_test(simulate_xml_deadlock EXIT 1 ARGS simulate -t ${CMAKE_CURRENT_SOURCE_DIR}/msccl/pair.json
  ${CMAKE_CURRENT_SOURCE_DIR}/msccl/deadlock.xml --size 2KiB
  STDOUT "NO: deadlock: 2 threadblock(s) wait forever")
tenet_cli_test(simulate_xml_missing EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json algo.xml
  STDERR "error: algo.xml: cannot open")
tenet_cli_test(simulate_bad_gamma EXIT 2 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --gamma -1 STDERR "error: --gamma: the reduction cost must be from 0 to 1000 microseconds per byte, the time the slowest link tenet accepts takes per byte (got -1)")
tenet_cli_test(simulate_huge_gamma EXIT 2 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --gamma 1e308 STDERR "error: --gamma: the reduction cost must be from 0 to 1000 microseconds per byte, the time the slowest link tenet accepts takes per byte (got 1e+308)")

# Schedule files edited by hand: a header that disagrees with the transfers, sizes refused before
# allocating, numbers beyond a double.
set(PAIR "${CMAKE_CURRENT_SOURCE_DIR}/msccl/pair.json")
tenet_cli_test(verify_planned_time EXIT 2 ARGS verify -t ${PAIR} ${BAD}/planned-time.json
  STDERR "planned-time.json: /planned_time_us: is 5.0, but the latest transfer ends at 0.51024 (/transfers/0/end_us); the planned time must be the latest end_us")
tenet_cli_test(simulate_planned_time EXIT 2 ARGS simulate -t ${PAIR} ${BAD}/planned-time.json
  STDERR "planned-time.json: /planned_time_us: is 5.0, but the latest transfer ends at 0.51024")
tenet_cli_test(simulate_chunks_per_member EXIT 2 ARGS simulate -t ${PAIR} ${BAD}/chunks-per-member.json
  STDERR "chunks-per-member.json: /chunks_per_member: must be an integer from 1 to 65536 (got the integer 1000000)")
tenet_cli_test(verify_schedule_overflow EXIT 2 ARGS verify -t ${PAIR} ${BAD}/schedule-overflow.json
  STDERR "schedule-overflow.json: /transfers/1/end_us: the number 1e400 is out of range (JSON numbers must fit a double: at most about 1.8e308)")
# Found by fuzzing: planned starts that contradict the dependencies on one link (an internal error).
tenet_cli_test(simulate_contradicting_times EXIT 1 ARGS simulate -t ${PAIR} ${BAD}/contradicting-times.json
  STDOUT "verified             NO: transfer 1 starts at 0 us before its dependency 0 ends at 5.51024 us")
tenet_cli_test(simulate_bound EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  STDOUT "lower bound          4.075 us, ingress binds (time / bound 2.992)")

# A transfer without a planned link is timed on the route the simulator gives it: a schedule with
# its links deleted and its times divided by 1000 does not verify.
tenet_cli_test(verify_unlinked_too_fast EXIT 1 ARGS verify -t ${TOPOLOGIES}/mesh-3x3.json ${BAD}/unlinked-too-fast.json
  STDOUT "NOT verified: transfer 0 (NPU 1 -> NPU 0, chunk 1) lasts 0.002830169 us but needs at least 2.8301688888888887 us for 116508.44444444444 bytes on its route (1 link, the route the simulator takes)")

# A schedule on routes of its own (half of each NPU's data through each of two switches): its
# time as planned, and on the one route the runtime takes between the two NPUs.
tenet_cli_test(simulate_off_runtime_routes EXIT 0 ARGS simulate -t ${BAD}/../good/two-paths.json
  ${BAD}/../good/two-paths-allgather.json
  STDOUT "routes               2 transfers on routes the runtime does not take by itself (an MSCCL file or MSCCL++ plan names no routes; on the runtime's the schedule takes 54.43 us)")
tenet_cli_test(simulate_off_runtime_routes_json EXIT 0 ARGS simulate -t ${BAD}/../good/two-paths.json
  ${BAD}/../good/two-paths-allgather.json --json STDOUT "\"transfers_off_runtime_routes\": 2")
