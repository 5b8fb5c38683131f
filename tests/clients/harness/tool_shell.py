"""Any stock Kafka 4.1 command-line tool driven command by command through
tests/clients/java/ToolShell.java: one JVM per session runs the tool's unchanged main() for every
command and reports stdout, stderr and exit code separately, as a process would (the same
protocol as group_tool.py, whose reader this reuses).

    with ToolSession("org.apache.kafka.tools.TopicCommand", bootstrap, log_path) as tool:
        r = tool.run("--describe", "--topic", "t")
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from harness.group_tool import GroupToolSession, ToolResult  # noqa: F401 (ToolResult re-exported)
from harness.kafka_broker import java_bin

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"


class ToolSession(GroupToolSession):
    def __init__(self, main_class: str, bootstrap: str, log_path: Path, command_timeout: float = 120.0,
                 next_tier: bool = False):
        """`next_tier`: the newer reference tier's tools (tests/java/pom-next.xml, Kafka 4.4)."""
        from runners import java  # compiles ToolShell.java when needed

        java.compile_java("ToolShell", next_tier=next_tier)
        self.bootstrap = bootstrap
        self.command_timeout = command_timeout
        self.proc = subprocess.Popen(
            [java_bin(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", f"-Dorg.slf4j.simpleLogger.logFile={log_path}",
             "-cp", java.classpath(next_tier), "ToolShell", main_class],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
