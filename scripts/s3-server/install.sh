#!/usr/bin/env bash
# Installs what the test S3 server (start.mjs) needs: OpenStack Swift 2.30 from Debian 12, whose
# s3api middleware checks SigV4 signatures like S3.
#
# Only python3-swift is installed: the library holds the servers, s3api, tempauth and the ring
# builder. The swift, swift-proxy, swift-object, swift-container and swift-account packages add
# 20 more packages for nothing start.mjs uses: thin swift-*-server wrappers (swift_launcher.py
# does their job), init scripts, /etc/swift samples, rsyslog, logrotate and uwsgi.
#
# Idempotent: exits 0 at once, without calling apt, when it is already installed.
set -euo pipefail

PACKAGES=(python3-swift)

is_installed() {
  [ -x /usr/bin/python3 ] &&
    [ -f /usr/lib/python3/dist-packages/swift/common/middleware/s3api/s3api.py ] &&
    [ "$(dpkg-query -W -f='${db:Status-Status}' python3-swift 2>/dev/null)" = installed ]
}

if is_installed; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "s3-server: OpenStack Swift (Debian package python3-swift) is not installed. As root, run:" >&2
  echo "  bash $(realpath "$0")" >&2
  echo "or: apt-get update && apt-get install -y --no-install-recommends ${PACKAGES[*]}" >&2
  exit 1
fi

# Test workers may start S3 servers in parallel on a fresh machine: one installs, the others
# wait for it here and then find it installed.
exec 9<"$0"
flock 9
if is_installed; then
  exit 0
fi

echo "s3-server: installing ${PACKAGES[*]} (OpenStack Swift with s3api) with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# DPkg::Lock::Timeout: wait for another apt/dpkg run rather than fail at once.
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${PACKAGES[@]}" >&2

if ! is_installed; then
  echo "s3-server: apt-get finished but python3-swift is still not usable" >&2
  exit 1
fi
echo "s3-server: Swift installed." >&2
