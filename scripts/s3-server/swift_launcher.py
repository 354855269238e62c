"""Python side of the test S3 server (Swift + s3api), used by start.mjs.

Debian's python3-swift ships the Swift library but not the swift-*-server
entry scripts (those live in the swift-proxy/-object/... packages, which drag
in uwsgi, rsyslog, logrotate and init scripts we do not want). This file does
the little those scripts do, plus what a private, throw-away instance needs:

  swift_launcher.py serve ETC_DIR CONF_FILE SECTION
                          [DEVICES_DIR A_PORT C_PORT O_PORT]
      Run one Swift WSGI server in the foreground (workers = 0 in its config).
      With the last four arguments (given to the proxy) it first builds the
      three rings (1 replica, 1 device) and proves the device filesystem
      supports user xattrs, which Swift stores object metadata in. Only the
      proxy reads rings at start-up and it imports the ring code anyway, so
      doing it there costs no extra interpreter start (~1 s of CPU).

It is also imported by the proxy as a paste filter (cache_filter_factory), see
InProcessCache below. Must run under /usr/bin/python3 (Debian's), not a pyenv.
"""
import json
import logging
import os
import signal
import sys
from time import time as now


def _die_with_parent():
    # PR_SET_PDEATHSIG: the kernel sends us SIGTERM when the Node process that
    # spawned us dies, even if it is SIGKILLed and never runs its exit hooks.
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)
    expected = os.environ.get('SWIFT_LAUNCHER_PARENT_PID')
    if expected and os.getppid() != int(expected):
        sys.exit('parent died before we started')  # raced prctl


def _use_swift_dir(etc_dir):
    # Swift reads swift.conf (hash prefix/suffix, storage policies,
    # constraints) from the hard-coded /etc/swift unless told otherwise; the
    # servers' swift_dir option only covers rings. Point everything at our dir
    # before any module caches it.
    from swift.common import utils
    utils.SWIFT_CONF_FILE = os.path.join(etc_dir, 'swift.conf')
    utils.HASH_PATH_PREFIX = utils.HASH_PATH_SUFFIX = b''
    utils.validate_configuration()
    from swift.common import constraints, storage_policy
    constraints.reload_constraints()
    storage_policy.reload_storage_policies()
    return utils


def setup(etc_dir, devices_dir, *ports):
    from swift.common.ring import RingBuilder
    import xattr

    for name, port in zip(('account', 'container', 'object'), ports):
        # part_power 6 (64 partitions): instant rebalance, plenty for tests
        builder = RingBuilder(6, 1, 1)
        builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1',
                         'port': int(port), 'device': 'd1', 'weight': 100,
                         'meta': ''})
        builder.rebalance()
        builder.save(os.path.join(etc_dir, name + '.builder'))
        builder.get_ring().save(os.path.join(etc_dir, name + '.ring.gz'))

    probe = os.path.join(devices_dir, 'd1', '.xattr-probe')
    with open(probe, 'wb') as f:
        try:
            xattr.setxattr(f.fileno(), 'user.swift.probe', b'1')
        except OSError as e:
            sys.exit('the filesystem holding %s does not support user xattrs '
                     '(%s), which Swift needs: use a dir (or TMPDIR) on '
                     'ext4, xfs, btrfs or tmpfs' % (devices_dir, e))
    os.unlink(probe)


def serve(etc_dir, conf_file, section, *ring_args):
    _die_with_parent()
    # eventlet's green DNS resolver pulls in dnspython; that import, and the
    # bigger heap its monkey-patching then walks with gc.collect(), doubles
    # each server's start-up CPU. Everything here is an IP literal anyway.
    os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')
    utils = _use_swift_dir(etc_dir)
    if ring_args:
        setup(etc_dir, *ring_args)

    # Without a syslog socket Swift falls back to spraying UDP at
    # localhost:514. We log to stderr instead (verbose=True below), which
    # start.mjs sends to a per-server file, so drop the syslog handler.
    class NoSyslog(logging.NullHandler):
        def __init__(self, *args, **kwargs):
            super().__init__()
    utils.ThreadSafeSysLogHandler = NoSyslog

    from swift.common.wsgi import run_wsgi
    sys.exit(run_wsgi(conf_file, section, verbose=True))


class InProcessCache(object):
    """Stand-in for swift.common.memcached.MemcacheRing, kept in the proxy.

    tempauth refuses to work without env['swift.cache'] ("Memcache required")
    and the proxy caches account/container info there. A real memcached would
    be one more package and process, and one shared between instances would
    leak cached info across them. The proxy runs as a single process
    (workers = 0), so a dict is coherent. Values go through JSON like
    MemcacheRing does, so callers get the same types back (lists, not tuples).
    """

    def __init__(self):
        self._data = {}

    @staticmethod
    def _expiry(ttl):
        ttl = int(ttl or 0)
        if ttl <= 0:
            return None
        # memcached semantics: more than 30 days means an absolute timestamp
        return ttl if ttl > 30 * 24 * 3600 else now() + ttl

    def set(self, key, value, serialize=True, time=0, min_compress_len=0,
            raise_on_error=False):
        if serialize:
            if isinstance(value, bytes):
                value = value.decode('utf8')
            value = json.dumps(value)
        self._data[key] = (serialize, value, self._expiry(time))

    def get(self, key, raise_on_error=False):
        entry = self._data.get(key)
        if entry is None:
            return None
        serialized, value, expires = entry
        if expires is not None and expires < now():
            del self._data[key]
            return None
        return json.loads(value) if serialized else value

    def incr(self, key, delta=1, time=0):
        current = self.get(key)
        value = max(0, int(current or 0) + int(delta))
        self.set(key, value, time=time)
        return value

    def decr(self, key, delta=1, time=0):
        return self.incr(key, -delta, time)

    def delete(self, key, server_key=None):
        self._data.pop(key, None)

    def set_multi(self, mapping, server_key, serialize=True, time=0,
                  min_compress_len=0):
        for key, value in mapping.items():
            self.set(key, value, serialize=serialize, time=time)

    def get_multi(self, keys, server_key):
        return [self.get(key) for key in keys]


def cache_filter_factory(global_conf, **local_conf):
    cache = InProcessCache()

    def cache_filter(app):
        def middleware(env, start_response):
            env['swift.cache'] = cache
            return app(env, start_response)
        return middleware
    return cache_filter


if __name__ == '__main__':
    if sys.argv[1:2] != ['serve']:
        sys.exit('usage: swift_launcher.py serve ETC_DIR CONF_FILE SECTION '
                 '[DEVICES_DIR A_PORT C_PORT O_PORT]')
    serve(*sys.argv[2:])
