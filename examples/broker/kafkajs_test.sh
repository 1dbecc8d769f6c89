#!/usr/bin/env bash
# kafkajs (npm, the exact version of kafkajs/package-lock.json) against a
# kaas-broker of its own on a free loopback port (kafkajs/kafkajs_client.js):
#   1. produce with acks -1, 1 and 0 and with gzip (keys, null keys,
#      headers); a group consumer reads every record back, equal;
#   2. admin createTopics (4 partitions); a group of two members both get
#      assignments after the rebalance and together consume every record
#      exactly once; a new member of the group, after they left, reads only
#      what was produced after their committed offsets;
#   3. a transactional (idempotent) producer commits two transactions and
#      aborts one; a read_committed consumer sees only the committed records;
#   4. admin createTopics with configs: kept in the topic's .config.json; one
#      the broker does not serve refused with INVALID_CONFIG.
# node_modules comes from `./dev setup` (run by `./dev test`), which installs
# the lock file with `npm ci` into ~/.cache/kaas-storage-npm/kafkajs-<hash>;
# the test never reaches the network. KAFKAJS_DEBUG=1 (--test_env) turns on
# kafkajs's debug log.
set -euo pipefail

runfiles="$TEST_SRCDIR/$TEST_WORKSPACE"
broker="$runfiles/examples/broker/kaas-broker"
client="$runfiles/examples/broker/kafkajs/kafkajs_client.js"
lock="$runfiles/examples/broker/kafkajs/package-lock.json"
command -v node >/dev/null || { echo "node is not installed (./dev test installs nodejs)"; exit 1; }
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
modules="$home/.cache/kaas-storage-npm/kafkajs-$(sha256sum "$lock" | cut -c1-16)/node_modules"
[[ -f "$modules/kafkajs/package.json" ]] || {
  echo "kafkajs is not installed at $modules (./dev setup or ./dev test installs it)"
  exit 1
}
data="$TEST_TMPDIR/data"
work="$TEST_TMPDIR/work"
mkdir -p "$work"

source "$runfiles/examples/broker/broker_testlib.sh"

start_broker
for section in produce group txn admin; do
  NODE_PATH="$modules" KAFKAJS_NO_PARTITIONER_WARNING=1 \
    timeout 300 node "$client" "$BOOTSTRAP" "$section" \
    >"$work/$section.out" 2>>"$work/kafkajs.err" || {
    cat "$work/$section.out"
    fail "kafkajs $section exited with $?"
  }
  cat "$work/$section.out"
done
config="$data/kafkajs-configured/.config.json"
grep -q '"retentionMs": *"\?86400000' "$config" &&
  grep -q '"cleanupPolicy": *"compact,delete"' "$config" ||
  fail "the topic's configs are not in $config: $(cat "$config" 2>&1)"
echo "ok: the engine keeps them in $config"
stop_broker
