"""iggy-server for tests, as tests/support/iggy_harness starts it: root iggy/iggy, a free
loopback TCP port, a temp data dir, embedded default config, HTTP/QUIC/WebSocket off, one shard.

The binary: $IGGY_SERVER, else `iggy-server` on PATH, else /usr/local/bin/iggy-server.
find_binary() returns None when there is none; the fixture then skips loudly.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

from . import util

USERNAME = "iggy"
PASSWORD = "iggy"


def find_binary() -> Path | None:
    env = os.environ.get("IGGY_SERVER")
    if env:
        p = Path(env)
        return p if p.is_file() and os.access(p, os.X_OK) else None  # the fixture names $IGGY_SERVER
    found = shutil.which("iggy-server")
    if found:
        return Path(found)
    p = Path("/usr/local/bin/iggy-server")
    return p if p.is_file() and os.access(p, os.X_OK) else None


class IggyServer:
    def __init__(self, binary: Path, start_timeout: float = 30.0, log_name: str = "iggy-server.log"):
        self.binary = binary
        self.start_timeout = start_timeout
        self.log_name = log_name
        self.tmp: Path | None = None
        self.child: util.ChildProcess | None = None
        self.port = 0
        self.startup_seconds = 0.0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return util.log_dir() / self.log_name

    def start(self) -> "IggyServer":
        last_error: Exception | None = None
        for _attempt in range(3):
            t0 = time.monotonic()
            self.tmp = util.make_temp_dir("kib-iggy-")
            self.port = util.free_port()
            data = self.tmp / "data"
            env = dict(os.environ)
            env.update({
                "IGGY_ROOT_USERNAME": USERNAME,
                "IGGY_ROOT_PASSWORD": PASSWORD,
                "IGGY_SYSTEM_PATH": str(data),
                "IGGY_TCP_ADDRESS": self.address,
                "IGGY_HTTP_ENABLED": "false",
                "IGGY_QUIC_ENABLED": "false",
                "IGGY_WEBSOCKET_ENABLED": "false",
                "IGGY_SYSTEM_SHARDING_CPU_ALLOCATION": "1",
                "IGGY_CONFIG_PATH": "/nonexistent",
            })
            self.env = env
            self.child = util.ChildProcess("iggy-server", [str(self.binary), "--fresh"], env=env,
                                           cwd=self.tmp, log_path=self.log_path)
            try:
                util.wait_until(lambda: util.port_accepts("127.0.0.1", self.port), self.start_timeout,
                                "iggy-server to accept TCP connections", self.child)
            except Exception as e:  # noqa: BLE001
                last_error = e
                log = self.log_path.read_bytes() if self.log_path.exists() else b""
                self.stop()
                if re.search(rb"(?i)address already in use|addrinuse", log):
                    continue
                raise
            self.startup_seconds = time.monotonic() - t0
            return self
        raise RuntimeError(f"iggy-server did not start: {last_error}")

    def kill9(self):
        """kill -9 of iggy-server: its data dir and port stay for restart()."""
        if self.child is not None and self.child.alive():
            os.killpg(self.child.pid, signal.SIGKILL)
            self.child.proc.wait(timeout=10)

    def restart(self) -> "IggyServer":
        """iggy-server again on the same data dir and port (not --fresh), its log beside the first."""
        assert self.tmp is not None and self.child is not None and not self.child.alive()
        self.child.stop()
        self.restarts = getattr(self, "restarts", 0) + 1
        log = self.log_path.with_name(f"{self.log_path.stem}.restart{self.restarts}.log")
        self.child = util.ChildProcess("iggy-server", [str(self.binary)], env=self.env, cwd=self.tmp, log_path=log)
        util.wait_until(lambda: util.port_accepts("127.0.0.1", self.port), self.start_timeout,
                        "iggy-server to accept TCP connections again", self.child)
        return self

    def stop(self):
        if self.child is not None:
            self.child.stop(timeout=15)
            self.child = None
        if self.tmp is not None:
            util.remove_tree(self.tmp)
            self.tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
