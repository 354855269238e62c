#!/usr/bin/env bash
# Installs wrk (the hot-path bench's load generator) from Debian's packages when it is missing.
set -euo pipefail
command -v wrk >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: wrk is not installed. As root: apt-get install -y wrk" >&2
  exit 1
fi
echo "bench: installing wrk with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 wrk >&2
