#!/usr/bin/env bash
# A single-node Ceph cluster (Debian 12's Ceph 16, Pacific) with one CephFS
# mounted twice by ceph-fuse, as two independent clients, for tests that run
# the engine in several processes on a shared file system.
#
#   cephfs.sh install    apt-get install the Debian packages that are missing
#   cephfs.sh up         bring the cluster up and mount it twice; does nothing
#                        if it is already healthy and both mounts are live,
#                        and repairs what is missing otherwise (a dead daemon,
#                        a stale mount)
#   cephfs.sh down       unmount both mounts, stop every process of this state
#                        dir, remove the state dir; succeeds whatever is left
#   cephfs.sh status     print daemons, health and mounts; exit 0 iff healthy
#                        and both mounts are live
#   cephfs.sh evict a|b  evict mount a's (or b's) client session from the MDS,
#                        after a test SIGKILLed that ceph-fuse (else the other
#                        client waits up to 60 s for its capabilities)
#   cephfs.sh env        print `export NAME=value` lines for eval: the mounts,
#                        the state dir, the conf and the ceph-fuse pids
#
# Environment:
#   KAAS_CEPHFS_STATE_DIR     state dir (default /tmp/kaas-cephfs): conf, data,
#                             logs, pid files, admin sockets and the mount
#                             points mnt-a and mnt-b all live under it
#   KAAS_CEPHFS_TIMEOUT       seconds each waited-for step may take (120)
#   KAAS_CEPHFS_OSD_SIZE_GIB  size of the OSD's sparse block file (20)
#   KAAS_CEPHFS_KEEP_LOGS     if set, a dir `down` copies the daemon logs to
#                             before it removes the state dir
#
# Every daemon runs as the caller, binds to 127.0.0.1 only, and is started
# with `-c <state dir>/ceph.conf`; that argument is how `down` finds them, so
# two state dirs, or a system cluster, are never touched. The monitor's ports
# and the daemons' port range are picked free per state dir.
# The recipe, its pitfalls and the measured semantics: testing/cephfs/README.md.
set -euo pipefail

PACKAGES=(
  ceph-mon ceph-osd ceph-mds ceph-mgr ceph-fuse ceph-common uuid-runtime fuse3
  iproute2 util-linux
)

S_GIVEN="${KAAS_CEPHFS_STATE_DIR:-/tmp/kaas-cephfs}"
# Canonical (symlinks resolved), as the mount table has it.
S="$(realpath -m "$S_GIVEN")"
TIMEOUT="${KAAS_CEPHFS_TIMEOUT:-120}"
OSD_SIZE_GIB="${KAAS_CEPHFS_OSD_SIZE_GIB:-20}"
CONF="$S/ceph.conf"
RUN="$S/run"
LOG="$S/log"
MARKER="$S/.kaas-cephfs"
CLIENTS=(a b)

log() { printf 'cephfs: %s\n' "$*" >&2; }
die() {
  log "FAIL: $*"
  exit 1
}

# Fails naming STEP, with the last lines of the daemon log LOGFILE (and of the
# daemon's captured stdout/stderr, where early start-up errors go).
fail_step() {
  local step="$1" logfile="$2" f
  log "FAIL: $step"
  for f in "$logfile" "${logfile%.log}.out"; do
    [[ -s "$f" ]] || continue
    # Without the lines our own polling of the admin socket leaves there.
    log "--- last 40 lines of $f:"
    grep -v 'asok_command: ' "$f" | tail -n 40 >&2
  done
  exit 1
}

# Polls the command until it succeeds, every 0.2 s, for at most $TIMEOUT
# seconds; then fails naming STEP and showing LOGFILE.
wait_for() {
  local step="$1" logfile="$2"
  shift 2
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail_step "timed out after ${TIMEOUT}s: $step" "$logfile"
    sleep 0.2
  done
}

