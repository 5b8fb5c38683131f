"""What the scripted suites (tests/reliability/run, tests/migration/run) report: one Result per
scenario or step, with its checks (printed as they are made) and figures, and a timestamped log."""
from __future__ import annotations

import time


class Skip(Exception):
    pass


class Result:
    def __init__(self, name: str):
        self.name = name
        self.status = "passed"
        self.reason = ""
        self.figures: dict = {}
        self.checks: list[tuple[str, bool, str]] = []
        self.seconds = 0.0

    def check(self, what: str, ok: bool, detail: str = ""):
        self.checks.append((what, bool(ok), detail))
        if not ok:
            self.status = "failed"
        print(f"  [{'ok' if ok else 'FAIL'}] {what}" + (f" -- {detail}" if detail else ""), flush=True)
        return ok

    def to_json(self):
        return {"name": self.name, "status": self.status, "reason": self.reason, "seconds": round(self.seconds, 1),
                "figures": self.figures, "checks": [{"what": w, "ok": o, "detail": d} for w, o, d in self.checks]}


def log(msg: str):
    print(f"{time.strftime('%H:%M:%S')} {msg}", flush=True)
