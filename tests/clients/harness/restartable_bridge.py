"""A bridge of its own for a test that kills it: SIGKILL, then the same binary, config (port),
SQLite state and Iggy stream again, as an operator's supervisor would restart it.

The session `bridge` fixture (harness/bridge.py) is shared and must not be killed; this one
lives for one test. It runs on the session iggy-server but in a stream of its own, so its
restarts touch nothing the other tests created. Every start appends to one log file, with a
marker line between the runs. KIB_RESTARTABLE_BRIDGE_LOG_LEVEL=trace logs every request.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import bridge as bridge_mod
from . import util


class RestartableBridge:
    def __init__(self, binary: Path, iggy_address: str, iggy_username: str, iggy_password: str, *,
                 stream: str, log_name: str, extra_toml: str = "", start_timeout: float = 30.0):
        self.binary = binary
        self.start_timeout = start_timeout
        self.tmp = util.make_temp_dir("kib-rbridge-")
        self.port = util.free_port()
        self.state_path = self.tmp / "state.db"
        self.config_path = self.tmp / "kafka-iggy-bridge.toml"
        text = bridge_mod.config_toml(kafka_port=self.port, iggy_address=iggy_address, iggy_username=iggy_username,
                                      iggy_password=iggy_password, state_path=self.state_path,
                                      log_level=os.environ.get("KIB_RESTARTABLE_BRIDGE_LOG_LEVEL", "debug"))
        assert 'stream = "kafka"' in text, "config_toml() no longer names the stream as expected"
        text = text.replace('stream = "kafka"', f'stream = "{stream}"') + extra_toml
        self.config_path.write_text(text)
        self.log_path = util.log_dir() / log_name
        for stale in util.log_dir().glob(log_name + "*"):  # a previous run's log, state copy, stacks, core
            stale.unlink()
        (util.log_dir() / (log_name + ".toml")).write_text(text)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.kills = 0
        self.start_seconds: list[float] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self):
        """Raises if the bridge exited on its own (not killed by the test), with its exit status."""
        if self.proc is not None and self.proc.poll() is not None:
            rc = self.proc.returncode
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
            raise AssertionError(f"the bridge (start #{self.starts}) died on its own: {how}; log {self.log_path}:\n"
                                 f"{util.tail(self.log_path, 30)}")

    def start(self) -> "RestartableBridge":
        t0 = time.monotonic()
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== test harness: bridge start #{self.starts + 1} at {time.strftime('%H:%M:%S')} "
                      f"=====\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [str(self.binary), "serve", "--config", str(self.config_path)], env=dict(os.environ),
                cwd=str(self.tmp), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=util._die_with_parent if sys.platform.startswith("linux") else None)
        self.starts += 1
        deadline = time.monotonic() + self.start_timeout
        while not util.port_accepts("127.0.0.1", self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"bridge exited with {self.proc.returncode} at start #{self.starts}; "
                                   f"log {self.log_path}:\n{util.tail(self.log_path, 60)}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"bridge start #{self.starts} not listening after {self.start_timeout:.0f}s; "
                                   f"log {self.log_path}:\n{util.tail(self.log_path, 60)}")
            time.sleep(0.05)
        self.start_seconds.append(round(time.monotonic() - t0, 2))
        return self

    def kill(self):
        """SIGKILL: no shutdown, no flush; whatever the bridge had not made durable is gone."""
        if self.proc is not None:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.kills += 1

    def kill_and_restart(self):
        self.kill()
        self.start()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        self.proc = None

    def dump_stacks(self) -> str:
        """Every thread's stack of the running bridge (gdb, if installed) into a file beside its
        log; returns a line naming the file, for a failure message about a stuck bridge."""
        gdb = shutil.which("gdb")
        if not self.alive() or gdb is None:
            return "(no stacks: " + ("bridge not running" if not self.alive() else "no gdb") + ")"
        path = util.log_dir() / (self.log_path.name + f".stacks-{self.starts}.txt")
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
            db = sqlite3.connect(f"file:{self.state_path}?mode=ro", uri=True, timeout=5)
        except sqlite3.Error as e:
            return f"<state {self.state_path}: {e}>"
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
            out.append(f"<state {self.state_path}: {e}>")
        finally:
            db.close()
        return "\n".join(out) or "<no transaction tables>"

    def cleanup(self):
        """Stops it; keeps a copy of the SQLite state beside the log (tables transactions,
        transaction_partitions, transaction_batches, transaction_offsets) for post-mortems."""
        self.stop()
        for core in self.tmp.glob("core*"):  # a crash's core dump, where `ulimit -c` allowed one
            shutil.move(str(core), str(util.log_dir() / f"{self.log_path.name}.{core.name}"))
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.state_path) + suffix)
            if src.exists():
                shutil.copyfile(src, util.log_dir() / (self.log_path.name + ".state.db" + suffix))
        util.remove_tree(self.tmp)
