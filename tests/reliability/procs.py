"""The processes the checker kills: iggy-server and the bridge, each restartable on the same port
and the same data (Iggy's system path, the bridge's state.db), logs appended across restarts.
The bridge is the launcher of every tier (tests/clients/harness/bridge.py) with this runner's
config; Proc runs iggy-server (and the migration rehearsal's MirrorMaker).

Binaries are found as the other tiers find them, by tests/clients/harness (iggy-server:
$IGGY_SERVER, PATH, /usr/local/bin; the bridge: $BRIDGE_BIN or build/release/kafka-iggy-bridge)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "clients"))
from harness import util  # noqa: E402
from harness.bridge import BridgeProcess, bridge_bin, config_toml  # noqa: E402,F401
from harness.iggy_server import PASSWORD, USERNAME  # noqa: E402
from harness.iggy_server import find_binary as find_iggy  # noqa: E402,F401


class Proc:
    """A child in its own session (SIGKILLed with its group), its output appended to one log."""

    def __init__(self, name: str, argv: list[str], env: dict, cwd: Path, log_path: Path):
        self.name, self.argv, self.env, self.cwd, self.log_path = name, argv, env, cwd, log_path
        self.proc: subprocess.Popen | None = None
        self.log_start = 0
        self.starts = 0

    def spawn(self):
        log = open(self.log_path, "ab")
        self.log_start = log.tell()
        log.write(f"==== start {self.starts} at {time.strftime('%H:%M:%S')} ====\n".encode())
        log.flush()
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=str(self.cwd), stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=util._die_with_parent)
        log.close()
        self.starts += 1

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_since_start(self) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(self.log_start)
            return f.read().decode("utf-8", "replace")

    def kill9(self):
        if self.alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc is not None:
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 20.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill9()
        return self.proc.returncode

    def rss_kb(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))


def wait_port(port: int, timeout: float, proc: Proc | None = None, what: str = "port"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if util.port_accepts("127.0.0.1", port, 0.2):
            return
        if proc is not None and not proc.alive():
            raise RuntimeError(f"{proc.name} exited ({proc.proc.returncode}) before {what}:\n"
                               f"{util.tail(proc.log_path)}")
        time.sleep(0.02)
    raise TimeoutError(f"{what}: port {port} not accepting after {timeout:.0f}s")


class Iggy:
    """iggy-server on a fixed port and data dir; start() the first time with --fresh."""

    def __init__(self, binary: Path, workdir: Path, log_path: Path):
        self.binary = binary
        self.port = util.free_port()
        self.data = workdir / "iggy-data"
        env = dict(os.environ)
        env.update({
            "IGGY_ROOT_USERNAME": USERNAME, "IGGY_ROOT_PASSWORD": PASSWORD,
            "IGGY_SYSTEM_PATH": str(self.data), "IGGY_TCP_ADDRESS": self.address,
            "IGGY_HTTP_ENABLED": "false", "IGGY_QUIC_ENABLED": "false", "IGGY_WEBSOCKET_ENABLED": "false",
            "IGGY_SYSTEM_SHARDING_CPU_ALLOCATION": "1", "IGGY_CONFIG_PATH": "/nonexistent",
        })
        self.proc = Proc("iggy-server", [str(binary), "--fresh"], env, workdir, log_path)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> float:
        """Returns the seconds until its TCP port accepted."""
        t0 = time.monotonic()
        self.proc.argv = [str(self.binary)] + (["--fresh"] if self.proc.starts == 0 else [])
        self.proc.spawn()
        wait_port(self.port, timeout, self.proc, "iggy-server to listen")
        return time.monotonic() - t0

    def kill9(self):
        self.proc.kill9()

    def stop(self):
        self.proc.stop()


def bridge(workdir: Path, iggy_address: str, log_path: Path, state_path: Path | None = None,
           limits: dict[str, str] | None = None, auto_create_topics: bool = True) -> BridgeProcess:
    """The bridge on a fixed port with one state file, restartable (kill -9 or SIGTERM), its log
    appended across restarts; info logs, 4 partitions a topic, `limits` ([limits] keys and
    their TOML values) on top of the defaults."""
    b = BridgeProcess(workdir, binary=bridge_bin(), log_path=log_path, state_path=state_path, log_markers=True)
    lim = "".join(f"{k} = {v}\n" for k, v in (limits or {}).items())
    return b.write_config(config_toml(
        listeners=[b.bootstrap], iggy_address=iggy_address, state_path=b.state,
        kafka=dict(auto_create_topics=auto_create_topics, default_partitions=4),
        iggy=dict(username=USERNAME, password=PASSWORD, request_timeout_ms=5000), log_level="info",
        extra_toml="[limits]\n" + lim))


def known_keys(binary: Path, candidates: dict[str, str], workdir: Path) -> dict[str, str]:
    """The [limits] keys of `candidates` this bridge binary accepts (it refuses unknown keys):
    each is tried with `kafka-iggy-bridge check-config`."""
    out = {}
    for key, value in candidates.items():
        cfg = workdir / f"probe-{key}.toml"
        cfg.write_text(f"[limits]\n{key} = {value}\n[state]\npath = \"{workdir / 'probe.db'}\"\n")
        r = subprocess.run([str(binary), "check-config", "--config", str(cfg)], capture_output=True, text=True,
                           timeout=30)
        if r.returncode == 0:
            out[key] = value
        cfg.unlink()
    return out
