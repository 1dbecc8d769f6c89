#!/usr/bin/env bash
# A bounded torture run (testing/torture/torture_run.h): power-loss rounds
# through the fault-injecting filesystem (torn tails, power failing again
# during recovery) and SIGKILL rounds of a child process, every acknowledged
# batch checked after each recovery. Fails with the seed and the kept data
# dir on any broken invariant. `./dev torture` runs as many rounds as asked.
set -euo pipefail

torture="$TEST_SRCDIR/$TEST_WORKSPACE/testing/torture/torture"
seeds=(1 2 3)
rounds=20
kill_rounds=5
# Sanitizer builds are several times slower: fewer rounds there.
if [[ -n "${KAAS_SANITIZER:-}" ]]; then
  seeds=(1 2)
  rounds=8
  kill_rounds=3
fi
for seed in "${seeds[@]}"; do
  out="$TEST_TMPDIR/out.$seed"
  "$torture" --seed="$seed" --rounds="$rounds" --kill_rounds="$kill_rounds" \
    --dir="$(mktemp -d "$TEST_TMPDIR/torture.XXXXXX")" | tee "$out"
  grep -q '^torture: ok' "$out"
done
