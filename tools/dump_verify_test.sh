#!/usr/bin/env bash
# `kaaslog dump` and `kaaslog verify` end to end, on healthy and damaged data
# dirs: the findings, the exit codes, that verify changes nothing, and that
# verify --repair leaves a data dir the next verify finds clean.

source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/kaaslog_test_lib.sh"

test_verify_finds_a_healthy_data_dir_clean() {
  make_partition d t 0
  make_partition d t 1
  make_partition d u 0
  kaaslog verify d
  expect_rc 0
  expect_out '^t-0: 1 segment, 40 batches \(37760 bytes\), offsets 0\.\.159, leader epoch 1: OK$'
  expect_out '^verify: 3 partitions checked, 0 problems, 0 notes$'
}

# Each batch shows the leader epoch the engine stamped into it (KIP-101).
test_dump_decodes_every_file_of_a_partition() {
  make_partition d
  kaaslog dump d/t/0
  expect_rc 0
  [[ "$(count_out 'isvalid: true$')" -eq 40 ]] || fail "expected 40 batches"
  expect_out '^baseOffset: 4 lastOffset: 7 count: 4 baseSequence: 4 lastSequence: 7 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 1 isTransactional: false isControl: false position: 941 baseTimestamp: [0-9]+ maxTimestamp: [0-9]+ timestampType: CreateTime size: 941 magic: 2 compresscodec: none crc: 0x[0-9a-f]{8} isvalid: true$'
  expect_out '^End: 40 batches, offsets 0\.\.159, 37760 of 37760 bytes framed$'
  expect_out '^  leader epoch: 1$'
  expect_out '^  epoch history: epoch 1 from offset 0$'
  expect_out '^  verified: bytes \[0, 37760\), next offset 160$'
  expect_out '^  producer 7 epoch 0, last timestamp [0-9]+: seq 140\.\.143 at offsets 140\.\.143; '
  expect_out '^  7 valid entries in 56 bytes$'
  expect_no_out '^ *offset: [0-9]+ position: '
  kaaslog dump --indexes d/t/0
  expect_rc 0
  expect_out '^  offset: 20 position: 4705$'
  expect_out '^  timestamp: [0-9]+ offset: 140$'
}

test_dump_decodes_single_files() {
  make_partition d
  kaaslog dump d/t/0/manifest
  expect_rc 0
  expect_out '^  log end offset: 160 \(advisory\)$'
  kaaslog dump d/t/0/recovery-checkpoint
  expect_rc 0
  kaaslog dump d/t/0/00000000000000000160.snapshot
  expect_rc 0
  expect_out 'state of the batches below offset 160'
  kaaslog dump d/t/0/00000001-00000000000000000000.index
  expect_rc 0
  expect_out '^  offset: 20 position: 4705$'
  echo '{"retentionMs": 60000}' >d/t/.config.json
  kaaslog dump d/t/.config.json
  expect_rc 0
  expect_out '"retentionMs": ?"?60000'
}

test_dump_records_prints_keys_values_and_headers() {
  make_batches --count=2 --producer_id=5 --first_offset=0 >batches.log
  kaaslog dump --records batches.log
  expect_rc 0
  expect_out '^\| offset: 1 timestamp: [0-9]+ sequence: 1 key: "key-0-1" value: "value-0-1" headers: \["h"="1"\]$'
  make_batches --count=1 --value_bytes=50 --first_offset=0 >long.log
  kaaslog dump --records --print_limit=5 long.log
  expect_out 'value: "value"\.\.\.\(50 bytes\)'
  make_batches --count=1 --binary_values --first_offset=0 >binary.log
  kaaslog dump --records binary.log
  expect_out 'value: 0x[0-9a-f]{32} '
  make_batches --count=1 --compression=gzip --first_offset=0 >gzip.log
  kaaslog dump --records gzip.log
  expect_rc 0
  expect_out 'compresscodec: gzip'
  expect_out '^\| offset: 1 timestamp: [0-9]+ key: "key-0-1" value: "value-0-1"'
  make_batches --count=1 --compression=gzip --codec_bits_only \
    --first_offset=0 >fake.log
  kaaslog dump --records fake.log
  expect_rc 1  # damage found
  expect_out '^\| records not decoded: .*do not decompress'
  expect_out '^End: .*, 1 with records not decoded$'
}

# Something other than a regular file where the engine keeps one is damage
# (the engine refuses the partition), never silence; the engine's own
# lock file and second fence copy are named as such.
test_dump_names_what_is_not_a_file_and_the_engines_own_files() {
  make_partition d
  "${MAKE_METADATA}" --fences_dir=d --fence=7:3
  [[ -f d/~producer-fences.copy ]] || fail "no second fence copy"
  kaaslog dump d/~producer-fences.copy
  expect_rc 0
  expect_no_out 'not a kaas-storage file'
  expect_out 'producer'
  kaaslog dump d/t/0
  expect_out '^LOCK: d/t/0/leader.lock: '
  rm d/t/0/manifest
  mkdir d/t/0/manifest
  kaaslog dump d/t/0/manifest
  expect_rc 1
  expect_out '^NOT A FILE: d/t/0/manifest is a directory'
  kaaslog dump d/t/0
  expect_rc 1
  expect_out '^NOT A FILE: d/t/0/manifest is a directory'
}

