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
tenet_cli_test(simulate_xml EXIT 2 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json algo.xml
  STDERR "error: algo.xml: reading MSCCL XML is not supported yet")
tenet_cli_test(simulate_bad_gamma EXIT 2 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json ${BAD}/../good/rfs-allreduce.json
  --gamma -1 STDERR "error: --gamma: the reduction cost must be a finite number of microseconds per byte, >= 0")
