"""TLS listeners (docs/security.md "TLS"): the real bridge with a PLAINTEXT and an SSL listener,
driven by Python's ssl module, kcat and confluent-kafka (librdkafka); certificates are made with
the openssl command for each test."""
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import time
import urllib.request

import pytest

from conftest import bridge_bin, free_port
from harness.kafka_wire import (api_versions_request, connect, is_closed, metadata_v4, parse_api_versions,
                                parse_metadata_v4_brokers, recv_frame)


# ---- a throw-away PKI (the openssl command) ----

def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class Pki:
    def __init__(self, d):
        self.dir = d
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=Test CA", "-days", "30",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                cwd=d)
        self.ca = self.path("ca.crt")

    def path(self, name):
        return os.path.join(self.dir, name)

    def issue(self, name, subject, server):
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            if server:
                f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
            else:
                f.write("extendedKeyUsage=clientAuth\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", name + ".key",
                "-out", name + ".csr", "-subj", subject, cwd=self.dir)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "30", "-extfile", name + ".ext", cwd=self.dir)
        return self.path(name + ".crt"), self.path(name + ".key")


@pytest.fixture
def pki(workdir):
    if not shutil.which("openssl"):
        pytest.skip("SKIPPED: no openssl command")
    d = os.path.join(workdir, "pki")
    os.mkdir(d)
    return Pki(d)


def tls_bridge(bridge_factory, pki, client_auth="none", rules="DEFAULT", http=False, server=("server", "one"),
               protocol="SSL", **kw):
    """A bridge with listeners PLAINTEXT (b.port) and SSL (or `protocol`: SASL_SSL) on b.ssl_port."""
    cert, key = pki.issue(server[0], f"/CN=localhost/O={server[1]}", server=True)
    b = bridge_factory(extra_toml=f'[tls]\ncertificate_file = "{cert}"\nkey_file = "{key}"\nca_file = "{pki.ca}"\n'
                                  f'client_auth = "{client_auth}"\nprincipal_mapping_rules = "{rules}"\n', **kw)
    b.ssl_port = free_port()
    b.cert, b.key = cert, key
    with open(b.config) as f:
        text = f.read()
    text = text.replace(f'listeners = ["127.0.0.1:{b.port}"]',
                        f'listeners = ["PLAINTEXT://127.0.0.1:{b.port}", "{protocol}://127.0.0.1:{b.ssl_port}"]')
    if http:
        b.http_port = free_port()
        text = text.replace('[http]\nlisten = ""', f'[http]\nlisten = "127.0.0.1:{b.http_port}"')
    with open(b.config, "w") as f:
        f.write(text)
    return b


def client_context(pki, cert=None):
    ctx = ssl.create_default_context(cafile=pki.ca)
    if cert:
        ctx.load_cert_chain(*cert)
    return ctx


def tls_connect(port, ctx, timeout=10.0):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def api_versions(sock, corr=1):
    sock.sendall(api_versions_request(3, corr))
    c, err, apis = parse_api_versions(recv_frame(sock), 3)
    assert c == corr and err == 0
    return apis


def metadata_brokers(sock, corr=2):
    """Metadata v4 for no topics: [(node_id, host, port)]."""
    sock.sendall(metadata_v4(corr, [], auto_create=False))
    frame = recv_frame(sock)
    assert struct.unpack_from(">i", frame, 0)[0] == corr
    return parse_metadata_v4_brokers(frame)


def subject_o(sock):
    for rdn in sock.getpeercert()["subject"]:
        for k, v in rdn:
            if k == "organizationName":
                return v
    return None


