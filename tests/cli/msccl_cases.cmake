# SPDX-License-Identifier: MIT
# MSCCL XML: tenet synth and baseline -o x.xml write what the runtime loads; tenet verify x.xml checks
# the load rules and executes the file; tenet simulate x.xml times it. Files under msccl/ are the
# SPEC's example and hand-broken variants.

set(MSCCL "${CMAKE_CURRENT_SOURCE_DIR}/msccl")

# Written files are read back by a verify case: fixtures order them.
function(tenet_msccl_pair name)
  set_tests_properties("cli.${name}_write" PROPERTIES FIXTURES_SETUP "msccl_${name}")
  set_tests_properties("cli.${name}_verify" PROPERTIES FIXTURES_REQUIRED "msccl_${name}")
endfunction()

tenet_cli_test(msccl_torus_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allreduce --chunks-per-npu 3
  -o torus-allreduce.xml STDOUT "wrote                torus-allreduce.xml")
tenet_cli_test(msccl_torus_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json torus-allreduce.xml
  STDOUT "torus-allreduce.xml: verified: MSCCL allreduce (Simple, in-place) on 16 ranks, 48 chunks per loop")
tenet_msccl_pair(msccl_torus)

tenet_cli_test(msccl_failed_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json -c reducescatter
  --out-of-place --proto LL -o failed-rs.xml STDOUT "wrote                failed-rs.xml")
tenet_cli_test(msccl_failed_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json failed-rs.xml --json
  STDOUT "\"protocol\": \"LL\"")
tenet_msccl_pair(msccl_failed)

tenet_cli_test(msccl_switch_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/two-level-switch-8x4.json -c allgather --channels 2
  --chunks-per-npu 1 -o switch-ag.xml STDOUT "wrote                switch-ag.xml")
tenet_cli_test(msccl_switch_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/two-level-switch-8x4.json switch-ag.xml
  STDOUT "on 32 ranks, 32 chunks per loop, ")
tenet_msccl_pair(msccl_switch)

# Chunks of 64 MiB run in 32 slices of 2 MiB, pipelined: the file runs faster than its schedule,
# and synth says why. Cut into 2 pieces, each runs in 16 slices and the file gains a little more
# (3.259 ms uncut).
tenet_cli_test(msccl_sliced_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/a100-2x8-ib.json -c reducescatter --size 1GiB
  --chunks-per-npu 1 -o sliced-rs.xml
  STDOUT "each chunk cut into 2 pieces on channels of their own")
tenet_cli_test(msccl_sliced_verify EXIT 0 ARGS simulate -t ${TOPOLOGIES}/a100-2x8-ib.json sliced-rs.xml
  STDOUT "3.249 ms")
tenet_msccl_pair(msccl_sliced)

# The SPEC's example, as msccl-tools wrote it.
tenet_cli_test(msccl_spec_example EXIT 0 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/spec-ring.xml
  STDOUT "spec-ring.xml: verified: MSCCL allgather (Simple, in-place) on 3 ranks")

# Hand-broken files: exit 1 and the first problem.
tenet_cli_test(msccl_tab EXIT 1 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/tab.xml
  STDOUT "tab.xml: NOT verified: line 9: tab character: the runtime's reader skips only spaces and newlines")
tenet_cli_test(msccl_coll_spelling EXIT 1 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/reducescatter.xml
  STDOUT "coll=\"reducescatter\" is not a collective the runtime knows")
tenet_cli_test(msccl_step_numbering EXIT 1 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/numbering.xml
  STDOUT "line 13: rank 1 tb 0 step 2 (r): s=\"3\" at position 2: steps must be numbered 0, 1, 2, ... in order")
tenet_cli_test(msccl_out_of_bounds EXIT 1 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/out-of-bounds.xml
  STDOUT "line 5: rank 0 tb 0 step 1 (rcs): dst o[2..4) is outside o_chunks=3 (out of bounds)")
tenet_cli_test(msccl_deadlock EXIT 1 ARGS verify -t ${MSCCL}/pair.json ${MSCCL}/deadlock.xml
  STDOUT "line 4: rank 0 tb 0 step 0 (s) waits for room to send to rank 1 on channel 0 (2 calls unreceived)")
tenet_cli_test(msccl_missing_contribution EXIT 1 ARGS verify -t ${MSCCL}/pair.json ${MSCCL}/missing-contribution.xml
  STDOUT "but is missing rank 1's chunk 1")
tenet_cli_test(msccl_double_count EXIT 1 ARGS verify -t ${MSCCL}/pair.json ${MSCCL}/double-count.xml
  STDOUT "but counts rank 0's chunk 1 twice")
