# Sourced by the CephFS test scripts.
#
# poll LIMIT COMMAND...: runs COMMAND every 0.1 s until it succeeds, for at
# most LIMIT seconds; fails (status 1) if it never did. For waits on what
# another process or the cluster does: a poll with a deadline, never a
# sleep that hopes.
poll() {
  local limit="$1"
  shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