def wait_log(b, text, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if text in b.read_log():
            return True
        time.sleep(0.05)
    return False


# ---- without Iggy: the listener, the handshake, refusals ----

def test_api_versions_and_metadata_over_tls_advertise_the_ssl_listener(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki).start()
    with tls_connect(b.ssl_port, client_context(pki)) as s:
        assert s.version() in ("TLSv1.3", "TLSv1.2")
        assert 18 in api_versions(s)
        assert metadata_brokers(s) == [(1, "127.0.0.1", b.ssl_port)]
    with connect(b.port) as s:
        assert metadata_brokers(s) == [(1, "127.0.0.1", b.port)]
    assert "tls: server certificate O=one,CN=localhost" in b.read_log()


def test_a_plaintext_client_on_the_ssl_listener_is_closed_logged_and_counted(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki, http=True).start()
    with connect(b.ssl_port) as s:
        s.sendall(api_versions_request(0, 1))
        assert is_closed(s)
    assert wait_log(b, "TLS handshake failed (not_tls)")
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{b.http_port}/metrics", timeout=5).read().decode()
    assert 'kib_tls_handshake_failures_total{reason="not_tls"} 1' in metrics
    # The plaintext listener beside it is unaffected.
    with connect(b.port) as s:
        assert 18 in api_versions(s)


def test_client_auth_required_refuses_a_client_without_a_certificate(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki, client_auth="required").start()
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        # TLS 1.3: the client's handshake completes before the server has checked for a
        # certificate; the refusal (alert certificate_required) arrives on the first read.
        with tls_connect(b.ssl_port, client_context(pki)) as s:
            api_versions(s)
    assert wait_log(b, "TLS handshake failed (no_client_certificate)")
    alice = pki.issue("alice", "/O=Example/CN=alice", server=False)
    with tls_connect(b.ssl_port, client_context(pki, alice)) as s:
        assert 18 in api_versions(s)
    assert wait_log(b, "principal User:CN=alice,O=Example")


def test_client_auth_is_for_ssl_listeners_only_as_in_kafka(bridge_factory, pki):
    # Kafka applies the broker-wide ssl.client.auth to SSL listeners only (KIP-684): a SASL_SSL
    # client needs no certificate whatever client_auth says.
    b = tls_bridge(bridge_factory, pki, client_auth="required", protocol="SASL_SSL").start()
    with tls_connect(b.ssl_port, client_context(pki)) as s:
        assert 18 in api_versions(s)
    assert "TLS handshake failed" not in b.read_log()


def test_principal_mapping_rules_name_the_ssl_principal(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki, client_auth="required", rules="RULE:^CN=([^,]+),.*$/$1/L, DEFAULT").start()
    alice = pki.issue("alice", "/O=Example/CN=Alice", server=False)
    with tls_connect(b.ssl_port, client_context(pki, alice)) as s:
        assert 18 in api_versions(s)
    assert wait_log(b, "client certificate CN=Alice,O=Example, principal User:alice")


def test_sighup_gives_new_connections_the_new_certificate_and_keeps_old_ones(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki).start()
    old = tls_connect(b.ssl_port, client_context(pki))
    assert subject_o(old) == "one"
    assert 18 in api_versions(old)
    # A renewed certificate written over the old files, then SIGHUP.
    cert2, key2 = pki.issue("server2", "/CN=localhost/O=two", server=True)
    shutil.copy(cert2, b.cert)
    shutil.copy(key2, b.key)
    b.proc.send_signal(signal.SIGHUP)
    assert wait_log(b, "SIGHUP: [tls] reloaded"), b.read_log()
    with tls_connect(b.ssl_port, client_context(pki)) as s:
        assert subject_o(s) == "two"
        assert 18 in api_versions(s)
    assert 18 in api_versions(old, corr=5)  # the established connection kept working
    # A file that does not load: the previous context stays.
    with open(b.cert, "w") as f:
        f.write("not a certificate\n")
    b.proc.send_signal(signal.SIGHUP)
    assert wait_log(b, "SIGHUP: [tls] not reloaded"), b.read_log()
    with tls_connect(b.ssl_port, client_context(pki)) as s:
        assert subject_o(s) == "two"
    old.close()
    assert b.alive()


def test_openssl_s_client_sees_the_reloaded_certificate(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki).start()

    def served_subject():
        out = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{b.ssl_port}", "-CAfile", pki.ca,
                              "-verify_return_error", "-brief"],
                             input=b"", capture_output=True, timeout=20)
        return out.stderr.decode() + out.stdout.decode()

    assert "O = one" in served_subject()
    cert2, key2 = pki.issue("server2", "/CN=localhost/O=two", server=True)
    shutil.copy(cert2, b.cert)
    shutil.copy(key2, b.key)
    b.proc.send_signal(signal.SIGHUP)
    assert wait_log(b, "SIGHUP: [tls] reloaded")
    assert "O = two" in served_subject()


