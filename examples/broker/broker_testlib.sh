# Sourced by the broker's shell tests (kcat_test.sh, rdkafka_*_test.sh),
# after they set `broker` (the kaas-broker binary), `data` (its log dir) and
# `work` (a scratch dir where every process's stderr goes to a *.err file).
#
#   fail MESSAGE...      prints MESSAGE and the tail of every $work/*.err,
#                        exits 1
#   start_broker [FLAG...]
#                        starts the broker on $data with the extra flags, on
#                        a free loopback port the first time and on the same
#                        one after (clients reconnect where they were); its
#                        first stdout line is read from a pipe, so nothing
#                        polls. Sets BROKER_PID, PORT, BOOTSTRAP and EPOCH
#                        (the leader epoch it announced)
#   stop_broker          SIGTERM; the broker must say it stopped and exit 0
#   kill_broker          SIGKILL (a crash: nothing is flushed or closed)

fail() {
  echo "FAIL: $*"
  local err
  for err in "$work"/*.err; do
    [[ -e "$err" ]] || continue
    echo "--- $(basename "$err") (last 30 lines):"
    tail -n 30 "$err"
  done
  exit 1
}

PORT=0
start_broker() {
  exec {broker_out}< <(exec "$broker" --log.dirs="$data" \
    --listeners="PLAINTEXT://127.0.0.1:$PORT" "$@" 2>>"$work/broker.err")
  BROKER_PID=$!
  local line
  read -r -u "$broker_out" line || fail "the broker did not start"
  echo "$line"
  [[ "$line" =~ listening\ on\ 127\.0\.0\.1:([0-9]+) ]] || fail "unexpected: $line"
  PORT="${BASH_REMATCH[1]}"
  BOOTSTRAP="127.0.0.1:$PORT"
  EPOCH=""
  [[ "$line" =~ leader\ epoch\ ([0-9]+) ]] && EPOCH="${BASH_REMATCH[1]}"
  return 0
}

stop_broker() {
  kill -TERM "$BROKER_PID"
  local rest
  rest="$(cat <&"$broker_out")"
  wait "$BROKER_PID" || fail "the broker exited with $? after SIGTERM"
  [[ "$rest" == *"kaas-broker: stopped"* ]] || fail "no clean stop: $rest"
  exec {broker_out}<&-
}

kill_broker() {
  kill -KILL "$BROKER_PID"
  wait "$BROKER_PID" 2>/dev/null || true
  exec {broker_out}<&-
}
