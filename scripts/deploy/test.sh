#!/usr/bin/env bash
# npm run test:deploy: builds the container image from the repository's Dockerfile and tests it,
# the compose stack and PgBouncer, on a private Docker engine started here. Installs what it
# needs from Debian's packages (docker.io, docker-compose, debootstrap). Never skips: fails with
# a message saying what is missing when it cannot run.
#
# Settings: REFVID_DEPLOY_KEEP=1 keeps the engine's folder (images, build cache) for a rerun;
# REFVID_DEPLOY_CACHE is where the Debian root of the base stand-in is kept (~/.cache/refvid-deploy).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
started=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
  echo "test:deploy: starting a Docker engine needs root; run it as root (CI does)" >&2
  exit 1
fi

packages=()
command -v dockerd >/dev/null || packages+=(docker.io)
command -v docker-compose >/dev/null || packages+=(docker-compose)
command -v debootstrap >/dev/null || packages+=(debootstrap)
if [ ${#packages[@]} -gt 0 ]; then
  echo "test:deploy: installing ${packages[*]} from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${packages[@]}" >&2
fi

# Debian's client, which speaks its engine's API version.
bin=$(mktemp -d)
ln -s /usr/bin/docker "$bin/docker"
export PATH="$bin:$PATH"

engine=${REFVID_DEPLOY_ENGINE_DIR:-$(mktemp -d /tmp/refvid-engine.XXXX)}
cleanup() {
  status=$?
  bash scripts/deploy/engine.sh stop "$engine" || true
  if [ "${REFVID_DEPLOY_KEEP:-}" != 1 ]; then rm -rf "$engine"; fi
  rm -rf "$bin"
  exit $status
}
trap cleanup EXIT
source scripts/deploy/engine.sh start "$engine"
step() { echo "test:deploy: $* ($(($(date +%s) - started)) s)" >&2; }
step "engine up"

base=node:22-bookworm-slim
if ! docker image inspect "$base" >/dev/null 2>&1; then
  bash scripts/deploy/base-image.sh "$base"
fi
step "base image $base ready"

image=refvid:test
build_started=$(date +%s)
DOCKER_BUILDKIT=0 docker build --network host -q -t "$image" . >/dev/null
size=$(docker image inspect -f '{{.Size}}' "$image")
step "built $image in $(($(date +%s) - build_started)) s: $((size / 1000000)) MB"

# Stand-ins for the compose stack's other images (Postgres, the object store, Caddy).
for standin in postgres objects proxy; do
  context=scripts/deploy/standins
  [ "$standin" = objects ] && context=.
  DOCKER_BUILDKIT=0 docker build --network host -q -t "refvid-standin/$standin" \
    -f "scripts/deploy/standins/$standin.Dockerfile" "$context" >/dev/null
done
step "stand-in images built"

npx turbo run build --filter=@refvid/server... --output-logs=errors-only >/dev/null
(cd apps/server && REFVID_DEPLOY_IMAGE=$image npx vitest run -c vitest.deploy.config.ts)
step "image and compose tests passed"

bash scripts/pgbouncer/test.sh
step "PgBouncer tests passed"

echo "test:deploy: passed in $(($(date +%s) - started)) s; image $image is $((size / 1000000)) MB" >&2
