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
tenet_cli_test(compare_bad_algorithm EXIT 2 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --algorithms swign
  STDERR "unknown algorithm 'swign' (did you mean 'swing'?)")
tenet_cli_test(compare_plot EXIT 0 ARGS compare -t ${TOPOLOGIES}/torus-4x4.json --sizes 1KiB:1MiB --plot plot.svg
  --heatmap heat.svg STDOUT "wrote plot.svg")
