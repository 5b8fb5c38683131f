"""System tier: the real bridge binary driven over TCP. Python stdlib + pytest only."""
import os, signal, socket, subprocess, tempfile, time
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bridge_bin():
    return os.environ.get("BRIDGE_BIN", os.path.join(ROOT, "build", "release", "kafka-iggy-bridge"))


class BridgeProcess:
    """One bridge process with its own config, state file and log."""

    def __init__(self, workdir, extra_toml="", iggy_address=None, kafka_extra=""):
        self.workdir = workdir
        self.port = free_port()
        self.config = os.path.join(workdir, "bridge.toml")
        self.state = os.path.join(workdir, "state.db")
        self.log_path = os.path.join(workdir, "bridge.log")
        iggy = iggy_address or "127.0.0.1:%d" % free_port()
        with open(self.config, "w") as f:
            f.write(f'[kafka]\nlisteners = ["127.0.0.1:{self.port}"]\n{kafka_extra}'
                    f'[iggy]\naddress = "{iggy}"\n'
                    f'[state]\npath = "{self.state}"\n'
                    f'[log]\nlevel = "debug"\n[http]\nlisten = ""\n' + extra_toml)
        self.proc = None

    def start(self, wait=True, env=None):
        """`env`: the process environment (default: this one's), e.g. systemd's NOTIFY_SOCKET."""
        self.log = open(self.log_path, "ab")
        self.log_start = self.log.tell()  # wait_ready looks only at what this run logs
        self.proc = subprocess.Popen([bridge_bin(), "serve", "--config", self.config],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        if wait:
            deadline = time.time() + 15
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError("bridge exited with %s:\n%s" % (self.proc.returncode, self.read_log()))
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    return self
                except OSError:
                    time.sleep(0.05)
            raise RuntimeError("bridge did not listen:\n" + self.read_log())
        return self

    def wait_ready(self, timeout=30):
        """Until the bridge logged in to Iggy and loaded its topics ("ready" in the log)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "kafka-iggy-bridge ready" in self.read_log(since=self.log_start):
                return self
            if self.proc.poll() is not None:
                raise RuntimeError("bridge exited:\n" + self.read_log())
            time.sleep(0.05)
        raise RuntimeError("bridge not ready:\n" + self.read_log())

    def read_log(self, since=0):
        with open(self.log_path, "rb") as f:
            f.seek(since)
            return f.read().decode(errors="replace")

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        return self.proc.returncode if self.proc else None


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="kib-sys-") as d:
        yield d


@pytest.fixture
def bridge_factory(workdir):
    if not os.path.exists(bridge_bin()):
        pytest.fail("bridge binary not built: " + bridge_bin())
    made = []

    def make(extra_toml="", **kw):
        b = BridgeProcess(tempfile.mkdtemp(dir=workdir), extra_toml, **kw)
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop(signal.SIGKILL)


@pytest.fixture
def bridge(bridge_factory):
    return bridge_factory().start()


# The real iggy-server, shared with the client tier's harness (one per test session).
import sys as _sys
_sys.path.insert(0, os.path.join(ROOT, "tests", "clients"))
from harness.iggy_server import IggyServer, find_binary  # noqa: E402


@pytest.fixture(scope="session")
def iggy():
    binary = find_binary()
    if binary is None:
        pytest.skip("SKIPPED: no iggy-server (set IGGY_SERVER or install /usr/local/bin/iggy-server)")
    server = IggyServer(binary).start()
    yield server
    server.stop()


@pytest.fixture
def bridge_on_iggy(bridge_factory, iggy):
    return bridge_factory(iggy_address=iggy.address).start().wait_ready()
