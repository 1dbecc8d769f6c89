#!/usr/bin/env bash
# `kaaslog append` and `kaaslog read` end to end: one result line per input
# batch, byte-exact reads, and every way the input can be bad.

source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/kaaslog_test_lib.sh"

test_append_then_read_returns_the_batches_byte_for_byte() {
  make_batches --count=5 --producer_id=7 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  expect_out_lines offset=0 offset=2 offset=4 offset=6 offset=8
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'read 5 batches of t-0 from offset 0; next offset 10'
  # What producers sent, with the base offsets the engine assigned and the
  # leader epoch it stamped.
  make_batches --count=5 --producer_id=7 --first_offset=0 --leader_epoch=1 \
    >expected.bin
  cmp out expected.bin || fail "read returned other bytes than appended"
}

test_reads_continue_across_appends_and_segments() {
  mkdir -p d/t
  echo '{"segmentBytes": 1024}' >d/t/.config.json
  make_batches --count=12 --records=2 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  expect_out '^offset=46$'
  [[ "$(ls d/t/0/*.log | wc -l)" -gt 2 ]] || fail "the segments did not roll"
  kaaslog read --data_dir=d --topic=t --offset=10
  expect_rc 0
  expect_err 'read 19 batches of t-0 from offset 10; next offset 48'
}

test_a_corrupt_batch_is_rejected_alone() {
  make_batches --count=3 --corrupt_batch=1 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 1
  [[ "$(wc -l <out)" -eq 3 ]] || fail "expected one line per batch"
  expect_out '^offset=0$'
  expect_out '^error=CORRUPT_MESSAGE crc mismatch: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}$'
  expect_out '^offset=2$'
  [[ "$(sed -n 2p out)" == error=* ]] || fail "the error is not on line 2"
  kaaslog read --data_dir=d --topic=t
  cp out read.log
  kaaslog dump read.log
  expect_rc 0
  [[ "$(count_out '^baseOffset: ')" -eq 2 ]] || fail "expected 2 stored batches"
}

test_an_idempotent_retry_is_reported_as_duplicate() {
  make_batches --count=3 --producer_id=7 --duplicate_batch=1 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  expect_out_lines offset=0 offset=2 "offset=2 duplicate" offset=4
}

test_a_sequence_gap_is_out_of_order() {
  make_batches --count=2 --producer_id=7 >first.bin
  kaaslog append --data_dir=d --topic=t <first.bin
  expect_rc 0
  make_batches --count=1 --producer_id=7 --base_sequence=100 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 1
  expect_out '^error=OUT_OF_ORDER_SEQUENCE_NUMBER .*expected 4, received 100'
}

test_a_truncated_final_batch_is_reported() {
  make_batches --count=3 --truncate_bytes=10 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 1
  expect_out_lines offset=0 offset=2 \
    "$(sed -n 3p out | grep '^error=CORRUPT_MESSAGE truncated batch at input byte 230: ')"
  [[ "$(wc -l <out)" -eq 3 ]] || fail "expected 3 lines"
}

test_a_short_length_prefix_is_reported() {
  make_batches --count=1 >in.bin
  printf 'abcde' >>in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 1
  expect_out '^error=CORRUPT_MESSAGE truncated batch at input byte 115: the input ends after 5 bytes of the 12-byte length prefix'
}

test_an_impossible_length_ends_the_input() {
  make_batches --count=3 --bad_length_batch=1 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 1
  [[ "$(wc -l <out)" -eq 2 ]] || fail "expected 2 lines"
  expect_out '^offset=0$'
  expect_out '^error=MESSAGE_TOO_LARGE batch at input byte 115 announces 2147483659 bytes, more than --max_batch_bytes=67108864; framing is taken for lost, the rest of the input is ignored$'
  # A batchLength below the v2 minimum loses the framing as well.
  printf '\0\0\0\0\0\0\0\0\0\0\0\x0a' >short.bin
  make_batches --count=1 >>short.bin
  kaaslog append --data_dir=d --topic=t <short.bin
  expect_rc 1
  expect_out_lines "$(grep '^error=CORRUPT_MESSAGE at input byte 0: invalid batchLength 10' out)"
}

test_appends_at_a_stale_epoch_are_fenced() {
  make_batches --count=1 >in.bin
  kaaslog append --data_dir=d --topic=t --epoch=3 <in.bin
  expect_rc 0
  kaaslog append --data_dir=d --topic=t --epoch=2 <in.bin
  expect_rc 1
  expect_err 'NOT_LEADER_OR_FOLLOWER'
  # Without --epoch, the partition's current epoch.
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  expect_out '^offset=2$'
}

test_acks_1_appends_too() {
  make_batches --count=2 >in.bin
  kaaslog append --data_dir=d --topic=t --partition=3 --acks=1 <in.bin
  expect_rc 0
  expect_out_lines offset=0 offset=2
  kaaslog read --data_dir=d --topic=t --partition=3
  expect_rc 0
  expect_err 'read 2 batches of t-3'
}

test_read_with_max_bytes_is_one_fetch() {
  make_batches --count=5 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  # The first batch whole even though larger than max_bytes (KIP-74).
  kaaslog read --data_dir=d --topic=t --offset=3 --max_bytes=1
  expect_rc 0
  expect_err 'read 1 batch of t-0 from offset 3; next offset 4'
  [[ "$(wc -c <out)" -eq 115 ]] || fail "expected one 115-byte batch"
}

test_read_committed_reports_aborted_transactions() {
  make_batches --count=2 --producer_id=9 --transactional --end_marker=abort \
    >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  expect_out_lines offset=0 offset=2 offset=4
  kaaslog read --data_dir=d --topic=t --isolation=read_committed
  expect_rc 0
  expect_err '^aborted transaction: producer_id=9 first_offset=0 last_offset=4$'
  [[ "$(grep -c '^aborted' err)" -eq 1 ]] || fail "reported more than once"
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  ! grep -q '^aborted' err || fail "read_uncommitted reports no aborts"
}

test_read_errors() {
  kaaslog read --data_dir=missing --topic=t
  expect_rc 1
  expect_err 'no data dir missing'
  [[ ! -e missing ]] || fail "read created the data dir"
  make_batches --count=1 >in.bin
  kaaslog append --data_dir=d --topic=t <in.bin
  expect_rc 0
  kaaslog read --data_dir=d --topic=t --partition=1
  expect_rc 1
  expect_err 'error=UNKNOWN_TOPIC_OR_PARTITION no partition t-1'
  [[ ! -e d/t/1 ]] || fail "read created the partition"
  kaaslog read --data_dir=d --topic=t --offset=7
  expect_rc 1
  expect_err 'error=OFFSET_OUT_OF_RANGE'
}

for test in $(declare -F | awk '{print $3}' | grep '^test_'); do
  run_test "${test}"
done
finish
