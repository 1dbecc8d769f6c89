# Shared helpers of the end-to-end tests of `kaaslog` (sourced by the
# *_test.sh files). Each test is a shell function run in a subshell by
# run_test; an assertion that fails prints why and exits that subshell.
# The last line is "N passed, M failed", and the exit status is non-zero if
# any test failed.

set -uo pipefail

readonly RUNFILES="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-kaas_storage}"
readonly KAASLOG="${RUNFILES}/tools/kaaslog"
readonly MAKE_BATCHES="${RUNFILES}/tools/make_batches"
readonly MAKE_METADATA="${RUNFILES}/tools/make_metadata"
# See kaaslog_tsan.supp (children of kaaslog inherit it too).
export TSAN_OPTIONS="${TSAN_OPTIONS:+${TSAN_OPTIONS}:}suppressions=${RUNFILES}/tools/kaaslog_tsan.supp"
readonly SCRATCH_ROOT="$(mktemp -d "${TEST_TMPDIR:-/tmp}/kaaslog_test.XXXXXX")"
# The time, taken once, as the batches' timestamp: separate make_batches
# runs make identical batches, and current timestamps keep the engine from
# rolling segments by age.
readonly NOW_MS="$(($(date +%s) * 1000))"

passed=0
failed=0

# run_test NAME: runs the function NAME in a subshell, in a fresh $SCRATCH.
run_test() {
  local name="$1"
  echo "=== RUN ${name}"
  if (SCRATCH="${SCRATCH_ROOT}/${name}" && mkdir -p "${SCRATCH}" &&
      cd "${SCRATCH}" && "${name}"); then
    echo "--- PASS ${name}"
    passed=$((passed + 1))
  else
    echo "--- FAIL ${name}"
    failed=$((failed + 1))
  fi
}

finish() {
  echo "${passed} passed, ${failed} failed"
  [[ "${failed}" -eq 0 ]]
}

fail() {
  echo "FAILED: $*" >&2
  echo "--- exit status: ${RC:-?}; stdout:" >&2
  cat out 2>/dev/null | head -c 4000 >&2
  echo "--- stderr:" >&2
  cat err 2>/dev/null | head -c 4000 >&2
  exit 1
}

# kaaslog ARGS...: runs the binary with stdout in ./out, stderr in ./err and
# the exit status in $RC. Stdin is inherited (redirect it at the call).
kaaslog() {
  "${KAASLOG}" "$@" >out 2>err
  RC=$?
  # Under --config=asan/ubsan/tsan a report may come with the exit status a
  # test expects (1): never let it pass unseen.
  ! grep -Eq 'Sanitizer|runtime error:' err || fail "sanitizer report"
}

make_batches() {
  "${MAKE_BATCHES}" --timestamp="${NOW_MS}" "$@"
}

expect_rc() {
  [[ "${RC}" -eq "$1" ]] || fail "expected exit status $1, got ${RC}"
}

# expect_out REGEX / expect_err REGEX: some line of ./out (./err) matches.
expect_out() { grep -Eq -- "$1" out || fail "stdout has no line matching /$1/"; }
expect_err() { grep -Eq -- "$1" err || fail "stderr has no line matching /$1/"; }
expect_no_out() { ! grep -Eq -- "$1" out || fail "stdout matches /$1/"; }

# expect_out_lines LINE...: ./out is exactly these lines.
expect_out_lines() {
  local expected
  expected="$(printf '%s\n' "$@")"
  [[ "$(cat out)" == "${expected}" ]] ||
    fail "stdout is not exactly:"$'\n'"${expected}"
}

# count_out REGEX: how many lines of ./out match.
count_out() { grep -Ec -- "$1" out || true; }

# A partition with 40 batches of 4 records of 200 bytes (so that its indexes
# have entries): make_partition DATA_DIR [TOPIC] [PARTITION].
make_partition() {
  make_batches --count=40 --records=4 --value_bytes=200 --producer_id=7 \
    >partition.bin
  kaaslog append --data_dir="$1" --topic="${2:-t}" --partition="${3:-0}" \
    <partition.bin
  expect_rc 0
}

# The .log file of the only segment of partition DIR.
only_log() {
  local logs=("$1"/*.log)
  [[ "${#logs[@]}" -eq 1 ]] || fail "expected one segment in $1"
  echo "${logs[0]}"
}

# flip_byte FILE POSITION: inverts every bit of one byte.
flip_byte() {
  local byte
  byte="$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')"
  printf "$(printf '\\%03o' $((255 - byte)))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# fingerprint DIR: every entry's path, size, mode and mtime, and every file's
# checksum (what "verify changes nothing" compares).
fingerprint() {
  (cd "$1" && find . -printf '%p %s %m %T@\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
