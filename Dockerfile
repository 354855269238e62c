# refvid: the API server, worker, CLI, docs and console in one image.
#
#   docker build -t refvid .
#   docker run refvid                  # API and worker in one process
#   docker run refvid --role api       # API only (scale out behind a proxy)
#   docker run refvid --role worker    # worker only
#   docker run refvid migrate          # apply migrations (and create the bucket), then exit
#
# Settings come from the environment (README, "Operating it"); files go to /data (REFVID_DATA_DIR).
# The health check uses REFVID_PROBE_PORT when it is set, else PORT.
# docs/operating.md is the production guide; deploy/compose.yaml a production-shaped stack.

ARG BASE_IMAGE=node:22-bookworm-slim

# 1. Build everything the image serves, with every dependency.
FROM ${BASE_IMAGE} AS build
WORKDIR /src
ENV CI=true TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
COPY openapi/package.json openapi/
COPY packages/api-types/package.json packages/api-types/
COPY packages/client/package.json packages/client/
COPY packages/core/package.json packages/core/
COPY packages/sdk/package.json packages/sdk/
COPY packages/store/package.json packages/store/
COPY packages/test-browser/package.json packages/test-browser/
COPY apps/cli/package.json apps/cli/
COPY apps/console/package.json apps/console/
COPY apps/docs/package.json apps/docs/
COPY apps/server/package.json apps/server/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx turbo run build --filter=@refvid/server... --filter=@refvid/cli... --output-logs=errors-only \
 && node scripts/deploy/stage.mjs /stage @refvid/server @refvid/cli

# 2. The production dependencies of the server and the CLI, at the versions of the lockfile
#    (scripts/deploy/stage.mjs leaves every dev dependency out).
FROM ${BASE_IMAGE} AS dependencies
WORKDIR /src
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /stage ./
# Some packages ship binaries only their owner may run (ffprobe is 0744): the image runs as `node`.
RUN npm install --omit=dev --no-audit --no-fund \
 && find node_modules -name '*.map' -delete \
 && find node_modules -type f -perm -u+x -exec chmod a+rx {} + \
 && rm -f package-lock.json

# 3. The image: no compilers, no dev dependencies, no source maps; runs as `node` (uid 1000).
FROM ${BASE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 REFVID_DATA_DIR=/data TMPDIR=/data/tmp \
    PATH=/app/node_modules/.bin:$PATH
COPY --from=dependencies /src /app
COPY scripts/deploy/entrypoint.sh /usr/local/bin/refvid-entrypoint
RUN mkdir -p /data/tmp && chown -R node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.REFVID_PROBE_PORT || process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["refvid-entrypoint"]
