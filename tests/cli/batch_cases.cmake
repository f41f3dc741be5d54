# SPDX-License-Identifier: MIT
# tenet batch, batch merge and compare end to end.

tenet_cli_test(batch_torus EXIT 0 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --size 1MiB --scenarios all-npus
  STDOUT "batch allreduce of 1 MiB on torus-4x4: 17 scenario(s), worst first")
tenet_cli_test(batch_disconnected EXIT 0 ARGS batch -t ${TOPOLOGIES}/ring-64.json --size 1MiB --scenarios random-npus:2:3:3
  --baselines none STDOUT "cannot reach")
tenet_cli_test(batch_bad_scenarios EXIT 2 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --scenarios all-npu
  STDERR "(did you mean 'all-npus'?)")
tenet_cli_test(batch_bad_shard EXIT 2 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --scenarios all-npus --shard 3/3
  STDERR "error: --shard: '3/3' is not a shard")
tenet_cli_test(batch_bad_baseline EXIT 2 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --scenarios all-npus --baselines rign
  STDERR "unknown baseline 'rign' (did you mean 'ring'?)")
tenet_cli_test(batch_merge_missing EXIT 2 ARGS batch merge nowhere STDERR "nowhere/summary.json: cannot open")
tenet_cli_test(compare_torus EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --size 1MiB STDOUT "* swing")
tenet_cli_test(compare_json EXIT 0 ARGS compare -t ${TOPOLOGIES}/mesh-3x3.json --sizes 1KiB:4KiB --algorithms synth,ring
  --json STDOUT "\"winner\": true")
# A baseline whose simulation would be long and whose busiest link alone is slower than the ring
# is listed with that floor, not simulated and not ranked.
tenet_cli_test(compare_skips_long_simulation EXIT 0 ARGS compare -t ${CMAKE_CURRENT_SOURCE_DIR}/good/mesh-16x16.json
  -c allgather --size 64MiB --algorithms ring,direct STDOUT "  direct   >= 5.369 ms")
tenet_cli_test(compare_skipped_json EXIT 0 ARGS compare -t ${CMAKE_CURRENT_SOURCE_DIR}/good/mesh-16x16.json
  -c allgather --size 64MiB --algorithms ring,direct --json STDOUT "\"simulated\": false")
# 1 TiB over two NPUs at 1 kB/s: no plan fits in picoseconds (synth says so, exit 2), and compare
# shows synth n/a with that reason beside the baselines, which are timed.
tenet_cli_test(synth_plan_too_long EXIT 2 ARGS synth -t ${CMAKE_CURRENT_SOURCE_DIR}/good/slow-pair.json --size 1TiB
               STDERR "error: --size: one transfer of this collective takes")
tenet_cli_test(compare_plan_too_long EXIT 0 ARGS compare -t ${CMAKE_CURRENT_SOURCE_DIR}/good/slow-pair.json --size 1TiB
               STDOUT "n/a synth: one transfer of this collective takes")
# Its files at that size run in more slices than tenet times: the size is the error (exit 2),
# where the writer used to fail as a bug (exit 3).
tenet_cli_test(baseline_xml_too_many_slices EXIT 2 ARGS baseline -a ring -t ${CMAKE_CURRENT_SOURCE_DIR}/good/slow-pair.json
               --size 1TiB -o slices.xml NO_FILE slices.xml
               STDERR "262144 slices per chunk, 1048576 primitive calls in all")
tenet_cli_test(compare_bad_algorithm EXIT 2 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --algorithms swign
  STDERR "unknown algorithm 'swign' (did you mean 'swing'?)")
tenet_cli_test(compare_plot EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --sizes 1KiB:1MiB --plot plot.svg
  --heatmap heat.svg STDOUT "wrote plot.svg")

# --xml: each scenario's schedule as MSCCL XML too; one that relays through NPUs outside its members
# (hop by hop: routed transfers go straight between members) cannot be one, and gets a note
# instead of failing the sweep.
tenet_cli_test(batch_xml EXIT 0 ARGS batch -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --size 1MiB --baselines none
  --transfers chunk --scenarios ${CMAKE_CURRENT_SOURCE_DIR}/good/corners-scenarios.json --out-dir batch-xml --force --xml
  STDOUT "note: corners: no MSCCL XML: transfer" NO_FILE ${SCRATCH}/batch-xml/corners.xml)
tenet_cli_test(batch_xml_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/mesh-3x3.json batch-xml/healthy.xml
  STDOUT "batch-xml/healthy.xml: verified: MSCCL allgather (Simple, in-place) on 9 ranks")
set_tests_properties(cli.batch_xml PROPERTIES FIXTURES_SETUP batch_xml)
set_tests_properties(cli.batch_xml_verify PROPERTIES FIXTURES_REQUIRED batch_xml)
tenet_cli_test(batch_xml_needs_out_dir EXIT 2 ARGS batch -t ${TOPOLOGIES}/mesh-3x3.json --scenarios all-npus --xml
  STDERR "error: --xml: needs --out-dir, the folder the .xml files go to")
tenet_cli_test(compare_csv_bounds EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --size 1MiB --algorithms ring --csv
  STDOUT "lower_bound_us,lower_bound_term,ingress_bound_us,cut_bound_us,cut_bandwidth_bound_us,groups_bound_us,latency_bound_us,cut_exact,")
