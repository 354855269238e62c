# Stand-in for the official caddy image, for machines that cannot pull it: Debian 12's Caddy, run
# as the official image runs it (config in /etc/caddy, state in /data and /config).
FROM node:22-bookworm-slim
RUN apt-get update -q && apt-get install -y -q --no-install-recommends caddy \
 && rm -rf /var/lib/apt/lists/*
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
