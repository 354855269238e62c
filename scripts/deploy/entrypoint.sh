#!/bin/sh
# The image's entry point: makes the temporary folder under the data volume (the root file
# system may be read-only), then becomes the refvid server, which handles SIGTERM itself.
set -e
mkdir -p "${TMPDIR:-/data/tmp}"
exec node /app/apps/server/dist/main.js "$@"
