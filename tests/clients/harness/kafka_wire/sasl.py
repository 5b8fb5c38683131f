"""SaslHandshake (17) and SaslAuthenticate (36), written from Kafka's wire format and RFC
5802/7677 (SCRAM) and 4616 (PLAIN), not from the bridge's code: `SaslConn` logs in over a
connection of its own; the body builders and parsers serve a test that reads its answers with
Conn.receive (the server may close instead of answering); ScramClient is the client side of
SCRAM-SHA-256/512 and can send a wrong proof."""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import struct
from dataclasses import dataclass

from .codec import Reader, nbytes, string
from .conn import Conn

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def sasl_handshake_body(mechanism: str) -> bytes:
    return string(mechanism)


def parse_sasl_handshake(frame: bytes) -> tuple[int, list[str]]:
    """(error, enabled mechanisms) of a SaslHandshake (v0 or v1) answer frame."""
    r = Reader(frame, 4)
    code = r.int16()
    return code, r.array32(r.str16)


def sasl_authenticate_body(token: bytes, version: int = 2) -> bytes:
    """v2: compact bytes and no tagged fields; v0/v1: classic bytes."""
    return nbytes(token, True) + b"\x00" if version >= 2 else nbytes(token)


@dataclass
class SaslAuthenticateResponse:
    error_code: int
    error_message: str | None
    auth_bytes: bytes | None
    session_lifetime_ms: int | None  # None before v1


def parse_sasl_authenticate(frame: bytes, version: int = 2) -> SaslAuthenticateResponse:
    r = Reader(frame, 4, flexible=version >= 2)
    r.tags()  # response header v1
    code = r.int16()
    msg = r.string()
    auth = r.nbytes()
    lifetime = r.int64() if version >= 1 else None
    return SaslAuthenticateResponse(code, msg, auth, lifetime)


def plain(authzid: str, user: str, password: str) -> bytes:
    """A PLAIN token (RFC 4616)."""
    return b"\0".join(s.encode() for s in (authzid, user, password))


class SaslConn(Conn):
    """A plain-TCP connection that authenticates: handshake, authenticate, and after a v0
    handshake the bare tokens of `raw`."""

    def __init__(self, port: int, host: str = "127.0.0.1", *, timeout: float = 10.0, **kw):
        super().__init__(port, host, timeout=timeout, **kw)

    def handshake(self, mechanism: str, version: int = 1) -> tuple[int, list[str]]:
        corr = self.send(SASL_HANDSHAKE, version, sasl_handshake_body(mechanism))
        frame = self.recv_frame()
        assert struct.unpack_from(">i", frame, 0)[0] == corr
        return parse_sasl_handshake(frame)

    def authenticate(self, token: bytes, version: int = 1):
        """(error_code, error_message, auth_bytes, session_lifetime_ms or None)."""
        corr = self.send(SASL_AUTHENTICATE, version, sasl_authenticate_body(token, version), flexible=version >= 2)
        frame = self.recv_frame()
        assert struct.unpack_from(">i", frame, 0)[0] == corr
        resp = parse_sasl_authenticate(frame, version)
        return resp.error_code, resp.error_message, resp.auth_bytes, resp.session_lifetime_ms

    def describe_cluster(self) -> int:
        """DescribeCluster v0 (flexible), a request served only once authenticated: its error code."""
        r = self.call(60, 0, b"\x00\x00", flexible=True)
        r.int32()  # throttle
        return r.int16()

    def raw(self, token: bytes) -> bytes:
        """A bare length-prefixed token (after SaslHandshake v0), and the bare answer."""
        self.sock.sendall(struct.pack(">i", len(token)) + token)
        return self.recv_frame()


class ScramClient:
    """RFC 5802's client side, SCRAM-SHA-256 or SCRAM-SHA-512."""

    def __init__(self, mechanism: str, user: str, password: str):
        self.h = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.user, self.password = user, password
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.bare = "n=%s,r=%s" % (user.replace("=", "=3D").replace(",", "=2C"), self.nonce)

    def first(self) -> bytes:
        """The client-first-message."""
        return ("n,," + self.bare).encode()

    def final(self, server_first: bytes, tamper: bool = False) -> bytes:
        """The client-final-message; `tamper`: with a proof one bit off."""
        attrs = dict(a.split("=", 1) for a in server_first.decode().split(","))
        assert attrs["r"].startswith(self.nonce), f"server nonce {attrs['r']!r} does not extend the client's"
        salted = hashlib.pbkdf2_hmac(self.h, self.password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", self.h).digest()
        stored_key = hashlib.new(self.h, client_key).digest()
        self.server_key = hmac.new(salted, b"Server Key", self.h).digest()
        without_proof = "c=biws,r=" + attrs["r"]
        self.auth_message = ",".join([self.bare, server_first.decode(), without_proof]).encode()
        signature = hmac.new(stored_key, self.auth_message, self.h).digest()
        proof = bytearray(a ^ b for a, b in zip(client_key, signature))
        if tamper:
            proof[0] ^= 1
        return (without_proof + ",p=" + base64.b64encode(bytes(proof)).decode()).encode()

    def server_signature_ok(self, server_final: bytes | None) -> bool:
        """The server-final-message proves the server knows the credential: v=ServerSignature."""
        expected = hmac.new(self.server_key, self.auth_message, self.h).digest()
        return server_final == b"v=" + base64.b64encode(expected)


__all__ = ["SASL_HANDSHAKE", "SASL_AUTHENTICATE", "sasl_handshake_body", "parse_sasl_handshake",
           "sasl_authenticate_body", "SaslAuthenticateResponse", "parse_sasl_authenticate", "plain", "SaslConn",
           "ScramClient"]
