"""A deliberately independent, hand-written Kafka wire helper for tests (not the bridge's
generated codecs), so a codec bug cannot hide itself."""
import socket, struct


def uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_uvarint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def request(api_key, version, corr, body=b"", client_id="kib-test", flexible=False):
    cid = client_id.encode()
    hdr = struct.pack(">hhih", api_key, version, corr, len(cid)) + cid
    if flexible:
        hdr += b"\x00"  # empty tagged fields
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


def api_versions_request(version, corr):
    body = b""
    if version >= 3:
        body = uvarint(len("kib-test") + 1) + b"kib-test" + uvarint(len("1.0") + 1) + b"1.0" + b"\x00"
    return request(18, version, corr, body, flexible=version >= 3)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(sock):
    (n,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, n)


def parse_api_versions(frame, version):
    """Response header is always v0 for ApiVersions. Returns (corr, error, {key: (min, max)})."""
    corr, err = struct.unpack_from(">ih", frame, 0)
    pos = 6
    apis = {}
    if version >= 3:
        n, pos = read_uvarint(frame, pos)
        n -= 1
    else:
        (n,) = struct.unpack_from(">i", frame, pos)
        pos += 4
    for _ in range(n):
        k, lo, hi = struct.unpack_from(">hhh", frame, pos)
        pos += 6
        if version >= 3:
            pos += 1  # tagged fields
        apis[k] = (lo, hi)
    return corr, err, apis


def is_closed(sock, timeout=5.0):
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


def connect(port, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
