/**
 * Config files for a private one-node Swift with the S3 API (after Swift's "SAIO" dev setup).
 * Everything a server writes goes under `dir`, so instances can run side by side and nothing
 * touches /etc/swift, /srv or /var.
 */

/** Settings every server shares. workers = 0 keeps each server one process in the foreground. */
function defaults({ dir, name, port, runAs }) {
  return `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
# Fail fast if the port is taken rather than retrying for Swift's default 30 s.
bind_timeout = 2
workers = 0
# Only used when Swift forks workers (workers > 0); set to us so it never tries to switch user.
user = ${runAs}
swift_dir = ${dir}/etc
devices = ${dir}/srv
mount_check = false
# Test data is small and /tmp may sit on a full-ish disk: do not reserve or preallocate.
disable_fallocate = true
fallocate_reserve = 0
recon_cache_path = ${dir}/cache
log_name = ${name}
log_level = INFO
`;
}

/** The account, container and object servers: only the app plus a /healthcheck we poll. */
function storageServer(kind, options) {
  return `${defaults({ ...options, name: `${kind}-server`, port: options.ports[kind] })}
[pipeline:main]
pipeline = healthcheck ${kind}-server

[app:${kind}-server]
use = egg:swift#${kind}

[filter:healthcheck]
use = egg:swift#healthcheck
`;
}

/**
 * @param {{ dir: string, ports: Record<'account'|'container'|'object'|'proxy', number>,
 *   runAs: string, account: string, user: string, secret: string, region: string }} options
 * @returns {Record<string, string>} file name (in `${dir}/etc`) to contents
 */
export function swiftConfigs(options) {
  const { ports, account, user, secret, region } = options;
  return {
    // The hash prefix/suffix place objects on disk: constant, so a dir reused across starts (cli
    // --dir) keeps its data. start.mjs keeps the tempauth account name constant for the same reason.
    "swift.conf": `[swift-hash]
swift_hash_path_prefix = refvid-test
swift_hash_path_suffix = refvid-test

[storage-policy:0]
name = Policy-0
default = yes
`,
    "account-server.conf": storageServer("account", options),
    "container-server.conf": storageServer("container", options),
    "object-server.conf": storageServer("object", options),
    // The pipeline follows s3api's docs (s3api before tempauth; slo for multipart uploads; bulk
    // for full compatibility) plus the filters the proxy would otherwise insert by itself
    // (catch_errors, gatekeeper, listing_formats, copy, dlo, versioned_writes).
    "proxy-server.conf": `${defaults({ ...options, name: "proxy-server", port: ports.proxy })}
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
# The first S3 request creates the Swift account behind the tempauth user.
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
# Defaults otherwise: path-style addressing only (no storage_domain), SigV2 and SigV4, Swift
# ACLs (s3_acl = false), DNS-compliant bucket names, 5 MiB minimum multipart part size.
location = ${region}

[filter:tempauth]
use = egg:swift#tempauth
# S3 access key id = "${account}:${user}", secret = this key. .admin: may create buckets.
user_${account}_${user} = ${secret} .admin

[filter:cache]
# tempauth insists on a memcache client and the proxy caches account/container info in it.
# No memcached: an in-process stand-in (see swift_launcher.py).
paste.filter_factory = swift_launcher:cache_filter_factory

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:bulk]
use = egg:swift#bulk

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo

[filter:versioned_writes]
use = egg:swift#versioned_writes

[filter:symlink]
use = egg:swift#symlink
`,
  };
}
