"""Any Kafka 4.1 tool's main() driven command by command through tests/clients/java/RecordsToolShell.java
(one JVM per session; stdout, stderr and exit code per command, as a process would give them).

    with ToolSession(log_path) as tool:
        r = tool.run("org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bs, "--describe")
"""
from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from harness.group_tool import ToolResult
from harness.kafka_broker import java_bin


class ToolSession:
    def __init__(self, log_path: Path, command_timeout: float = 120.0):
        from runners import java  # compiles RecordsToolShell.java when needed

        java.compile_java("RecordsToolShell")
        self.command_timeout = command_timeout
        self.proc = subprocess.Popen(
            [java_bin(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", f"-Dorg.slf4j.simpleLogger.logFile={log_path}",
             "-cp", java.classpath(), "RecordsToolShell"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def run(self, main: str, *args: str) -> ToolResult:
        argv = [main, *args]
        assert all("\t" not in a and "\n" not in a for a in argv), argv
        self.proc.stdin.write(("\t".join(argv) + "\n").encode())
        self.proc.stdin.flush()
        result: list[ToolResult] = []
        reader = threading.Thread(target=lambda: result.append(self._read_result()), daemon=True)
        reader.start()
        reader.join(self.command_timeout)
        if not result:
            self.close()
            raise TimeoutError(f"{main} {' '.join(args)} did not finish in {self.command_timeout:.0f} s")
        return result[0]

    def _read_result(self) -> ToolResult:
        out = self._read_frame("OUT")
        err = self._read_frame("ERR")
        line = self.proc.stdout.readline().decode()
        if not line.startswith("EXIT "):
            raise RuntimeError(f"RecordsToolShell: expected EXIT, got {line!r}")
        return ToolResult(out, err, int(line.split()[1]))

    def _read_frame(self, tag: str) -> str:
        line = self.proc.stdout.readline().decode()
        if not line.startswith(tag + " "):
            raise RuntimeError(f"RecordsToolShell: expected {tag}, got {line!r} (exit {self.proc.poll()})")
        n = int(line.split()[1])
        data = b""
        while len(data) < n:
            chunk = self.proc.stdout.read(n - len(data))
            if not chunk:
                raise RuntimeError("RecordsToolShell ended mid-frame")
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
