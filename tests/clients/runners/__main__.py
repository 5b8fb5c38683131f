"""Run one client's scenario against any Kafka-speaking address, outside pytest:

    .venv/bin/python tests/clients/runners  CLIENT BOOTSTRAP [--topic T] [--no-create] [--json]
    .venv/bin/python tests/clients/runners  all 127.0.0.1:9092

Prints the round-trip problems (none = byte-exact); --json prints what the client observed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scenario as sc  # noqa: E402
from runners.registry import CLIENTS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(prog="runners", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("client", choices=[*CLIENTS, "all"])
    ap.add_argument("bootstrap")
    ap.add_argument("--topic", help="default: a new kib-CLIENT-adhoc-XXXX topic")
    ap.add_argument("--no-create", action="store_true", help="rely on auto-creation")
    ap.add_argument("--json", action="store_true", help="print the observed result as JSON")
    ap.add_argument("--timeout-ms", type=int, default=30000)
    args = ap.parse_args()
    failed = 0
    for name in (CLIENTS if args.client == "all" else [args.client]):
        client = CLIENTS[name]
        why = client.missing()
        if why:
            print(f"{name}: SKIPPED: {why}")
            continue
        records = sc.build_records(client.caps)
        topic = args.topic or f"kib-{name}-adhoc-{uuid.uuid4().hex[:8]}"
        t = time.monotonic()
        observed = client.run(sc.request(args.bootstrap, topic, records, not args.no_create, args.timeout_ms))
        problems = sc.check_round_trip(records, observed)
        print(f"{name} ({observed.get('version')}) topic {topic}: {len(records)} records, "
              f"{len(problems)} problems, {time.monotonic() - t:.1f}s")
        for p in problems:
            print(f"  {p}")
        if args.json:
            print(json.dumps(observed, indent=1))
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
