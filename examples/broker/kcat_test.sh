#!/usr/bin/env bash
# kaas-broker against an unmodified Kafka client: Debian's kcat (librdkafka).
# Each case produces with kcat, consumes with kcat and compares every record
# (key, value, headers) with what was produced; the broker runs on a free
# loopback port with its own data dir and is stopped (SIGTERM: exit 0) or
# killed (SIGKILL: every acknowledged record must be there after a restart).
set -euo pipefail

runfiles="$TEST_SRCDIR/$TEST_WORKSPACE"
broker="$runfiles/examples/broker/kaas-broker"
# The broker is not a test binary: under TSan it takes the project's
# suppressions from the environment (tools/kaaslog_tsan.supp says why).
export TSAN_OPTIONS="${TSAN_OPTIONS:+${TSAN_OPTIONS}:}suppressions=$runfiles/tools/kaaslog_tsan.supp"
command -v kcat >/dev/null || { echo "kcat is not installed (./dev test installs it)"; exit 1; }
data="$TEST_TMPDIR/data"
work="$TEST_TMPDIR/work"
mkdir -p "$work"

source "$runfiles/examples/broker/broker_testlib.sh"

produce() {  # topic, then kcat producer flags; records on stdin
  local topic="$1"
  shift
  timeout 60 kcat -b "$BOOTSTRAP" -P -t "$topic" "$@" || fail "kcat -P $topic $*"
}

consume() {  # topic, then kcat consumer flags
  local topic="$1"
  shift
  timeout 60 kcat -b "$BOOTSTRAP" -C -t "$topic" -e -q "$@"
}

start_broker --num.partitions=1 --group.initial.rebalance.delay.ms=0
timeout 30 kcat -b "$BOOTSTRAP" -L | grep -q "1 brokers" || fail "kcat -L"

# 1. Every codec and acks mode; keys, headers, values with spaces.
expected="$work/expected"
: >"$expected"
for codec in none gzip snappy lz4 zstd; do
  for acks in 0 1 all; do
    seq 1 200 | sed "s/.*/$codec-$acks-key-&:value &, $codec acks=$acks/" \
      >"$work/in"
    produce records "$work/in" -K: -z "$codec" -X "acks=$acks" \
      -H "codec=$codec" -H "acks=$acks" -l
    sed "s/\(.*\):\(.*\)/\1|\2|codec=$codec,acks=$acks/" "$work/in" >>"$expected"
  done
done
consume records -o beginning -f '%k|%s|%h\n' >"$work/got"
diff "$expected" "$work/got" >/dev/null || {
  diff "$expected" "$work/got" | head -20
  fail "consumed records differ from those produced"
}
echo "ok: $(wc -l <"$expected") records in 5 codecs x 3 acks modes read back"

# 2. An idempotent producer (InitProducerId, sequence numbers), zstd.
seq 1 5000 | sed 's/.*/idempotent &/' >"$work/idempotent"
produce idempotent "$work/idempotent" -X enable.idempotence=true -z zstd -l
consume idempotent -o beginning -f '%s\n' | diff -q - "$work/idempotent" >/dev/null ||
  fail "idempotent producer"
echo "ok: 5000 records of an idempotent producer"

# 3. Null keys, and a consumer starting at a timestamp.
printf 'no key 1\nno key 2\n' | produce nullkeys -X acks=all
[[ "$(consume nullkeys -o beginning -f '%K|%s\n')" == $'-1|no key 1\n-1|no key 2' ]] ||
  fail "null keys"
before_ms=$(($(date +%s%3N) - 1))
printf 'late 1\nlate 2\n' | produce nullkeys -X acks=all
[[ "$(consume nullkeys -o "s@$before_ms" -f '%s\n')" == $'late 1\nlate 2' ]] ||
  fail "consume from a timestamp"
echo "ok: null keys and a timestamp lookup"

# 4. A consumer group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
#    OffsetCommit, OffsetFetch): a second run of the group reads only what
#    came after its committed offsets.
seq 1 300 | sed 's/.*/grouped &/' >"$work/grouped"
produce grouped "$work/grouped" -X acks=all -p 0 -l
timeout 60 kcat -b "$BOOTSTRAP" -G g1 grouped -o beginning -e -q -f '%s\n' \
  >"$work/got" || fail "group consumer"
diff -q "$work/grouped" "$work/got" >/dev/null || fail "the group read $(wc -l <"$work/got") of 300"
seq 301 350 | sed 's/.*/grouped &/' | produce grouped -X acks=all -p 0
timeout 60 kcat -b "$BOOTSTRAP" -G g1 grouped -e -q -f '%s\n' >"$work/got" ||
  fail "group consumer"
[[ "$(head -1 "$work/got")" == "grouped 301" && "$(wc -l <"$work/got")" == 50 ]] ||
  fail "the group did not resume at its committed offset: $(head -1 "$work/got"), $(wc -l <"$work/got") records"
echo "ok: a consumer group resumes at its committed offsets"

# 5. SIGKILL right after kcat saw every record acknowledged (acks=all):
#    the restarted broker (at a higher leader epoch) serves all of them.
seq 1 20000 | sed 's/.*/durable &/' >"$work/durable"
produce durable "$work/durable" -X acks=all -l
kill_broker
first_epoch="$EPOCH"
start_broker --num.partitions=1 --group.initial.rebalance.delay.ms=0
((EPOCH > first_epoch)) || fail "leader epoch $EPOCH after $first_epoch"
consume durable -o beginning -f '%s\n' >"$work/got"
diff "$work/durable" "$work/got" >/dev/null ||
  fail "after SIGKILL: $(wc -l <"$work/got") of 20000 acknowledged records"
consume records -o beginning -f '%k|%s|%h\n' | diff -q - "$expected" >/dev/null ||
  fail "after SIGKILL: the first topic changed"
# The group's committed offsets survived too.
seq 351 360 | sed 's/.*/grouped &/' | produce grouped -X acks=all -p 0
timeout 60 kcat -b "$BOOTSTRAP" -G g1 grouped -e -q -f '%s\n' >"$work/got" ||
  fail "group consumer after the restart"
[[ "$(head -1 "$work/got")" == "grouped 351" && "$(wc -l <"$work/got")" == 10 ]] ||
  fail "after SIGKILL the group lost its offsets: $(head -1 "$work/got"), $(wc -l <"$work/got") records"
echo "ok: 20000 acknowledged records and the group's offsets survived SIGKILL"

stop_broker
echo "ok: SIGTERM stops the broker cleanly"