test_dump_shows_transaction_markers() {
  make_batches --count=1 --producer_id=9 --transactional --end_marker=commit \
    --first_offset=0 >txn.log
  kaaslog dump txn.log
  expect_rc 0
  expect_out 'producerId: 9 .*isTransactional: true isControl: false'
  expect_out 'isTransactional: true isControl: true .* endTxnMarker: COMMIT$'
}

test_a_torn_tail_is_found() {
  make_partition d
  truncate -s -7 "$(only_log d/t/0)"
  kaaslog verify d
  expect_rc 1
  expect_out '^  problem: d/t/0/00000001-00000000000000000000.log: recovery: truncates 938 bytes at position 36815: torn batch at position 36815: announces 945 bytes, 938 remain$'
  kaaslog dump d/t/0
  expect_rc 1
  [[ "$(count_out 'isvalid: true$')" -eq 39 ]] || fail "expected 39 batches"
  expect_out '^DAMAGED TAIL: torn batch at position 36815: announces 945 bytes, 938 remain; bytes \[36815, 37753\) \(938 bytes\) are not batches$'
}

test_a_flipped_bit_is_found() {
  make_partition d
  flip_byte "$(only_log d/t/0)" 20000
  kaaslog verify d
  expect_rc 1
  expect_out '^  problem: d/t/0/00000001-00000000000000000000.log: batch at position 19805 \(offset 84\): crc mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\); it lies before where recovery starts verifying \(the recovery checkpoint\), so it is served as it is'
  kaaslog dump d/t/0
  expect_rc 1
  expect_out 'position: 19805 .* isvalid: false computedCrc: 0x[0-9a-f]{8}$'
  expect_out '^End: 40 batches, offsets 0\.\.159, 37760 of 37760 bytes framed, 1 with a CRC mismatch$'
}

test_a_missing_index_is_found() {
  make_partition d
  rm d/t/0/00000001-00000000000000000000.index
  kaaslog verify d
  expect_rc 1
  expect_out '^  problem: d/t/0/00000001-00000000000000000000.index: recovery: rebuilds it from the log \(missing\)$'
  kaaslog dump d/t/0
  expect_rc 1
  expect_out '^MISSING: d/t/0/00000001-00000000000000000000.index'
}

test_a_misplaced_index_entry_is_found() {
  make_partition d
  # Entry 0 now says offset 20 is at position 4721.
  printf '\x71' | dd of=d/t/0/00000001-00000000000000000000.index bs=1 \
    seek=7 conv=notrunc status=none
  kaaslog verify d
  expect_rc 1
  expect_out 'index: entry \(offset 20, position 4721\) does not match the log: that is not where a batch starts'
}

test_a_deposed_leaders_segment_is_found() {
  make_partition d
  make_batches --count=1 >in.bin
  kaaslog append --data_dir=d --topic=t --epoch=2 <in.bin
  expect_rc 0
  # A late write of the epoch-1 leader after epoch 2 took over.
  make_batches --count=1 --first_offset=162 \
    >d/t/0/00000001-00000000000000000162.log
  kaaslog verify d
  expect_rc 1
  expect_out 'problem: d/t/0/00000001-00000000000000000162.log: recovery: sets it aside as 00000001-00000000000000000162.log.quarantined \(115 bytes, never served\): written by a deposed leader \(epoch 1, the log is at epoch 2 there\)'
}

test_damaged_metadata_is_found() {
  make_partition d
  flip_byte d/t/0/manifest 25
  echo '{"retentionMs": "soon"}' >d/t/.config.json
  kaaslog verify d
  expect_rc 1
  expect_out '^  problem: d/t/0/manifest: recovery: sets the corrupt manifest aside as manifest.corrupt and recovers from the log: .*manifest payload checksum mismatch'
  expect_out '^  problem: d/t/.config.json: field retentionMs: expected a 64-bit integer, got "soon"$'
  expect_out "^  problem: d/t/0: the engine refuses to take it over while its topic's config is invalid"
  kaaslog dump d/t/0/manifest
  expect_rc 1
  expect_out '^  UNREADABLE '
}

test_misnamed_and_stray_files_are_reported() {
  make_partition d
  cp "$(only_log d/t/0)" d/t/0/1-0.log
  touch d/t/0/notes.txt
  kaaslog verify d
  expect_rc 1
  expect_out 'problem: d/t/0/1-0.log: not a valid segment file name'
  expect_out 'note: d/t/0/notes.txt: not a kaas-storage file'
}

