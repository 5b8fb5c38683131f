"""A few Kafka requests written by hand, for what no client lets a test do: send a request
before authenticating, ignore a failed SaslAuthenticate and go on, pipeline an API behind a wrong
SCRAM proof. Over TLS (Python's ssl, the test CA) or plain TCP.

    with WireConnection("127.0.0.1", port, ca_file=ca) as c:
        c.send(SASL_HANDSHAKE, 1, encode_string("PLAIN"))
        corr, body = c.receive()          # None once the server closed the connection

Only what test_security.py needs: request header v1 (non-flexible) and v2 (flexible), the
bodies of ApiVersions v0, SaslHandshake v1, SaslAuthenticate v2, Metadata v4, and an RFC 5802
SCRAM client (SHA-256 / SHA-512) that can be given a wrong password.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import socket
import ssl
import struct
from dataclasses import dataclass

API_VERSIONS = 18
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
METADATA = 3

FLEXIBLE = {(SASL_AUTHENTICATE, 2)}  # (api, version) pairs sent with request header v2


def encode_string(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def encode_uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_compact_bytes(b: bytes) -> bytes:
    return encode_uvarint(len(b) + 1) + b


class Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"short response: {n} bytes wanted at {self.pos} of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def int16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.take(n).decode()

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_string(self) -> str | None:
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def compact_bytes(self) -> bytes | None:
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1)

    def tagged_fields(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


class WireConnection:
    def __init__(self, host: str, port: int, *, ca_file: str | None = None, cert_file: str | None = None,
                 key_file: str | None = None, timeout: float = 15.0, client_id: str = "kib-wire"):
        raw = socket.create_connection((host, port), timeout=timeout)
        if ca_file:
            ctx = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                ctx.load_cert_chain(cert_file, key_file)
            self.sock = ctx.wrap_socket(raw, server_hostname=host)
        else:
            self.sock = raw
        self.client_id = client_id
        self.correlation = 0
        self.buf = b""

    def send(self, api_key: int, version: int, body: bytes) -> int:
        self.correlation += 1
        header = struct.pack(">hhi", api_key, version, self.correlation) + encode_string(self.client_id)
        if (api_key, version) in FLEXIBLE:
            header += b"\x00"  # no tagged fields
        frame = header + body
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        return self.correlation

    def _fill(self, n: int) -> bool:
        while len(self.buf) < n:
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
                chunk = b""
            if not chunk:
                return False
            self.buf += chunk
        return True

    def receive(self) -> tuple[int, bytes] | None:
        """(correlation id, response body after the correlation id) or None: the server closed
        the connection (EOF, reset or a TLS close) before a whole response arrived."""
        if not self._fill(4):
            return None
        n = struct.unpack(">i", self.buf[:4])[0]
        if not self._fill(4 + n):
            return None
        frame, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
        return struct.unpack(">i", frame[:4])[0], frame[4:]

    def closed_within(self, seconds: float) -> bool:
        """True when the server closes the connection within `seconds` with nothing more sent;
        False when it stays open (or sends something)."""
        self.sock.settimeout(seconds)
        try:
            return not self._fill(len(self.buf) + 1)
        except (TimeoutError, socket.timeout):
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- request bodies and response parsers ----------------------------------------------------

def sasl_handshake_body(mechanism: str) -> bytes:
    return encode_string(mechanism)


def parse_sasl_handshake(body: bytes) -> tuple[int, list[str]]:
    r = Reader(body)
    code = r.int16()
    return code, [r.string() for _ in range(r.int32())]


def sasl_authenticate_body(token: bytes) -> bytes:
    return encode_compact_bytes(token) + b"\x00"  # v2: compact bytes, no tagged fields


@dataclass
class SaslAuthenticateResponse:
    error_code: int
    error_message: str | None
    auth_bytes: bytes | None
    session_lifetime_ms: int


def parse_sasl_authenticate(body: bytes) -> SaslAuthenticateResponse:
    r = Reader(body)
    r.tagged_fields()  # response header v1
    code = r.int16()
    msg = r.compact_string()
    auth = r.compact_bytes()
    lifetime = r.int64()
    return SaslAuthenticateResponse(code, msg, auth, lifetime)


def metadata_v4_body(topics: list[str] | None = None) -> bytes:
    """Metadata v4: topics (null = all), allow_auto_topic_creation=false."""
    if topics is None:
        return struct.pack(">i", -1) + b"\x00"
    return struct.pack(">i", len(topics)) + b"".join(encode_string(t) for t in topics) + b"\x00"


def parse_metadata_v4_topics(body: bytes) -> list[tuple[int, str]]:
    """[(error_code, name)] of a Metadata v4 response."""
    r = Reader(body)
    r.int32()  # throttle
    for _ in range(r.int32()):  # brokers
        r.int32(), r.string(), r.int32(), r.string()
    r.string()  # cluster id
    r.int32()  # controller
    topics = []
    for _ in range(r.int32()):
        code, name = r.int16(), r.string()
        r.take(1)  # is_internal
        for _ in range(r.int32()):  # partitions
            r.int16(), r.int32(), r.int32()
            for _ in range(2):
                r.take(4 * r.int32())
        topics.append((code, name))
    return topics


# --- SCRAM (RFC 5802 / 7677) ----------------------------------------------------------------

class ScramClient:
    def __init__(self, mechanism: str, username: str, password: str):
        self.hash = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}[mechanism]
        self.hash_name = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.username, self.password = username, password
        self.client_nonce = base64.b64encode(secrets.token_bytes(24)).decode().rstrip("=")
        self.client_first_bare = f"n={username.replace('=', '=3D').replace(',', '=2C')},r={self.client_nonce}"

    def first_message(self) -> bytes:
        return ("n,," + self.client_first_bare).encode()

    def final_message(self, server_first: bytes) -> bytes:
        attrs = dict(item.split("=", 1) for item in server_first.decode().split(","))
        nonce, salt, iterations = attrs["r"], base64.b64decode(attrs["s"]), int(attrs["i"])
        if not nonce.startswith(self.client_nonce):
            raise ValueError(f"server nonce {nonce!r} does not extend the client's")
        salted = hashlib.pbkdf2_hmac(self.hash_name, self.password.encode(), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", self.hash).digest()
        stored_key = self.hash(client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self.client_first_bare},{server_first.decode()},{without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, self.hash).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_key = hmac.new(salted, b"Server Key", self.hash).digest()
        self.server_signature = hmac.new(server_key, auth_message, self.hash).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify_server_final(self, server_final: bytes | None) -> bool:
        """The server-final-message proves the server knows the credential: v=ServerSignature."""
        text = (server_final or b"").decode()
        return text.startswith("v=") and hmac.compare_digest(base64.b64decode(text[2:]), self.server_signature)
