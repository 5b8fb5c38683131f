#!/usr/bin/env python3
"""Just enough of a Kafka broker for a real producer to send one Produce request.

Answers ApiVersions, Metadata (one partition, leader = this server) and Produce, and writes each
Produce partition's `records` bytes to OUT_PREFIX-<n>.bin. With --serve FILE it also answers
Fetch with FILE's record batches (then empty), so a consumer can check what the bridge encodes. Used to capture the golden record
batches in this directory; see README.md. Listens on 127.0.0.1 only and exits after
--produces Produce requests or --timeout seconds.

    python3 capture_broker.py --port 19092 --out /tmp/cap/gzip --produces 1
"""
import argparse
import socketserver
import struct
import sys
import threading
import time

# (api_key, min, max). Produce starts at 0 and Fetch reaches 11 because librdkafka < 2.11.1
# turns compression off otherwise, and needs Produce 3 + Fetch 4 for message format v2 and
# Produce 7 + Fetch 10 for zstd (KAFKA-18659). librdkafka also sends lz4 only to brokers that
# list FindCoordinator v0 (never called here).
APIS = [(0, 0, 8), (1, 0, 11), (3, 0, 8), (10, 0, 2), (18, 0, 4)]

args = None
produce_count = 0
lock = threading.Lock()
done = threading.Event()


class Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, n):
        v = self.b[self.p:self.p + n]
        if len(v) != n:
            raise ValueError("truncated")
        self.p += n
        return v

    def i8(self): return struct.unpack(">b", self.take(1))[0]
    def i16(self): return struct.unpack(">h", self.take(2))[0]
    def i32(self): return struct.unpack(">i", self.take(4))[0]

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def bytes_(self):
        n = self.i32()
        return None if n < 0 else self.take(n)


def s16(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def uvarint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def api_versions(version):
    if version >= 3:  # flexible body, response header still v0
        body = struct.pack(">h", 0) + uvarint(len(APIS) + 1)
        for k, lo, hi in APIS:
            body += struct.pack(">hhh", k, lo, hi) + b"\x00"
        return body + struct.pack(">i", 0) + b"\x00"
    body = struct.pack(">hi", 0, len(APIS))
    for k, lo, hi in APIS:
        body += struct.pack(">hhh", k, lo, hi)
    if version >= 1:
        body += struct.pack(">i", 0)
    return body


def metadata(version, r):
    n = r.i32()
    topics = [r.string() for _ in range(max(n, 0))] or ["t"]
    body = b""
    if version >= 3:
        body += struct.pack(">i", 0)  # throttle
    body += struct.pack(">i", 1) + struct.pack(">i", 0) + s16("127.0.0.1") + struct.pack(">i", args.port)
    if version >= 1:
        body += s16(None)  # rack
    if version >= 2:
        body += s16("capture-cluster")
    if version >= 1:
        body += struct.pack(">i", 0)  # controller
    body += struct.pack(">i", len(topics))
    for t in topics:
        body += struct.pack(">h", 0) + s16(t)
        if version >= 1:
            body += b"\x00"  # is_internal
        body += struct.pack(">i", 1)  # one partition
        body += struct.pack(">hii", 0, 0, 0)  # error, index, leader
        if version >= 7:
            body += struct.pack(">i", 0)  # leader epoch
        body += struct.pack(">ii", 1, 0) + struct.pack(">ii", 1, 0)  # replicas, isr
        if version >= 5:
            body += struct.pack(">i", 0)  # offline replicas
        if version >= 8:
            body += struct.pack(">i", -2147483648)  # topic authorized operations
    if version >= 8:
        body += struct.pack(">i", -2147483648)
    return body


def produce(version, r):
    global produce_count
    if version >= 3:
        r.string()  # transactional id
    acks = r.i16()
    r.i32()  # timeout
    out = []
    for _ in range(r.i32()):
        name = r.string()
        parts = []
        for _ in range(r.i32()):
            idx = r.i32()
            records = r.bytes_()
            with lock:
                produce_count += 1
                path = "%s-%d.bin" % (args.out, produce_count)
                with open(path, "wb") as f:
                    f.write(records or b"")
                print("captured %s: produce v%d, %d bytes" % (path, version, len(records or b"")), file=sys.stderr)
                if produce_count >= args.produces:
                    done.set()
            parts.append(idx)
        out.append((name, parts))
    if acks == 0:
        return None
    body = struct.pack(">i", len(out))
    for name, parts in out:
        body += s16(name) + struct.pack(">i", len(parts))
        for idx in parts:
            body += struct.pack(">ihq", idx, 0, 0)
            if version >= 2:
                body += struct.pack(">q", -1)
            if version >= 5:
                body += struct.pack(">q", 0)
            if version >= 8:
                body += struct.pack(">i", 0) + s16(None)
    if version >= 1:
        body += struct.pack(">i", 0)
    return body


def fetch(version):
    served = getattr(args, "_served", False)
    records = b""
    if args.serve and not served:
        with open(args.serve, "rb") as f:
            records = f.read()
        args._served = True
    body = b""
    if version >= 1:
        body += struct.pack(">i", 0)
    if version >= 7:
        body += struct.pack(">hi", 0, 0)
    body += struct.pack(">i", 1) + s16("t") + struct.pack(">i", 1)
    body += struct.pack(">ihq", 0, 0, args.high_watermark)
    if version >= 4:
        body += struct.pack(">q", args.high_watermark)
    if version >= 5:
        body += struct.pack(">q", 0)
    if version >= 4:
        body += struct.pack(">i", -1)  # no aborted transactions
    if version >= 11:
        body += struct.pack(">i", -1)
    body += struct.pack(">i", len(records)) + records
    if records:
        with lock:
            done.set()
    return body


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        buf = b""
        while not done.is_set():
            while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            n = struct.unpack(">i", buf[:4])[0]
            frame, buf = buf[4:4 + n], buf[4 + n:]
            r = Reader(frame)
            key, version, corr = r.i16(), r.i16(), r.i32()
            r.string()  # client id
            if key == 18:
                body = api_versions(version)
            elif key == 3:
                body = metadata(version, r)
            elif key == 0:
                body = produce(version, r)
            elif key == 1:
                body = fetch(version)
            else:
                print("unexpected api %d v%d" % (key, version), file=sys.stderr)
                return
            if body is not None:
                resp = struct.pack(">i", corr) + body
                sock.sendall(struct.pack(">i", len(resp)) + resp)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", default="/dev/null/unused")
    p.add_argument("--produces", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--serve", help="record batches to answer Fetch with")
    p.add_argument("--high-watermark", type=int, default=0)
    args = p.parse_args()
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.daemon_threads = True
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", args.port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ok = done.wait(args.timeout)
    time.sleep(2 if args.serve else 0.5)  # let the last responses go out
    srv.shutdown()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
