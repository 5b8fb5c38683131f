#!/usr/bin/env python3
"""kafka-python runner: stdin scenario JSON -> stdout result JSON.

The request's "security" goes into every client as kafka-python keyword arguments
(client_security.kafka_python). "mode": "metadata" lists the topics the client is shown
(KafkaAdminClient.list_topics); on failure it reports the exception and the distinct ERROR
lines kafka-python logged (it logs the broker's SASL error rather than raising it).
"""
import json
import logging
import sys
import time

import client_security

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic


def unhx(s):
    return None if s is None else bytes.fromhex(s)


def hx(b):
    return None if b is None else bytes(b).hex()


class _ErrorLines(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines = []

    def emit(self, record):
        line = f"{record.name}: {record.getMessage()}"
        if line not in self.lines:
            self.lines.append(line)


def metadata(req):
    errors = []
    out = {"client": "kafka-python", "version": f"kafka-python {kafka.__version__}", "topics": None, "errors": errors}
    logged = _ErrorLines()
    logging.getLogger("kafka").addHandler(logged)
    logging.getLogger("kafka").setLevel(logging.ERROR)
    try:
        admin = KafkaAdminClient(bootstrap_servers=req["bootstrap"], request_timeout_ms=req["timeout_ms"],
                                 bootstrap_timeout_ms=req["timeout_ms"],
                                 **client_security.kafka_python(req.get("security")))
        try:
            out["topics"] = sorted(admin.list_topics())
        finally:
            admin.close()
    except Exception as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")
    errors.extend(logged.lines)
    json.dump(out, sys.stdout)


def main():
    req = json.load(sys.stdin)
    if req.get("mode") == "metadata":
        return metadata(req)
    bootstrap, topic, part = req["bootstrap"], req["topic"], req["partition"]
    timeout = req["timeout_ms"] / 1000.0
    sec = client_security.kafka_python(req.get("security"))
    errors = []
    out = {"client": "kafka-python", "version": f"kafka-python {kafka.__version__}",
           "produced": [], "consumed": [], "errors": errors}

    if req["create_topic"]:
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=req["timeout_ms"], **sec)
            admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
            admin.close()
        except Exception as e:  # noqa: BLE001
            errors.append(f"create_topics: {type(e).__name__}: {e}")

    records = req["records"]
    produced = []
    producer, codec = None, None
    futures = []

    def settle():
        for i, f in futures:
            try:
                md = f.get(timeout=timeout)
                produced[i] = {"offset": md.offset, "error": None}
            except Exception as e:  # noqa: BLE001
                produced[i] = {"offset": None, "error": f"{type(e).__name__}: {e}"}
        futures.clear()

    for i, r in enumerate(records):
        produced.append({"offset": None, "error": "not sent"})
        if producer is None or r["codec"] != codec:
            if producer is not None:
                producer.flush(timeout)
                settle()
                producer.close(timeout)
            codec = r["codec"]
            producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                                     compression_type=None if codec == "none" else codec,
                                     enable_idempotence=True, **sec)
        try:
            futures.append((i, producer.send(
                topic, key=unhx(r["key"]), value=unhx(r["value"]), partition=part,
                headers=[(n, unhx(v)) for n, v in r["headers"]], timestamp_ms=r["timestamp"])))
        except Exception as e:  # noqa: BLE001
            produced[i] = {"offset": None, "error": f"{type(e).__name__}: {e}"}
    if producer is not None:
        producer.flush(timeout)
        settle()
        producer.close(timeout)
    out["produced"] = produced

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=int(timeout * 1000), **sec)
    tp = TopicPartition(topic, part)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    deadline = time.monotonic() + timeout
    consumed = out["consumed"]
    want = req.get("consume_count", len(records))
    while len(consumed) < want and time.monotonic() < deadline:
        try:
            batch = consumer.poll(timeout_ms=500)
        except Exception as e:  # noqa: BLE001 - e.g. TopicAuthorizationFailedError: reported, ends the read
            errors.append(f"consume: {type(e).__name__}: {e}")
            break
        for msgs in batch.values():
            for m in msgs:
                consumed.append({
                    "offset": m.offset, "key": hx(m.key), "value": hx(m.value),
                    "headers": [[n, hx(v)] for n, v in (m.headers or [])],
                    "timestamp": m.timestamp,
                    "timestamp_type": {0: "create", 1: "log_append"}.get(m.timestamp_type),
                })
    consumer.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
