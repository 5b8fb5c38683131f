"""Kafka error codes (org.apache.kafka.common.protocol.Errors) the tests name, and which of
them Kafka's clients retry."""
from __future__ import annotations

NAMES = {
    -1: "UNKNOWN_SERVER_ERROR", 0: "NONE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 13: "NETWORK_EXCEPTION",
    14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR",
    19: "NOT_ENOUGH_REPLICAS", 20: "NOT_ENOUGH_REPLICAS_AFTER_APPEND", 28: "OFFSET_METADATA_TOO_LARGE",
    56: "KAFKA_STORAGE_ERROR",
}
RETRIABLE = {3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 56}


def error_name(code: int) -> str:
    return NAMES.get(code, f"error {code}")


__all__ = ["NAMES", "RETRIABLE", "error_name"]
