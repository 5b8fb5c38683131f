"""`kafka-consumer-groups` (Kafka 4.1's ConsumerGroupCommand) driven command by command through
tests/clients/java/GroupCommandShell.java: one JVM per session runs the tool's unchanged main()
for every command and reports its stdout, stderr and exit code separately, as a process would.

    with GroupToolSession(bootstrap, log_path) as tool:
        r = tool.run("--describe", "--group", "g")
        r.stdout, r.stderr, r.exit_code
"""
from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.kafka_broker import java_bin


@dataclass(frozen=True)
class ToolResult:
    stdout: str
    stderr: str
    exit_code: int


class GroupToolSession:
    # `shell`: the runner class in tests/clients/java (ConfigCommandShell runs kafka-configs).
    def __init__(self, bootstrap: str, log_path: Path, command_timeout: float = 120.0,
                 shell: str = "GroupCommandShell"):
        from runners import java  # compiles the shell's .java when needed

        java.compile_java(shell)
        self.bootstrap = bootstrap
        self.command_timeout = command_timeout
        # The tool's own log (slf4j-simple, WARN) goes to a file, not into the compared output.
        self.proc = subprocess.Popen(
            [java_bin(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", f"-Dorg.slf4j.simpleLogger.logFile={log_path}",
             "-cp", java.classpath(), shell],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def run(self, *args: str) -> ToolResult:
        argv = ["--bootstrap-server", self.bootstrap, *args]
        assert all("\t" not in a and "\n" not in a for a in argv), argv
        self.proc.stdin.write(("\t".join(argv) + "\n").encode())
        self.proc.stdin.flush()
        result: list[ToolResult] = []
        reader = threading.Thread(target=lambda: result.append(self._read_result()), daemon=True)
        reader.start()
        reader.join(self.command_timeout)
        if not result:
            self.close()
            raise TimeoutError(f"kafka-consumer-groups {' '.join(args)} did not finish in {self.command_timeout:.0f} s")
        return result[0]

    def _read_result(self) -> ToolResult:
        out = self._read_frame("OUT")
        err = self._read_frame("ERR")
        line = self.proc.stdout.readline().decode()
        if not line.startswith("EXIT "):
            raise RuntimeError(f"GroupCommandShell: expected EXIT, got {line!r}")
        return ToolResult(out, err, int(line.split()[1]))

    def _read_frame(self, tag: str) -> str:
        line = self.proc.stdout.readline().decode()
        if not line.startswith(tag + " "):
            raise RuntimeError(f"GroupCommandShell: expected {tag}, got {line!r} (exit {self.proc.poll()})")
        n = int(line.split()[1])
        data = b""
        while len(data) < n:
            chunk = self.proc.stdout.read(n - len(data))
            if not chunk:
                raise RuntimeError("GroupCommandShell ended mid-frame")
            data += chunk
        return data.decode()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
