# Starts a throwaway Redis server for the tests of the distributed rate limiter
# (ratelimit/redis) and the Redis benchmarks, and exports its address as REDIS_ADDR.
# Source it from bash (it is written for .ci/run's `set -euo pipefail`):
#
#   source .ci/redis.sh
#
# - installs redis-server with apt-get when it is missing (with sudo when not root);
# - starts it daemonized on 127.0.0.1, on a free port, with no persistence (--save ''
#   --appendonly no) and its files in a temporary directory;
# - exports REDIS_ADDR=127.0.0.1:<port>;
# - stops it, and removes its directory, when the sourcing shell exits (an EXIT trap that
#   keeps any EXIT trap already set), or earlier with r4c_redis_stop.
#
# An already set REDIS_ADDR is kept as is: nothing is installed or started.

r4c_redis_stop() {
  if [ -n "${R4C_REDIS_DIR:-}" ]; then
    if [ -f "$R4C_REDIS_DIR/redis.pid" ]; then
      local pid i
      pid=$(cat "$R4C_REDIS_DIR/redis.pid")
      kill "$pid" 2>/dev/null || true
      for i in $(seq 1 50); do # up to 5s for it to exit
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
    rm -rf "$R4C_REDIS_DIR"
    R4C_REDIS_DIR=
  fi
}

r4c_redis_start() {
  local sudo="" port attempt i pid
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis.sh: installing redis-server"
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    fi
    $sudo apt-get install -y redis-server >/dev/null ||
      { $sudo apt-get update >/dev/null && $sudo apt-get install -y redis-server >/dev/null; }
  fi
  # The package may start a system service on 6379: the tests use their own server.
  R4C_REDIS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/r4c-redis.XXXXXX")
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 40000))
    if command -v ss >/dev/null 2>&1 && ss -ltn 2>/dev/null | grep -q ":$port "; then
      continue
    fi
    rm -f "$R4C_REDIS_DIR/redis.pid"
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
      --daemonize yes --dir "$R4C_REDIS_DIR" --pidfile "$R4C_REDIS_DIR/redis.pid" \
      --logfile "$R4C_REDIS_DIR/redis.log" --loglevel warning || continue
    for i in $(seq 1 50); do
      if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
        export REDIS_ADDR="127.0.0.1:$port"
        echo "redis.sh: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on $REDIS_ADDR"
        return 0
      fi
      sleep 0.1
    done
    # Not answering (e.g. the port was taken meanwhile): stop it and try another port.
    if [ -f "$R4C_REDIS_DIR/redis.pid" ]; then
      pid=$(cat "$R4C_REDIS_DIR/redis.pid")
      kill "$pid" 2>/dev/null || true
    fi
  done
  echo "redis.sh: could not start redis-server; its log:" >&2
  cat "$R4C_REDIS_DIR/redis.log" >&2 2>/dev/null || true
  r4c_redis_stop
  return 1
}

if [ -z "${REDIS_ADDR:-}" ]; then
  r4c_redis_start
  r4c_prev_exit_trap=$(trap -p EXIT | sed -e "s/^trap -- '\(.*\)' EXIT\$/\1/")
  # shellcheck disable=SC2064 # expand the previous trap now
  trap "r4c_redis_stop${r4c_prev_exit_trap:+; $r4c_prev_exit_trap}" EXIT
  unset r4c_prev_exit_trap
fi