tenet_cli_test(compare_bound_line EXIT 0 ARGS compare -t ${TOPOLOGIES}/dgx1-2x8-bridge.json -c allgather --size 1MiB
  --algorithms ring STDOUT "1 MiB: lower bound 42.64 us, cut binds; ingress 12.99 us, cut 42.64 us")
tenet_cli_test(batch_bound_columns EXIT 0 ARGS batch -t ${TOPOLOGIES}/dgx1-2x8-bridge.json -c allgather --size 1MiB
  --scenarios random-links:2:1 --baselines ring --csv STDOUT ",42.643040000000006,cut,")

# compare -o writes the verified algorithm whose file runs fastest, in the file's format: at 1 MiB
# on torus-4x4 synth's MSCCL XML ties Swing's (13.83 us, a rounding apart), and a tie goes to synth.
tenet_cli_test(compare_best_xml EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json -c allreduce --size 1MiB -o best.xml
  STDOUT "wrote best.xml: synth, the fastest MSCCL XML (")
# On the switches of tree-2x2x4 the ring's all-gather of 16 MiB beats synth's (1.307 against
# 1.321 ms), as schedule and as file.
tenet_cli_test(compare_best_json EXIT 0 ARGS compare -t ${TOPOLOGIES}/tree-2x2x4.json -c allgather
  --size 16MiB -o best.json --json STDOUT "\"algorithm\": \"ring\",\n    \"candidates\"")
# An algorithm whose file cannot be written has no time among files: "no file", the reason below.
tenet_cli_test(compare_best_not_written EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-16x16.json -c allgather --size 4KiB
  --algorithms rhd,direct -o best-rhd.xml
  STDOUT "  direct    no file                                        yes\n\nwrote best-rhd.xml: rhd, the fastest MSCCL XML (15.17 us)\nalgorithm  schedule         file  file/schedule\n* rhd      15.17 us     15.17 us          1.000\n  direct   8.003 us  not written\n  not written direct: rank 0 (NPU 0) sends to 255 peers")
tenet_cli_test(compare_best_not_written_json EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-16x16.json -c allgather
  --size 4KiB --algorithms rhd,direct -o best-rhd-json.xml --json
  STDOUT "\"schedule_time_us\": 8.00256,\n      \"size_bytes\": 4096,\n      \"slowdown_vs_best\": null,")
tenet_cli_test(compare_best_sweep EXIT 2 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --sizes 1KiB:4KiB -o never.xml
  STDERR "error: --output: writes the best algorithm of one size; give --size, not a sweep of --sizes" NO_FILE ${SCRATCH}/never.xml)
# batch --best: each scenario's files hold its fastest algorithm; the row says when that is a baseline.
# On tree-2x2x4 the ring's all-gather of 16 MiB is the faster schedule and the faster XML.
tenet_cli_test(batch_best EXIT 0 ARGS batch -t ${TOPOLOGIES}/tree-2x2x4.json -c allgather --size 16MiB
  --scenarios random-links:1:2 --out-dir batch-best --force --xml --best
  STDOUT "note: healthy: healthy.json holds ring (fastest file); healthy.xml holds ring (fastest file)\n")
tenet_cli_test(batch_best_needs_dir EXIT 2 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --scenarios all-links --best
  STDERR "error: --best: needs --out-dir, the folder the files go to")
# --out-dir: never mixed with an earlier sweep's files, and scenario names never clobber each other.
tenet_cli_test(batch_out_dir_not_empty EXIT 2 ARGS batch -t ${TOPOLOGIES}/mesh-3x3.json --scenarios all-npus
  --baselines none --out-dir batch-xml
  STDERR "error: batch-xml: --out-dir: the folder is not empty (an earlier sweep's files would mix with this one's); give a new or empty folder, or --force to remove its .json, .xml and .csv files first")
set_tests_properties(cli.batch_out_dir_not_empty PROPERTIES FIXTURES_REQUIRED batch_xml)
tenet_cli_test(batch_force_needs_out_dir EXIT 2 ARGS batch -t ${TOPOLOGIES}/mesh-3x3.json --scenarios all-npus --force
  STDERR "error: --force: needs --out-dir, the folder it clears")
tenet_cli_test(batch_clashing_names EXIT 0 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --baselines none --json
  --scenarios ${CMAKE_CURRENT_SOURCE_DIR}/good/clashing-names-scenarios.json --out-dir batch-names --force
  STDOUT "\"file\": \"a_b-3.json\"")
tenet_cli_test(batch_summary_name EXIT 0 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --baselines none --json
  --scenarios ${CMAKE_CURRENT_SOURCE_DIR}/good/clashing-names-scenarios.json --out-dir batch-names-2 --force
  STDOUT "\"file\": \"summary-1.json\"")
tenet_cli_test(batch_merge_row_missing EXIT 2 ARGS batch merge ${BAD}/shard-row-missing
  STDERR "shard-row-missing/summary.json: /scenarios: the row of scenario 4 is missing (shard 0/2 holds 8 of its 9 scenarios)")
tenet_cli_test(compare_groups_bound_line EXIT 0 ARGS compare -t ${TOPOLOGIES}/a100-4x8-ib.json -c allreduce --size 1GiB
  --algorithms ring STDOUT "1 GiB: lower bound 8.055 ms, groups binds; ingress 6.402 ms, cut 5.369 ms (bandwidth 5.369 ms), groups 8.055 ms (4 groups, 800.00 GB/s)")
