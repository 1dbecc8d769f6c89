#!/usr/bin/env bash
# Brings the CephFS harness up in its own state dir, checks across the two
# ceph-fuse clients the semantics the engine's multi-process tests rely on,
# and tears it down on any exit:
#   - a file written and fsynced through A reads back identical through B
#   - O_CREAT|O_EXCL races between A and B: exactly one winner per name
#   - rename over a file on A: B sees the new content, unlink on A: B ENOENT
#   - an exclusive flock held on A makes a non-blocking flock on B fail (both
#     ways), and is free on B once released on A
#   - SIGKILL of A's ceph-fuse while it holds a flock, then `evict a`: B
#     takes the lock at once, and `up` remounts A
#   - `status` exits 0
# Prints one line per check; exits non-zero on the first failure.
#
#   testing/cephfs/cephfs_smoke_test.sh
#   KAAS_CEPHFS_STATE_DIR=/tmp/x testing/cephfs/cephfs_smoke_test.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CEPHFS="$HERE/cephfs.sh"
# shellcheck source=testing/cephfs/poll.sh
source "$HERE/poll.sh"
# Its own state dir by default, so the trap never tears down a cluster a
# developer has up at the harness's default one.
export KAAS_CEPHFS_STATE_DIR="${KAAS_CEPHFS_STATE_DIR:-/tmp/kaas-cephfs-smoke.$$}"
work="$(mktemp -d)"
holder=""

cleanup() {
  local rc=$?
  [[ -n "$holder" ]] && kill -KILL "$holder" 2>/dev/null
  "$CEPHFS" down || rc=1
  rm -rf "$work"
  ((rc == 0)) && echo "PASS" || echo "FAIL (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
# Bazel's timeout sends SIGTERM: tear the cluster down then too.
trap 'exit 143' TERM INT

fail() {
  echo "FAIL: $*"
  exit 1
}
# Prints a passed check and the seconds it took.
step_start=$SECONDS
ok() {
  echo "ok ($((SECONDS - step_start)) s): $*"
  step_start=$SECONDS
}

# Holds an exclusive flock on FILE in a background process (the sleep holds
# the fd itself, so killing $holder releases it) and waits until it is held.
hold_flock() {
  rm -f "$work/held"
  (
    exec 8>"$1"
    flock -x 8
    : >"$work/held"
    exec sleep 600
  ) &
  holder=$!
  poll 30 test -e "$work/held" || fail "no flock on $1 within 30 s"
}

release_flock() {
  kill -KILL "$holder"
  wait "$holder" 2>/dev/null || true
  holder=""
}

start=$SECONDS
"$CEPHFS" up
ok "cephfs.sh up in $((SECONDS - start)) s"
eval "$("$CEPHFS" env)"
A="$KAAS_CEPHFS_MOUNT_A"
B="$KAAS_CEPHFS_MOUNT_B"
[[ -n "$KAAS_CEPHFS_PID_A" && -n "$KAAS_CEPHFS_PID_B" ]] || fail "env gave no ceph-fuse pids"
ok "env: A=$A (pid $KAAS_CEPHFS_PID_A), B=$B (pid $KAAS_CEPHFS_PID_B)"

# Write through A with fsync, read through B after A closed it.
head -c $((4 << 20)) /dev/urandom >"$work/data"
dd if="$work/data" of="$A/data" bs=1M conv=fsync status=none
[[ "$(sha256sum <"$B/data")" == "$(sha256sum <"$work/data")" ]] ||
  fail "4 MiB written+fsynced on A reads back different on B"
ok "4 MiB written + fsync on A reads back identical on B"

# O_CREAT|O_EXCL race: bash's noclobber redirection opens a missing file with
# O_CREAT|O_EXCL. One name per round; a racer on each client blocks reading
# its own fifo, so one write to both starts the two attempts together.
rounds=200
mkdir "$A/excl"
mkfifo "$work/go.a" "$work/go.b" "$work/done"
racer() {
  local dir="$1" me="$2" i
  set -C
  exec 3<"$work/go.$me" 4>"$work/done"
  while read -r i <&3; do
    if { echo "$me" >"$dir/$i"; } 2>/dev/null; then
      echo "$i $me win" >&4
    else
      echo "$i $me lose" >&4
    fi
  done
}
racer "$A/excl" a &
racer "$B/excl" b &
exec 5>"$work/go.a" 6>"$work/go.b" 7<"$work/done"
wins_a=0 wins_b=0
for ((i = 0; i < rounds; i++)); do
  echo "$i" >&5
  echo "$i" >&6
  read -r i1 me1 r1 <&7
  read -r i2 me2 r2 <&7
  [[ "$i1" == "$i" && "$i2" == "$i" ]] || fail "O_EXCL: round $i got answers for $i1 and $i2"
  case "$r1 $r2" in
    "win lose") winner="$me1" ;;
    "lose win") winner="$me2" ;;
    *) fail "O_EXCL: round $i: $me1 $r1, $me2 $r2" ;;
  esac
  [[ "$winner" == a ]] && wins_a=$((wins_a + 1)) || wins_b=$((wins_b + 1))
  [[ "$(<"$A/excl/$i")" == "$winner" && "$(<"$B/excl/$i")" == "$winner" ]] ||
    fail "O_EXCL: round $i won by $winner, the file says otherwise"
