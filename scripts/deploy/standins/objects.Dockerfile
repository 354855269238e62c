# Stand-in for the compose stack's object store, for machines that cannot pull it: the tests' S3
# server (OpenStack Swift with s3api, scripts/s3-server), built with the repository as context.
FROM node:22-bookworm-slim
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3-swift \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/s3-server /s3
ENTRYPOINT ["node", "/s3/cli.mjs"]