check_state_dir() {
  [[ "$S_GIVEN" == /* ]] || die "KAAS_CEPHFS_STATE_DIR must be absolute: $S_GIVEN"
  [[ "$S" =~ ^/[A-Za-z0-9._/+-]+$ ]] ||
    die "KAAS_CEPHFS_STATE_DIR may hold only [A-Za-z0-9._/+-]: $S"
  [[ "$S" != / && "$(dirname "$S")" != / ]] || die "refusing state dir $S"
}

# True if DIR is ours to fill or remove: absent, empty, or marked by `up`.
# Keeps `down` from deleting a directory someone pointed the variable at.
state_dir_is_ours() {
  [[ ! -e "$S" || -f "$MARKER" ]] && return 0
  [[ -d "$S" && -z "$(ls -A "$S")" ]]
}

# The ceph CLI on this cluster. The deadline matters: with no reachable
# monitor or MDS it would otherwise retry for minutes.
cephc() { timeout 60 ceph -c "$CONF" --connect-timeout 15 "$@"; }

# Asks daemon NAME (mon.a, osd.0, mds.a, client.a) over its admin socket,
# which works whatever the monitor thinks of it.
asok() {
  local name="$1"
  shift
  timeout 15 ceph -c "$CONF" --admin-daemon "$RUN/$name.asok" "$@"
}

# True if process PID is alive and was started with this state dir's conf.
own_process() {
  local cmdline
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")" || return 1
  [[ " $cmdline " == *" $CONF "* ]]
}

# Every live process started with this state dir's conf: the daemons, the
# ceph-fuse clients, and any ceph CLI call of ours still running.
own_pids() {
  local d pid
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    [[ "$pid" == "$$" || "$pid" == "$BASHPID" ]] && continue
    own_process "$pid" && echo "$pid"
  done
  return 0
}

# Prints the pid of daemon NAME (mon.a, client.a, ...) if its pid file names a
# live process of this state dir. Pid files outlive a crash, pids get reused.
daemon_pid() {
  local f="$RUN/$1.pid" pid
  [[ -f "$f" ]] || return 1
  pid="$(<"$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] && own_process "$pid" || return 1
  echo "$pid"
}

# Runs a daemon detached from our stdio (a caller reading our output through
# a pipe would otherwise wait for the daemon) and from the state dir lock.
spawn() {
  local name="$1"
  shift
  "$@" -c "$CONF" </dev/null >>"$LOG/$name.out" 2>&1 9<&- ||
    fail_step "$name did not start: $*" "$LOG/$name.log"
}

# True if MNT is a mount point now. Reads the mount table instead of calling
# stat or mountpoint(1), which block on a hung FUSE mount.
is_mounted() {
  awk -v m="$1" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo
}

mounts_under_state_dir() {
  awk -v p="$S/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo
}

# Unmounts MNT without blocking on its ceph-fuse. Plain umount(8) first
# calls statfs on the mount point, which ceph-fuse answers from the monitor:
# with the monitor or the OSD gone that waits uninterruptibly (D state, deaf
# to SIGKILL, until ceph-fuse dies). -c (--no-canonicalize) skips the statfs
# and the stat. Then, if the mount is busy or the umount failed: -f, which
# for FUSE aborts the connection (pending and later calls fail with
# ECONNABORTED, a stale mount is released); last -l, which detaches it
# whatever holds it.
unmount() {
  local mnt="$1"
  is_mounted "$mnt" || return 0
  timeout 20 umount -c "$mnt" 2>/dev/null && return 0
  log "umount $mnt failed; aborting its FUSE connection (umount -f)"
  timeout 20 umount -c -f "$mnt" 2>/dev/null && return 0
  is_mounted "$mnt" || return 0
  log "umount -f $mnt failed; unmounting lazily"
  umount -c -l "$mnt"
}

# Stops the processes given as pids after the signal (TERM or KILL), with
# SIGKILL for those still there after 5 s.
stop_pids() {
  local sig="$1"
  shift
  (($# == 0)) && return 0
  kill "-$sig" "$@" 2>/dev/null || true
  local deadline=$((SECONDS + 5)) pid alive
  while :; do
    alive=()
    for pid in "$@"; do own_process "$pid" && alive+=("$pid"); done
    ((${#alive[@]} == 0)) && return 0
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  local names=()
  for pid in "${alive[@]}"; do names+=("$(cat "/proc/$pid/comm" 2>/dev/null)[$pid]"); done
  log "SIGKILL to ${names[*]} (still running 5 s after SIG$sig)"
  kill -KILL "${alive[@]}" 2>/dev/null || true
  deadline=$((SECONDS + 10))
  for pid in "${alive[@]}"; do
    while own_process "$pid"; do
      ((SECONDS < deadline)) || die "process $pid survives SIGKILL"
      sleep 0.1
    done
  done
}

# The monitor's v2 port; v1 is the next one and the other daemons bind in
# the 100 ports after. Started from a number derived from the state dir so
# two state dirs tend to differ, stepping past ports that are taken, and
# away from Ceph's defaults (3300, 6789, 6800-7568) so a system cluster
# neither collides nor answers our clients.
pick_port() {
  local base p
  base=$(($(printf '%s' "$S" | cksum | cut -d' ' -f1) % 200 * 100 + 40000))
  for ((p = base; p < 60000; p += 100)); do
    ss -Htan "( sport >= :$p and sport < :$((p + 100)) )" | grep -q . || {
      echo "$p"
      return 0
    }
  done
  die "no free block of 100 ports from $base"
}

write_conf() {
  [[ -f "$CONF" ]] && return 0
  local port fsid
  port="$(pick_port)"
  fsid="$(uuidgen)"
  mkdir -p "$RUN" "$LOG" "$S/crash"
  # $name and $pid are expanded by Ceph, per daemon.
  cat >"$CONF.tmp" <<EOF
# Written by testing/cephfs/cephfs.sh for the state dir $S.
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$port,v1:127.0.0.1:$((port + 1))]
public_network = 127.0.0.0/8
cluster_network = 127.0.0.0/8
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv6 = false
ms_bind_port_min = $((port + 2))
ms_bind_port_max = $((port + 99))
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
run_dir = $RUN
admin_socket = $RUN/\$name.asok
pid_file = $RUN/\$name.pid
log_file = $LOG/\$name.log
crash_dir = $S/crash
keyring = $S/keyring
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mgr_initial_modules = iostat
osd_memory_target = 1073741824
mds_cache_memory_limit = 268435456
mon_warn_on_pool_no_redundancy = false
mon_warn_on_insecure_global_id_reclaim = false
mon_warn_on_insecure_global_id_reclaim_allowed = false
mon_data_avail_warn = 2
mon_data_avail_crit = 1
# A create in a directory another client reads stalls one MDS tick (5 s)
# with early replies on.
mds_early_reply = false
# A stat or open on B of a file A just created and wrote sometimes waits for
# the MDS's next tick ("failed to rdlock, waiting" in dump_historic_ops):
# up to 5 s at the default 5 s tick, about 1 in 100 times; <= 0.2 s here.
mds_tick_interval = 0.2

[mon]
mon_data = $S/\$name
[mgr]
mgr_data = $S/\$name
[mds]
mds_data = $S/\$name
[osd]
osd_data = $S/\$name
osd_objectstore = bluestore
# Bluestore creates \$osd_data/block as a sparse file of this size. Setting
# bluestore_block_path as well makes mkfs fail ("Too many levels of symbolic
# links").
bluestore_block_create = true
bluestore_block_size = $((OSD_SIZE_GIB << 30))
bluestore_fsck_on_mkfs = false
bluestore_fsck_on_mount = false

[client]
admin_socket = $RUN/\$name.\$pid.asok
[client.admin]
log_to_file = false
[client.a]
admin_socket = $RUN/client.a.asok
[client.b]
admin_socket = $RUN/client.b.asok
EOF
  mv "$CONF.tmp" "$CONF"
}

conf_get() { sed -n "s/^$1 = //p" "$CONF" | head -n 1; }

start_mon() {
  daemon_pid mon.a >/dev/null && return 0
  if [[ ! -f "$S/mon.a/kaas-mkfs-done" ]]; then
    local host
    host="$(conf_get mon_host)"
    rm -rf "$S/mon.a" "$S/keyring"
    mkdir -p "$S/mon.a"
    ceph-authtool --create-keyring "$S/keyring" --gen-key -n mon. \
      --cap mon 'allow *' >/dev/null
    monmaptool --create --clobber --fsid "$(conf_get fsid)" --addv a "$host" \
      "$S/monmap" >/dev/null
    ceph-mon -c "$CONF" --mkfs -i a --monmap "$S/monmap" \
      >>"$LOG/mon.a.out" 2>&1 || fail_step "ceph-mon --mkfs" "$LOG/mon.a.log"
    touch "$S/mon.a/kaas-mkfs-done"
  fi
  spawn mon.a ceph-mon -i a
}

start_mgr() {
  daemon_pid mgr.x >/dev/null && return 0
  mkdir -p "$S/mgr.x"
  spawn mgr.x ceph-mgr -i x
}

# `ceph osd new` with the same uuid is idempotent; a fresh uuid on a re-run
# would allocate osd.1, so the uuid is kept in the state dir.
start_osd() {
  daemon_pid osd.0 >/dev/null && return 0
  [[ -s "$S/osd-uuid" ]] || uuidgen >"$S/osd-uuid"
  local uuid id
  uuid="$(<"$S/osd-uuid")"
  id="$(cephc osd new "$uuid")" || fail_step "ceph osd new" "$LOG/mon.a.log"
  [[ "$id" == 0 ]] || die "ceph osd new gave osd.$id, expected osd.0"
  if [[ ! -f "$S/osd.0/kaas-mkfs-done" ]]; then
    rm -rf "$S/osd.0"
    mkdir -p "$S/osd.0"
    ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid" \
      >>"$LOG/osd.0.out" 2>&1 || fail_step "ceph-osd --mkfs" "$LOG/osd.0.log"
    touch "$S/osd.0/kaas-mkfs-done"
  fi
  spawn osd.0 ceph-osd -i 0
}

# The daemons' own view over their admin sockets: after a restart the
# monitor briefly still reports the previous OSD incarnation as up.
osd_active() { asok osd.0 status | grep -q '"state": "active"'; }
mds_active() { asok mds.a status | grep -q '"state": "up:active"'; }
mgr_available() { cephc mgr stat | grep -q '"available": true'; }
health_ok() { [[ "$(cephc health)" == HEALTH_OK ]]; }
fs_exists() { cephc fs ls --format json | grep -q '"name":"cephfs"'; }

create_fs() {
  fs_exists && return 0
  local pool
  cephc osd pool create cephfs_metadata 8 >/dev/null 2>&1
  cephc osd pool create cephfs_data 32 >/dev/null 2>&1
  for pool in cephfs_metadata cephfs_data; do
    cephc osd pool set "$pool" size 1 --yes-i-really-mean-it >/dev/null 2>&1
  done
  cephc fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 ||
    fail_step "ceph fs new" "$LOG/mon.a.log"
}

start_mds() {
  daemon_pid mds.a >/dev/null && return 0
  mkdir -p "$S/mds.a"
  spawn mds.a ceph-mds -i a
}

# The global id of a live ceph-fuse: what `client evict id=` wants, and what
# the MDS session list shows. Kept in a file as `evict` follows a SIGKILL.
client_gid() { asok "client.$1" status | sed -n 's/^ *"id": \([0-9]*\),*$/\1/p'; }

# True if the MDS has an open session with the global id mount C recorded.
session_open() {
  local gid
  gid="$(cat "$S/client.$1.gid" 2>/dev/null)" || return 1
  [[ -n "$gid" ]] || return 1
  # The list is pretty-printed JSON: a session's own fields are indented 8.
  asok mds.a session ls | awk -v gid="$gid" '
    /^        "id": / { id = $2; sub(/,$/, "", id) }
    /^        "state": "open"/ && id == gid { found = 1 }
    END { exit !found }'
}

# A mount is live if its ceph-fuse runs, it is in the mount table, and the
# MDS holds an open session for it (an evicted client fails the last one).
mount_live() {
  local c="$1"
  daemon_pid "client.$c" >/dev/null && is_mounted "$S/mnt-$c" && session_open "$c"
}

mount_client() {
  local c="$1" mnt="$S/mnt-$1" pid gid
  mount_live "$c" && return 0
  # Whatever is left of an earlier mount (a stale one after ceph-fuse died,
  # or an evicted one) goes first.
  unmount "$mnt"
  if pid="$(daemon_pid "client.$c")"; then stop_pids TERM "$pid"; fi
  rm -f "$S/client.$c.gid"
  # Files written to the path while nothing was mounted there are in the
  # local directory, and ceph-fuse (libfuse 2) refuses a non-empty mount
  # point: set them aside.
  if [[ -d "$mnt" && -n "$(ls -A "$mnt")" ]]; then
    local aside
    aside="$mnt.stray.$(date +%s%N)"
    mv "$mnt" "$aside"
    log "mount point $mnt was not empty while unmounted; moved to $aside"
  fi
  mkdir -p "$mnt"
  spawn "client.$c" ceph-fuse --id "$c" "$mnt"
  wait_for "mount $c at $mnt" "$LOG/client.$c.log" is_mounted "$mnt"
  wait_for "admin socket of mount $c" "$LOG/client.$c.log" client_gid "$c"
  gid="$(client_gid "$c")"
  [[ -n "$gid" ]] || fail_step "no global id for mount $c" "$LOG/client.$c.log"
  echo "$gid" >"$S/client.$c.gid"
  wait_for "MDS session of mount $c" "$LOG/mds.a.log" session_open "$c"
}

daemons_running() {
  local d
  for d in mon.a mgr.x osd.0 mds.a; do daemon_pid "$d" >/dev/null || return 1; done
}

all_up() {
  daemons_running && mount_live a && mount_live b && health_ok
}

# Serialises up, down and evict on one state dir (fd 9, closed in daemons).
lock_state_dir() {
  exec 9<"$S"
  flock -w "$TIMEOUT" 9 || die "state dir $S is locked by another cephfs.sh"
}

cmd_up() {
  check_state_dir
  state_dir_is_ours || die "$S exists and is not a cephfs.sh state dir"
  mkdir -p "$S"
  touch "$MARKER"
  lock_state_dir
  if [[ -f "$CONF" ]] && all_up; then
    log "already up at $S"
    return 0
  fi
  local start=$SECONDS
  write_conf
  start_mon
  wait_for "monitor mon.a answering" "$LOG/mon.a.log" cephc mon stat
  start_mgr
  start_osd
  wait_for "osd.0 active" "$LOG/osd.0.log" osd_active
  create_fs
  start_mds
  wait_for "mds.a up:active" "$LOG/mds.a.log" mds_active
  local c
  for c in "${CLIENTS[@]}"; do mount_client "$c"; done
  wait_for "manager mgr.x available" "$LOG/mgr.x.log" mgr_available
  wait_for "HEALTH_OK (see: ceph -c $CONF health detail)" "$LOG/mon.a.log" health_ok
  log "up at $S in $((SECONDS - start)) s: mounts $S/mnt-a and $S/mnt-b"
}

cmd_down() {
  check_state_dir
  if [[ -e "$S" ]]; then
    state_dir_is_ours || die "$S exists and is not a cephfs.sh state dir"
    lock_state_dir
  fi
  local mnt pids=()
  # Every mount under the state dir, mnt-a and mnt-b and anything a test
  # mounted there, before the processes serving them go.
  while read -r mnt; do unmount "$mnt"; done < <(mounts_under_state_dir | sort -r)
  # In order, as each needs the next: the clients (gone ~0.1 s after their
  # unmount, but only while the MDS is there to close their sessions, else
  # they wait 30 s), then MDS and OSD while the monitor is there (without it
  # the OSD waits 5 s for it); the MDS gets SIGKILL, as its SIGTERM path
  # takes 5-9 s and its state goes with the state dir anyway. Then anything
  # else of this state dir, whether or not its pid file was written.
  local d pid
  for d in client.a client.b; do
    if pid="$(daemon_pid "$d")"; then pids+=("$pid"); fi
  done
  stop_pids TERM "${pids[@]}"
  if pid="$(daemon_pid mds.a)"; then stop_pids KILL "$pid"; fi
  if pid="$(daemon_pid osd.0)"; then stop_pids TERM "$pid"; fi
  mapfile -t pids < <(own_pids)
  stop_pids TERM "${pids[@]}"
  # ceph-fuse may have died while its mount stayed (stale, ENOTCONN).
  while read -r mnt; do unmount "$mnt"; done < <(mounts_under_state_dir | sort -r)
  [[ -z "$(mounts_under_state_dir)" ]] || die "mounts left under $S"
  if [[ -e "$S" ]]; then
    if [[ -n "${KAAS_CEPHFS_KEEP_LOGS:-}" && -d "$LOG" ]]; then
      mkdir -p "$KAAS_CEPHFS_KEEP_LOGS"
      cp -a "$LOG/." "$KAAS_CEPHFS_KEEP_LOGS/"
      log "logs copied to $KAAS_CEPHFS_KEEP_LOGS"
    fi
    rm -rf --one-file-system "$S"
    log "removed $S"
  fi
}

cmd_status() {
  check_state_dir
  local ok=0 d pid c mnt state
  echo "state dir: $S"
  for d in mon.a mgr.x osd.0 mds.a; do
    if pid="$(daemon_pid "$d")"; then
      echo "$d: running, pid $pid"
    else
      echo "$d: not running"
      ok=1
    fi
  done
  if daemon_pid mon.a >/dev/null; then
    cephc health detail 2>&1 | sed 's/^/health: /' || true
    health_ok || ok=1
  else
    echo "health: no monitor"
    ok=1
  fi
  for c in "${CLIENTS[@]}"; do
    mnt="$S/mnt-$c"
    pid="$(daemon_pid "client.$c")" || pid=""
    if mount_live "$c"; then
      state="live"
    elif is_mounted "$mnt"; then
      state="mounted but not live (ceph-fuse dead, or no open MDS session)"
      ok=1
    else
      state="not mounted"
      ok=1
    fi
    echo "mount $c: $mnt, ceph-fuse pid ${pid:-none}, global id" \
      "$(cat "$S/client.$c.gid" 2>/dev/null || echo none), $state"
  done
  return "$ok"
}

cmd_evict() {
  local c="${1:-}" gid
  [[ "$c" == a || "$c" == b ]] || die "usage: cephfs.sh evict a|b"
  check_state_dir
  [[ -f "$MARKER" ]] || die "nothing at $S"
  lock_state_dir
  gid="$(cat "$S/client.$c.gid" 2>/dev/null)" || die "mount $c has no recorded session"
  daemon_pid mds.a >/dev/null || die "mds.a is not running"
  cephc tell mds.a client evict "id=$gid" >/dev/null 2>&1 ||
    fail_step "evicting session $gid of mount $c" "$LOG/mds.a.log"
  log "evicted mount $c (global id $gid)"
}

cmd_env() {
  check_state_dir
  local pid_a pid_b
  pid_a="$(daemon_pid client.a)" || pid_a=""
  pid_b="$(daemon_pid client.b)" || pid_b=""
  printf 'export KAAS_CEPHFS_STATE_DIR=%q\n' "$S"
  printf 'export KAAS_CEPHFS_MOUNT_A=%q\n' "$S/mnt-a"
  printf 'export KAAS_CEPHFS_MOUNT_B=%q\n' "$S/mnt-b"
  printf 'export KAAS_CEPHFS_PID_A=%q\n' "$pid_a"
  printf 'export KAAS_CEPHFS_PID_B=%q\n' "$pid_b"
  printf 'export KAAS_CEPHFS_CONF=%q\n' "$CONF"
  [[ -n "$pid_a" && -n "$pid_b" ]]
}

# Prints which of the packages named in the arguments are not installed.
missing_packages() {
  local pkg status
  for pkg in "$@"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || printf '%s\n' "$pkg"
  done
}

cmd_install() {
  local missing
  mapfile -t missing < <(missing_packages "${PACKAGES[@]}")
  if ((${#missing[@]} == 0)); then
    log "all packages installed"
    return 0
  fi
  if [[ "$(id -u)" != 0 ]]; then
    log "missing Debian packages: ${missing[*]}; as root run:"
    printf '  apt-get update && apt-get install -y --no-install-recommends %s\n' \
      "${missing[*]}" >&2
    exit 1
  fi
  log "installing ${missing[*]}"
  # The lock timeout: another apt (./dev setup) may be running.
  local apt=(apt-get -qq -o DPkg::Lock::Timeout=600)
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" update
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends \
    "${missing[@]}" >/dev/null
}

case "${1:-}" in
  install) cmd_install ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  evict) cmd_evict "${2:-}" ;;
  env) cmd_env ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
