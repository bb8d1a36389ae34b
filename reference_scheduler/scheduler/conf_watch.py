"""The scheduler conf file, re-read when it changes, as vc-scheduler does.

Upstream: pkg/scheduler/scheduler.go watches the conf file and loads it again on a change, keeping
the conf it has when the new one does not load. Here the scheduler asks before each cycle whether
the file changed (its size, modification time and inode, so an editor's rename counts) and SIGHUP
makes it ask at once. Every load is logged with the digest of the file's bytes, which is how a
caller that wrote the file learns the scheduler now runs it.
"""

from __future__ import annotations

import hashlib
import logging
import os

from reference_scheduler.scheduler import conf, conf_load

log = logging.getLogger(__name__)
# The log line a caller waits for: `scheduler conf loaded (sha256 <first 16 hex digits>)`.
LOADED = "scheduler conf loaded (sha256 {digest})"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


class ConfFile:
    """The current conf, from `path` (Volcano's default conf when no path is given)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self.current = self._load_first()

    def _read(self) -> tuple[bytes, tuple[int, int, int]]:
        assert self.path is not None
        with open(self.path, "rb") as stream:
            info = os.fstat(stream.fileno())
            return stream.read(), (info.st_ino, info.st_size, info.st_mtime_ns)

    def _load_first(self) -> conf.Conf:
        if not self.path:
            loaded = conf_load.parse(conf.DEFAULT_CONF)
            log.info(LOADED.format(digest=digest(conf.DEFAULT_CONF.encode())) + ": Volcano's default conf")
            return loaded
        try:
            data, self._stamp = self._read()
        except OSError as err:
            raise conf.ConfError(f"cannot read the scheduler conf {self.path}: {err.strerror}") from err
        loaded = conf_load.parse(data.decode())
        log.info(LOADED.format(digest=digest(data)) + ": %s", _describe(loaded))
        return loaded

    def refresh(self) -> conf.Conf:
        """The conf to run the next cycle with: the file's again if it changed and loads; the one
        in use otherwise (a conf that does not load is logged and ignored, as upstream)."""
        if not self.path:
            return self.current
        try:
            if _stamp(self.path) == self._stamp:
                return self.current
            data, stamp = self._read()
        except OSError as err:
            log.error("cannot read the scheduler conf %s: %s; keeping the one in use", self.path, err.strerror)
            return self.current
        self._stamp = stamp
        try:
            self.current = conf_load.parse(data.decode())
        except (conf.ConfError, UnicodeDecodeError) as err:
            log.error("the scheduler conf %s does not load, keeping the one in use: %s", self.path, err)
            return self.current
        log.info(LOADED.format(digest=digest(data)) + ": %s", _describe(self.current))
        return self.current


def _stamp(path: str) -> tuple[int, int, int]:
    info = os.stat(path)
    return info.st_ino, info.st_size, info.st_mtime_ns


def _describe(loaded: conf.Conf) -> str:
    return f"actions {', '.join(loaded.actions)}, {len(loaded.tiers)} tiers"
