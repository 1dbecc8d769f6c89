#!/usr/bin/env bash
# What a hostile or unlucky data dir, or a second writer, does to `kaaslog`
# (a black-box trial of the engine): every finding of that trial is a test
# here, run against the real binary and real processes. Nothing acknowledged
# is lost, nothing outside the data dir is written, nothing hangs.

source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/kaaslog_test_lib.sh"

# Every command of a test that could hang (a FIFO) runs under this bound: a
# hang is a failure, not a stuck test.
readonly HANG_SECONDS=60

# Runs kaaslog with a deadline; RC 124 means it hung.
kaaslog_bounded() {
  timeout "${HANG_SECONDS}" "${KAASLOG}" "$@" >out 2>err
  RC=$?
  [[ "${RC}" -ne 124 ]] || fail "kaaslog $1 hung"
  ! grep -Eq 'Sanitizer|runtime error:' err || fail "sanitizer report"
}

# A partition of several segments: 40 batches in 8 KiB segments.
make_segmented_partition() {
  mkdir -p "$1/t"
  echo '{"segmentBytes": 8192}' >"$1/t/.config.json"
  make_partition "$1"
  [[ "$(ls "$1"/t/0/*.log | wc -l)" -ge 4 ]] || fail "expected 4+ segments"
}

# ---- Finding 1: writes never follow a symbolic link -------------------------

test_writes_never_follow_a_symbolic_link() {
  make_partition d
  make_batches --count=1 >one.bin
  echo precious >outside
  local log
  log="$(only_log d/t/0)"
  mv "${log}" saved.log
  ln -s "${PWD}/outside" "${log}"
  kaaslog verify --repair d
  expect_rc 1
  expect_out 'is a symbolic link, not a regular file'
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_rc 1
  expect_err 'error=KAFKA_STORAGE_ERROR .*symbolic link'
  kaaslog read --data_dir=d --topic=t
  expect_rc 1
  [[ "$(cat outside)" == precious ]] || fail "the link's target was written"
  # An index file as a link: a plain read used to overwrite its target.
  rm "${log}"
  mv saved.log "${log}"
  local index="${log%.log}.index"
  rm "${index}"
  ln -s "${PWD}/outside" "${index}"
  kaaslog read --data_dir=d --topic=t
  expect_rc 1
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_rc 1
  [[ "$(cat outside)" == precious ]] || fail "the link's target was written"
}

# A segment with a second hard link may be shared with a file outside the
# data dir: a leader's open refuses to write it, and verify predicts that
# (it used to predict a truncation the open never made).
test_a_hard_linked_segment_is_refused_and_verify_says_so() {
  make_partition d
  make_batches --count=1 >one.bin
  local log
  log="$(only_log d/t/0)"
  printf 'torn' >>"${log}"
  ln "${log}" outside
  kaaslog verify d
  expect_rc 1
  expect_out 'recovery: .*refuses to open it for writing: it has 2 hard links'
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_rc 1
  expect_err '2 hard links'
  [[ "$(tail -c 4 outside)" == torn ]] || fail "the linked file was changed"
}

# ---- Finding 2: one writer per partition ------------------------------------

test_a_second_writer_is_refused_while_one_leads() {
  make_batches --count=1 >one.bin
  mkfifo in to_test
  # The first writer leads (its take-over precedes reading stdin) and waits
  # for more input; its result lines come back through a FIFO, so the test
  # waits on its acknowledgement, not on time.
  "${KAASLOG}" append --data_dir=d --topic=t <in >to_test 2>first.err &
  local first=$!
  exec 3>in 4<to_test
  cat one.bin >&3
  local line
  read -r line <&4
  [[ "${line}" == offset=0 ]] || fail "the first writer said '${line}'"
  # Same epoch, and a higher one: both refused, nothing acknowledged.
  for epoch in -1 2; do
    kaaslog append --data_dir=d --topic=t --epoch="${epoch}" <one.bin
    expect_rc 1
    expect_err 'error=NOT_LEADER_OR_FOLLOWER .*led by another engine'
    expect_no_out '^offset='
  done
  exec 3>&-
  wait "${first}" || fail "the first writer failed: $(cat first.err)"
  exec 4<&-
  # Released: the second writer leads and continues the log.
  kaaslog append --data_dir=d --topic=t --epoch=2 <one.bin
  expect_rc 0
  expect_out_lines offset=2
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'read 2 batches of t-0 from offset 0; next offset 4'
}

