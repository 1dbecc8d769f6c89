#!/usr/bin/env bash
# The shared-volume scenarios on a real distributed filesystem: a single-node
# CephFS (cephfs.sh) mounted twice by ceph-fuse, one engine process
# (engine_child) per mount, both on the same data dir, driven line by line
# from here. One scenario per run:
#
#   cephfs_scenarios_test.sh zombie_leader|space_reclaim|topic_recreate|
#                            process_kill|client_kill|same_epoch_race|
#                            shared_fences
#
# Each run brings a cluster up in a state dir of its own and tears it down
# (and kills its children) however it ends. A wait for something another
# process or the cluster does is a poll with a deadline, never a sleep.
set -euo pipefail

RUNFILES="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-kaas_storage}"
CEPHFS="$RUNFILES/testing/cephfs/cephfs.sh"
CHILD="$RUNFILES/testing/cephfs/engine_child"
# shellcheck source=testing/cephfs/poll.sh
source "$RUNFILES/testing/cephfs/poll.sh"
SCENARIO="${1:?usage: cephfs_scenarios_test.sh SCENARIO}"
# Short and ours: the mount points live under it.
export KAAS_CEPHFS_STATE_DIR="/tmp/kaas-cephfs-$SCENARIO.$$"
WORK="$(mktemp -d "${TEST_TMPDIR:-/tmp}/cephfs_$SCENARIO.XXXXXX")"
# The longest any one engine command may take before the test calls it a
# hang (a take-over recovers a partition; a sync may wait on the cluster).
ANSWER_TIMEOUT=120
# A child that dies makes our writes to it fail instead of killing us.
trap '' PIPE

declare -A CHILD_PID=() CHILD_IN=() CHILD_OUT=()

