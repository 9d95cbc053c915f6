#!/usr/bin/env python3
"""A TCP forwarder standing in for a model server in tests/it/run_shard.rs's Slurm test:
`tcp-forward.py PORT TARGET_HOST:TARGET_PORT [DELAY]` sleeps DELAY seconds (a server
loading its model), then listens on 127.0.0.1:PORT and copies every connection to the
target both ways, until it is killed (SIGTERM)."""
import socket
import sys
import threading
import time


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    port = int(sys.argv[1])
    host, tport = sys.argv[2].rsplit(":", 1)
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0.0)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(64)
    print(f"forwarding 127.0.0.1:{port} to {host}:{tport}", flush=True)
    while True:
        c, _ = srv.accept()
        t = socket.create_connection((host, int(tport)))
        threading.Thread(target=pipe, args=(c, t), daemon=True).start()
        threading.Thread(target=pipe, args=(t, c), daemon=True).start()


if __name__ == "__main__":
    main()