# A writer's lock file removed behind its back: the second writer is still
# refused (the first one's active segment is locked), and nothing the first
# acknowledged is overwritten.
test_a_second_writer_is_refused_when_the_lock_file_was_removed() {
  make_batches --count=1 >one.bin
  make_batches --count=1 --value_bytes=77 >other.bin
  mkfifo in to_test
  "${KAASLOG}" append --data_dir=d --topic=t <in >to_test 2>first.err &
  local first=$!
  exec 3>in 4<to_test
  cat one.bin >&3
  local line
  read -r line <&4
  [[ "${line}" == offset=0 ]] || fail "the first writer said '${line}'"
  rm d/t/0/leader.lock
  for epoch in -1 2; do
    kaaslog append --data_dir=d --topic=t --epoch="${epoch}" <other.bin
    expect_rc 1
    expect_err 'error=NOT_LEADER_OR_FOLLOWER .*written by another engine'
    expect_no_out '^offset='
  done
  # The first writer still leads and acknowledges.
  cat one.bin >&3
  read -r line <&4
  [[ "${line}" == offset=2 ]] || fail "the first writer said '${line}'"
  exec 3>&-
  wait "${first}" || fail "the first writer failed: $(cat first.err)"
  exec 4<&-
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'read 2 batches of t-0 from offset 0; next offset 4'
  # From the magic byte on (base offset and leader epoch are the engine's).
  cmp <(tail -c +17 out | head -c $(($(stat -c %s one.bin) - 16))) \
    <(tail -c +17 one.bin) || fail "an acknowledged batch was overwritten"
}

# ---- Findings 3 and 4: stray segment files cost nothing ---------------------

