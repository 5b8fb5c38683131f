"""The bridge under test, for every Python tier: build/release/kafka-iggy-bridge (or $BRIDGE_BIN)
run as `kafka-iggy-bridge serve --config FILE`.

BridgeProcess is the one launcher: it keeps the config file, state database and log of one
bridge in a work directory, starts the process (its own session, dying with the test process),
waits for its Kafka ports to accept connections and for "ready" in its log (logged in to Iggy,
topics loaded), signals, stops, kills and restarts it on the same port, config and state, and
reads its log, /metrics, RSS and stacks. config_toml() writes its config; the config format
belongs to the bridge (etc/kafka-iggy-bridge.toml is the reference) and this is the single place
to keep in step with it.

client_tier_bridge() makes the client tier's bridges: a temporary work directory, the log in
build/test-logs/clients with a copy of the config beside it, and the secure bridge's users
(BridgeSecurity: the listeners, [tls], [sasl] and [authorization] of docs/security.md) added
before it starts with `kafka-iggy-bridge users add NAME --mechanism M --password-file -`.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import util

READY_LINE = "kafka-iggy-bridge ready"


def bridge_bin() -> Path:
    """$BRIDGE_BIN (relative to the repository when relative), else the release build."""
    p = Path(os.environ.get("BRIDGE_BIN", util.REPO_ROOT / "build" / "release" / "kafka-iggy-bridge"))
    return p if p.is_absolute() else util.REPO_ROOT / p


def find_binary() -> Path | None:
    p = bridge_bin()
    return p if p.is_file() and os.access(p, os.X_OK) else None


def target_mode() -> str:
    """KIB_BRIDGE_TARGET: auto (default) | off | xfail -- see tests/clients/conftest.py."""
    mode = os.environ.get("KIB_BRIDGE_TARGET", "auto").strip().lower()
    if mode not in ("auto", "off", "xfail"):
        raise ValueError(f"KIB_BRIDGE_TARGET must be auto, off or xfail, not {mode!r}")
    return mode


def binary_or_skip() -> Path:
    """The bridge binary for a fixture that starts one of its own; skips loudly when the bridge
    target is off or no binary is built."""
    if target_mode() == "off":
        util.skip_loudly("bridge target disabled (KIB_BRIDGE_TARGET=off)")
    binary = find_binary()
    if binary is None:
        util.skip_loudly("no bridge binary (build it with make, or set BRIDGE_BIN)")
    return binary


# ---- the config ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class BridgeSecurity:
    """The secure bridge's settings (docs/security.md); harness/security.py has the values."""
    certs: object  # harness.security.Certs: [tls] certificate_file, key_file, ca_file
    users: dict[str, str]  # name -> password, added with every mechanism before start
    mechanisms: tuple[str, ...]  # [sasl] enabled_mechanisms
    scram_iterations: int  # [sasl] scram_iterations
    super_users: tuple[str, ...]  # [authorization] super_users
    client_auth: str = "required"  # [tls] client_auth


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return f'"{v}"'


def _keys(values: dict) -> str:
    return "".join(f"{k} = {_value(v)}\n" for k, v in values.items())


def security_toml(s: BridgeSecurity) -> str:
    c = s.certs
    return (f'[tls]\ncertificate_file = "{c.server_cert}"\nkey_file = "{c.server_key}"\nca_file = "{c.ca}"\n'
            f'client_auth = "{s.client_auth}"\n'
            f"[sasl]\nenabled_mechanisms = {_value(list(s.mechanisms))}\nscram_iterations = {s.scram_iterations}\n"
            f"[authorization]\nenabled = true\nsuper_users = {_value(list(s.super_users))}\n"
            "allow_everyone_if_no_acl_found = false\n")


def config_toml(*, listeners: list[str], iggy_address: str, state_path, kafka: dict | None = None,
                kafka_extra: str = "", groups: dict | None = None, iggy: dict | None = None, log_level: str = "debug",
                http_listen: str = "", security: BridgeSecurity | None = None, extra_toml: str = "") -> str:
    """[kafka] (`listeners`, the keys of `kafka`, then the raw `kafka_extra` lines), [groups],
    [iggy] (`iggy_address` and the keys of `iggy`), [state], [log], [http], the secure sections
    of `security`, then `extra_toml` (more sections, as TOML text)."""
    text = "[kafka]\n" + _keys({"listeners": listeners, **(kafka or {})}) + kafka_extra
    if groups:
        text += "[groups]\n" + _keys(groups)
    text += "[iggy]\n" + _keys({"address": iggy_address, **(iggy or {})})
    text += f'[state]\npath = "{state_path}"\n[log]\nlevel = "{log_level}"\n[http]\nlisten = "{http_listen}"\n'
    if security is not None:
        text += security_toml(security)
    return text + extra_toml


