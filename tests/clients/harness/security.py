"""Security material for the secure fixtures (test_security.py): certificates made at test time,
the users both targets are given, and the client-neutral security settings the runners turn into
their own client's configuration (runners/client_security.py).

Certificates (openssl CLI, PEM only, ECDSA P-256 keys, valid 30 days from now, written into a temp dir
that is removed with the fixture; no key is ever committed):

    ca.pem / ca.key             the test CA (CN=kib-test-ca,O=kib)
    server.crt / server.key     CN=localhost,O=kib, SAN DNS:localhost, IP:127.0.0.1, serverAuth
    server-keystore.pem         server.key + server.crt: Kafka's ssl.keystore.type=PEM file
    NAME.crt / NAME.key         client certificates, subject CN=NAME,OU=test,O=kib, clientAuth
    NAME-keystore.pem           NAME.key + NAME.crt (the Java clients' PEM keystore)

Kafka reads the PEM files with ssl.keystore.type=PEM / ssl.truststore.type=PEM, the bridge with
[tls] certificate_file / key_file / ca_file: both targets serve the same certificate and trust
the same CA. The private keys are unencrypted PKCS#8 ("BEGIN PRIVATE KEY"): no ssl.key.password
on either side.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Users both targets know from the start, each with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN
# credentials: Kafka gets SCRAM ones at format time (StorageTool --add-scram) and PLAIN ones in
# its listener's PlainLoginModule JAAS entry; the bridge gets all three from
# `kafka-iggy-bridge users add` before it starts.
USERS: dict[str, str] = {
    "admin": "admin-secret",  # super user on both targets
    "alice": "alice-secret",  # the round trips: rights granted by ACLs
    "bob": "bob-secret",  # the authorization checks: a few literal ACLs, nothing else
}
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")
SCRAM_ITERATIONS = 8192  # Kafka's --add-scram iterations= and the bridge's [sasl] scram_iterations
SUPER_USERS = ("User:admin", "User:ANONYMOUS")
# Client certificates: the principal is the subject in RFC 2253 form (Kafka's DEFAULT rule).
CERT_USERS = ("alice", "bob")


def cert_principal(name: str) -> str:
    return f"User:CN={name},OU=test,O=kib"


@dataclass(frozen=True)
class ClientCert:
    cert: Path
    key: Path
    keystore: Path  # key + cert in one PEM file (Java's ssl.keystore.type=PEM)


@dataclass(frozen=True)
class Certs:
    dir: Path
    ca: Path
    server_cert: Path
    server_key: Path
    server_keystore: Path
    clients: dict[str, ClientCert] = field(default_factory=dict)


# ECDSA P-256: every client here takes it (Java's PEM keystore reads EC PKCS#8 keys), and it is
# made in milliseconds where RSA 2048 takes about a second per key on a busy machine.
KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")


def _openssl(*args: str, cwd: Path):
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed ({p.returncode}):\n{p.stderr[-2000:]}")


def _signed(d: Path, name: str, subject: str, extensions: str, serial: int):
    """NAME.key (PKCS#8) and NAME.crt signed by the CA in d."""
    _openssl("req", "-new", *KEY, "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=d)
    (d / f"{name}.ext").write_text(extensions)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", str(serial),
             "-days", "30", "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)
    (d / f"{name}-keystore.pem").write_text((d / f"{name}.key").read_text() + (d / f"{name}.crt").read_text())


def make_certs(d: Path, client_names=CERT_USERS) -> Certs:
    d.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", *KEY, "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
             "-sha256", "-subj", "/O=kib/CN=kib-test-ca",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    _signed(d, "server", "/O=kib/CN=localhost",
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n", 1000)
    clients = {}
    for i, name in enumerate(client_names):
        # openssl's -subj lists RDNs outermost first; RFC 2253 prints them innermost first:
        # /O=kib/OU=test/CN=alice is "CN=alice,OU=test,O=kib".
        _signed(d, name, f"/O=kib/OU=test/CN={name}",
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=clientAuth\n", 2000 + i)
        clients[name] = ClientCert(d / f"{name}.crt", d / f"{name}.key", d / f"{name}-keystore.pem")
    for f in d.glob("*.key"):
        f.chmod(0o600)
    return Certs(d, d / "ca.pem", d / "server.crt", d / "server.key", d / "server-keystore.pem", clients)


# --- what a client is told (client-neutral; runners/client_security.py maps it per client) -----

def sasl_ssl(certs: Certs, mechanism: str, user: str, password: str | None = None) -> dict:
    """SASL over TLS; the server certificate is verified against the test CA (and its name)."""
    return {"protocol": "SASL_SSL", "mechanism": mechanism, "username": user,
            "password": USERS[user] if password is None else password,
            "ca_file": str(certs.ca), "cert_file": None, "key_file": None, "keystore_file": None}


def ssl(certs: Certs, cert_user: str | None) -> dict:
    """TLS with the client certificate of cert_user (None: no client certificate)."""
    c = certs.clients.get(cert_user) if cert_user else None
    return {"protocol": "SSL", "mechanism": None, "username": None, "password": None,
            "ca_file": str(certs.ca),
            "cert_file": str(c.cert) if c else None, "key_file": str(c.key) if c else None,
            "keystore_file": str(c.keystore) if c else None}