# Every kind of damage at once, in one data dir.
make_damaged_data_dir() {
  make_partition d t 0
  make_partition d t 1
  make_partition d t 2
  make_partition d t 3
  truncate -s -7 "$(only_log d/t/0)"
  flip_byte "$(only_log d/t/1)" 20000
  rm d/t/2/00000001-00000000000000000000.index
  flip_byte d/t/3/manifest 25
}

test_verify_changes_nothing() {
  make_damaged_data_dir
  fingerprint d >before.txt
  kaaslog verify d
  expect_rc 1
  expect_out '^verify: 4 partitions checked, 5 problems'
  fingerprint d >after.txt
  cmp before.txt after.txt || fail "verify changed the data dir"
  kaaslog dump d
  expect_rc 1
  fingerprint d >after.txt
  cmp before.txt after.txt || fail "dump changed the data dir"
}

# --repair does what opening does and nothing more: the damage recovery
# does not see (a flipped bit below the recovery checkpoint) stays, and is
# still reported, rather than cost the acknowledged batches after it.
test_repair_does_what_opening_does_and_nothing_more() {
  make_damaged_data_dir
  kaaslog verify --repair d
  expect_rc 1
  expect_out '^repair t-0: recovery took .* truncated 938 bytes'
  expect_out '^repair t-1: recovery took .*verified 0 bytes \(from the recovery checkpoint\), truncated 0 bytes, deleted 0 segments'
  expect_out '^repair t-3: .*'
  expect_out '^verify: 4 partitions checked, 1 problem'
  kaaslog verify d
  expect_rc 1
  expect_out '^t-0: 1 segment, 39 batches.*: OK$'
  expect_out '^t-1: 1 segment, 40 batches.*: 1 problem$'
  expect_out '^t-2: 1 segment, 40 batches.*: OK$'
  expect_out '^t-3: 1 segment, 40 batches.*: OK$'
  # Every partition serves reads; t-1's damaged batch as it is.
  kaaslog read --data_dir=d --topic=t --partition=1
  expect_rc 0
  expect_err 'read 40 batches of t-1 from offset 0; next offset 160'
  kaaslog read --data_dir=d --topic=t --partition=0
  expect_rc 0
  expect_err 'read 39 batches of t-0 from offset 0; next offset 156'
}

test_repair_quarantines_a_deposed_leaders_segment() {
  make_partition d
  make_batches --count=1 >in.bin
  kaaslog append --data_dir=d --topic=t --epoch=2 <in.bin
  expect_rc 0
  make_batches --count=1 --first_offset=162 \
    >d/t/0/00000001-00000000000000000162.log
  kaaslog verify --repair d
  expect_rc 0
  expect_out 'quarantined 00000001-00000000000000000162.log'
  [[ -e d/t/0/00000001-00000000000000000162.log.quarantined ]] ||
    fail "not quarantined"
  kaaslog verify d
  expect_rc 0
  expect_out 'note: d/t/0/00000001-00000000000000000162.log.quarantined: set aside'
}

test_repair_rebuilds_closed_segments_indexes() {
  mkdir -p d/t
  echo '{"segmentBytes": 8192}' >d/t/.config.json
  make_partition d
  local closed=d/t/0/00000001-00000000000000000000.index
  [[ -s "${closed}" && "$(ls d/t/0/*.log | wc -l)" -gt 1 ]] ||
    fail "expected a closed segment with index entries"
  rm "${closed}"
  kaaslog verify d
  expect_rc 1
  expect_out 'index: missing \(rebuilt from the log when the segment is first read\)'
  kaaslog verify --repair d
  expect_rc 0
  expect_out '^repair t-0: indexes of segment 00000001-00000000000000000000 rebuilt from the log$'
  [[ -s "${closed}" ]] || fail "the index was not rebuilt"
}

# A closed segment cut short below the recovery checkpoint: its time index is
# well-formed but names offsets the log no longer holds. Repair rebuilds it
# for real (it used to report "rebuilt" and write nothing); the damage to the
# log itself stays reported (recovery trusts the checkpoint).
test_repair_rebuilds_an_index_that_disagrees_with_the_log() {
  mkdir -p d/t
  echo '{"segmentBytes": 1024}' >d/t/.config.json
  make_batches --count=20 >b.bin
  kaaslog append --data_dir=d --topic=t <b.bin
  expect_rc 0
  local closed=d/t/0/00000001-00000000000000000016
  truncate -s 700 "${closed}.log"
  kaaslog verify d
  expect_out "problem: ${closed}\.timeindex: "
  local before
  before="$(sha256sum <"${closed}.timeindex")"
  kaaslog verify --repair d
  expect_out '^repair t-0: indexes of segment 00000001-00000000000000000016 rebuilt from the log$'
  [[ "$(sha256sum <"${closed}.timeindex")" != "${before}" ]] ||
    fail "the time index was not rewritten"
  kaaslog verify d
  expect_no_out 'timeindex'
  expect_out "problem: ${closed}\.log: torn batch"
}

for test in $(declare -F | awk '{print $3}' | grep '^test_'); do
  run_test "${test}"
done
finish
