# SPDX-License-Identifier: MIT
# MSCCL++ execution plans: tenet synth, baseline and batch write .plan.json files; tenet verify
# executes them; tenet simulate times them. plans/ under tests/mscclpp/data holds the SPEC's example.

set(PLANS "${PROJECT_SOURCE_DIR}/tests/mscclpp/data")

function(tenet_plan_pair name)
  set_tests_properties("cli.${name}_write" PROPERTIES FIXTURES_SETUP "plan_${name}")
  set_tests_properties("cli.${name}_verify" PROPERTIES FIXTURES_REQUIRED "plan_${name}")
endfunction()

tenet_cli_test(plan_torus_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allreduce --chunks-per-npu 2
  -o torus-allreduce.plan.json STDOUT "wrote                torus-allreduce.plan.json")
tenet_cli_test(plan_torus_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/torus-4x4.json torus-allreduce.plan.json
  STDOUT "torus-allreduce.plan.json: verified: MSCCL++ allreduce (Simple, out-of-place) on 16 ranks")
tenet_plan_pair(plan_torus)

tenet_cli_test(plan_pod_write EXIT 0 ARGS baseline -t ${TOPOLOGIES}/pod-2x4-handwritten.json -a ring -c allgather
  --protocol ll --in-place -o pod-ag.plan.json STDOUT "wrote")
tenet_cli_test(plan_pod_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/pod-2x4-handwritten.json pod-ag.plan.json --json
  STDOUT "\"protocol\": \"LL\"")
tenet_plan_pair(plan_pod)

tenet_cli_test(plan_simulate_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --chunks-per-npu 1
  --size 1MiB -o mesh-ag.plan.json STDOUT "time                 11.32 us")
tenet_cli_test(plan_simulate_verify EXIT 0 ARGS simulate -t ${TOPOLOGIES}/mesh-3x3.json mesh-ag.plan.json --size 1MiB
  STDOUT "time                              11.32 us")
tenet_plan_pair(plan_simulate)

# Point-to-point finalists are all written and timed as plans: the plan of a schedule planned at
# 15.69 us ran 24.69, that of one planned at 16.07 runs 18.23.
tenet_cli_test(plan_finalists_timed EXIT 0 ARGS synth -t ${TOPOLOGIES}/mesh-6x6.json -c allgather --size 1MiB
  -o mesh66-ag.plan.json STDOUT "time                 18.23 us")

# A sub-collective's plan is timed with its ranks on the members' NPUs (rank r is member r); timing
# it as a file read alone, rank r on NPU r, refused it for its rank count.
tenet_cli_test(plan_members_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allreduce --members 8-15
  -o members.plan.json STDOUT "time                 1.177 ms")
# --members says where such a plan's ranks run (the plan names no NPUs).
tenet_cli_test(plan_members_verify EXIT 0 ARGS simulate -t ${TOPOLOGIES}/torus-4x4.json members.plan.json
  --members 8-15 STDOUT "time                              1.177 ms")
tenet_plan_pair(plan_members)

tenet_cli_test(plan_example_verify EXIT 2 ARGS verify -t ${TOPOLOGIES}/mesh-3x3.json ${PLANS}/ring_allgather_3.plan.json
  STDERR "error: ${PLANS}/ring_allgather_3.plan.json: /gpus: the plan has 3 ranks but topology 'mesh-3x3' has 9 NPUs; rank r runs on NPU r")
tenet_cli_test(plan_in_place_rs EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c reducescatter --in-place -o rs.plan.json
  STDERR "error: --output: 'rs.plan.json': the schedule cannot be written as an MSCCL++ plan: --in-place: in-place reduce-scatter plans are not matched consistently" NO_FILE ${SCRATCH}/rs.plan.json)
tenet_cli_test(plan_bad_protocol EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allgather --protocol LL128 -o x.plan.json
  STDERR "error: --protocol: unknown MSCCL++ protocol 'LL128'; expected simple or ll" NO_FILE ${SCRATCH}/x.plan.json)
tenet_cli_test(plan_threadblock_limit EXIT 2 ARGS synth -t ${TOPOLOGIES}/torus-4x4.json -c allgather --max-threadblocks 2
  -o tb.plan.json STDERR "error: --output: 'tb.plan.json': the schedule cannot be written as an MSCCL++ plan: --max-threadblocks: rank"
  NO_FILE ${SCRATCH}/tb.plan.json)
# At one chunk per NPU fewer chunks cannot help (it said so all the same): another algorithm can.
tenet_cli_test(plan_threadblock_limit_one_chunk EXIT 2 ARGS baseline -t ${TOPOLOGIES}/torus-4x4.json -a direct
  -c allgather --max-threadblocks 2 -o tb-direct.plan.json
  STDERR "2 fit; raise --max-threadblocks to the GPU's SM count, or use an algorithm whose ranks have fewer transfers and peers (tenet compare -o writes the fastest one that fits)"
  NO_FILE ${SCRATCH}/tb-direct.plan.json)
tenet_cli_test(plan_batch_needs_dir EXIT 2 ARGS batch -t ${TOPOLOGIES}/torus-4x4.json --scenarios all-npus --mscclpp
  STDERR "error: --mscclpp: needs --out-dir, the folder the .plan.json files go to")
tenet_cli_test(plan_batch EXIT 0 ARGS batch -t ${TOPOLOGIES}/mesh-3x3.json -c allgather --chunks-per-npu 1 --baselines none
  --scenarios random-links:1:2:5 --out-dir plan-batch --force --mscclpp)
set_tests_properties("cli.plan_batch" PROPERTIES FIXTURES_SETUP "plan_batch")

# A switched cluster's all-reduce: its fastest schedule needs more threadblocks than a rank runs,
# so the synthesis ranks its candidates by the plans it can write (it stopped at that limit).
tenet_cli_test(plan_fitted_write EXIT 0 ARGS synth -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json -c allreduce --size 64MiB
  -o fitted.plan.json STDOUT "time                 413.5 us (its MSCCL++ plan as the runtime runs it)")
tenet_cli_test(plan_fitted_verify EXIT 0 ARGS verify -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json fitted.plan.json
  STDOUT "fitted.plan.json: verified: MSCCL++ allreduce (Simple, out-of-place) on 16 ranks")
tenet_plan_pair(plan_fitted)
# batch --mscclpp fits each scenario's synthesis the same way: the healthy network's plan is the one
# synth writes (before, every scenario's fastest schedule was refused as a plan), and its row says
# what the plan takes.
tenet_cli_test(plan_batch_fitted_write EXIT 0 ARGS batch -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json -c allreduce
  --size 64MiB --baselines none --scenarios random-links:1:1 --out-dir plan-fitted --force --mscclpp --json
  STDOUT "\"plan_time_us\": 413.4")
tenet_cli_test(plan_batch_fitted_verify EXIT 0 ARGS simulate -t ${TOPOLOGIES}/ring-fc-switch-2x4x2.json
  plan-fitted/healthy.plan.json STDOUT "time                               413.5 us")
tenet_plan_pair(plan_batch_fitted)
