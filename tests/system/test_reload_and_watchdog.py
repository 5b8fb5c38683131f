"""What a running bridge tells systemd (sd_notify READY/RELOADING/STOPPING/WATCHDOG over
NOTIFY_SOCKET, as systemd runs a Type=notify unit with WatchdogSec=) and what SIGHUP applies
without a restart ([limits])."""
import os, re, signal, socket, struct, time
import pytest
from harness.kafka_wire import recv_frame, request


def set_key(b, section, key, value):
    with open(b.config) as f:
        text = f.read()
    if re.search(rf"^\[{section}\]", text, re.M):
        text = re.sub(rf"^\[{section}\]\n", f"[{section}]\n{key} = {value}\n", text, count=1, flags=re.M)
    else:
        text += f"\n[{section}]\n{key} = {value}\n"
    with open(b.config, "w") as f:
        f.write(text)


def replace_key(b, key, value):
    with open(b.config) as f:
        text = f.read()
    text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
    assert n == 1, text
    with open(b.config, "w") as f:
        f.write(text)


def wait_log(b, needle, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if needle in b.read_log():
            return
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} not logged:\n" + b.read_log())


def api_versions_ok(port):
    """True when a new connection gets an ApiVersions answer; False when it is closed at once."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(request(18, 0, 7))
            frame = recv_frame(s)
            return struct.unpack_from(">i", frame, 0)[0] == 7
    except (ConnectionError, OSError):
        return False


def test_sighup_applies_connection_and_frame_limits_at_once(bridge_factory):
    b = bridge_factory()
    set_key(b, "limits", "max_connections", 1)
    b.start()
    # The one connection allowed, answered before the second one tries. The harness's readiness
    # probe may still hold the slot for a moment after start(): then this one is refused; retry.
    deadline = time.time() + 10
    while True:
        held = socket.create_connection(("127.0.0.1", b.port), timeout=5)
        try:
            held.sendall(request(18, 0, 7))
            recv_frame(held)
            break
        except (ConnectionError, OSError):
            held.close()
            assert time.time() < deadline, "no connection accepted with max_connections = 1"
            time.sleep(0.05)
    try:
        assert api_versions_ok(b.port) is False  # the second connection is over the limit
        replace_key(b, "max_connections", 3)
        b.proc.send_signal(signal.SIGHUP)
        wait_log(b, "SIGHUP: [limits] max_connections 1 -> 3")
        assert api_versions_ok(b.port) is True

        # A lower frame limit holds for the next request of an open connection.
        with socket.create_connection(("127.0.0.1", b.port), timeout=5) as s:
            s.sendall(request(18, 0, 1))
            recv_frame(s)
            set_key(b, "limits", "max_frame_bytes", 1024)
            b.proc.send_signal(signal.SIGHUP)
            wait_log(b, "SIGHUP: [limits] max_frame_bytes 67108864 -> 1024")
            s.sendall(struct.pack(">i", 4096) + b"\0" * 4096)
            with pytest.raises((ConnectionError, OSError)):
                recv_frame(s)
        wait_log(b, "exceeds max_frame_bytes 1024")
        assert "[limits] changed" not in b.read_log()
        assert b.alive()
    finally:
        held.close()


def notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.5)
    return s, path


def messages(sock, until, timeout):
    got, deadline = [], time.time() + timeout
    while time.time() < deadline:
        try:
            got.extend(sock.recv(4096).decode().split("\n"))
        except socket.timeout:
            continue
        if until(got):
            break
    return got


def test_bridge_pings_the_systemd_watchdog_and_reports_ready_reloading_stopping(bridge_factory, iggy, tmp_path):
    sock, path = notify_socket(tmp_path)
    b = bridge_factory(iggy_address=iggy.address)
    b.start(env=dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="400000"))
    try:
        got = messages(sock, lambda m: "READY=1" in m and m.count("WATCHDOG=1") >= 5, 20)
        assert "READY=1" in got, got
        assert got.count("WATCHDOG=1") >= 5, got  # every 200 ms: half of WATCHDOG_USEC
        wait_log(b, "systemd watchdog: WATCHDOG=1 every 200 ms")
        b.proc.send_signal(signal.SIGHUP)
        got = messages(sock, lambda m: "RELOADING=1" in m, 10)
        assert "RELOADING=1" in got, got
        b.proc.send_signal(signal.SIGTERM)
        got = messages(sock, lambda m: "STOPPING=1" in m, 10)
        assert "STOPPING=1" in got, got
        assert b.proc.wait(20) == 0
    finally:
        sock.close()


def test_no_watchdog_pings_without_watchdog_usec(bridge_factory, iggy, tmp_path):
    sock, path = notify_socket(tmp_path)
    b = bridge_factory(iggy_address=iggy.address)
    env = {k: v for k, v in os.environ.items() if k != "WATCHDOG_USEC"}
    b.start(env=dict(env, NOTIFY_SOCKET=path))
    try:
        got = messages(sock, lambda m: "READY=1" in m, 20)
        assert "READY=1" in got, got
        got += messages(sock, lambda m: False, 1.5)
        assert "WATCHDOG=1" not in got, got
    finally:
        sock.close()
