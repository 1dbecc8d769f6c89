#!/usr/bin/env bash
# broker_bench (the broker rows of ./dev bench) runs end to end in short
# windows: both producer setups produce through a kaas-broker child and get
# an engine-only row of their batches; the JSON has every field, the capped
# setup's batches hold at most the 16 records it asks for, every row
# measured something, and the bench leaves
# nothing behind. Figures are not checked (performance lives in the bench).
set -euo pipefail

runfiles="$TEST_SRCDIR/$TEST_WORKSPACE"
if [[ "${KAAS_SANITIZER:-}" == tsan ]]; then
  # As rdkafka_kill_test: TSan's runtime crashes inside (uninstrumented)
  # librdkafka, which broker_bench links.
  echo "skipped under TSan: librdkafka cannot run with its runtime"
  exit 0
fi
bench="$runfiles/examples/broker/broker_bench"
broker="$runfiles/examples/broker/kaas-broker"
out="$TEST_TMPDIR/bench.json"
data="$TEST_TMPDIR/data"
mkdir -p "$data"

fail() {
  echo "FAIL: $*"
  cat "$out" 2>/dev/null || true
  exit 1
}

"$bench" --broker="$broker" --data_dir="$data" --seconds=1 \
  --warmup_seconds=0.2 --format=json >"$out" || fail "broker_bench exited with $?"
cat "$out"
for field in producer records_per_batch requests_in_flight broker_records_per_s \
  broker_mb_per_s engine_records_per_batch engine_producers \
  engine_records_per_s engine_mb_per_s ratio; do
  [[ "$(grep -o "\"$field\":" "$out" | wc -l)" == 2 ]] || fail "field $field not in both rows"
done
# How full librdkafka's batches get depends on how fast it is scheduled
# (linger.ms sends a partial one): only the cap is certain.
capped="$(grep -o '"producer": "16 per batch", "records_per_batch": [0-9.]*' "$out" |
  sed 's/.*: //')"
[[ -n "$capped" ]] || fail "no row of the capped setup"
awk -v n="$capped" 'BEGIN { exit !(n >= 1 && n <= 16) }' ||
  fail "the capped setup's batches hold $capped records, more than 16"
for count in $(grep -o '"broker_records_per_s": [0-9]*' "$out" | sed 's/.*: //') \
  $(grep -o '"engine_records_per_s": [0-9]*' "$out" | sed 's/.*: //'); do
  ((count > 0)) || fail "a row measured nothing"
done
[[ -z "$(ls -A "$data")" ]] || fail "left behind: $(ls -A "$data")"
echo "ok: broker_bench ran both rows"
