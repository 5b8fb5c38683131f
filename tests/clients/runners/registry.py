"""The clients of the matrix: name -> capabilities, availability and how to run one scenario."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

from harness import util
from scenario import Caps

from . import java, kcat

VENV_PYTHON = util.REPO_ROOT / ".venv" / "bin" / "python"
NODE_DIR = util.CLIENTS_DIR / "node"
SETUP_HINT = "run tests/clients/setup.sh"


def client_python() -> str:
    """The venv's interpreter when there is one (setup.sh), else the one running pytest."""
    return str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def _py_module_missing(module: str) -> str | None:
    p = subprocess.run([client_python(), "-c", f"import {module}"], capture_output=True, text=True, timeout=60)
    return None if p.returncode == 0 else f"python module {module} not importable by {client_python()} ({SETUP_HINT})"


def _run_stdio(argv: list[str], req: dict, cwd=None) -> dict:
    timeout = req["timeout_ms"] / 1000.0 * 3 + 30
    p = subprocess.run(argv, input=json.dumps(req).encode(), capture_output=True, timeout=timeout, cwd=cwd)
    if p.returncode != 0 or not p.stdout.strip():
        raise RuntimeError(f"{' '.join(argv[:2])} exit {p.returncode}:\n{p.stderr.decode(errors='replace')[-4000:]}")
    return json.loads(p.stdout)


@dataclass(frozen=True)
class Client:
    name: str
    caps: Caps
    missing: Callable[[], str | None]  # None when usable, else why not
    run: Callable[[dict], dict]


def _kcat_missing():
    return None if kcat.available() else "kcat not installed (Debian: apt-get install kcat)"


def _node_missing():
    if shutil.which("node") is None:
        return "node not installed"
    if not (NODE_DIR / "node_modules" / "kafkajs").is_dir():
        return f"kafkajs not installed in {NODE_DIR} ({SETUP_HINT})"
    return None


def _java_missing():
    return None if java.available() else "java/javac not installed (Java 17+)"


CLIENTS: dict[str, Client] = {c.name: c for c in [
    Client("kcat", kcat.CAPS, _kcat_missing, kcat.run),
    Client("confluent-kafka", Caps(), lambda: _py_module_missing("confluent_kafka"),
           lambda req: _run_stdio([client_python(), str(util.CLIENTS_DIR / "runners" / "confluent_kafka_scenario.py")], req)),
    # kafka-python refuses None header values ("All headers items must be (str, bytes) tuples").
    Client("kafka-python", Caps(header_null=False), lambda: _py_module_missing("kafka"),
           lambda req: _run_stdio([client_python(), str(util.CLIENTS_DIR / "runners" / "kafka_python_scenario.py")], req)),
    # kafkajs: headers are an object (duplicates grouped, never interleaved); a null header
    # value crashes its encoder (Buffer.byteLength(null)); lz4/zstd need native modules.
    Client("kafkajs", Caps(header_null=False, header_interleaved=False, codecs=("none", "gzip", "snappy")),
           _node_missing, lambda req: _run_stdio(["node", str(NODE_DIR / "scenario.js")], req, cwd=NODE_DIR)),
    Client("java", java.CAPS, _java_missing, java.run),
    Client("java-console", java.CONSOLE_CAPS, _java_missing, java.console_run),
]}

if os.environ.get("KIB_CLIENTS"):  # e.g. KIB_CLIENTS=kcat,java to run a subset
    _want = {c.strip() for c in os.environ["KIB_CLIENTS"].split(",")}
    CLIENTS = {k: v for k, v in CLIENTS.items() if k in _want}
