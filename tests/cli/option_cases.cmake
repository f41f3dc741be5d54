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
tenet_cli_test(compare_plot_png EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot p.png NO_FILE ${SCRATCH}/p.png
  STDERR "error: --plot: 'p.png': tenet draws plots as SVG only (name it .svg)")
tenet_cli_test(compare_plot_is_heatmap EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot same.svg --heatmap ./same.svg
  --heatmap-algorithm ring NO_FILE ${SCRATCH}/same.svg
  STDERR "error: --heatmap: './same.svg' is also the --plot file; give each its own name")
tenet_cli_test(compare_plot_folder_missing EXIT 2 ARGS compare -t ${T4} --algorithms ring --plot nowhere/p.svg
  STDERR "error: --plot: 'nowhere/p.svg': the folder nowhere does not exist")
tenet_cli_test(compare_plot_upper_case EXIT 0 ARGS compare -t ${T4} --algorithms ring --plot upper.SVG
  STDOUT "wrote upper.SVG")
