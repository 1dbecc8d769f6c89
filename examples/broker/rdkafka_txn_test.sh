#!/usr/bin/env bash
# Kafka transactions with a real client (librdkafka, rdkafka_txn.cc) against
# a kaas-broker of its own on a free loopback port:
#   1. one transactional producer commits the even transactions and aborts
#      the odd ones, interleaved; a read_committed consumer (kcat) sees
#      exactly the committed records, a read_uncommitted one every data
#      record; the offsets sent with the transactions
#      (send_offsets_to_transaction) are the group's only when committed;
#   2. a second producer with the same transactional.id fences the first,
#      whose next produce/commit fails fatally; the second then commits;
#   3. after a SIGTERM and restart the committed view is unchanged and the
#      transactional.id inits and commits again (that it keeps its producer
#      id is txn_coordinator_test's: librdkafka does not expose the id).
set -euo pipefail

runfiles="$TEST_SRCDIR/$TEST_WORKSPACE"
broker="$runfiles/examples/broker/kaas-broker"
client="$runfiles/examples/broker/rdkafka_txn"
if [[ "${KAAS_SANITIZER:-}" == tsan ]]; then
  # As rdkafka_kill_test: TSan's runtime crashes inside librdkafka.
  echo "skipped under TSan: librdkafka cannot run with its runtime"
  exit 0
fi
command -v kcat >/dev/null || { echo "kcat is not installed (./dev test installs it)"; exit 1; }
data="$TEST_TMPDIR/data"
work="$TEST_TMPDIR/work"
mkdir -p "$work"
transactions=10
records=25

source "$runfiles/examples/broker/broker_testlib.sh"

# consume TOPIC ISOLATION: every value, one per line.
consume() {
  timeout 120 kcat -b "127.0.0.1:$PORT" -C -t "$1" -o beginning -e -q \
    -X isolation.level="$2" -f '%s\n'
}

start_broker

# 1. Interleaved commits and aborts.
timeout 300 "$client" --bootstrap="127.0.0.1:$PORT" --topic=txns \
  --transactional_id=interleaver --mode=interleave \
  --transactions="$transactions" --records="$records" \
  --group=txn-group --source_topic=source \
  >"$work/interleave.out" 2>>"$work/client.err" ||
  fail "the interleaving producer exited with $?"
committed=$(grep -c '^committed' "$work/interleave.out" || true)
aborted=$(grep -c '^aborted' "$work/interleave.out" || true)
((committed == transactions / 2 && aborted == transactions / 2)) ||
  fail "$committed committed and $aborted aborted transactions"

consume txns read_committed | sort >"$work/committed"
consume txns read_uncommitted | sort >"$work/uncommitted"
for ((i = 0; i < transactions; i++)); do
  for ((j = 0; j < records; j++)); do
    if ((i % 2 == 0)); then
      echo "txn $i rec $j commit"
    else
      echo "txn $i rec $j abort"
    fi
  done
done | sort >"$work/all"
grep ' commit$' "$work/all" >"$work/want_committed"
diff "$work/want_committed" "$work/committed" >"$work/diff" ||
  fail "read_committed saw other records: $(head -5 "$work/diff")"
diff "$work/all" "$work/uncommitted" >"$work/diff" ||
  fail "read_uncommitted saw other records: $(head -5 "$work/diff")"
# Transaction i sent offset 10 * (i + 1); the last one (odd) aborted, so the
# group holds the offset of the one before.
want_offset=$((10 * (transactions - 1)))
grep -qx "group_offset $want_offset" "$work/interleave.out" ||
  fail "the group's offset: $(grep group_offset "$work/interleave.out" || echo none), want $want_offset"
echo "ok: the group committed offset $want_offset with the last committed transaction"
echo "ok: read_committed saw the $(wc -l <"$work/committed") committed records, read_uncommitted all $(wc -l <"$work/uncommitted")"

# 2. A second producer with the same transactional.id fences the first.
timeout 300 "$client" --bootstrap="127.0.0.1:$PORT" --topic=fenced \
  --transactional_id=shared --mode=fence \
  >"$work/fence.out" 2>>"$work/client.err" ||
  fail "the fencing run exited with $? ($(cat "$work/fence.out"))"
grep -q '^fenced ' "$work/fence.out" || fail "the first producer was not fenced"
grep -q '^committed fence$' "$work/fence.out" || fail "the second producer did not commit"
consume fenced read_committed >"$work/fenced"
[[ "$(cat "$work/fenced")" == "txn fence rec 0 commit" ]] ||
  fail "read_committed of the fenced topic: $(cat "$work/fenced")"
echo "ok: $(grep '^fenced' "$work/fence.out"); only the new producer's record is committed"

# 3. A restart keeps the state: the same view, and the id still works.
stop_broker
start_broker
consume txns read_committed | sort >"$work/committed_after"
diff "$work/want_committed" "$work/committed_after" >"$work/diff" ||
  fail "read_committed after a restart: $(head -5 "$work/diff")"
timeout 300 "$client" --bootstrap="127.0.0.1:$PORT" --topic=txns \
  --transactional_id=interleaver --mode=interleave --transactions=1 \
  --records=1 >"$work/again.out" 2>>"$work/client.err" ||
  fail "the producer could not run again after a restart"
consume txns read_committed | grep -c commit >"$work/count"
(($(cat "$work/count") == $(wc -l <"$work/want_committed") + 1)) ||
  fail "after the restart's transaction: $(cat "$work/count") committed records"
echo "ok: the state survived a restart"
stop_broker
