"""Shared helpers: repository paths, free ports, readiness polling, child processes."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
CLIENTS_DIR = REPO_ROOT / "tests" / "clients"
JAVA_DIR = REPO_ROOT / "tests" / ".java"
JAVA_LIB = JAVA_DIR / "lib"
JAVA_CLASSES = JAVA_DIR / "classes"
# Logs of everything the harness starts; kept after the run (build/ is git-ignored).
LOG_DIR = Path(os.environ.get("KIB_TEST_LOG_DIR", REPO_ROOT / "build" / "test-logs" / "clients"))


# client name -> version string seen during this session (printed in the terminal summary)
CLIENT_VERSIONS: dict[str, str] = {}


def log_dir() -> Path:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR


def make_temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the caller retries on a race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail(path: Path, lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()[-20000:]
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])
    except OSError as e:
        return f"<no log: {e}>"


def skip_loudly(reason: str):
    """pytest.skip with a reason that also goes to stderr, so a skip is never silent."""
    import pytest

    print(f"\n*** SKIPPED: {reason}", file=sys.stderr, flush=True)
    pytest.skip(f"SKIPPED: {reason}")


def _die_with_parent():
    """In the child before exec: SIGTERM when the test process dies, even by SIGKILL (Linux)."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # noqa: BLE001 - best effort, not Linux
        pass


class ChildProcess:
    """A child in its own process group, output to a log file, stopped by SIGTERM then SIGKILL."""

    def __init__(self, name: str, argv: list[str], env: dict | None, cwd: Path, log_path: Path):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=str(cwd),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 15.0) -> int | None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        self._log.close()
        return self.proc.returncode


def wait_until(pred, timeout: float, what: str, child: ChildProcess | None = None, interval: float = 0.1):
    """Polls pred() until true; fails early when child exits, with its log tail."""
    deadline = time.monotonic() + timeout
    while True:
        if pred():
            return
        if child is not None and not child.alive():
            raise RuntimeError(
                f"{child.name} exited with {child.proc.returncode} before {what}; "
                f"log {child.log_path}:\n{tail(child.log_path)}"
            )
        if time.monotonic() > deadline:
            log = f"; log {child.log_path}:\n{tail(child.log_path)}" if child else ""
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{log}")
        time.sleep(interval)


def remove_tree(path: Path):
    shutil.rmtree(path, ignore_errors=True)
