#!/usr/bin/env bash
# Starts a private Docker engine for the deploy tests, or stops it.
#
#   source scripts/deploy/engine.sh start <dir>   # exports DOCKER_HOST; the engine's pid is in <dir>/dockerd.pid
#   bash scripts/deploy/engine.sh stop <dir>
#
# The engine keeps everything under <dir> (data root, exec root, socket) and creates no network:
# no bridge, no iptables rules. Containers must run with host networking, so all traffic stays on
# loopback.
set -euo pipefail

engine_start() {
  local dir=$1
  mkdir -p "$dir/data" "$dir/exec"
  # The exec root holds the containers' unix sockets: its path must stay short.
  local exec_root
  exec_root=$(mktemp -d /tmp/refvid-dx.XXXX)
  echo "$exec_root" >"$dir/exec-root"
  dockerd --data-root "$dir/data" --exec-root "$exec_root" --pidfile "$dir/dockerd.pid" \
    -H "unix://$dir/docker.sock" --bridge=none --iptables=false --ip6tables=false \
    --storage-driver=overlay2 >"$dir/dockerd.log" 2>&1 &
  export DOCKER_HOST="unix://$dir/docker.sock"
  for _ in $(seq 1 60); do
    if docker version >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "deploy: the Docker engine did not start; its log ($dir/dockerd.log) ends:" >&2
  tail -n 30 "$dir/dockerd.log" >&2
  return 1
}

engine_stop() {
  local dir=$1
  [ -f "$dir/dockerd.pid" ] || return 0
  local pid
  pid=$(cat "$dir/dockerd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  if [ -f "$dir/exec-root" ]; then
    local exec_root
    exec_root=$(cat "$dir/exec-root")
    # The engine leaves its network namespace mounted.
    for ns in "$exec_root"/netns/*; do [ -e "$ns" ] && umount "$ns" 2>/dev/null || true; done
    rm -rf "$exec_root"
  fi
}

case "${1:-}" in
  start) engine_start "$2" ;;
  stop) engine_stop "$2" ;;
  *) echo "usage: engine.sh start|stop <dir>" >&2; exit 2 ;;
esac
