"""Holds the connections scenario's load in a process of its own: N idle connections and S
slowloris clients (a 1000-byte frame announced, then a byte a second) to the bridge.

The latency probe runs in the parent; with the 10,000 sockets and the slowloris threads in the
same Python process, its p99 measured the client's own garbage collector and thread switches as
much as the bridge. Here the parent's process is the same in the idle and the loaded phase.

    conn_load.py PORT IDLE SLOWLORIS
prints "ready <opened> <open_errors> <seconds>" once the idle connections are open and the
slowloris clients started; on EOF of stdin it stops them and prints "done <slowloris closed by the
bridge>".
"""
import socket
import sys
import threading
import time


def main() -> int:
    port, n_idle, n_slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    socks, open_errors, t0 = [], 0, time.monotonic()
    for _ in range(n_idle):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        except OSError:
            open_errors += 1
            if open_errors > 100:
                break
    t_open = time.monotonic() - t0
    stop = threading.Event()
    closed = []

    def slowloris(k):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall((1000).to_bytes(4, "big"))
            sent = 0
            while not stop.is_set() and sent < 999:
                s.sendall(b"\x00")
                sent += 1
                stop.wait(1.0)
            s.close()
        except OSError:
            closed.append(k)

    threads = [threading.Thread(target=slowloris, args=(k,), daemon=True) for k in range(n_slow)]
    for t in threads:
        t.start()
    print(f"ready {len(socks)} {open_errors} {t_open:.2f}", flush=True)
    sys.stdin.read()  # until the parent closes our stdin
    stop.set()
    for t in threads:
        t.join(timeout=5)
    for s in socks:
        s.close()
    print(f"done {len(closed)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
