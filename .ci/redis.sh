# Starts a throwaway Redis server, and a throwaway Redis Cluster, for the tests of the
# distributed rate limiter (ratelimit/redis) and the Redis benchmarks, and exports their
# addresses as REDIS_ADDR and REDIS_CLUSTER_ADDRS. Source it from bash (it is written for
# .ci/run's `set -euo pipefail`):
#
#   source .ci/redis.sh
#
# - installs redis-server with apt-get when it is missing (with sudo when not root), and
#   redis-tools when redis-cli is;
# - starts the server daemonized on 127.0.0.1, on a free port, with no persistence
#   (--save '' --appendonly no) and its files in a temporary directory, and exports
#   REDIS_ADDR=127.0.0.1:<port>;
# - starts three more, as the masters of a Redis Cluster, the same way (each with its
#   own directory, on a free port whose cluster bus port, 10000 above, is free too; with
#   --cluster-require-full-coverage no, so that the other masters keep serving while one
#   is down, and --cluster-node-timeout 15000, Redis's default), joins them with
#   redis-cli --cluster create (no replicas), waits until each says cluster_state:ok, and
#   exports REDIS_CLUSTER_ADDRS=127.0.0.1:<port>,127.0.0.1:<port>,127.0.0.1:<port>;
# - stops them all, and removes their directories, when the sourcing shell exits (EXIT
#   traps that keep any EXIT trap already set), or earlier with r4c_redis_stop and
#   r4c_redis_cluster_stop.
#
# An already set REDIS_ADDR is kept as is: no server is started. The same goes for an
# already set REDIS_CLUSTER_ADDRS and the cluster. Nothing is installed when neither is
# needed.

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

# r4c_redis_install installs redis-server, and redis-cli, when they are missing.
r4c_redis_install() {
  local sudo="" pkgs=""
  command -v redis-server >/dev/null 2>&1 || pkgs="redis-server"
  command -v redis-cli >/dev/null 2>&1 || pkgs="${pkgs:+$pkgs }redis-tools"
  if [ -n "$pkgs" ]; then
    echo "redis.sh: installing $pkgs"
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    fi
    # shellcheck disable=SC2086 # one word per package
    $sudo apt-get install -y $pkgs >/dev/null ||
      { $sudo apt-get update >/dev/null && $sudo apt-get install -y $pkgs >/dev/null; }
  fi
}

