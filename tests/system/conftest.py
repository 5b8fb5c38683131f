"""System tier: the real bridge binary driven over TCP. Python stdlib + pytest only.

The bridge launcher (harness/bridge.py), the Kafka wire helper (harness/kafka_wire) and the
iggy-server are shared with the other tiers through tests/clients/harness."""
import os, socket, sys, tempfile
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "clients"))
from harness.bridge import BridgeProcess, config_toml  # noqa: E402
from harness.iggy_server import IggyServer, find_binary  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bridge_bin():
    return os.environ.get("BRIDGE_BIN", os.path.join(ROOT, "build", "release", "kafka-iggy-bridge"))


def system_bridge(workdir, extra_toml="", iggy_address=None, kafka_extra="", listeners=None, cls=BridgeProcess):
    """A bridge of the system tier, not started: PLAINTEXT on a free loopback port (or
    `listeners(port)`), debug logs, no /metrics, Iggy at `iggy_address` (default: a port nobody
    listens on); `kafka_extra`: more [kafka] lines, `extra_toml`: more sections."""
    b = cls(workdir, binary=bridge_bin())
    b.write_config(config_toml(listeners=listeners(b) if listeners else [f"127.0.0.1:{b.port}"],
                               iggy_address=iggy_address or "127.0.0.1:%d" % free_port(), state_path=b.state,
                               kafka_extra=kafka_extra, extra_toml=extra_toml))
    return b


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
        b = system_bridge(tempfile.mkdtemp(dir=workdir), extra_toml, **kw)
        made.append(b)
        return b

    yield make
    for b in made:
        b.kill()


@pytest.fixture
def bridge(bridge_factory):
    return bridge_factory().start()


# The real iggy-server, shared with the client tier's harness (one per test session).
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