tenet_cli_test(msccl_wrong_topology EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json ${MSCCL}/spec-ring.xml
  STDERR "spec-ring.xml: ngpus=\"3\" but topology 'torus-4x4' has 16 NPUs")
tenet_cli_test(msccl_missing_file EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json missing.xml
  STDERR "missing.xml: cannot open")

# Options and limits: nothing is written when the file could not load or run.
tenet_cli_test(msccl_bad_proto EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json --proto simple -o never.xml
  STDERR "error: --proto: unknown protocol 'simple' (did you mean 'Simple'?)" NO_FILE ${SCRATCH}/never.xml)
tenet_cli_test(msccl_too_many_steps EXIT 2 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allreduce --chunks-per-npu 40 --transfers chunk
  --channels 1 -o too-long.xml
  STDERR "the runtime runs at most 256 per threadblock: spread each connection over 3 channels (--channels 3)"
  NO_FILE ${SCRATCH}/too-long.xml)
tenet_cli_test(msccl_more_channels EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allreduce --chunks-per-npu 40
  --channels 3 -o three-channels.xml STDOUT "wrote                three-channels.xml")
tenet_cli_test(msccl_auto_channels EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allreduce --chunks-per-npu 40
  -o auto-channels.xml STDOUT "wrote                auto-channels.xml")
tenet_cli_test(msccl_bad_channels EXIT 2 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json --channels 0 -o never.xml
  STDERR "error: --channels: '0': auto or a whole number of channels from 1 to 32 (the runtime's channels)"
  NO_FILE ${SCRATCH}/never.xml)
# Members that reach each other only through other NPUs: hop by hop the schedule relays through
# them, which are no ranks, so it cannot be a file; by default the fastest plan that can is written
# (routed: member to member), and the run says it is the file's time.
tenet_cli_test(msccl_relay EXIT 2 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --members 0,2,6,8
  --transfers chunk -o corners.xml
  STDERR "which is not a member: MSCCL moves data only between the communicator's ranks" NO_FILE ${SCRATCH}/corners.xml)
tenet_cli_test(msccl_relay_routed EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --members 0,2,6,8
  -o corners-routed.xml STDOUT "wrote                corners-routed.xml")

# Baselines as MSCCL XML, read back by verify and simulate. The ring's simulated time from its XML is
# the time of its own schedule (34.6608 us, as simulating its .json gives).
tenet_cli_test(msccl_baseline_ring_write EXIT 0 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring --size 1MiB
  -o baseline-ring.xml STDOUT "wrote                baseline-ring.xml")
tenet_cli_test(msccl_baseline_ring_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json baseline-ring.xml
  STDOUT "baseline-ring.xml: verified: MSCCL allreduce (Simple, in-place) on 16 ranks")
tenet_cli_test(msccl_baseline_ring_simulate EXIT 0 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json baseline-ring.xml --json
  STDOUT "\"time_us\": 34.6608")
tenet_cli_test(msccl_baseline_ring_json EXIT 0 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring --size 1MiB
  -o baseline-ring.json STDOUT "wrote                baseline-ring.json")
tenet_cli_test(msccl_baseline_ring_json_simulate EXIT 0 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json baseline-ring.json
  --json STDOUT "\"time_us\": 34.6608")
tenet_msccl_pair(msccl_baseline_ring)
set_tests_properties(cli.msccl_baseline_ring_simulate PROPERTIES FIXTURES_REQUIRED msccl_msccl_baseline_ring)
set_tests_properties(cli.msccl_baseline_ring_json PROPERTIES FIXTURES_SETUP msccl_baseline_ring_json)
set_tests_properties(cli.msccl_baseline_ring_json_simulate PROPERTIES FIXTURES_REQUIRED msccl_baseline_ring_json)

tenet_cli_test(msccl_baseline_rhd_write EXIT 0 ARGS baseline -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json -a rhd
  -c reducescatter --proto LL --out-of-place -o baseline-rhd.xml STDOUT "wrote                baseline-rhd.xml")
tenet_cli_test(msccl_baseline_rhd_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/mesh-4x4-failed-7-9.json baseline-rhd.xml
  STDOUT "baseline-rhd.xml: verified: MSCCL reduce_scatter (LL, out-of-place) on 14 ranks")
tenet_msccl_pair(msccl_baseline_rhd)

tenet_cli_test(msccl_baseline_bad_extension EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring -o ring.msccl
  STDERR "error: --output: 'ring.msccl': tenet writes schedules as .json, MSCCL algorithms as .xml and MSCCL++ plans as .plan.json"
  NO_FILE ${SCRATCH}/ring.msccl)
tenet_cli_test(msccl_baseline_bad_proto EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a ring --proto ll
  -o never-ring.xml STDERR "error: --proto: unknown protocol 'll' (did you mean 'LL'?)" NO_FILE ${SCRATCH}/never-ring.xml)
