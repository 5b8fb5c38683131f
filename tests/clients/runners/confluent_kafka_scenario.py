#!/usr/bin/env python3
"""confluent-kafka (librdkafka) runner: stdin scenario JSON -> stdout result JSON."""
import json
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def unhx(s):
    return None if s is None else bytes.fromhex(s)


def hx(b):
    return None if b is None else bytes(b).hex()


def main():
    req = json.load(sys.stdin)
    bootstrap, topic, part = req["bootstrap"], req["topic"], req["partition"]
    timeout = req["timeout_ms"] / 1000.0
    errors = []
    ver = confluent_kafka.version()  # a (str, int) tuple in older releases, a str in newer ones
    ver = ver[0] if isinstance(ver, tuple) else ver
    out = {"client": "confluent-kafka",
           "version": f"confluent-kafka {ver}, librdkafka {confluent_kafka.libversion()[0]}",
           "produced": [], "consumed": [], "errors": errors}

    if req["create_topic"]:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        fut = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)],
                                  operation_timeout=timeout)[topic]
        try:
            fut.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001
            errors.append(f"create_topics: {e}")

    records = req["records"]
    produced = [{"offset": None, "error": "no delivery report"} for _ in records]

    def on_delivery(i):
        def cb(err, msg):
            produced[i] = {"offset": msg.offset() if err is None else None,
                           "error": None if err is None else str(err)}
        return cb

    producer, codec = None, None
    for i, r in enumerate(records):
        if producer is None or r["codec"] != codec:
            if producer is not None:
                producer.flush(timeout)
            codec = r["codec"]
            producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec,
                                 "enable.idempotence": True, "acks": "all", "linger.ms": 20})
        kwargs = {"key": unhx(r["key"]), "value": unhx(r["value"]), "partition": part,
                  "headers": [(n, unhx(v)) for n, v in r["headers"]], "on_delivery": on_delivery(i)}
        if r["timestamp"] is not None:
            kwargs["timestamp"] = r["timestamp"]
        producer.produce(topic, **kwargs)
        producer.poll(0)
    if producer is not None:
        left = producer.flush(timeout)
        if left:
            errors.append(f"{left} messages not delivered within {timeout}s")
    out["produced"] = produced

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"unused-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, part, confluent_kafka.OFFSET_BEGINNING)])
    deadline = time.monotonic() + timeout
    consumed = out["consumed"]
    while len(consumed) < len(records) and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                if len(consumed) >= len(records):
                    break
                continue
            errors.append(f"consume: {msg.error()}")
            continue
        ts_type, ts = msg.timestamp()
        consumed.append({
            "offset": msg.offset(), "key": hx(msg.key()), "value": hx(msg.value()),
            "headers": [[n, hx(v)] for n, v in (msg.headers() or [])],
            "timestamp": ts,
            "timestamp_type": {confluent_kafka.TIMESTAMP_CREATE_TIME: "create",
                               confluent_kafka.TIMESTAMP_LOG_APPEND_TIME: "log_append"}.get(ts_type),
        })
    consumer.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
