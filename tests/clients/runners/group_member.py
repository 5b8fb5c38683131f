"""One member of a consumer group, confluent-kafka or kafka-python, for the member-kill scenario
(tests/clients/test_group_member_kill.py); the Python twin of java/GroupMember.java with the
same output. Subscribes, polls, prints what it consumed, commits exactly that synchronously
and prints the commit; runs until killed (SIGTERM closes it, SIGKILL is the scenario's kill).

    python group_member.py CLIENT BOOTSTRAP TOPIC GROUP CLIENT_ID SESSION_TIMEOUT_MS MAX_POLL_INTERVAL_MS

CLIENT is confluent-kafka, confluent-kafka-consumer (group.protocol=consumer, KIP-848) or
kafka-python. Output lines, WALL = wall clock in ms:
    A WALL p,p,...                  the whole assignment after every rebalance callback ("-" = none)
    R WALL PARTITION OFFSET VALUE   one consumed record
    C WALL PARTITION NEXT_OFFSET    a committed offset, printed after the commit returned
    E WALL MESSAGE                  a failed commit (the records are redelivered later)
"""
import signal
import sys
import time


def now():
    return int(time.time() * 1000)


def emit(lines):
    sys.stdout.write("".join(lines))
    sys.stdout.flush()


def owned(parts):
    return ",".join(str(p) for p in sorted(parts)) or "-"


def confluent(bootstrap, topic, group, client_id, session_ms, poll_ms, protocol="classic"):
    import confluent_kafka as ck

    conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
            "max.poll.interval.ms": poll_ms, "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    if protocol == "consumer":
        # KIP-848: the coordinator times the session and assigns (its default assignor).
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"session.timeout.ms": session_ms, "heartbeat.interval.ms": 1000})
    c = ck.Consumer(conf)
    mine = set()

    def on_assign(consumer, parts):
        mine.update(tp.partition for tp in parts)
        emit([f"A {now()} {owned(mine)}\n"])

    def on_revoke(consumer, parts):
        mine.difference_update(tp.partition for tp in parts)
        emit([f"A {now()} {owned(mine)}\n"])

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    signal.signal(signal.SIGTERM, lambda *_: (c.close(), sys.exit(0)))
    while True:
        msgs = [m for m in c.consume(num_messages=500, timeout=0.2) if m.error() is None]
        if not msgs:
            continue
        t = now()
        emit([f"R {t} {m.partition()} {m.offset()} {m.value().decode()}\n" for m in msgs])
        nxt = {}
        for m in msgs:
            nxt[m.partition()] = m.offset() + 1
        try:
            c.commit(offsets=[ck.TopicPartition(topic, p, o) for p, o in nxt.items()], asynchronous=False)
            t = now()
            emit([f"C {t} {p} {o}\n" for p, o in nxt.items()])
        except ck.KafkaException as e:
            emit([f"E {now()} {e.args[0].name() if e.args else e}\n"])


def kafka_python(bootstrap, topic, group, client_id, session_ms, poll_ms):
    import kafka
    import kafka.errors
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                            session_timeout_ms=session_ms, heartbeat_interval_ms=1000,
                            max_poll_interval_ms=poll_ms, enable_auto_commit=False,
                            auto_offset_reset="earliest")
    mine = set()

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            mine.difference_update(tp.partition for tp in revoked)
            emit([f"A {now()} {owned(mine)}\n"])

        def on_partitions_assigned(self, assigned):
            mine.update(tp.partition for tp in assigned)
            emit([f"A {now()} {owned(mine)}\n"])

    c.subscribe([topic], listener=Listener())
    signal.signal(signal.SIGTERM, lambda *_: (c.close(), sys.exit(0)))
    while True:
        batches = c.poll(timeout_ms=200, max_records=500)
        msgs = [m for recs in batches.values() for m in recs]
        if not msgs:
            continue
        t = now()
        emit([f"R {t} {m.partition} {m.offset} {m.value.decode()}\n" for m in msgs])
        nxt = {}
        for m in msgs:
            nxt[m.partition] = m.offset + 1
        try:
            c.commit({kafka.TopicPartition(topic, p): kafka.OffsetAndMetadata(o, "", -1) for p, o in nxt.items()})
            t = now()
            emit([f"C {t} {p} {o}\n" for p, o in nxt.items()])
        except kafka.errors.KafkaError as e:
            emit([f"E {now()} {type(e).__name__}\n"])


if __name__ == "__main__":
    client, bootstrap, topic, group, client_id, session_ms, poll_ms = sys.argv[1:8]
    if client == "confluent-kafka-consumer":
        confluent(bootstrap, topic, group, client_id, int(session_ms), int(poll_ms), protocol="consumer")
    else:
        run = {"confluent-kafka": confluent, "kafka-python": kafka_python}[client]
        run(bootstrap, topic, group, client_id, int(session_ms), int(poll_ms))
