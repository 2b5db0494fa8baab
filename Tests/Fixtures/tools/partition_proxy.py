#!/usr/bin/env python3
"""A TCP proxy on loopback that a test can partition without closing anything (issue 24).

    partition_proxy.py TARGET_HOST TARGET_PORT

Prints the port it listens on (127.0.0.1), then forwards every connection to the target.
SIGUSR1 stops forwarding: bytes are read and held, nothing is delivered either way, new
connections are accepted but not connected onwards, and no socket is closed, as when a
network drops packets. SIGUSR2 resumes, delivering what was held. SIGTERM ends it.
"""
import signal
import socket
import sys
import threading

flowing = threading.Event()
flowing.set()


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            flowing.wait()
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, target):
    flowing.wait()
    try:
        upstream = socket.create_connection(target)
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


def accept(listener, target):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, target), daemon=True).start()


def main():
    target = (sys.argv[1], int(sys.argv[2]))
    # The signals wait for the main thread in sigwait, blocked in every other thread: a
    # handler would run only when the main thread next woke up.
    controls = {signal.SIGUSR1, signal.SIGUSR2}
    signal.pthread_sigmask(signal.SIG_BLOCK, controls)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    threading.Thread(target=accept, args=(listener, target), daemon=True).start()
    print(listener.getsockname()[1], flush=True)
    while True:
        if signal.sigwait(controls) == signal.SIGUSR1:
            flowing.clear()
        else:
            flowing.set()


if __name__ == "__main__":
    main()
