"""The bridge under test: build/release/kafka-iggy-bridge (or $BRIDGE_BIN), run as
`kafka-iggy-bridge serve --config FILE` with a generated TOML config pointing at a test
iggy-server. Readiness: its Kafka port accepts TCP connections.

The config format belongs to the bridge (etc/kafka-iggy-bridge.toml is the reference);
config_toml() is the single place to keep in step with it.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from . import util


def target_mode() -> str:
    """KIB_BRIDGE_TARGET: auto (default) | off | xfail -- see tests/clients/conftest.py."""
    mode = os.environ.get("KIB_BRIDGE_TARGET", "auto").strip().lower()
    if mode not in ("auto", "off", "xfail"):
        raise ValueError(f"KIB_BRIDGE_TARGET must be auto, off or xfail, not {mode!r}")
    return mode


def find_binary() -> Path | None:
    p = Path(os.environ.get("BRIDGE_BIN", util.REPO_ROOT / "build" / "release" / "kafka-iggy-bridge"))
    if not p.is_absolute():
        p = util.REPO_ROOT / p
    return p if p.is_file() and os.access(p, os.X_OK) else None


def config_toml(*, kafka_port: int, iggy_address: str, iggy_username: str, iggy_password: str,
                state_path: Path, log_level: str = "debug", extra_toml: str = "") -> str:
    """The bridge's config for one test run. Keep in step with etc/kafka-iggy-bridge.toml.
    `extra_toml`: more sections (e.g. [authorization] for the ACL tests)."""
    return f"""\
[kafka]
listeners = ["127.0.0.1:{kafka_port}"]
node_id = 1
auto_create_topics = true
default_partitions = 1

[groups]
offsets_topic_partitions = 1

[iggy]
address = "{iggy_address}"
username = "{iggy_username}"
password = "{iggy_password}"
stream = "kafka"

[state]
path = "{state_path}"

[log]
level = "{log_level}"

[http]
listen = ""
""" + extra_toml


class Bridge:
    def __init__(self, binary: Path, iggy_address: str, iggy_username: str = "iggy", iggy_password: str = "iggy",
                 start_timeout: float = 30.0, log_name: str = "bridge.log", extra_toml: str = ""):
        self.binary = binary
        self.extra_toml = extra_toml
        self.iggy_address = iggy_address
        self.iggy_username = iggy_username
        self.iggy_password = iggy_password
        self.start_timeout = start_timeout
        self.log_name = log_name
        self.tmp: Path | None = None
        self.child: util.ChildProcess | None = None
        self.port = 0
        self.config_path: Path | None = None
        self.startup_seconds = 0.0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return util.log_dir() / self.log_name

    def start(self) -> "Bridge":
        last_error: Exception | None = None
        for _attempt in range(3):
            t0 = time.monotonic()
            self.tmp = util.make_temp_dir("kib-bridge-")
            self.port = util.free_port()
            self.config_path = self.tmp / "kafka-iggy-bridge.toml"
            self.config_path.write_text(config_toml(
                kafka_port=self.port, iggy_address=self.iggy_address, iggy_username=self.iggy_username,
                iggy_password=self.iggy_password, state_path=self.tmp / "state.db", extra_toml=self.extra_toml))
            # Keep a copy of the config beside the log for post-mortems.
            (util.log_dir() / (self.log_name + ".toml")).write_text(self.config_path.read_text())
            self.child = util.ChildProcess(
                "kafka-iggy-bridge", [str(self.binary), "serve", "--config", str(self.config_path)],
                env=dict(os.environ), cwd=self.tmp, log_path=self.log_path)
            try:
                util.wait_until(lambda: util.port_accepts("127.0.0.1", self.port), self.start_timeout,
                                "the bridge to accept Kafka connections", self.child)
            except Exception as e:  # noqa: BLE001
                last_error = e
                log = self.log_path.read_bytes() if self.log_path.exists() else b""
                self.stop()
                if b"address already in use" in log.lower() or b"eaddrinuse" in log.lower():
                    continue
                raise
            self.startup_seconds = time.monotonic() - t0
            return self
        raise RuntimeError(f"bridge did not start: {last_error}")

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