done
exec 5>&- 6>&- 7<&-
wait
ok "O_CREAT|O_EXCL race, $rounds rounds, both clients at once: exactly one winner each (A $wins_a, B $wins_b), content agrees on A and B"

# Rename over an existing file on A; B opens afterwards and sees the new one.
echo v1 >"$A/target"
[[ "$(<"$B/target")" == v1 ]] || fail "B does not see v1"
echo v2 >"$A/target.tmp"
sync "$A/target.tmp"
mv "$A/target.tmp" "$A/target"
[[ "$(<"$B/target")" == v2 ]] || fail "B does not see the renamed-over v2"
[[ ! -e "$B/target.tmp" ]] || fail "B still sees target.tmp after the rename"
rm "$A/target"
[[ ! -e "$B/target" ]] || fail "B still sees target after unlink on A"
ok "rename over a file on A: B reads the new content; unlink on A: B gets ENOENT"

# flock across the clients, both ways.
touch "$A/lock"
for dir in A B; do
  if [[ "$dir" == A ]]; then mine="$A" other="$B"; else mine="$B" other="$A"; fi
  hold_flock "$mine/lock"
  if flock -n -x "$other/lock" true; then fail "exclusive flock on $dir, yet a non-blocking flock -x succeeds on the other"; fi
  if flock -n -s "$other/lock" true; then fail "exclusive flock on $dir, yet a non-blocking flock -s succeeds on the other"; fi
  release_flock
  poll 10 flock -n -x "$other/lock" true || fail "flock not free on the other client 10 s after release on $dir"
  ok "exclusive flock held on $dir: non-blocking flock -x and -s fail on the other client; free there after release"
done

# SIGKILL A's ceph-fuse while a process holds a flock through it, evict it:
# B gets the lock at once (else after the 60 s session timeout).
hold_flock "$A/lock"
kill -KILL "$KAAS_CEPHFS_PID_A"
"$CEPHFS" evict a
start=$SECONDS
flock -w 20 -x "$B/lock" true || fail "B cannot take the lock 20 s after A's ceph-fuse was killed and evicted"
ok "SIGKILL of A's ceph-fuse holding a flock, evict a: B took the lock in $((SECONDS - start)) s"
if "$CEPHFS" status >/dev/null; then fail "status exits 0 with mount A dead"; fi
ok "status exits non-zero with mount A dead"
release_flock
start=$SECONDS
"$CEPHFS" up
eval "$("$CEPHFS" env)"
[[ "$(sha256sum <"$A/data")" == "$(sha256sum <"$work/data")" ]] || fail "remounted A reads data differently"
ok "up remounted A in $((SECONDS - start)) s (new ceph-fuse pid $KAAS_CEPHFS_PID_A); data intact"

"$CEPHFS" status || fail "status exits $?"
ok "status exits 0"
