# Stand-in for the official postgres image, for machines that cannot pull it: Debian 12's
# PostgreSQL 15 with an entry point that honours the same variables (POSTGRES_USER,
# POSTGRES_PASSWORD, POSTGRES_DB, PGDATA) and the same `postgres <flags>` command.
FROM node:22-bookworm-slim
RUN apt-get update -q && apt-get install -y -q --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
