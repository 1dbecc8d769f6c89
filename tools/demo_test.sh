#!/usr/bin/env bash
# `kaaslog demo` end to end, small: every step passes, the crash is a real
# SIGKILL of a child process, and the data dir it leaves verifies clean.

source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/kaaslog_test_lib.sh"

test_the_default_subcommand_runs_a_small_demo() {
  # No subcommand: the demo.
  kaaslog --data_dir=d --partitions=2 --producers=3 --batches=20 \
    --crash_writers=2 --crash_after_acks=15 --segment_bytes=4096
  expect_rc 0
  expect_out '^1\. Created topic kaaslog-demo with 2 partitions'
  expect_out '^2\. Appended 60 batches \(600 records, '
  expect_out '^   Offsets: partition 0: 0\.\.399; partition 1: 0\.\.199\.$'
  expect_out '^3\. Read back 60 batches in '
  expect_out '^4\. Crash: a child process \(pid [0-9]+\) .* killed by signal 9'
  expect_out '^5\. Recovered 2 partitions in '
  expect_out '^6\. Checked [0-9]+ batches in .*: all [0-9]+ acknowledged batches \(60 before the crash, [0-9]+ by the killed child\) are there byte for byte'
  expect_out '^Demo OK\.'
  kaaslog verify d
  expect_rc 0
  expect_out '^kaaslog-demo-0: [0-9]+ segments, .* leader epoch 3: OK$'
  # A second run replaces the demo topic.
  kaaslog demo --data_dir=d --partitions=1 --producers=1 --batches=5 \
    --crash_writers=1 --crash_after_acks=3
  expect_rc 0
  expect_out '^   Offsets: partition 0: 0\.\.49\.$'
  [[ ! -e d/kaaslog-demo/1 ]] || fail "the earlier demo topic was kept"
}

for test in $(declare -F | awk '{print $3}' | grep '^test_'); do
  run_test "${test}"
done
finish
