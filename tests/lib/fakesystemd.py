"""A fake systemd notify socket for the tests (tests/integration/test_ops_systemd_notify.py,
test_reload_inplace.py): pass its path as NOTIFY_SOCKET and read what leafd said."""
import socket
import threading
import time


class FakeSystemd(threading.Thread):
    """Collects (time, {KEY: value}) of every datagram sent to the socket."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.messages = []
        self.done = False

    def run(self):
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            kv = dict(l.split("=", 1) for l in data.decode().split("\n") if "=" in l)
            self.messages.append((time.time(), kv))

    def kvs(self):
        """The datagrams' {KEY: value}, in the order they came."""
        return [kv for _, kv in self.messages]

    def first(self, key):
        return next((m for m in self.messages if key in m[1]), None)

    def stop(self):
        self.done = True
        self.join(2)
        self.sock.close()
