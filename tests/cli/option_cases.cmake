# SPDX-License-Identifier: MIT
# Option values refused before any work, each with its exact message.

set(T4 ${TOPOLOGIES}/torus-4x4.json)
tenet_cli_test(compare_algorithms_twice EXIT 2 ARGS compare -t ${T4} --algorithms ring,swing,ring
  STDERR "error: --algorithms: 'ring,swing,ring' lists algorithm ring twice")
tenet_cli_test(compare_algorithms_none EXIT 2 ARGS compare -t ${T4} --algorithms ,
  STDERR "error: --algorithms: ',' names no algorithm; expected all or a comma-separated list of synth, ring")
tenet_cli_test(compare_algorithms_empty EXIT 2 EMPTY_LAST_ARG ARGS compare -t ${T4} --algorithms
  STDERR "error: --algorithms: '' names no algorithm")
tenet_cli_test(batch_baselines_twice EXIT 2 ARGS batch -t ${T4} --scenarios all-npus --baselines ring,ring
  STDERR "error: --baselines: 'ring,ring' lists baseline ring twice")
tenet_cli_test(compare_size_and_sizes EXIT 2 ARGS compare -t ${T4} --size 1MiB --sizes 1KiB:1MiB
  STDERR "excludes --size")
tenet_cli_test(compare_size_named EXIT 2 ARGS compare -t ${T4} --size foo --algorithms ring
  STDERR "error: --size: 'foo' is not a size")
tenet_cli_test(compare_sizes_list EXIT 0 ARGS compare -t ${T4} --sizes 1MiB,4KiB,64KiB:256KiB --algorithms ring
  STDOUT "128 KiB: lower bound 2 us")
tenet_cli_test(compare_sizes_twice EXIT 2 ARGS compare -t ${T4} --sizes 1MiB,1024KiB --algorithms ring
  STDERR "error: --sizes: '1MiB,1024KiB' holds the size 1 MiB twice")
tenet_cli_test(compare_sizes_empty_item EXIT 2 ARGS compare -t ${T4} --sizes 1MiB,,4KiB --algorithms ring
  STDERR "error: --sizes: '1MiB,,4KiB' has an empty item; separate sizes by one comma")
tenet_cli_test(compare_sizes_too_many EXIT 2 ARGS compare -t ${T4} --sizes 1B:1PiB,3B:3TiB --algorithms ring
  STDERR "error: --sizes: '1B:1PiB,3B:3TiB' holds more than 64 sizes")
tenet_cli_test(compare_plot_png EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot p.png NO_FILE ${SCRATCH}/p.png
  STDERR "error: --plot: 'p.png': tenet draws plots as SVG only (name it .svg)")
tenet_cli_test(compare_plot_is_heatmap EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot same.svg --heatmap ./same.svg
  --heatmap-algorithm ring NO_FILE ${SCRATCH}/same.svg
  STDERR "error: --heatmap: './same.svg' is also the --plot file; give each its own name")
tenet_cli_test(compare_plot_folder_missing EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot nowhere/p.svg
  STDERR "error: --plot: 'nowhere/p.svg': the folder nowhere does not exist")
tenet_cli_test(compare_plot_upper_case EXIT 0 ARGS compare -t ${T4} --algorithms ring --plot upper.SVG
  STDOUT "wrote upper.SVG")

tenet_cli_test(synth_seed_negative EXIT 2 ARGS synth -t ${T4} --seed -1 STDERR "error: --seed: must be 0 or more (got -1)")
tenet_cli_test(batch_seed_negative EXIT 2 ARGS batch -t ${T4} --scenarios all-npus --seed -1
  STDERR "error: --seed: must be 0 or more (got -1)")
tenet_cli_test(synth_unwind_degree_too_large EXIT 2 ARGS synth -t ${TOPOLOGIES}/switch-8.json --switches unwind
  --unwind-degree 100
  STDERR "error: --unwind-degree: 100 is more links than an NPU can get: the largest switch group has 8 NPUs, so the degree goes up to 7")
tenet_cli_test(unwind_degree_too_large EXIT 2 ARGS topo unwind ${TOPOLOGIES}/switch-8.json --degree 8
  STDERR "error: --degree: 8 is more links than an NPU can get: the largest switch group has 8 NPUs, so the degree goes up to 7")
tenet_cli_test(batch_scenario_mistakes EXIT 2 ARGS batch -t ${T4} --scenarios ${BAD}/scenarios-mistakes.json
  STDERR "scenarios-mistakes.json: /scenarios/0/failed/links/0: there is no link between 0 and 5 in the topology
error: ${BAD}/scenarios-mistakes.json: /scenarios/1/failed/npus/1: NPU 3 is listed twice
error: ${BAD}/scenarios-mistakes.json: /scenarios/1/failed/links/1: the link between 1 and 0 is listed twice
error: ${BAD}/scenarios-mistakes.json: /scenarios/1/members/2: NPU 1 is listed twice")
