"""franz-go's own integration tests (package kgo of the franz-go module tests/clients/go pins),
run against a target: the module's source comes from the Go module cache (tests/clients/setup.sh
downloads it), is copied to build/clients/franz-go/ (the cache is read-only) and its test binary
is built once; each run points it at a target with franz-go's own environment variables
(KGO_SEEDS, KGO_TEST_RF, KGO_TEST_RECORDS, KGO_TEST_MAX_TOPIC_PARTS, see pkg/kgo/helpers_test.go)
and reports every test and subtest's verdict as `go test -v` prints it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from harness import util

MODULE = "github.com/twmb/franz-go"
SRC = util.REPO_ROOT / "build" / "clients" / "franz-go"
TEST_BIN = util.REPO_ROOT / "build" / "clients" / "kgo.test"
VERDICT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        util.skip_loudly("no go toolchain for franz-go's tests; run tests/clients/setup.sh")
    return go


def module_dir() -> Path:
    """Where the Go module cache holds the franz-go version tests/clients/go/go.mod requires."""
    p = subprocess.run([_go(), "list", "-m", "-f", "{{.Dir}}", MODULE], cwd=util.CLIENTS_DIR / "go",
                       env=dict(os.environ, GOFLAGS="-mod=readonly"), capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or not p.stdout.strip():
        raise RuntimeError(f"go list -m {MODULE} failed:\n{p.stderr[-2000:]}")
    return Path(p.stdout.strip())


def test_binary() -> Path:
    """pkg/kgo's test binary, built from a writable copy of the module (again when the pinned
    version changes: the copy is named after the cache directory, which names the version)."""
    src_dir = module_dir()
    stamp = SRC / ".from"
    if TEST_BIN.exists() and stamp.exists() and stamp.read_text() == str(src_dir):
        return TEST_BIN
    util.remove_tree(SRC)
    shutil.copytree(src_dir, SRC)
    for root, dirs, files in os.walk(SRC):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)
    p = subprocess.run([_go(), "test", "-c", "-o", str(TEST_BIN), "./pkg/kgo"], cwd=SRC,
                       env=dict(os.environ, GOFLAGS="-mod=readonly", CGO_ENABLED="0"),
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"go test -c ./pkg/kgo failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    stamp.write_text(str(src_dir))
    return TEST_BIN


def run(bootstrap: str, pattern: str, log_name: str, records: int, max_partitions: int,
        timeout_s: int = 600) -> dict:
    """Runs the tests `pattern` selects (go test's -run syntax) against `bootstrap`. Returns
    {"rc", "verdicts": {name: PASS|FAIL|SKIP}, "log": path}; the whole output is in the log."""
    binary = test_binary()
    log = util.log_dir() / log_name
    env = dict(os.environ, KGO_SEEDS=bootstrap, KGO_TEST_RF="1", KGO_TEST_RECORDS=str(records),
               KGO_TEST_MAX_TOPIC_PARTS=str(max_partitions), KGO_LOG_LEVEL="info")
    with open(log, "wb") as out:
        try:
            p = subprocess.run([str(binary), "-test.run", pattern, "-test.count", "1", "-test.v",
                                "-test.timeout", f"{timeout_s}s"], cwd=SRC / "pkg" / "kgo", env=env,
                               stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s + 60)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    verdicts = {}
    for line in log.read_text(errors="replace").splitlines():
        m = VERDICT.match(line)
        if m:
            verdicts[m.group(2)] = m.group(1)
    return {"rc": rc, "verdicts": verdicts, "log": str(log)}


def failures(log: str, lines: int = 40) -> str:
    """The test log's error lines (franz-go's t.Errorf/t.Fatal lines and panics), for messages."""
    text = Path(log).read_text(errors="replace").splitlines()
    picked = [l for l in text if re.search(r"_test\.go:\d+:|panic|FAIL", l)][-lines:]
    return "\n".join(picked)
