#!/usr/bin/env python3
"""confluent-kafka (librdkafka) runner: stdin scenario JSON -> stdout result JSON.

The request's "security" goes into every client's configuration in librdkafka's names
(client_security.librdkafka). "mode": "metadata" lists the topics the client is shown
(AdminClient.list_topics) and reports the errors its error callback and list_topics saw.
"""
import json
import sys
import time

import client_security

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def unhx(s):
    return None if s is None else bytes.fromhex(s)


def hx(b):
    return None if b is None else bytes(b).hex()


def version():
    ver = confluent_kafka.version()  # a (str, int) tuple in older releases, a str in newer ones
    ver = ver[0] if isinstance(ver, tuple) else ver
    return f"confluent-kafka {ver}, librdkafka {confluent_kafka.libversion()[0]}"


def metadata(req):
    """list_topics until it answers, or until the error callback reported an authentication
    error (librdkafka keeps retrying the connection; list_topics would wait for its timeout)."""
    errors = []
    fatal = []

    def on_error(err):
        # _ALL_BROKERS_DOWN sums up the transport errors already reported, with counts that
        # depend on timing ("0/2", "1/1"): left out.
        if err.code() != KafkaError._ALL_BROKERS_DOWN and str(err) not in errors:
            errors.append(str(err))
        if err.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL):
            fatal.append(err)

    out = {"client": "confluent-kafka", "version": version(), "topics": None, "errors": errors}
    admin = AdminClient({"bootstrap.servers": req["bootstrap"], "error_cb": on_error,
                         **client_security.librdkafka(req.get("security"))})
    deadline = time.monotonic() + req["timeout_ms"] / 1000.0
    last = None
    while True:
        try:
            md = admin.list_topics(timeout=max(0.1, min(0.5, deadline - time.monotonic())))
            out["topics"] = sorted(md.topics)
            break
        except Exception as e:  # noqa: BLE001
            last = e
        admin.poll(0)  # serves error_cb
        if fatal or time.monotonic() >= deadline:
            break
    if out["topics"] is None and not fatal:  # (after an authentication error its text depends on timing)
        errors.append(f"list_topics: {last}")
    json.dump(out, sys.stdout)


def main():
    req = json.load(sys.stdin)
    if req.get("mode") == "metadata":
        return metadata(req)
    bootstrap, topic, part = req["bootstrap"], req["topic"], req["partition"]
    timeout = req["timeout_ms"] / 1000.0
    sec = client_security.librdkafka(req.get("security"))
    errors = []
    out = {"client": "confluent-kafka", "version": version(), "produced": [], "consumed": [], "errors": errors}

    if req["create_topic"]:
        admin = AdminClient({"bootstrap.servers": bootstrap, **sec})
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
                                 "enable.idempotence": True, "acks": "all", "linger.ms": 20, **sec})
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
                         "auto.offset.reset": "earliest", **sec})
    consumer.assign([TopicPartition(topic, part, confluent_kafka.OFFSET_BEGINNING)])
    deadline = time.monotonic() + timeout
    consumed = out["consumed"]
    want = req.get("consume_count", len(records))
    while len(consumed) < want and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                if len(consumed) >= want:
                    break
                continue
            errors.append(f"consume: {msg.error()}")
            break  # the first error ends the read (an authorization error repeats until the deadline)
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
