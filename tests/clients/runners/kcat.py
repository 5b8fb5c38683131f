"""kcat (Debian's kcat with its own librdkafka) runner, in-process, driving kcat subprocesses.

Produce: one kcat -P per run of consecutive records sharing codec, headers and null-ness
(-H and -z/-Z apply to a whole invocation); keys and values go through stdin split by
multi-byte delimiters that do not occur in the data. kcat cannot set timestamps nor report
offsets (produced offsets come back as null). The topic is auto-created by the producer's
Metadata request (kcat has no admin API).

Consume: kcat -C -p 0 -o beginning -e (assign, no group) with a length-prefixed -f format,
so keys and values are byte-exact. Headers print as "n=v,n=v" with NULL for a null value,
so header values must avoid ',', '=', '\\n' and the literal NULL (Caps.header_binary=False).

Security: the request's "security" (runners/client_security.py) becomes -X options
(security.protocol, sasl.mechanisms, sasl.username/password, ssl.ca.location,
ssl.certificate.location, ssl.key.location) on every kcat invocation. "mode": "metadata" runs
kcat -L -J instead of the scenario and reports the topics it was shown, or what kcat printed.
"""
from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess

from scenario import Caps

from . import client_security

CAPS = Caps(timestamps=False, header_binary=False)
FORMAT = "%o %T %K %S|%k%s%h\\n"


def version() -> str:
    try:
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return "kcat missing"
    m = re.search(r"Version (\S+) .*?librdkafka (\S+)", out)
    return f"kcat {m.group(1)} (librdkafka {m.group(2)})" if m else out.strip()[:80]


def available() -> bool:
    return shutil.which("kcat") is not None


def _delims(records) -> tuple[str, str]:
    data = b"".join((bytes.fromhex(r["key"] or "") + bytes.fromhex(r["value"] or "")) for r in records)
    while True:
        tag = secrets.token_hex(6)
        d, k = f"@@MSG{tag}@@", f"##KEY{tag}##"
        if d.encode() not in data and k.encode() not in data:
            return d, k


def _groups(records):
    """Runs of consecutive records one kcat invocation can send."""
    groups = []
    for i, r in enumerate(records):
        key, value = r["key"], r["value"]
        needs_z = key is None or value is None
        if needs_z and (key == "" or value == ""):
            raise ValueError(f"record {i}: kcat cannot send a null and an empty field together")
        sig = (r["codec"], tuple(map(tuple, r["headers"])), needs_z)
        if groups and groups[-1][0] == sig:
            groups[-1][1].append(i)
        else:
            groups.append((sig, [i]))
    return groups


def _security_args(req: dict) -> list[str]:
    args = []
    for k, v in client_security.librdkafka(req.get("security")).items():
        args += ["-X", f"{k}={v}"]
    return args


def metadata(req: dict, timeout: float | None = None) -> dict:
    """kcat -L -J: {"topics": [names] or None, "errors": [what kcat printed on failure]}."""
    timeout = timeout or req["timeout_ms"] / 1000.0
    out = {"client": "kcat", "version": version(), "topics": None, "errors": []}
    argv = ["kcat", "-L", "-J", "-b", req["bootstrap"], *_security_args(req), "-m", str(max(1, int(timeout)))]
    p = subprocess.run(argv, capture_output=True, timeout=timeout + 20)
    if p.returncode == 0:
        out["topics"] = sorted(t["topic"] for t in json.loads(p.stdout)["topics"])
    else:
        out["errors"] = [f"kcat -L exit {p.returncode}"] + p.stderr.decode(errors="replace").strip().splitlines()
    return out


def run(req: dict, timeout: float | None = None) -> dict:
    if req.get("mode") == "metadata":
        return metadata(req, timeout)
    bootstrap, topic, part = req["bootstrap"], req["topic"], req["partition"]
    timeout = timeout or req["timeout_ms"] / 1000.0
    records = req["records"]
    sec_args = _security_args(req)
    errors: list[str] = []
    out = {"client": "kcat", "version": version(), "produced": [], "consumed": [], "errors": errors}
    d, k = _delims(records)
    produced = [{"offset": None, "error": None} for _ in records]
    for (codec, headers, needs_z), idx in _groups(records):
        argv = ["kcat", "-P", "-b", bootstrap, "-t", topic, "-p", str(part), "-D", d, "-K", k,
                "-X", f"compression.codec={codec}", "-X", "acks=all", *sec_args, "-m", str(int(timeout))]
        for name, val in headers:
            argv += ["-H", name if val is None else f"{name}={bytes.fromhex(val).decode()}"]
        if needs_z:
            argv.append("-Z")
        data = b"".join(bytes.fromhex(records[i]["key"] or "") + k.encode()
                        + bytes.fromhex(records[i]["value"] or "") + d.encode() for i in idx)
        p = subprocess.run(argv, input=data, capture_output=True, timeout=timeout + 10)
        if p.returncode != 0 or p.stderr.strip():
            msg = f"kcat -P exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[-500:]}"
            if p.returncode != 0:
                for i in idx:
                    produced[i]["error"] = msg
            else:
                errors.append(msg)
    out["produced"] = produced

    argv = ["kcat", "-C", "-b", bootstrap, "-t", topic, "-p", str(part), "-o", "beginning", "-e", "-q",
            "-c", str(req.get("consume_count", len(records))), "-f", FORMAT, *sec_args, "-m", str(int(timeout))]
    p = subprocess.run(argv, capture_output=True, timeout=timeout + 10)
    if p.returncode != 0:
        errors.append(f"kcat -C exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[-500:]}")
    try:
        out["consumed"] = parse_consume_output(p.stdout)
    except ValueError as e:
        errors.append(f"unparseable kcat output: {e}")
    return out


def parse_consume_output(buf: bytes) -> list[dict]:
    recs, pos = [], 0
    while pos < len(buf):
        bar = buf.index(b"|", pos)
        off, ts, klen, vlen = (int(x) for x in buf[pos:bar].split(b" "))
        pos = bar + 1
        key = None if klen < 0 else buf[pos:pos + klen]
        pos += max(klen, 0)
        value = None if vlen < 0 else buf[pos:pos + vlen]
        pos += max(vlen, 0)
        nl = buf.index(b"\n", pos)
        hdr_text = buf[pos:nl].decode()
        pos = nl + 1
        headers = []
        if hdr_text:
            for item in hdr_text.split(","):
                name, _, val = item.partition("=")
                headers.append([name, None if val == "NULL" else val.encode().hex()])
        recs.append({"offset": off, "key": None if key is None else key.hex(),
                     "value": None if value is None else value.hex(), "headers": headers,
                     "timestamp": ts, "timestamp_type": None})
    return recs
