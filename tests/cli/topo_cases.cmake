# SPDX-License-Identifier: MIT
# tenet topo generate / info, and the loader's messages as users see them.

tenet_cli_test(help EXIT 0 ARGS --help STDOUT "Subcommands:")
tenet_cli_test(version EXIT 0 ARGS --version STDOUT "tenet 0.1.0")
tenet_cli_test(no_subcommand EXIT 2 ARGS STDERR "A subcommand is required")
tenet_cli_test(unknown_subcommand EXIT 2 ARGS synthesise STDERR "error:")

tenet_cli_test(info_torus EXIT 0 ARGS topo info ${TOPOLOGIES}/torus-4x4.json --size 1MiB
  STDOUT "diameter        4 hops, 2.00 us")
tenet_cli_test(info_bounds EXIT 0 ARGS topo info ${TOPOLOGIES}/torus-4x4.json --size 1MiB
  STDOUT "allreduce      10.33 us  ingress       10.33 us   5.743 us             -           2 us          size / 200.00 GB/s")
tenet_cli_test(info_cut_binds EXIT 0 ARGS topo info ${TOPOLOGIES}/dgx1-2x8-bridge.json --size 1GiB
  STDOUT "allgather      42.95 ms    cut       12.58 ms   42.95 ms             -         4.8 us  8/16 x size / 12.50 GB/s")
# Four boxes of eight GPUs: the all-reduce needs 2 x 3 x size through the boxes' 32 NICs.
tenet_cli_test(info_groups_bind EXIT 0 ARGS topo info ${TOPOLOGIES}/a100-4x8-ib.json --size 1GiB
  STDOUT "allreduce      8.055 ms  groups       6.402 ms   5.369 ms      8.055 ms         5.4 us          size / 200.00 GB/s")
tenet_cli_test(info_cut_json EXIT 0 ARGS topo info ${TOPOLOGIES}/a100-2x8-ib.json --json
  STDOUT "\"lower_bound_term\": \"ingress\"")
tenet_cli_test(info_cut_subset EXIT 0 ARGS topo info ${TOPOLOGIES}/mesh-128x128.json --size 64MiB
  STDOUT "note: allgather: cut bound over 140 of 16384 members")
tenet_cli_test(info_json EXIT 0 ARGS topo info ${TOPOLOGIES}/mesh-3x3.json --json STDOUT "\"diameter_hops\": 4")
tenet_cli_test(info_failed EXIT 0 ARGS topo info ${TOPOLOGIES}/mesh-4x4-failed-7-9.json
  STDOUT "failed NPUs     7, 9 (survivors renumbered 0..13)")
tenet_cli_test(info_bad_size EXIT 2 ARGS topo info ${TOPOLOGIES}/torus-4x4.json --size 12parsecs
  STDERR "error: --size: '12parsecs' is not a size")
tenet_cli_test(info_missing_file EXIT 2 ARGS topo info nowhere.json
  STDERR "error: nowhere.json: cannot open: No such file or directory")
tenet_cli_test(info_folder EXIT 2 ARGS topo info ${TOPOLOGIES} STDERR "is a folder, not a file")
tenet_cli_test(info_truncated EXIT 2 ARGS topo info ${BAD}/truncated.json
  STDERR "truncated.json: invalid JSON: parse error at line 1, column 23")
