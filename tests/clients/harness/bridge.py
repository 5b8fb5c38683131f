"""The bridge under test: build/release/kafka-iggy-bridge (or $BRIDGE_BIN), run as
`kafka-iggy-bridge serve --config FILE` with a generated TOML config pointing at a test
iggy-server. Readiness: its Kafka port accepts TCP connections.

The config format belongs to the bridge (etc/kafka-iggy-bridge.toml is the reference);
config_toml() is the single place to keep in step with it.

The secure bridge (BridgeSecurity, test_security.py) has the listeners, [tls], [sasl] and
[authorization] sections of docs/security.md, and its users are created before it starts with
`kafka-iggy-bridge users add NAME --mechanism M --password-file - --config FILE` on the state
database its config names.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from dataclasses import dataclass
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


def binary_or_skip() -> Path:
    """The bridge binary for a fixture that starts one of its own; skips loudly when the bridge
    target is off or no binary is built."""
    if target_mode() == "off":
        util.skip_loudly("bridge target disabled (KIB_BRIDGE_TARGET=off)")
    binary = find_binary()
    if binary is None:
        util.skip_loudly("no bridge binary (build it with make, or set BRIDGE_BIN)")
    return binary


@dataclass(frozen=True)
class BridgeSecurity:
    """The secure bridge's settings (docs/security.md); harness/security.py has the values."""
    certs: object  # harness.security.Certs: [tls] certificate_file, key_file, ca_file
    users: dict[str, str]  # name -> password, added with every mechanism before start
    mechanisms: tuple[str, ...]  # [sasl] enabled_mechanisms
    scram_iterations: int  # [sasl] scram_iterations
    super_users: tuple[str, ...]  # [authorization] super_users
    client_auth: str = "required"  # [tls] client_auth


def _toml_list(items) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def config_toml(*, kafka_port: int, iggy_address: str, iggy_username: str, iggy_password: str,
                state_path: Path, log_level: str = "debug", stream: str = "kafka",
                security: BridgeSecurity | None = None, sasl_ssl_port: int = 0, ssl_port: int = 0,
                extra_toml: str = "", http_port: int = 0) -> str:
    """The bridge's config for one test run. Keep in step with etc/kafka-iggy-bridge.toml (and,
    for `security`, docs/security.md): PLAINTEXT on loopback first (the admin CLI's listener),
    then SASL_SSL and SSL, each advertising its own address. `extra_toml`: more sections (the
    plaintext ACL tests' [authorization]). `http_port`: /metrics on loopback (0: off)."""
    http_listen = f"127.0.0.1:{http_port}" if http_port else ""
    if security is None:
        listeners = f'["127.0.0.1:{kafka_port}"]'
        secure = ""
    else:
        listeners = _toml_list([f"PLAINTEXT://127.0.0.1:{kafka_port}", f"SASL_SSL://127.0.0.1:{sasl_ssl_port}",
                                f"SSL://127.0.0.1:{ssl_port}"])
        c = security.certs
        secure = f"""
[tls]
certificate_file = "{c.server_cert}"
key_file = "{c.server_key}"
ca_file = "{c.ca}"
client_auth = "{security.client_auth}"

[sasl]
enabled_mechanisms = {_toml_list(security.mechanisms)}
scram_iterations = {security.scram_iterations}

[authorization]
enabled = true
super_users = {_toml_list(security.super_users)}
allow_everyone_if_no_acl_found = false
"""
    return f"""\
[kafka]
listeners = {listeners}
node_id = 1
auto_create_topics = true
default_partitions = 1

[groups]
offsets_topic_partitions = 1

[iggy]
address = "{iggy_address}"
username = "{iggy_username}"
password = "{iggy_password}"
stream = "{stream}"

[state]
path = "{state_path}"

[log]
level = "{log_level}"

[http]
listen = "{http_listen}"
{secure}""" + extra_toml


class Bridge:
    def __init__(self, binary: Path, iggy_address: str, iggy_username: str = "iggy", iggy_password: str = "iggy",
                 start_timeout: float = 30.0, log_name: str = "bridge.log", stream: str = "kafka",
                 security: BridgeSecurity | None = None, extra_toml: str = "", http: bool = False):
        self.binary = binary
        self.http = http
        self.http_port = 0
        self.stream = stream
        self.security = security
        self.extra_toml = extra_toml
        self.sasl_ssl_port = 0
        self.ssl_port = 0
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
    def sasl_ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_ssl_port}"

    @property
    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl_port}"

    @property
    def log_path(self) -> Path:
        return util.log_dir() / self.log_name

    def _ports(self) -> list[int]:
        ports: list[int] = []
        while len(ports) < (3 if self.security else 1):
            p = util.free_port()
            if p not in ports:
                ports.append(p)
        return ports

    def add_user(self, name: str, mechanism: str, password: str):
        """`kafka-iggy-bridge users add NAME --mechanism M --password-file - --config FILE`: the
        password on stdin, written to the state database the config names (docs/security.md)."""
        argv = [str(self.binary), "users", "add", name, "--mechanism", mechanism, "--password-file", "-",
                "--config", str(self.config_path)]
        p = subprocess.run(argv, input=password.encode(), capture_output=True, timeout=60, cwd=self.tmp)
        if p.returncode != 0:
            out = p.stdout.decode(errors="replace")[-2000:] + p.stderr.decode(errors="replace")[-2000:]
            raise RuntimeError(f"kafka-iggy-bridge users add {name} --mechanism {mechanism} "
                               f"exit {p.returncode}:\n{out}")

    def start(self) -> "Bridge":
        last_error: Exception | None = None
        for _attempt in range(3):
            t0 = time.monotonic()
            self.tmp = util.make_temp_dir("kib-bridge-")
            ports = self._ports()
            self.port = ports[0]
            if self.http:
                self.http_port = util.free_port()
            if self.security:
                self.sasl_ssl_port, self.ssl_port = ports[1], ports[2]
            self.config_path = self.tmp / "kafka-iggy-bridge.toml"
            self.config_path.write_text(config_toml(
                kafka_port=self.port, iggy_address=self.iggy_address, iggy_username=self.iggy_username,
                iggy_password=self.iggy_password, state_path=self.tmp / "state.db", stream=self.stream,
                security=self.security, sasl_ssl_port=self.sasl_ssl_port, ssl_port=self.ssl_port,
                extra_toml=self.extra_toml, http_port=self.http_port))
            # Keep a copy of the config beside the log for post-mortems.
            (util.log_dir() / (self.log_name + ".toml")).write_text(self.config_path.read_text())
            if self.security:
                for name, password in self.security.users.items():
                    for mech in self.security.mechanisms:
                        self.add_user(name, mech, password)
            self.child = util.ChildProcess(
                "kafka-iggy-bridge", [str(self.binary), "serve", "--config", str(self.config_path)],
                env=dict(os.environ), cwd=self.tmp, log_path=self.log_path)
            try:
                util.wait_until(lambda: all(util.port_accepts("127.0.0.1", p) for p in ports), self.start_timeout,
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

    def metric(self, name: str) -> float | None:
        """An unlabelled sample of /metrics (the bridge must have been made with http=True)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics", timeout=10) as r:
            body = r.read().decode()
        m = re.search(r"^%s (\S+)$" % re.escape(name), body, re.M)
        return float(m.group(1)) if m else None

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