def test_a_missing_certificate_file_stops_the_start_naming_the_key(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki)
    os.unlink(b.cert)
    out = subprocess.run([bridge_bin(), "check-config", "--config", b.config], capture_output=True, text=True)
    assert out.returncode == 3
    assert f"[tls] certificate_file {b.cert}: cannot open" in out.stderr
    with pytest.raises(RuntimeError, match=r"\[tls\] certificate_file"):
        b.start()


def test_check_config_redacts_the_key_password(bridge_factory, pki):
    b = tls_bridge(bridge_factory, pki)
    with open(b.config) as f:
        text = f.read()
    with open(b.config, "w") as f:
        f.write(text.replace("[tls]\n", '[tls]\nkey_password = "pw-s3cret"\n'))
    out = subprocess.run([bridge_bin(), "check-config", "--config", b.config], capture_output=True, text=True)
    # The key is not encrypted: OpenSSL ignores a password it does not need.
    assert out.returncode == 0, out.stderr
    assert "pw-s3cret" not in out.stdout
    assert 'key_password = "<redacted>"' in out.stdout


# ---- with Iggy: real clients produce and consume over SSL with a client certificate ----

def test_kcat_and_confluent_kafka_produce_and_consume_over_ssl_with_a_client_certificate(bridge_factory, pki, iggy):
    b = tls_bridge(bridge_factory, pki, client_auth="required", rules="RULE:^CN=([^,]+),.*$/$1/L",
                   iggy_address=iggy.address).start().wait_ready()
    cert, key = pki.issue("client", "/O=Example/CN=Producer", server=False)
    topic = "tls-%d" % time.time_ns()
    payloads = [os.urandom(100 + 37 * i) for i in range(20)] + [bytes(range(256)) * 40]

    ck = pytest.importorskip("confluent_kafka")
    conf = {"bootstrap.servers": f"127.0.0.1:{b.ssl_port}", "security.protocol": "SSL", "ssl.ca.location": pki.ca,
            "ssl.certificate.location": cert, "ssl.key.location": key}
    p = ck.Producer(dict(conf, acks="all"))
    for i, v in enumerate(payloads):
        p.produce(topic, key=b"k%d" % i, value=v)
    assert p.flush(30) == 0

    c = ck.Consumer(dict(conf, **{"group.id": "tls-g", "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    c.subscribe([topic])
    got = []
    deadline = time.time() + 60
    while len(got) < len(payloads) and time.time() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        got.append((m.key(), m.value()))
    c.close()
    assert got == [(b"k%d" % i, v) for i, v in enumerate(payloads)]
    assert wait_log(b, "principal User:producer")

    if not shutil.which("kcat"):
        return
    kc = ["kcat", "-b", f"127.0.0.1:{b.ssl_port}", "-X", "security.protocol=ssl", "-X", f"ssl.ca.location={pki.ca}",
          "-X", f"ssl.certificate.location={cert}", "-X", f"ssl.key.location={key}"]
    lines = [f"line {i} " + "x" * i for i in range(50)]
    subprocess.run(kc + ["-P", "-t", topic + "-kcat", "-K", ":"],
                   input="".join(f"key{i}:{v}\n" for i, v in enumerate(lines)),
                   text=True, check=True, capture_output=True, timeout=60)
    out = subprocess.run(kc + ["-C", "-t", topic + "-kcat", "-o", "beginning", "-e", "-f", "%k=%s\\n"],
                         text=True, check=True, capture_output=True, timeout=60)
    assert out.stdout.splitlines() == [f"key{i}={v}" for i, v in enumerate(lines)]
    # Without a client certificate kcat gets nothing.
    refused = subprocess.run(["kcat", "-b", f"127.0.0.1:{b.ssl_port}", "-X", "security.protocol=ssl",
                              "-X", f"ssl.ca.location={pki.ca}", "-L", "-m", "5"], capture_output=True, text=True,
                             timeout=30)
    assert refused.returncode != 0
