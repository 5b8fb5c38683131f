"""The produce/consume scenario every client runs, and the checks on what it observed.

Records are plain data; bytes travel as hex in JSON (None = Kafka null). A runner receives

    {"bootstrap": "127.0.0.1:9092", "topic": "t", "partition": 0, "create_topic": true,
     "timeout_ms": 30000, "records": [Record.to_json(), ...]}

("consume_count": N, optional: read N records back instead of as many as were sent; a reader
of a topic written before sends "records": [].)

and returns (JSON on stdout for the out-of-process runners)

    {"client": "...", "version": "...",
     "produced": [{"offset": 0, "error": null}, ...],          # one per record, in order
     "consumed": [{"offset": 0, "key": hex|null, "value": hex|null,
                   "headers": [[name, hex|null], ...], "timestamp": ms,
                   "timestamp_type": "create"|"log_append"|null}, ...],
     "errors": ["..."]}

Each client states what it can express (Caps); records it cannot express are left out or
adapted, so every check is byte-exact on what the client did send.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

ALL_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
BASE_TS = 1_700_000_000_000  # explicit create timestamps, ms


@dataclass(frozen=True)
class Caps:
    codecs: tuple[str, ...] = ALL_CODECS
    timestamps: bool = True  # can set a record's create timestamp
    header_null: bool = True  # header with a null value
    header_binary: bool = True  # arbitrary header value bytes (NUL, ',', '=', '\n')
    header_interleaved: bool = True  # duplicate names in any order (a, b, a)
    binary_data: bool = True  # arbitrary key/value bytes
    null_key: bool = True
    empty_key: bool = True
    null_value: bool = True
    empty_value: bool = True
    max_value_bytes: int = 100_000
    headers_on_every_record: bool = False  # give header-less records one (console tools batch by it)


@dataclass
class Record:
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None
    codec: str = "none"
    note: str = ""

    def to_json(self) -> dict:
        return {
            "key": hx(self.key),
            "value": hx(self.value),
            "headers": [[n, hx(v)] for n, v in self.headers],
            "timestamp": self.timestamp,
            "codec": self.codec,
            "note": self.note,
        }


def hx(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def unhx(s: str | None) -> bytes | None:
    return None if s is None else bytes.fromhex(s)


def _pseudo_random(n: int, seed: bytes) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:n])


def _compressible(codec: str, i: int, binary: bool) -> bytes:
    line = f"{codec} record {i}: the quick brown fox jumps over the lazy dog 0123456789\n".encode()
    if not binary:  # line-based tools: one line, printable
        return line.replace(b"\n", b" ") * 50 + str(i).encode()
    return line * 50 + bytes([i])


def build_records(caps: Caps) -> list[Record]:
    """The scenario's records, in produce order (offset i = index i on an empty partition)."""
    binary = bytes(range(256))
    hdr_bin = b"\x00\x01,=\n\xfe\xff" if caps.header_binary else b"bin-ary"
    recs: list[Record] = []

    recs.append(Record(b"key-0", b"value-0", note="plain"))
    recs.append(Record(
        binary[::-1] if caps.binary_data else b"key-1",
        binary if caps.binary_data else b"value-1 \t tab",
        [("h1", b"a"), ("h2", hdr_bin), ("h1", b"b")] if caps.header_interleaved
        else [("h1", b"a"), ("h1", b"b"), ("h2", hdr_bin)],
        note="binary key/value, duplicate header names"))
    if caps.empty_value:
        hdrs = [("empty", b"")] + ([("null", None)] if caps.header_null else [])
        recs.append(Record(b"empty-value", b"", hdrs, note="empty value, empty/null header values"))
    if caps.null_value:
        recs.append(Record(b"tombstone", None, [("dup", b"1"), ("dup", b"2")], note="null value (tombstone)"))
    if caps.null_key:
        recs.append(Record(None, b"no key", note="null key"))
    if caps.empty_key:
        recs.append(Record(b"", b"empty key", note="empty key"))
    recs.append(Record("ключ-✓".encode(), "значение ✓ 值".encode(), [("ünï", "ħdr ✓".encode())], note="UTF-8"))
    big = _pseudo_random(caps.max_value_bytes, b"big") if caps.binary_data else b"B" * caps.max_value_bytes
    recs.append(Record(b"big", big, note=f"{len(big)}-byte value"))
    for codec in caps.codecs:
        if codec == "none":
            continue
        for i in range(3):
            recs.append(Record(f"{codec}-{i}".encode(), _compressible(codec, i, caps.binary_data), [("codec", codec.encode())],
                               codec=codec, note=f"{codec} batch record {i}"))
    if caps.headers_on_every_record:
        for r in recs:
            if not r.headers:
                r.headers.append(("src", b"console"))
    if caps.timestamps:
        for i, r in enumerate(recs):
            r.timestamp = BASE_TS + i * 1000 + 7
    return recs


