"""The confluent-kafka (librdkafka) producer of the acknowledged-writes checker; same protocol as
java/AckedProducer.java, so tests/reliability/run treats both alike.

    python ck_producer.py BOOTSTRAP TOPIC PARTITIONS ID_PREFIX RATE_PER_SECOND MAX_RECORDS

Sends until "stop" (or EOF) on stdin or MAX_RECORDS sent, then flush(). Record i goes to
partition i % PARTITIONS, value "ID_PREFIX-i|" + padding. enable.idempotence=True (acks=all,
retries unbounded), message.timeout.ms 30 minutes. stdout lines, from the delivery reports:
    A <id> <partition> <offset> | F <id> <error> | DONE sent=<n> acked=<n> failed=<n>
librdkafka's own errors (transport failures while the bridge is down) go to stderr.
"""
import sys
import threading
import time

from confluent_kafka import Producer


def main():
    bootstrap, topic, partitions, prefix, rate, maximum = sys.argv[1:7]
    partitions, rate, maximum = int(partitions), float(rate), int(maximum)
    stop = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    counts = {"acked": 0, "failed": 0}
    out = sys.stdout

    def on_delivery(err, msg):
        rid = msg.value().split(b"|", 1)[0].decode()
        if err is None:
            counts["acked"] += 1
            out.write(f"A {rid} {msg.partition()} {msg.offset()}\n")
        else:
            counts["failed"] += 1
            out.write(f"F {rid} {str(err).replace(chr(10), ' ')}\n")
        out.flush()

    def on_error(err):
        print(f"client error: {err}", file=sys.stderr, flush=True)
        if err.fatal():
            stop.set()

    p = Producer({
        "bootstrap.servers": bootstrap,
        "client.id": "kib-acked-producer-ck",
        "enable.idempotence": True,
        "acks": "all",
        "retries": 2147483647,
        "max.in.flight.requests.per.connection": 5,
        "linger.ms": 5,
        "message.timeout.ms": 1800000,
        "request.timeout.ms": 15000,
        "reconnect.backoff.ms": 50,
        "reconnect.backoff.max.ms": 500,
        "retry.backoff.ms": 50,
        "topic.metadata.refresh.interval.ms": 5000,
        "error_cb": on_error,
        "log_level": 4,
    })
    pad = b"x" * 64
    sent = 0
    t0 = time.monotonic()
    while not stop.is_set() and sent < maximum:
        rid = f"{prefix}-{sent}"
        while True:
            try:
                p.produce(topic, rid.encode() + b"|" + pad, partition=sent % partitions, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.1)
        sent += 1
        p.poll(0)
        wait = t0 + sent / rate - time.monotonic()
        if wait > 0:
            p.poll(wait)
    # flush() returns the number still queued; loop until the client settled every record.
    deadline = time.monotonic() + 1800
    while p.flush(5.0) > 0 and time.monotonic() < deadline:
        pass
    out.write(f"DONE sent={sent} acked={counts['acked']} failed={counts['failed']} unsettled={len(p)}\n")
    out.flush()


if __name__ == "__main__":
    main()
