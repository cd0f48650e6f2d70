"""The web worker's own SO_REUSEPORT socket: bound beside the shared one, and both accept."""

from __future__ import annotations

import socket

from runtime.asgi_worker import own_socket


def test_a_worker_binds_its_own_socket_beside_the_shared_one():
    shared = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    shared.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # gunicorn --reuse-port
    shared.bind(("127.0.0.1", 0))
    shared.listen(16)
    own = own_socket(shared, 16)
    try:
        assert own is not None
        assert own.getsockname() == shared.getsockname()
        # The kernel spreads new connections across both: connect until each has one waiting.
        clients, seen = [], set()
        own.setblocking(False)
        shared.setblocking(False)
        for _ in range(64):
            clients.append(socket.create_connection(shared.getsockname(), timeout=2))
            for name, sock in (("shared", shared), ("own", own)):
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    continue
                conn.close()
                seen.add(name)
            if seen == {"shared", "own"}:
                break
        assert seen == {"shared", "own"}
    finally:
        for client in clients:
            client.close()
        if own is not None:
            own.close()
        shared.close()


def test_without_reuse_port_on_the_shared_socket_no_own_socket_is_made():
    shared = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    shared.bind(("127.0.0.1", 0))
    shared.listen(4)
    try:
        assert own_socket(shared, 4) is None  # the address is taken: serve the shared one only
    finally:
        shared.close()