r4c_redis_start() {
  local port attempt i pid
  r4c_redis_install
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

# r4c_redis_cluster_stop stops the cluster's nodes, waits up to 5s for them to exit, and
# removes their directories.
r4c_redis_cluster_stop() {
  if [ -n "${R4C_REDIS_CLUSTER_DIR:-}" ]; then
    local pidfile pid pids="" alive i
    for pidfile in "$R4C_REDIS_CLUSTER_DIR"/node*/redis.pid; do
      if [ -f "$pidfile" ]; then
        pid=$(cat "$pidfile")
        if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
          pids="$pids $pid"
        fi
      fi
    done
    for i in $(seq 1 50); do
      alive=""
      for pid in $pids; do
        if kill -0 "$pid" 2>/dev/null; then alive=1; fi
      done
      [ -n "$alive" ] || break
      sleep 0.1
    done
    rm -rf "$R4C_REDIS_CLUSTER_DIR"
    R4C_REDIS_CLUSTER_DIR=
  fi
}

# r4c_redis_port_busy PORT succeeds when something listens on PORT (as far as ss tells).
r4c_redis_port_busy() {
  local listening
  command -v ss >/dev/null 2>&1 || return 1
  listening=$(ss -ltn 2>/dev/null || true)
  [[ $listening == *":$1 "* ]]
}

# r4c_redis_serves PORT PIDFILE succeeds when the server answering on PORT is the process
# named in PIDFILE (not another one that took the port).
r4c_redis_serves() {
  local pid info
  [ -f "$2" ] || return 1
  pid=$(cat "$2")
  [ -n "$pid" ] || return 1
  info=$(redis-cli -h 127.0.0.1 -p "$1" info server 2>/dev/null) || return 1
  [[ $info =~ process_id:${pid}[^0-9] ]]
}

r4c_redis_cluster_start() {
  local n dir port candidate attempt i ok ports="" addrs=""
  r4c_redis_install
  R4C_REDIS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/r4c-redis-cluster.XXXXXX")
  for n in 0 1 2; do
    dir="$R4C_REDIS_CLUSTER_DIR/node$n"
    mkdir "$dir"
    port=""
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
      # Below the ephemeral ports, and so is the cluster bus port, 10000 above.
      candidate=$((10000 + RANDOM % 12000))
      if [[ " $ports " == *" $candidate "* || " $ports " == *" $((candidate - 10000)) "* ||
        " $ports " == *" $((candidate + 10000)) "* ]] ||
        r4c_redis_port_busy "$candidate" || r4c_redis_port_busy "$((candidate + 10000))"; then
        continue
      fi
      rm -f "$dir/redis.pid"
      redis-server --bind 127.0.0.1 --port "$candidate" --save '' --appendonly no \
        --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
        --logfile "$dir/redis.log" --loglevel warning \
        --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-require-full-coverage no --cluster-node-timeout 15000 \
        --cluster-announce-ip 127.0.0.1 || continue
      for i in $(seq 1 50); do
        if r4c_redis_serves "$candidate" "$dir/redis.pid"; then
          port=$candidate
          break 2
        fi
        sleep 0.1
      done
      # Not answering (e.g. a port was taken meanwhile): stop it and try other ports.
      if [ -f "$dir/redis.pid" ]; then
        kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
      fi
    done
    if [ -z "$port" ]; then
      echo "redis.sh: could not start cluster node $n; its log:" >&2
      cat "$dir/redis.log" >&2 2>/dev/null || true
      r4c_redis_cluster_stop
      return 1
    fi
    ports="${ports:+$ports }$port"
    addrs="${addrs:+$addrs,}127.0.0.1:$port"
  done
  # shellcheck disable=SC2086 # one word per address
  if ! redis-cli --cluster create ${addrs//,/ } --cluster-replicas 0 --cluster-yes \
    >"$R4C_REDIS_CLUSTER_DIR/create.log" 2>&1; then
    echo "redis.sh: redis-cli --cluster create failed:" >&2
    cat "$R4C_REDIS_CLUSTER_DIR/create.log" >&2 || true
    r4c_redis_cluster_stop
    return 1
  fi
  for i in $(seq 1 100); do # up to 10s; a new master waits 2s before it says ok
    ok=1
    for port in $ports; do
      if [[ "$(redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null)" != *cluster_state:ok* ]]; then
        ok=""
      fi
    done
    if [ -n "$ok" ]; then
      export REDIS_CLUSTER_ADDRS="$addrs"
      echo "redis.sh: Redis Cluster of 3 masters on $REDIS_CLUSTER_ADDRS"
      return 0
    fi
    sleep 0.1
  done
  echo "redis.sh: the Redis Cluster on $addrs did not say cluster_state:ok within 10s:" >&2
  for port in $ports; do
    redis-cli -h 127.0.0.1 -p "$port" cluster info 2>&1 | grep cluster_state >&2 || true
  done
  r4c_redis_cluster_stop
  return 1
}

# r4c_redis_on_exit CMD runs CMD when the sourcing shell exits, before any EXIT trap
# already set.
r4c_redis_on_exit() {
  local prev
  prev=$(trap -p EXIT | sed -e "s/^trap -- '\(.*\)' EXIT\$/\1/")
  # shellcheck disable=SC2064 # expand the previous trap now
  trap "$1${prev:+; $prev}" EXIT
}

if [ -z "${REDIS_ADDR:-}" ]; then
  r4c_redis_start
  r4c_redis_on_exit r4c_redis_stop
fi

if [ -z "${REDIS_CLUSTER_ADDRS:-}" ]; then
  r4c_redis_on_exit r4c_redis_cluster_stop
  r4c_redis_cluster_start
fi
