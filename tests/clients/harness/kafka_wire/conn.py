"""Sockets: connecting (plain or TLS), reading whole frames, telling a closed connection, and
`Conn`, one connection that numbers its requests and reads their answers."""
from __future__ import annotations

import socket
import ssl
import struct

from .codec import Reader, request


def connect(port: int, timeout: float = 10.0, host: str = "127.0.0.1") -> socket.socket:
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(sock, n: int) -> bytes:
    """Into one buffer: appending chunks to bytes copies the whole frame again for each chunk,
    with the GIL held (a 5 MB answer: ~80 chunks, milliseconds of copying that stalled another
    thread of the same test, a hostile test's probe, not the bridge)."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if not k:
            raise ConnectionError("closed after %d of %d bytes" % (got, n))
        got += k
    return bytes(buf)


def recv_frame(sock) -> bytes:
    """One frame without its 4-byte size: the correlation id first."""
    (n,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, n)


def is_closed(sock, timeout: float = 5.0) -> bool:
    """True if the peer closed (EOF or reset) within `timeout`."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


class Conn:
    """One connection to a Kafka listener, plain or over TLS (`ca_file`, and a client certificate
    with `cert_file` / `key_file`). `send` numbers a request; `call` sends one and returns a Reader
    on its answer (correlation id checked, response header tagged fields skipped when
    flexible); `receive` reads one answer or None once the server closed the connection."""

    def __init__(self, port: int, host: str = "127.0.0.1", *, timeout: float = 30.0, client_id: str = "kib-test",
                 ca_file: str | None = None, cert_file: str | None = None, key_file: str | None = None):
        raw = socket.create_connection((host, port), timeout=timeout)
        if ca_file:
            ctx = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                ctx.load_cert_chain(cert_file, key_file)
            self.sock = ctx.wrap_socket(raw, server_hostname=host)
        else:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock = raw
        self.client_id = client_id
        self.corr = 0
        self.buf = b""  # what receive() read past the last whole frame

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, api_key: int, version: int, body: bytes, flexible: bool = False) -> int:
        self.corr += 1
        self.sock.sendall(request(api_key, version, self.corr, body, client_id=self.client_id, flexible=flexible))
        return self.corr

    def recv_frame(self) -> bytes:
        return recv_frame(self.sock)

    def call(self, api_key: int, version: int, body: bytes, flexible: bool = False) -> Reader:
        corr = self.send(api_key, version, body, flexible)
        r = Reader(self.recv_frame(), 0, flexible)
        got = r.int32()
        if got != corr:
            raise AssertionError(f"correlation id {got}, expected {corr}")
        r.tags()  # response header v1
        return r

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

    def receive(self) -> bytes | None:
        """The next answer frame (as recv_frame) or None: the server closed the connection (EOF,
        reset or a TLS close) before a whole answer arrived."""
        if not self._fill(4):
            return None
        n = struct.unpack(">i", self.buf[:4])[0]
        if not self._fill(4 + n):
            return None
        frame, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
        return frame

    def closed_within(self, seconds: float) -> bool:
        """True when the server closes the connection within `seconds` with nothing more sent;
        False when it stays open (or sends something)."""
        self.sock.settimeout(seconds)
        try:
            return not self._fill(len(self.buf) + 1)
        except (TimeoutError, socket.timeout):
            return False


__all__ = ["connect", "recv_exact", "recv_frame", "is_closed", "Conn"]