def request(bootstrap: str, topic: str, records: list[Record], create_topic: bool = True,
            timeout_ms: int = 30000) -> dict:
    return {"bootstrap": bootstrap, "topic": topic, "partition": 0, "create_topic": create_topic,
            "timeout_ms": timeout_ms, "records": [r.to_json() for r in records]}


def check_round_trip(records: list[Record], observed: dict) -> list[str]:
    """Mismatches between what was produced and what came back (empty = byte-exact)."""
    problems = [f"client error: {e}" for e in observed.get("errors", [])]
    produced = observed.get("produced", [])
    if len(produced) != len(records):
        problems.append(f"{len(produced)} produce results for {len(records)} records")
    for i, p in enumerate(produced):
        if p.get("error"):
            problems.append(f"record {i}: produce error {p['error']}")
        elif p.get("offset") is not None and p["offset"] != i:
            problems.append(f"record {i}: acknowledged at offset {p['offset']}, expected {i}")
    consumed = observed.get("consumed", [])
    if len(consumed) != len(records):
        problems.append(f"consumed {len(consumed)} records, produced {len(records)}")
    offsets = [c.get("offset") for c in consumed]
    if offsets != sorted(set(offsets)):
        problems.append(f"consumed offsets not strictly increasing: {offsets}")
    by_offset = {c.get("offset"): c for c in consumed}
    for i, r in enumerate(records):
        where = f"record {i} ({r.note})"
        c = by_offset.get(i)
        if c is None:
            problems.append(f"{where}: nothing consumed at offset {i}")
            continue
        if c.get("key") != hx(r.key):
            problems.append(f"{where}: key {_short(c.get('key'))} != {_short(hx(r.key))}")
        if c.get("value") != hx(r.value):
            problems.append(f"{where}: value {_short(c.get('value'))} != {_short(hx(r.value))}")
        want_h = [[n, hx(v)] for n, v in r.headers]
        got_h = [list(h) for h in c.get("headers", [])]
        if got_h != want_h:
            problems.append(f"{where}: headers {got_h} != {want_h}")
        ts = c.get("timestamp")
        if r.timestamp is not None:
            if ts != r.timestamp:
                problems.append(f"{where}: timestamp {ts} != {r.timestamp}")
        elif not isinstance(ts, int) or ts <= 0:
            problems.append(f"{where}: timestamp {ts!r} is not a positive ms value")
    extra = sorted(o for o in by_offset if not (isinstance(o, int) and 0 <= o < len(records)))
    if extra:
        problems.append(f"unexpected offsets consumed: {extra}")
    return problems


def normalize(observed: dict, records: list[Record]) -> dict:
    """What must be identical between the Kafka broker and the bridge for the same client:
    everything but client-chosen timestamps of records sent without one."""
    consumed = []
    for i, c in enumerate(observed.get("consumed", [])):
        c = dict(c)
        if i >= len(records) or records[i].timestamp is None:
            c["timestamp"] = "<client clock>"
        consumed.append(c)
    return {"produced": observed.get("produced", []), "consumed": consumed, "errors": observed.get("errors", [])}


def _short(s: str | None) -> str:
    if s is None:
        return "null"
    return s if len(s) <= 40 else f"{s[:32]}...({len(s) // 2} bytes)"


def caps_replace(caps: Caps, **kw) -> Caps:
    return dataclasses.replace(caps, **kw)