cleanup() {
  local rc=$? name
  for name in "${!CHILD_PID[@]}"; do
    kill -KILL "${CHILD_PID[$name]}" 2>/dev/null || true
  done
  if ((rc != 0)); then
    for name in "$WORK"/*.log; do
      [[ -s "$name" ]] || continue
      echo "--- last lines of $name:"
      tail -n 20 "$name"
    done
    if [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]]; then
      export KAAS_CEPHFS_KEEP_LOGS="$TEST_UNDECLARED_OUTPUTS_DIR/ceph-logs"
    fi
  fi
  "$CEPHFS" down || rc=1
  rm -rf "$WORK"
  ((rc == 0)) && echo "PASS $SCENARIO" || echo "FAIL $SCENARIO (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
# Bazel's timeout sends SIGTERM: tear the cluster down then too.
trap 'exit 143' TERM INT

fail() {
  echo "FAIL: $*"
  exit 1
}

# ---- engine processes -------------------------------------------------------

# start_child NAME MOUNT [FLAGS...]: an engine process whose data dir is
# MOUNT/data; returns once it is ready.
start_child() {
  local name="$1" mount="$2" fd
  shift 2
  local in="$WORK/$name.in" out="$WORK/$name.out"
  rm -f "$in" "$out"
  mkfifo "$in" "$out"
  "$CHILD" --data_dir="$mount/data" "$@" <"$in" >"$out" 2>>"$WORK/$name.log" &
  CHILD_PID[$name]=$!
  # The child opens its stdin, then its stdout: open them in that order.
  exec {fd}>"$in"
  CHILD_IN[$name]=$fd
  exec {fd}<"$out"
  CHILD_OUT[$name]=$fd
  reply "$name"
  [[ "$ANSWER" == ready ]] || fail "$name did not start: $ANSWER"
}

# reply NAME: the next line from NAME into $ANSWER (fails on a hang or EOF).
reply() {
  local status=0
  IFS= read -r -t "$ANSWER_TIMEOUT" ANSWER <&"${CHILD_OUT[$1]}" || status=$?
  ((status == 0)) && return 0
  ((status > 128)) && fail "$1 did not answer within $ANSWER_TIMEOUT s"
  fail "$1 exited without answering"
}

send() {
  local name="$1"
  shift
  echo "$name> $*"
  echo "$*" >&"${CHILD_IN[$name]}" || fail "$name is gone (sending: $*)"
}

# ask NAME COMMAND...: the answer in $ANSWER, and its words after the first
# in the array $VALUES.
ask() {
  send "$@"
  reply "$1"
  echo "$1< ${ANSWER:0:300}"
  read -r -a VALUES <<<"${ANSWER#* }"
  [[ "$ANSWER" == *" "* ]] || VALUES=()
}

expect_ok() {
  ask "$@"
  [[ "$ANSWER" == ok || "$ANSWER" == "ok "* ]] || fail "$1: $2 failed: $ANSWER"
}

# expect_err NAME CODE COMMAND...: the command fails with StorageErrorCode
# CODE (any code if CODE is "any").
expect_err() {
  local name="$1" code="$2"
  shift 2
  ask "$name" "$@"
  if [[ "$code" == any ]]; then
    [[ "$ANSWER" == "err "* ]] || fail "$name: $1 should have failed: $ANSWER"
  else
    [[ "$ANSWER" == "err $code "* ]] ||
      fail "$name: $1 should have failed with $code: $ANSWER"
  fi
}

# Takes NAME's process away at once (SIGKILL), keeping the rest of what it
# printed in $WORK/NAME.rest.
kill_child() {
  local name="$1"
  kill -KILL "${CHILD_PID[$name]}"
  wait "${CHILD_PID[$name]}" 2>/dev/null || true
  cat <&"${CHILD_OUT[$name]}" >"$WORK/$name.rest" || true
  close_child "$name"
}

quit_child() {
  expect_ok "$1" quit
  wait "${CHILD_PID[$1]}" || fail "$1 exited with status $?"
  close_child "$1"
}

close_child() {
  local in="${CHILD_IN[$1]}" out="${CHILD_OUT[$1]}"
  exec {in}>&- {out}<&-
  unset "CHILD_PID[$1]" "CHILD_IN[$1]" "CHILD_OUT[$1]"
}

# A take-over that another client's lock (released, but not yet seen by this
# client) may refuse for a moment: retried on NOT_LEADER only.
takeover_when_free() {
  local name="$1"
  shift
  local deadline=$((SECONDS + 60))
  while :; do
    ask "$name" takeover "$@"
    [[ "$ANSWER" == "ok "* ]] && return 0
    [[ "$ANSWER" == "err NOT_LEADER "* ]] || fail "$name: takeover $*: $ANSWER"
    ((SECONDS < deadline)) || fail "$name: takeover $* still refused: $ANSWER"
    sleep 0.2
  done
}

# expect_records NAME TOPIC PARTITION EXPECTED...: the partition as NAME
# serves it is exactly the offset:value pairs EXPECTED, from offset 0.
expect_records() {
  local name="$1" topic="$2" partition="$3"
  shift 3
  expect_ok "$name" read "$topic" "$partition"
  local got=("${VALUES[@]:3}")
  [[ "${VALUES[0]}" == 0 ]] || fail "$name: log start ${VALUES[0]}, expected 0"
  [[ "${VALUES[1]}" == "$#" ]] || fail "$name: high watermark ${VALUES[1]}, expected $#"
  [[ "${got[*]}" == "$*" ]] || fail "$name: served [${got[*]}], expected [$*]"
}

# offsets_values TAG FIRST N: "FIRST:TAG-0 FIRST+1:TAG-1 ..." as words.
offsets_values() {
  local tag="$1" first="$2" n="$3" i
  for ((i = 0; i < n; i++)); do printf '%s ' "$((first + i)):$tag-$i"; done
}

# ---- the scenarios ----------------------------------------------------------

# A leads and appends acks=all. B, told to take over at a higher epoch while
# A still holds the partition, is refused and changes nothing. A's client is
# then cut off (evicted, as a partitioned broker's session is): A is a zombie
# that has not been told. B takes over and serves exactly what A
# acknowledged; everything A tries after that fails and is never served.
scenario_zombie_leader() {
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  expect_ok A takeover z 0 1
  expect_ok A append z 0 1 a 20
  expect_err B NOT_LEADER takeover z 0 2
  expect_ok A append z 0 1 late 5
  [[ "${VALUES[*]}" == "20 24" ]] || fail "A appended at ${VALUES[*]}"

  "$CEPHFS" evict a
  takeover_when_free B z 0 2
  [[ "${VALUES[0]}" == 25 ]] || fail "B took over at log end ${VALUES[0]}, expected 25"
  expect_err A any append z 0 1 zombie 5
  [[ "$ANSWER" == *" acked=0 "* ]] || fail "the zombie acknowledged an append: $ANSWER"
  expect_ok B append z 0 2 b 5
  local served
  served="$(offsets_values a 0 20)$(offsets_values late 20 5)$(offsets_values b 25 5)"
  # shellcheck disable=SC2086
  expect_records B z 0 $served

  # A learns it was deposed: its relinquish leaves no descriptor behind.
  ask A relinquish z 0
  expect_ok A fds "$KAAS_CEPHFS_MOUNT_A/"
  [[ "${VALUES[0]}" == 0 ]] || fail "A still holds ${VALUES[0]} descriptors on its mount"
  quit_child A

  # A new process on A's client, remounted, leads after B at epoch 3 and
  # finds B's files whole: nothing of the zombie's in them.
  expect_ok B relinquish z 0
  "$CEPHFS" up
  start_child A2 "$KAAS_CEPHFS_MOUNT_A"
  takeover_when_free A2 z 0 3
  [[ "${VALUES[0]}" == 30 ]] || fail "A2 took over at log end ${VALUES[0]}, expected 30"
  # shellcheck disable=SC2086
  expect_records A2 z 0 $served
  quit_child A2
  quit_child B
}

# Used bytes of the cluster as a mount's statvfs reports them.
used_bytes() {
  local total free size
  read -r total free size < <(stat -f -c '%b %f %S' "$1")
  echo $(((total - free) * size))
}

# Space reclaim: A writes ~48 MiB and reads it all back (holding read
# handles), relinquishes; B takes over, retention and DeleteRecords delete
# every segment, and the space comes back (statvfs on CephFS lags by
# seconds: polled) with no stray `.fuse_hidden` or `.nfs` file left.
scenario_space_reclaim() {
  local mib=$((1 << 20)) base
  start_child A "$KAAS_CEPHFS_MOUNT_A" --segment_bytes=$mib
  start_child B "$KAAS_CEPHFS_MOUNT_B" --segment_bytes=$mib
  base="$(used_bytes "$KAAS_CEPHFS_MOUNT_B")"
  echo "used before: $base bytes"
  expect_ok A takeover r 0 1
  expect_ok A append r 0 1 big 48 1040000
  poll 60 grown_by "$((40 * mib))" "$base" ||
    fail "48 MiB written, but used space grew only to $(used_bytes "$KAAS_CEPHFS_MOUNT_B")"
  echo "used after writing: $(used_bytes "$KAAS_CEPHFS_MOUNT_B") bytes"
  expect_ok A read r 0
  [[ "${VALUES[2]}" == 48 ]] || fail "A read ${VALUES[2]} records, expected 48"
  expect_ok A relinquish r 0
  expect_ok A fds "$KAAS_CEPHFS_MOUNT_A/"
  [[ "${VALUES[0]}" == 0 ]] || fail "A holds ${VALUES[0]} descriptors after relinquish"

  takeover_when_free B r 0 2
  expect_ok B retention r 0 $((8 * mib))
  ((VALUES[0] >= 30)) || fail "retention kept the log from offset ${VALUES[0]}"
  expect_ok B delete_records r 0 -1
  [[ "${VALUES[0]}" == 48 ]] || fail "DeleteRecords moved the log start to ${VALUES[0]}"
  poll 90 shrunk_to "$((8 * mib))" "$base" ||
    fail "used space still $(used_bytes "$KAAS_CEPHFS_MOUNT_B") after deleting everything (base $base)"
  echo "used after: $(used_bytes "$KAAS_CEPHFS_MOUNT_B") bytes"
  local strays
  strays="$(find "$KAAS_CEPHFS_MOUNT_A/data" "$KAAS_CEPHFS_MOUNT_B/data" \
    \( -name '.fuse_hidden*' -o -name '.nfs*' \) -print)"
  [[ -z "$strays" ]] || fail "stray files left: $strays"
  quit_child A
  quit_child B
}

grown_by() { (($(used_bytes "$KAAS_CEPHFS_MOUNT_B") >= $2 + $1)); }
shrunk_to() { (($(used_bytes "$KAAS_CEPHFS_MOUNT_B") <= $2 + $1)); }

# A topic deleted and recreated with a new identity: B deletes the old
# incarnation's files once A gave the topic up, and leads the new one; A,
# still believing in the old incarnation, can neither lead nor write it.
scenario_topic_recreate() {
  local old=11111111-1111-4111-8111-111111111111
  local new=22222222-2222-4222-8222-222222222222
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  expect_ok A incarnation d "$old"
  expect_ok A takeover d 0 4
  expect_ok A stamp d "$old"
  expect_ok A append d 0 4 old 10
  # While A leads, another engine cannot delete the partition's files.
  expect_err B any delete_partition d 0
  expect_ok A read d 0
  [[ "${VALUES[2]}" == 10 ]] || fail "A lost records to B's delete: $ANSWER"

  expect_ok A abandon d
  expect_ok B delete_partition d 0
  # The recreated topic: its new id is stamped (as the broker does once the
  # id is durable in its control plane) before its partitions are led.
  expect_ok B incarnation d "$new"
  expect_err B STALE_TOPIC_DIR takeover d 0 0
  expect_ok B stamp d "$new"
  expect_ok B takeover d 0 0
  [[ "${VALUES[0]}" == 0 ]] || fail "the new incarnation starts at ${VALUES[0]}"
  expect_ok B append d 0 0 new 3
  # A, told to lead by a stale controller at its old, higher epoch: refused
  # as a stale incarnation, whether B leads or has let go, and its appends
  # are refused.
  expect_err A STALE_TOPIC_DIR takeover d 0 5
  expect_ok B relinquish d 0
  expect_err A STALE_TOPIC_DIR takeover d 0 5
  expect_err A NOT_LEADER append d 0 4 old 1
  # Once A knows the new incarnation it leads it, and finds only its records.
  expect_ok A incarnation d "$new"
  takeover_when_free A d 0 1
  # shellcheck disable=SC2086
  expect_records A d 0 $(offsets_values new 0 3)
  quit_child A
  quit_child B
}

# stream_until NAME COUNT: reads NAME's `acked` lines until COUNT arrived.
stream_until() {
  local name="$1" count="$2" acked=0
  : >"$WORK/$name.acked"
  while ((acked < count)); do
    reply "$name"
    [[ "$ANSWER" == "acked "* ]] || fail "$name stopped streaming: $ANSWER"
    echo "${ANSWER#acked }" >>"$WORK/$name.acked"
    acked=$((acked + 1))
  done
}

# Every batch NAME acknowledged (the acked lines read, and those in what it
# printed until it died) is served by SERVER at its offset, exactly once, and
# the log holds nothing but the stream's prefix.
expect_acknowledged_served() {
  local name="$1" server="$2" topic="$3"
  grep -a '^acked ' "$WORK/$name.rest" 2>/dev/null | sed 's/^acked //' >>"$WORK/$name.acked" || true
  local acked
  acked="$(wc -l <"$WORK/$name.acked")"
  expect_ok "$server" read "$topic" 0
  local hw="${VALUES[1]}" got=("${VALUES[@]:3}")
  ((hw >= acked)) || fail "$server serves $hw records, $name acknowledged $acked"
  local expected
  expected="$(offsets_values s 0 "$hw")"
  [[ "${got[*]} " == "$expected" ]] || fail "$server serves [${got[*]}], expected [$expected]"
  local offset value
  while read -r offset value; do
    [[ " ${got[*]} " == *" $offset:$value "* ]] || fail "acknowledged $offset:$value is not served"
  done <"$WORK/$name.acked"
  echo "$name acknowledged $acked, $server serves $hw"
}

# SIGKILL of A's engine process in the middle of acks=all appends: B takes
# over and serves every batch A acknowledged.
scenario_process_kill() {
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  expect_ok A takeover k 0 1
  send A stream k 0 1 s
  stream_until A 200
  kill_child A
  takeover_when_free B k 0 2
  expect_acknowledged_served A B k
  quit_child B
}

# SIGKILL of A's ceph-fuse client in the middle of acks=all appends: A's I/O
# fails; once the MDS evicts A's session B takes over and serves every batch
# A acknowledged. A's client is mounted again afterwards.
scenario_client_kill() {
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  expect_ok A takeover c 0 1
  send A stream c 0 1 s
  stream_until A 200
  kill -KILL "$KAAS_CEPHFS_PID_A"
  # The stream ends with an error, and nothing after it is acknowledged.
  local status=0
  while reply A; do
    [[ "$ANSWER" == "acked "* ]] || break
    echo "${ANSWER#acked }" >>"$WORK/A.acked"
  done
  echo "A< $ANSWER"
  [[ "$ANSWER" == "err "* ]] || fail "A's stream ended with: $ANSWER"
  "$CEPHFS" evict a
  takeover_when_free B c 0 2
  expect_acknowledged_served A B c
  kill_child A
  "$CEPHFS" up
  "$CEPHFS" status >/dev/null || fail "A's client did not come back"
  quit_child B
}

# Two engines told to lead the same partition at the same epoch at the same
# moment: exactly one leads, the other changes nothing.
scenario_same_epoch_race() {
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  local p winner loser a b
  for p in 0 1 2 3 4 5 6 7; do
    send A takeover s "$p" 1
    send B takeover s "$p" 1
    reply A
    a="$ANSWER"
    reply B
    b="$ANSWER"
    echo "A< $a"
    echo "B< $b"
    if [[ "$a" == "ok "* && "$b" == "err NOT_LEADER "* ]]; then
      winner=A loser=B
    elif [[ "$b" == "ok "* && "$a" == "err NOT_LEADER "* ]]; then
      winner=B loser=A
    else
      fail "partition $p: not exactly one leader: A '$a', B '$b'"
    fi
    expect_ok "$winner" append s "$p" 1 w 3
    expect_err "$loser" NOT_LEADER append s "$p" 1 l 1
    expect_ok "$winner" relinquish s "$p"
    takeover_when_free "$loser" s "$p" 2
    # shellcheck disable=SC2086
    expect_records "$loser" s "$p" $(offsets_values w 0 3)
    expect_ok "$loser" relinquish s "$p"
  done
  quit_child A
  quit_child B
}

# Two engines sharing the data dir fence producers at the same moment: every
# fence of both is kept (neither rewrite drops the other's), as an engine
# started afterwards sees.
scenario_shared_fences() {
  start_child A "$KAAS_CEPHFS_MOUNT_A"
  start_child B "$KAAS_CEPHFS_MOUNT_B"
  send A fence 1000 40 5
  send B fence 2000 40 7
  reply A
  [[ "$ANSWER" == ok ]] || fail "A: fence: $ANSWER"
  reply B
  [[ "$ANSWER" == ok ]] || fail "B: fence: $ANSWER"
  start_child C "$KAAS_CEPHFS_MOUNT_A"
  expect_ok C takeover f 0 1
  expect_ok C fenced f 0 1 1000 40 5
  [[ "${VALUES[0]}" == 40 ]] || fail "only ${VALUES[0]} of A's 40 fences hold"
  expect_ok C fenced f 0 1 2000 40 7
  [[ "${VALUES[0]}" == 40 ]] || fail "only ${VALUES[0]} of B's 40 fences hold"
  # A producer nobody fenced still appends.
  expect_ok C fenced f 0 1 3000 1 5
  [[ "${VALUES[0]}" == 0 ]] || fail "an unfenced producer was refused"
  quit_child C
  quit_child A
  quit_child B
}

# ---- main ---------------------------------------------------------------------

declare -F "scenario_$SCENARIO" >/dev/null || fail "no scenario $SCENARIO"
"$CEPHFS" up
eval "$("$CEPHFS" env)"
echo "=== $SCENARIO on $KAAS_CEPHFS_MOUNT_A and $KAAS_CEPHFS_MOUNT_B"
"scenario_$SCENARIO"