# ---- the process --------------------------------------------------------------------------------

class BridgeProcess:
    """One bridge: config `workdir`/bridge.toml, state `workdir`/state.db, log `workdir`/bridge.log
    unless told otherwise. Its port (the first Kafka listener) is chosen here and kept across
    restarts. `owns_workdir`: cleanup() removes the work directory. `log_markers`: every start
    appends a marker line to the log first (one log for several runs)."""

    def __init__(self, workdir, *, port: int | None = None, binary=None, log_path=None, state_path=None,
                 owns_workdir: bool = False, log_markers: bool = False):
        self.workdir = Path(workdir)
        self.binary = Path(binary) if binary else bridge_bin()
        self.port = port or util.free_port()
        self.sasl_ssl_port = self.ssl_port = self.http_port = 0
        self.config = self.workdir / "bridge.toml"
        self.state = Path(state_path) if state_path else self.workdir / "state.db"
        self.log_path = Path(log_path) if log_path else self.workdir / "bridge.log"
        self.owns_workdir, self.log_markers = owns_workdir, log_markers
        self.proc: subprocess.Popen | None = None
        self.log_start = 0  # where this run's log begins: wait_ready looks only at it
        self.starts = self.kills = 0
        self.start_seconds: list[float] = []  # each start until the ports accepted
        self.ready_seconds: list[float] = []  # each start until "ready" (when waited for)

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
    def pid(self) -> int:
        return self.proc.pid

    def listener_ports(self) -> list[int]:
        return [p for p in (self.port, self.sasl_ssl_port, self.ssl_port) if p]

    def write_config(self, text: str) -> "BridgeProcess":
        self.config.write_text(text)
        return self

    # ---- running

    def start(self, wait: bool = True, env: dict | None = None, timeout: float = 15.0, ready: bool = False,
              ports: list[int] | None = None) -> "BridgeProcess":
        """Starts the bridge (`env`: its environment, default this one's, e.g. with systemd's
        NOTIFY_SOCKET). `wait`: until `ports` (default: every Kafka listener) accept; `ready`:
        then until it logs ready, both within `timeout`."""
        t0 = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.log_start = log.tell()
            if self.log_markers:
                log.write(f"\n===== test harness: bridge start #{self.starts + 1} at {time.strftime('%H:%M:%S')} "
                          f"=====\n".encode())
                log.flush()
            self.proc = subprocess.Popen(
                [str(self.binary), "serve", "--config", str(self.config)], env=env, cwd=str(self.workdir),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=util._die_with_parent if sys.platform.startswith("linux") else None)
        self.starts += 1
        if wait or ready:
            self.wait_listening(ports or self.listener_ports(), timeout)
            self.start_seconds.append(time.monotonic() - t0)
        if ready:
            self.wait_ready(timeout - (time.monotonic() - t0))
            self.ready_seconds.append(time.monotonic() - t0)
        return self

    def _exited(self, what: str) -> RuntimeError:
        return RuntimeError(f"bridge exited with {self.proc.returncode} {what} (start #{self.starts}); "
                            f"log {self.log_path}:\n{self.log_tail()}")

    def wait_listening(self, ports: list[int], timeout: float = 15.0) -> "BridgeProcess":
        deadline = time.monotonic() + timeout
        while not all(util.port_accepts("127.0.0.1", p, 0.2) for p in ports):
            if self.proc.poll() is not None:
                raise self._exited("before it listened")
            if time.monotonic() > deadline:
                raise TimeoutError(f"bridge start #{self.starts} not listening on {ports} after {timeout:.0f}s; "
                                   f"log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.02)
        return self

    def wait_ready(self, timeout: float = 30.0) -> "BridgeProcess":
        """Until this run of the bridge logged in to Iggy and loaded its topics ("ready")."""
        deadline = time.monotonic() + timeout
        while READY_LINE not in self.log_since_start():
            if self.proc.poll() is not None:
                raise self._exited("before it was ready")
            if time.monotonic() > deadline:
                raise TimeoutError(f"bridge not ready after {timeout:.0f}s; log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.02)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self):
        """Raises if the bridge exited on its own (not killed by the test), with its exit status."""
        if self.proc is not None and self.proc.poll() is not None:
            rc = self.proc.returncode
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
            raise AssertionError(f"the bridge (start #{self.starts}) died on its own: {how}; log {self.log_path}:\n"
                                 f"{util.tail(self.log_path, 30)}")

    def stop(self, sig=signal.SIGTERM, timeout: float = 20.0) -> int | None:
        """`sig`, then SIGKILL if it has not exited within `timeout`; its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
            except ProcessLookupError:
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self):
        """SIGKILL: no shutdown, no flush; whatever the bridge had not made durable is gone."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait(timeout=30)
            self.kills += 1

    def kill_and_restart(self, **start_args) -> "BridgeProcess":
        self.kill()
        return self.start(**start_args)

    def cleanup(self, keep_state: bool = False):
        """Stops it. `keep_state`: copies its SQLite state and any core dump beside the log for
        post-mortems first. Removes the work directory when it owns it."""
        self.stop()
        if keep_state:
            for core in self.workdir.glob("core*"):  # where `ulimit -c` allowed one
                shutil.move(str(core), str(self.log_path.parent / f"{self.log_path.name}.{core.name}"))
            for suffix in ("", "-wal", "-shm"):
                src = Path(str(self.state) + suffix)
                if src.exists():
                    shutil.copyfile(src, self.log_path.parent / (self.log_path.name + ".state.db" + suffix))
        if self.owns_workdir:
            util.remove_tree(self.workdir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()

    # ---- what it says and holds

    def read_log(self, since: int = 0) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(since)
            return f.read().decode(errors="replace")

    def log_since_start(self) -> str:
        return self.read_log(self.log_start)

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_since_start()[-20000:].splitlines()[-lines:])

    def _status_kb(self, key: str) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        raise AssertionError(f"no {key} in /proc/{self.proc.pid}/status")

    def rss_kb(self) -> int:
        return self._status_kb("VmRSS")

    def vm_hwm_kb(self) -> int:
        """Peak resident set so far (VmHWM): catches a spike that RSS, read after the fact, misses."""
        return self._status_kb("VmHWM")

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def metric(self, name: str) -> float | None:
        """An unlabelled sample of /metrics (the config must have an [http] listen)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics", timeout=10) as r:
            body = r.read().decode()
        m = re.search(r"^%s (\S+)$" % re.escape(name), body, re.M)
        return float(m.group(1)) if m else None

    def users(self, *args: str, password: str | None = None) -> subprocess.CompletedProcess:
        """`kafka-iggy-bridge users ...` on this bridge's state database; the password on stdin."""
        return subprocess.run([str(self.binary), "users", *args, "--config", str(self.config)], input=password,
                              capture_output=True, text=True, timeout=60, cwd=self.workdir)

    def add_user(self, name: str, mechanism: str, password: str) -> subprocess.CompletedProcess:
        r = self.users("add", name, "--mechanism", mechanism, "--password-file", "-", password=password + "\n")
        assert r.returncode == 0, f"kafka-iggy-bridge users add {name} --mechanism {mechanism}: {r.stderr}"
        return r

    def dump_stacks(self) -> str:
        """Every thread's stack of the running bridge (gdb, if installed) into a file beside its
        log; returns a line naming the file, for a failure message about a stuck bridge."""
        gdb = shutil.which("gdb")
        if not self.alive() or gdb is None:
            return "(no stacks: " + ("bridge not running" if not self.alive() else "no gdb") + ")"
        path = self.log_path.parent / (self.log_path.name + f".stacks-{self.starts}.txt")
        try:
            p = subprocess.run([gdb, "-batch", "-p", str(self.proc.pid), "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=60)
            path.write_text(p.stdout + p.stderr)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"(no stacks: {e})"
        return f"stacks of the running bridge (start #{self.starts}): {path}"

    def state_summary(self, rows: int = 12) -> str:
        """The transaction tables of the bridge's SQLite state (row counts, the first rows; blobs
        as their length), for a failure message."""
        import sqlite3

        try:
            db = sqlite3.connect(f"file:{self.state}?mode=ro", uri=True, timeout=5)
        except sqlite3.Error as e:
            return f"<state {self.state}: {e}>"
        out = []
        try:
            names = [r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'transaction%' ORDER BY name")]
            for name in names:
                cur = db.execute(f'SELECT * FROM "{name}" LIMIT {rows}')
                cols = [d[0] for d in cur.description]
                n = db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
                out.append(f"{name} ({n} rows): {cols}")
                for r in cur.fetchall():
                    out.append("  " + repr(tuple(f"<{len(v)} bytes>" if isinstance(v, bytes) else v for v in r)))
        except sqlite3.Error as e:
            out.append(f"<state {self.state}: {e}>")
        finally:
            db.close()
        return "\n".join(out) or "<no transaction tables>"


# ---- the client tier's bridges --------------------------------------------------------------------

def _distinct_ports(n: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < n:
        p = util.free_port()
        if p not in ports:
            ports.append(p)
    return ports


def client_tier_bridge(binary: Path, iggy_address: str, iggy_username: str = "iggy", iggy_password: str = "iggy", *,
                       log_name: str = "bridge.log", stream: str = "kafka", security: BridgeSecurity | None = None,
                       extra_toml: str = "", http: bool = False, log_level: str = "debug",
                       restartable: bool = False) -> BridgeProcess:
    """A bridge in a temporary work directory (removed by cleanup()), not started, its config
    copied beside its log (build/test-logs/clients/LOG_NAME), the users of `security` added.
    PLAINTEXT on loopback first (the admin CLI's listener), then SASL_SSL and SSL, each
    advertising its own address. `extra_toml`: more sections. `http`: /metrics on loopback.
    `restartable`: for a test that kills and restarts it; every start appends to one log (a
    marker line between the runs), and a previous run's log, state copy, stacks and core go."""
    if restartable:
        for stale in util.log_dir().glob(log_name + "*"):
            stale.unlink()
    b = BridgeProcess(util.make_temp_dir("kib-rbridge-" if restartable else "kib-bridge-"), binary=binary,
                      log_path=util.log_dir() / log_name, owns_workdir=True, log_markers=restartable)
    b.config = b.workdir / "kafka-iggy-bridge.toml"
    listeners = [b.bootstrap]
    if security is not None:
        b.port, b.sasl_ssl_port, b.ssl_port = _distinct_ports(3)
        listeners = [f"PLAINTEXT://{b.bootstrap}", f"SASL_SSL://{b.sasl_ssl_bootstrap}", f"SSL://{b.ssl_bootstrap}"]
    if http:
        b.http_port = util.free_port()
    text = config_toml(listeners=listeners, iggy_address=iggy_address, state_path=b.state,
                       kafka=dict(node_id=1, auto_create_topics=True, default_partitions=1),
                       groups=dict(offsets_topic_partitions=1, consumer_session_timeout_ms=6000,
                                   consumer_heartbeat_interval_ms=1000, consumer_min_session_timeout_ms=6000,
                                   consumer_min_heartbeat_interval_ms=1000, streams_min_session_timeout_ms=6000,
                                   streams_min_heartbeat_interval_ms=1000),
                       iggy=dict(username=iggy_username, password=iggy_password, stream=stream), log_level=log_level,
                       http_listen=f"127.0.0.1:{b.http_port}" if http else "", security=security,
                       extra_toml=extra_toml)
    if "[compaction]" not in text:
        # As the reference broker's log.cleaner.backoff.ms and log.cleaner.dedupe.buffer.size.
        text += "\n[compaction]\nbackoff_ms = 1000\ndedupe_buffer_bytes = 8388608\n"
    b.write_config(text)
    (util.log_dir() / (log_name + ".toml")).write_text(text)  # for post-mortems
    if security is not None:
        for name, password in security.users.items():
            for mech in security.mechanisms:
                b.add_user(name, mech, password)
    return b


def start_client_tier_bridge(binary: Path, iggy_address: str, *args, start_timeout: float = 30.0,
                             **kw) -> BridgeProcess:
    """client_tier_bridge(), started; on ports another process took meanwhile (the log says
    "address already in use"), again on new ones, three times at most."""
    last_error: Exception | None = None
    for _attempt in range(3):
        b = client_tier_bridge(binary, iggy_address, *args, **kw)
        if b.log_path.exists():
            b.log_path.unlink()  # this session's log only
        try:
            return b.start(timeout=start_timeout)
        except Exception as e:  # noqa: BLE001
            last_error = e
            log = b.log_path.read_bytes().lower() if b.log_path.exists() else b""
            b.cleanup()
            if b"address already in use" in log or b"eaddrinuse" in log:
                continue
            raise
    raise RuntimeError(f"bridge did not start: {last_error}")


__all__ = ["READY_LINE", "bridge_bin", "find_binary", "target_mode", "binary_or_skip", "BridgeSecurity",
           "config_toml", "BridgeProcess", "client_tier_bridge", "start_client_tier_bridge"]