# A closed segment emptied by damage: once repair removed it, a read that
# crosses the offsets it held says they are not in the log.
test_a_read_across_offsets_lost_to_damage_says_so() {
  make_segmented_partition d
  local second
  second="$(ls d/t/0/*.log | sed -n 2p)"
  local first_base=$((10#$(basename "${second}" .log | cut -d- -f2)))
  : >"${second}"
  kaaslog verify --repair d
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err "offsets ${first_base}\.\.[0-9]+ are not in the log \(skipped\)"
}

test_stray_segment_files_cost_nothing() {
  make_segmented_partition d
  kaaslog read --data_dir=d --topic=t
  cp out before.bin
  local second
  second="$(ls d/t/0/*.log | sed -n 2p)"
  second="$(basename "${second}" .log)"
  local second_base=$((10#${second#*-}))
  # Inside the first segment, at epoch 1 and at an epoch nobody knows; and
  # one past the end of the log.
  touch "d/t/0/00000001-$(printf '%020d' $((second_base - 1))).log"
  touch "d/t/0/00000009-$(printf '%020d' $((second_base - 2))).log"
  touch "d/t/0/00000009-$(printf '%020d' 1000).log"
  kaaslog verify d
  expect_rc 1
  [[ "$(count_out 'recovery: deletes it')" -eq 3 ]] || fail "3 strays expected"
  expect_no_out 'sets it aside'
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  cmp out before.bin || fail "reads skip or change offsets"
  kaaslog verify --repair d
  expect_rc 0
  expect_out '^t-0: .*offsets 0\.\.159, leader epoch 1: OK$'
  kaaslog read --data_dir=d --topic=t
  cmp out before.bin || fail "the repair lost data"
  make_batches --count=1 >one.bin
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_out_lines offset=160
}

# ---- Findings 5 and 6: metadata that disagrees with the log -----------------

# A checkpoint that claims more than the log holds is ignored: the high
# watermark stays at the log's end and an append lands there.
test_a_checkpoint_past_the_log_end_is_not_obeyed() {
  make_partition d
  "${MAKE_METADATA}" --checkpoint=d/t/0/recovery-checkpoint --next_offset=1000
  kaaslog verify d
  expect_rc 1
  expect_out 'recovery-checkpoint: recovery: ignores it .* it does not agree with the log'
  make_batches --count=1 >one.bin
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_rc 0
  expect_out_lines offset=160
  kaaslog verify --repair d
  expect_rc 0
  kaaslog read --data_dir=d --topic=t
  expect_err 'read 41 batches of t-0 from offset 0; next offset 162'
}

test_an_impossible_epoch_history_is_not_used() {
  make_partition d
  "${MAKE_METADATA}" --manifest=d/t/0/manifest --epochs=5@0,2@10
  kaaslog verify d
  expect_rc 1
  expect_out 'manifest: recovery: sets the corrupt manifest aside .*not ascending'
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'read 40 batches'
  "${MAKE_METADATA}" --manifest=d/t/0/manifest --log_start=-5
  kaaslog verify d
  expect_out 'manifest: recovery: sets the corrupt manifest aside .*negative offsets'
}

# ---- Finding 7: losing a fence fails safe -----------------------------------

test_a_corrupt_fence_copy_costs_no_fence_and_both_refuse_to_start() {
  make_partition d
  make_batches --count=1 >one.bin
  "${MAKE_METADATA}" --fences_dir=d --fence=7:3
  echo garbage >d/~producer-fences
  kaaslog verify d
  expect_out 'set aside at start-up, and rewritten from the other copy'
  # The fence survived in the other copy: producer 7 at epoch 0 is fenced.
  make_batches --count=1 --producer_id=7 --producer_epoch=0 \
    --base_sequence=160 >zombie.bin
  kaaslog append --data_dir=d --topic=t <zombie.bin
  expect_rc 1
  expect_out 'error=INVALID_PRODUCER_EPOCH'
  echo garbage >d/~producer-fences
  echo garbage >d/~producer-fences.copy
  kaaslog append --data_dir=d --topic=t <one.bin
  expect_rc 1
  expect_err 'corrupt in every copy.*refusing to start'
  kaaslog verify d
  expect_rc 1
  expect_out 'corrupt in every copy'
}

# ---- Finding 8: nothing hangs on a FIFO --------------------------------------

test_a_fifo_in_place_of_any_file_hangs_nothing() {
  make_partition d
  "${MAKE_METADATA}" --fences_dir=d --fence=1:0
  make_batches --count=1 >one.bin
  mkdir -p d/t
  echo '{}' >d/t/.config.json
  local log
  log="$(only_log d/t/0)"
  local index="${log%.log}.index"
  for file in "${log}" "${index}" d/t/0/manifest d/t/0/recovery-checkpoint \
    d/t/0/00000000000000000160.snapshot d/t/.config.json d/~producer-fences; do
    cp "${file}" saved
    rm "${file}"
    mkfifo "${file}"
    kaaslog_bounded dump d
    kaaslog_bounded verify d
    [[ "${RC}" -ne 0 ]] || fail "verify finds no problem with ${file} a FIFO"
    kaaslog_bounded read --data_dir=d --topic=t
    kaaslog_bounded append --data_dir=d --topic=t <one.bin
    [[ "${RC}" -ne 0 ]] || fail "append worked with ${file} a FIFO"
    rm "${file}"
    mv saved "${file}"
  done
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'read 40 batches'
}

# ---- Finding 9: memory follows the bytes read --------------------------------

test_a_huge_announced_length_allocates_only_what_arrives() {
  make_batches --count=1 --value_bytes=400 >one.bin
  # 391 bytes whose batchLength claims 1.5 GB.
  head -c 391 one.bin >claim.bin
  printf '\x59\x68\x2f\x00' | dd of=claim.bin bs=1 seek=8 conv=notrunc \
    status=none
  if [[ -n "${KAAS_SANITIZER:-}" ]]; then
    # Sanitizers reserve terabytes of address space: no ulimit -v there.
    kaaslog append --data_dir=d --topic=t --max_batch_bytes=2000000000 \
      <claim.bin
  else
    (
      ulimit -v 400000  # 400 MB: far below the claim
      "${KAASLOG}" append --data_dir=d --topic=t \
        --max_batch_bytes=2000000000 <claim.bin >out 2>err
      echo $? >rc
    )
    RC="$(cat rc)"
  fi
  expect_rc 1
  expect_out '^error=CORRUPT_MESSAGE truncated batch at input byte 0: batchLength 1500000000 announces 1500000012 bytes, the input ends after 391$'
}

# ---- Finding 11: reading writes nothing and keeps what it printed ------------

test_reading_changes_nothing_even_a_damaged_partition() {
  make_partition d
  truncate -s -7 "$(only_log d/t/0)"
  echo 'x' >"d/t/0/manifest.0123456789abcdef.tmp"
  fingerprint d >before.txt
  kaaslog read --data_dir=d --topic=t
  expect_rc 0
  expect_err 'recovery .*truncates 938 bytes .*nothing was changed'
  expect_err 'read 39 batches'
  fingerprint d >after.txt
  cmp before.txt after.txt || fail "read changed the data dir"
}

test_a_failing_fetch_keeps_what_was_read() {
  make_segmented_partition d
  # The batch framing in the second segment is garbage (a batchLength far
  # past the file), below the recovery checkpoint: reads get there and fail.
  local second
  second="$(ls d/t/0/*.log | sed -n 2p)"
  printf '\x7f\xff\xff\xff' | dd of="${second}" bs=1 seek=8 conv=notrunc \
    status=none
  kaaslog read --data_dir=d --topic=t
  expect_rc 1
  expect_err 'then the next fetch failed'
  local first_log
  first_log="$(ls d/t/0/*.log | sed -n 1p)"
  [[ "$(stat -c %s out)" -eq "$(stat -c %s "${first_log}")" ]] ||
    fail "the batches read before the failure were not all written"
}

# ---- Findings 12 and 13: typed errors, int32 epochs --------------------------

test_errors_are_typed_and_epochs_are_int32() {
  make_batches --count=1 >one.bin
  echo a file >not_a_dir
  # Every subcommand prints engine errors by their Kafka name.
  kaaslog append --data_dir=not_a_dir --topic=t <one.bin
  expect_rc 1
  expect_err 'error=INVALID_CONFIG '
  kaaslog read --data_dir=not_a_dir --topic=t
  expect_rc 1
  expect_err 'error=INVALID_CONFIG '
  kaaslog verify not_a_dir
  expect_rc 1
  expect_err 'not_a_dir is not a directory'
  kaaslog verify no_such_dir
  expect_rc 1
  expect_err 'no_such_dir does not exist'
  for epoch in -5 2147483648 4294967295; do
    kaaslog append --data_dir=d --topic=t --epoch="${epoch}" <one.bin
    expect_rc 2
    expect_err "--epoch=${epoch} is no Kafka leader epoch"
  done
  kaaslog append --data_dir=d --topic=t --epoch=2147483647 <one.bin
  expect_rc 0
}

for test in $(declare -F | awk '{print $3}' | grep '^test_'); do
  run_test "${test}"
done
finish
