#!/usr/bin/env bash
# A local Kafka-compatible broker for development and tests: tansu with in-memory storage,
# listening on loopback only.
#
#   scripts/broker.sh start [PORT]   start it in the background (default port 9092) and print
#                                    its address, 127.0.0.1:PORT, once it accepts connections
#   scripts/broker.sh stop           stop it
#   scripts/broker.sh status         print its address if it runs (exit 1 otherwise)
#
# State lives under .tools/tansu/: broker.pid, broker.port, broker.log. Topics and offsets are
# kept in memory and are lost when the broker stops.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/.tools/tansu"
bin="$dir/tansu"
pidfile="$dir/broker.pid"
portfile="$dir/broker.port"
log="$dir/broker.log"

running_pid() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid="$(cat "$pidfile")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: it must still be our tansu.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "tansu broker" || return 1
  echo "$pid"
}

accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local port="${1:-9092}"
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
    echo "broker.sh: bad port '$port'" >&2
    exit 2
  fi
  if pid="$(running_pid)"; then
    local have
    have="$(cat "$portfile" 2>/dev/null || true)"
    if [ "$have" = "$port" ]; then
      echo "127.0.0.1:$port"
      exit 0
    fi
    echo "broker.sh: a broker already runs (pid $pid) on 127.0.0.1:$have; stop it first" >&2
    exit 1
  fi
  "$root/scripts/fetch-broker.sh"
  if accepts "$port"; then
    echo "broker.sh: 127.0.0.1:$port is already in use" >&2
    exit 1
  fi
  mkdir -p "$dir"
  local url="tcp://127.0.0.1:$port"
  setsid "$bin" broker --storage-engine memory://tansu/ \
    --listener-url "$url" --advertised-listener-url "$url" \
    </dev/null >"$log" 2>&1 &
  local pid=$!
  echo "$pid" >"$pidfile"
  echo "$port" >"$portfile"
  for _ in $(seq 1 200); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "broker.sh: tansu exited during start-up; log ($log):" >&2
      tail -n 20 "$log" >&2 || true
      rm -f "$pidfile" "$portfile"
      exit 1
    fi
    if accepts "$port"; then
      echo "127.0.0.1:$port"
      exit 0
    fi
    sleep 0.05
  done
  echo "broker.sh: tansu did not accept connections on 127.0.0.1:$port within 10 s; log: $log" >&2
  kill "$pid" 2>/dev/null || true
  rm -f "$pidfile" "$portfile"
  exit 1
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$pidfile" "$portfile"
    echo "broker.sh: no broker running" >&2
    return 0
  fi
  kill "$pid"
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$portfile"
  echo "broker.sh: stopped (pid $pid)" >&2
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  status)
    if pid="$(running_pid)"; then echo "127.0.0.1:$(cat "$portfile")"; else exit 1; fi ;;
  *) echo "usage: scripts/broker.sh start [PORT] | stop | status" >&2; exit 2 ;;
esac
