# tenet topo generate / info, and the loader's messages as users see them.

tenet_cli_test(help EXIT 0 ARGS --help STDOUT "Subcommands:")
tenet_cli_test(version EXIT 0 ARGS --version STDOUT "tenet 0.1.0")
tenet_cli_test(no_subcommand EXIT 2 ARGS STDERR "A subcommand is required")
tenet_cli_test(unknown_subcommand EXIT 2 ARGS synthesise STDERR "error:")

tenet_cli_test(info_torus EXIT 0 ARGS topo info ${TOPOLOGIES}/torus-4x4.json --size 1MiB
  STDOUT "diameter        4 hops, 2.00 us")
tenet_cli_test(info_bounds EXIT 0 ARGS topo info ${TOPOLOGIES}/torus-4x4.json --size 1MiB
  STDOUT "allreduce      10.33 us  ingress       10.33 us   5.743 us           2 us          size / 200.00 GB/s")
tenet_cli_test(info_cut_binds EXIT 0 ARGS topo info ${TOPOLOGIES}/dgx1-2x8-bridge.json --size 1GiB
  STDOUT "allgather      42.95 ms    cut       12.58 ms   42.95 ms         4.8 us  8/16 x size / 12.50 GB/s")
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
  STDERR "bad-fields.json: /links/0/bandwidth_GBps: must be a bandwidth > 0 in GB/s (got the integer -5)
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
  STDERR "error: /nonexistent-dir/x.json: cannot write: No such file or directory")

# Every shipped topology file loads.
file(GLOB shipped_topologies "${TOPOLOGIES}/*.json")
foreach(path ${shipped_topologies})
  get_filename_component(stem "${path}" NAME_WE)
  tenet_cli_test(load_${stem} EXIT 0 ARGS topo info ${path} --size 64MiB STDOUT "lower bounds for 64 MiB")
endforeach()