tenet_cli_test(msccl_baseline_inexpressible EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-16x16.json -a direct
  -c allgather --size 4KiB -o too-many-tbs.xml STDERR "error: --output: 'too-many-tbs.xml': the schedule cannot be written as MSCCL XML: rank 0 (NPU 0) sends to 255 peers, each in a threadblock of its own (a threadblock has one send peer), but the runtime allows 216 threadblocks per rank"
  NO_FILE ${SCRATCH}/too-many-tbs.xml)
# With 8 channels direct's 63 peers need 252 threadblocks, a send and a receive one each: each
# peer's sends and receives then share one (126).
tenet_cli_test(msccl_baseline_peer_threadblocks EXIT 0 ARGS baseline -t ${TOPOLOGIES}/torus-8x8.json -a direct --channels 8
  -o peer-tbs.xml STDOUT "a threadblock per peer for its sends and receives; 1.000x the schedule")

# Staged through more scratch than the buffer (its blocks would otherwise be reused into a
# deadlock): the layout line says how much, since the runtime allocates it for maxBytes.
tenet_cli_test(msccl_synth_scratch EXIT 0 ARGS synth -t ${TOPOLOGIES}/ring-fc-switch-2x4x8.json -c allgather --size 4KiB
  -o scratch.xml STDOUT "1.000x the schedule; scratch of 1.59x the buffer per rank (102 chunks of 64)")

# Sizes refused before the interpreter allocates (nchunksperloop="2147483647" took 16.8 GB): bad input, not a verdict.
tenet_cli_test(msccl_huge_chunks EXIT 2 ARGS verify -t ${MSCCL}/ring-3.json ${MSCCL}/huge-chunks.xml
  STDERR "huge-chunks.xml: line 1: <algo> nchunksperloop=\"2147483647\": tenet verifies at most 32838 chunks per loop (steps reach chunk 32837 at most: int16 offsets, cnt up to 71)")
tenet_cli_test(msccl_huge_chunks_simulate EXIT 2 ARGS simulate -t ${MSCCL}/ring-3.json ${MSCCL}/huge-chunks.xml --size 3KiB
  STDERR "huge-chunks.xml: line 1: <algo> nchunksperloop=\"2147483647\": tenet verifies at most 32838 chunks per loop")

# A file runs on a communicator of exactly its ranks: checked on a topology with other NPUs it is
# refused (exit 2) unless --members says which NPUs run it.
tenet_cli_test(msccl_members_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allgather --members 0,1,2,3
  --size 1MiB -o members-ag.xml STDOUT "(its MSCCL XML as the runtime runs it)")
tenet_cli_test(msccl_members_verify EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json members-ag.xml
  STDERR "error: members-ag.xml: ngpus=\"4\" but topology 'torus-4x4' has 16 NPUs: the runtime runs a file only on a communicator of exactly its ranks")
tenet_msccl_pair(msccl_members)
tenet_cli_test(msccl_members_simulate EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json members-ag.xml
  STDERR "ngpus=\"4\" but topology 'torus-4x4' has 16 NPUs")
set_tests_properties("cli.msccl_members_simulate" PROPERTIES FIXTURES_REQUIRED "msccl_msccl_members")
tenet_cli_test(msccl_members_given EXIT 0 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json members-ag.xml --members 0,1,2,3
  STDOUT "members-ag.xml: verified: MSCCL allgather")
set_tests_properties("cli.msccl_members_given" PROPERTIES FIXTURES_REQUIRED "msccl_msccl_members")
tenet_cli_test(msccl_members_json EXIT 2 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json ${MSCCL}/ring-3.json --members 0,1,2
  STDERR "error: --members: applies to MSCCL XML files; a schedule file names its own members")

# 130 GPUs on one switch, all-reduce of 4 KiB: the plan ranked fastest by its file's estimate was
# direct's, whose file needs 129 threadblocks that others wait for where a dependency can name
# 128, and synth exited 2. Each round's best is now checked for that, and the next best written.
tenet_cli_test(msccl_switch_130_topology EXIT 0 ARGS topo generate switch --npus 130 -o switch-130.json
  STDERR "wrote switch-130.json: 130 NPUs")
tenet_cli_test(msccl_switch_130_write EXIT 0 ARGS synth -t switch-130.json -c allreduce --size 4KiB -o switch-130.xml
  STDOUT "wrote                switch-130.xml")
set_tests_properties(cli.msccl_switch_130_topology PROPERTIES FIXTURES_SETUP msccl_switch_130_topology)
set_tests_properties(cli.msccl_switch_130_write PROPERTIES FIXTURES_REQUIRED msccl_switch_130_topology)
