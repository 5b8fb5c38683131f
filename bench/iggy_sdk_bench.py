#!/usr/bin/env python3
"""The same workload as iggy-client-bench through Iggy's own SDK (apache-iggy, the Python
binding of Iggy's Rust SDK, 0.9.0 = wire protocol 0.11): send N 1 KiB messages in batches to one
partition with `inflight` clients sending concurrently, then poll them all back. Prints one
JSON line. The stream and topic must exist (iggy-client-bench --create-only makes them)."""
import argparse, asyncio, json, time

from apache_iggy import Consumer, IggyClient, PollingStrategy, SendMessage


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", default="127.0.0.1:8090")
    ap.add_argument("--stream", default="bench")
    ap.add_argument("--topic", default="sdk")
    ap.add_argument("--messages", type=int, default=200000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--inflight", type=int, default=4)
    a = ap.parse_args()

    clients = []
    for _ in range(a.inflight):
        c = IggyClient(a.address)
        await c.connect()
        await c.login_user("iggy", "iggy")
        clients.append(c)
    payload = b"a" * a.size
    batches = (a.messages + a.batch - 1) // a.batch
    total = batches * a.batch

    async def sender(c, my_batches):
        for _ in range(my_batches):
            await c.send_messages(a.stream, a.topic, 0, [SendMessage(payload) for _ in range(a.batch)])

    shares = [batches // a.inflight + (1 if i < batches % a.inflight else 0) for i in range(a.inflight)]
    t0 = time.perf_counter()
    await asyncio.gather(*(sender(c, n) for c, n in zip(clients, shares)))
    send_s = time.perf_counter() - t0

    polled = 0

    async def poller(c, offsets):
        nonlocal polled
        for off in offsets:
            msgs = await c.poll_messages(a.stream, a.topic, consumer=Consumer.Single("bench"),
                                         polling_strategy=PollingStrategy.Offset(off), count=a.batch,
                                         auto_commit=False, partition_id=0)
            polled += len(msgs)

    starts = list(range(0, total, a.batch))
    t0 = time.perf_counter()
    await asyncio.gather(*(poller(c, starts[i::a.inflight]) for i, c in enumerate(clients)))
    poll_s = time.perf_counter() - t0
    mb = total * a.size / 1e6
    print(json.dumps({"client": "apache-iggy (Iggy Rust SDK)", "messages": total, "size": a.size, "batch": a.batch,
                      "inflight": a.inflight, "send_msgs_per_s": round(total / send_s),
                      "send_mb_per_s": round(mb / send_s, 1), "poll_msgs_per_s": round(polled / poll_s),
                      "poll_mb_per_s": round(polled * a.size / 1e6 / poll_s, 1), "polled": polled}))


asyncio.run(main())