tenet_cli_test(info_deep EXIT 2 ARGS topo info ${BAD}/deep.json STDERR "JSON nested deeper than 64 levels")
tenet_cli_test(info_bad_fields EXIT 2 ARGS topo info ${BAD}/bad-fields.json
  STDERR "bad-fields.json: /links/0/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the integer -5)
error: ${BAD}/bad-fields.json: /links/1/dst: unknown switch 'leaf1' (did you mean 'leaf0'?)
error: ${BAD}/bad-fields.json: /links/2: a link from NPU 2 to itself (self-loops are not allowed)")
tenet_cli_test(info_unreachable EXIT 2 ARGS topo info ${BAD}/unreachable.json
  STDERR "unreachable.json: /links: NPU 1 cannot reach NPU 0")

tenet_cli_test(generate_torus EXIT 0 ARGS topo generate torus --dims 4x4 -o torus.json
  STDERR "wrote torus.json: 16 NPUs, 0 switches, 64 directed links")
tenet_cli_test(generate_stdout EXIT 0 ARGS topo generate ring --npus 4 --bandwidth 25
  STDOUT "\"bandwidth_GBps\": 25.0")
tenet_cli_test(generate_bad_kind EXIT 2 ARGS topo generate tourus --dims 4x4 -o never.json
  STDERR "(did you mean 'torus'?)" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(generate_bad_dims EXIT 2 ARGS topo generate torus --dims 4x0 -o never.json
  STDERR "error: topo generate: --dims (value 2):" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(generate_huge EXIT 2 ARGS topo generate fully_connected --npus 100000 -o never.json
  STDERR "error: topo generate:" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(generate_bad_bandwidth EXIT 2 ARGS topo generate mesh --dims 3x3 --bandwidth fast -o never.json
  STDERR "error: --bandwidth: 'fast' is not a number" NO_FILE ${SCRATCH}/never.json)
tenet_cli_test(generate_unwritable EXIT 2 ARGS topo generate ring --npus 4 -o /nonexistent-dir/x.json
  STDERR "error: --output: '/nonexistent-dir/x.json': the folder /nonexistent-dir does not exist")

# Every shipped topology file loads.
file(GLOB shipped_topologies "${TOPOLOGIES}/*.json")
foreach(path ${shipped_topologies})
  get_filename_component(stem "${path}" NAME_WE)
  # The 1,000-16,000-NPU networks take 10-17 s each under the sanitizers; the Release run loads them.
  if(TENET_SANITIZE AND stem MATCHES "(32x32|64x64|128x128|256x4|64x16|hx4-16x16|2x4x128)$")
    continue()
  endif()
  tenet_cli_test(load_${stem} EXIT 0 ARGS topo info ${path} --size 64MiB STDOUT "lower bounds for 64 MiB")
endforeach()

# Hardening (fuzzing, and a newcomer's reports): attribute ranges that keep every time finite,
# numbers beyond a double, NUL bytes, floods of problems, files of the wrong kind.
tenet_cli_test(huge_bandwidth_baseline EXIT 2 ARGS baseline -t ${BAD}/huge-bandwidth.json -a ring -c allreduce
  -o never-ring.json STDERR "huge-bandwidth.json: /defaults/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the number 1e+307)"
  NO_FILE ${SCRATCH}/never-ring.json)
tenet_cli_test(huge_bandwidth_simulate EXIT 2 ARGS simulate -t ${BAD}/huge-bandwidth.json ${BAD}/../good/rfs-allreduce.json
  STDERR "huge-bandwidth.json: /defaults/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the number 1e+307)")
tenet_cli_test(huge_bandwidth_compare EXIT 2 ARGS compare -t ${BAD}/huge-bandwidth.json -c allreduce --size 1MiB
  --plot never.svg STDERR "huge-bandwidth.json: /defaults/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s"
  NO_FILE ${SCRATCH}/never.svg)
tenet_cli_test(huge_bandwidth_batch EXIT 2 ARGS batch -t ${BAD}/huge-bandwidth.json -c allreduce --scenarios all-links
  STDERR "huge-bandwidth.json: /defaults/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s")
tenet_cli_test(number_overflow EXIT 2 ARGS topo info ${BAD}/number-overflow.json
  STDERR "number-overflow.json: /defaults/latency_us: the number 1e400 is out of range (JSON numbers must fit a double: at most about 1.8e308)")
tenet_cli_test(long_npus EXIT 2 ARGS topo info ${BAD}/long-npus.json
  STDERR "long-npus.json: /npus: the number 99999999999999999999... (400 characters) is out of range")
tenet_cli_test(trailing_nul EXIT 2 ARGS topo info ${BAD}/trailing-nul.json
  STDERR "trailing-nul.json: invalid JSON: a NUL byte at line 1, column 67; a JSON file is text, and nothing may follow its value")
tenet_cli_test(duplicate_links EXIT 2 ARGS topo info ${BAD}/duplicate-links.json
  STDERR "duplicate-links.json: /links/10: duplicate link NPU 1 -> NPU 0 (also defined at /links/0)
error: ${BAD}/duplicate-links.json: 40 more problems not listed; fix the ones above first")
tenet_cli_test(schedule_as_topology EXIT 2 ARGS verify -t ${BAD}/../good/rfs-allreduce.json ${BAD}/../good/rfs-allreduce.json
  STDERR "rfs-allreduce.json: /format: this is a schedule file (made for topology 'ring-fc-switch-2x4x2'), not a topology")

# A torus written as plain links (no layout field) is recognized, and the torus baselines apply.
set(PLAIN_TORUS "${CMAKE_CURRENT_SOURCE_DIR}/good/torus-4x4-links.json")
tenet_cli_test(info_grid_detected EXIT 0 ARGS topo info ${PLAIN_TORUS} STDOUT "layout          torus 4x4, detected")
tenet_cli_test(info_grid_detected_json EXIT 0 ARGS topo info ${PLAIN_TORUS} --json
  STDOUT "\"layout_detected\": true")
tenet_cli_test(baseline_grid_detected EXIT 0 ARGS baseline -t ${PLAIN_TORUS} -a bucket
  STDOUT "layout               torus 4x4, detected")
tenet_cli_test(compare_grid_detected EXIT 0 ARGS compare -t ${PLAIN_TORUS} --algorithms ring,bucket
  STDOUT "allreduce on torus-4x4-links (16 NPUs, layout: torus 4x4, detected)")
