"""A small threaded TCP proxy on loopback that tests can partition.

    p = Proxy(target=("127.0.0.1", zk.port))     # listens on 127.0.0.1:p.port
    ... point a client at p.port ...
    p.blackhole()   # a partition: nothing is delivered either way
    p.heal()        # forwarding resumes
    p.reset_all()   # every current connection is reset (RST), as a crash would
    p.close()

    Proxy(target=..., delay=0.040)   # a link 40 ms long each way (two regions)

What delay means: every chunk read from one side is written to the other no
earlier than delay seconds after it was read, in the order read (a close too
comes after the data before it), so a request and its answer take at least
2 x delay. A chunk still on its way when blackhole() is called is lost, as
bytes on a cut link are. The connection's set-up is not delayed. delay=0 (the
default) forwards at once, from the reading thread, as before.

What blackhole() means, precisely (it is a partition, not a reset):
- Every connection stays open on both sides. Bytes that arrive from either
  side are read and dropped; nothing is delivered, so no reply, no error.
- A close from one side (FIN or RST, e.g. ZooKeeper closing an expired
  session) is not passed on while blackholed: the other side keeps its open,
  silent connection. It is passed on by heal().
- A connection accepted while blackholed is never joined to the target (as
  if its SYN had been lost on the far side): its bytes are dropped, and
  heal() closes it, so the client reconnects afresh.

Each connection has one pump thread per direction (and, with a delay, one
sender thread per direction); threads are daemons, poll with short timeouts
and end by themselves on close(). Loopback only.
"""
import collections
import socket
import struct
import threading
import time

_POLL = 0.1  # s: how often a blocked recv looks at the proxy's state


class _Pair:
    """One client connection and, unless born in a blackhole, its upstream."""

    def __init__(self, client, upstream):
        self.client = client
        self.upstream = upstream
        self.lock = threading.Lock()
        self.done = 0       # directions finished
        self.closed = False

    def close(self, reset=False):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.client, self.upstream):
            if s is None:
                continue
            try:
                if reset:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except OSError:
                pass


class _Later:
    """The chunks of one direction of a delayed link, each with the time it was read."""

    def __init__(self):
        self.chunks = collections.deque()
        self.ready = threading.Condition()

    def put(self, data):
        with self.ready:
            self.chunks.append((time.monotonic(), data))
            self.ready.notify()

    def get(self, timeout):
        """The oldest (read time, chunk), or None when none came within timeout."""
        with self.ready:
            if not self.chunks:
                self.ready.wait(timeout)
            return self.chunks.popleft() if self.chunks else None


class Proxy:
    """Forwards 127.0.0.1:port to target, for any number of connections."""

    def __init__(self, listen_port=0, target=None, connect_timeout=2.0, delay=0.0):
        if target is None:
            raise ValueError("Proxy needs target=(host, port)")
        self.target = tuple(target)
        self.connect_timeout = connect_timeout
        self.delay = delay
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", listen_port))
        self.listener.listen(64)
        self.listener.settimeout(_POLL)
        self.port = self.listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs = set()
        self._open = True
        self._healed = threading.Event()
        self._healed.set()
        self.stats = {"accepted": 0, "forwarded": 0, "dropped": 0, "refused": 0}
        self._thread = threading.Thread(target=self._accept_loop, daemon=True,
                                        name="proxy-%d" % self.port)
        self._thread.start()

    # ---- control -------------------------------------------------------
    @property
    def blackholed(self):
        return not self._healed.is_set()

    def blackhole(self):
        """Stops delivering in both directions; every socket stays open."""
        self._healed.clear()

    def heal(self):
        """Resumes delivery; closes what closed meanwhile or was born cut off."""
        self._healed.set()
        with self._lock:
            orphans = [p for p in self._pairs if p.upstream is None]
        for p in orphans:
            self._drop(p)

    def reset_all(self):
        """Resets (RST) every current connection; new ones are still accepted."""
        with self._lock:
            pairs = list(self._pairs)
        for p in pairs:
            self._drop(p, reset=True)

    def connections(self):
        with self._lock:
            return len(self._pairs)

    def close(self):
        self._open = False
        self._healed.set()
        try:
            self.listener.close()
        except OSError:
            pass
        self.reset_all()
        self._thread.join(2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- internals -----------------------------------------------------
    def _drop(self, pair, reset=False):
        pair.close(reset)
        with self._lock:
            self._pairs.discard(pair)

    def _accept_loop(self):
        while self._open:
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.stats["accepted"] += 1
            upstream = None
            if not self.blackholed:
                try:
                    upstream = socket.create_connection(self.target, timeout=self.connect_timeout)
                except OSError:
                    self.stats["refused"] += 1
                    client.close()
                    continue
            pair = _Pair(client, upstream)
            with self._lock:
                self._pairs.add(pair)
            for src, dst in ((client, upstream), (upstream, client)):
                if src is None:
                    continue
                src.settimeout(_POLL)
                later = None
                if self.delay > 0 and dst is not None:
                    later = _Later()
                    threading.Thread(target=self._send_later, args=(pair, later, dst),
                                     daemon=True).start()
                threading.Thread(target=self._pump, args=(pair, src, dst, later),
                                 daemon=True).start()

    def _pump(self, pair, src, dst, later=None):
        """Moves bytes src -> dst until src ends; drops them while blackholed. With a delay
        the bytes (and the end) go to later, whose sender thread writes them when due."""
        while self._open and not pair.closed:
            try:
                data = src.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                data = b""  # reset by the peer counts as its close
            if not data:
                if later is not None:
                    later.put(None)
                    return
                self._src_ended(pair, dst)
                return
            if dst is None or self.blackholed:
                self.stats["dropped"] += len(data)
                continue
            if later is not None:
                later.put(data)
                continue
            if not self._send(pair, dst, data):
                return

    def _send(self, pair, dst, data):
        """Writes data to dst; on failure drops the pair and returns False."""
        try:
            dst.sendall(data)
            self.stats["forwarded"] += len(data)
            return True
        except OSError:
            self._drop(pair)
            return False

    def _send_later(self, pair, later, dst):
        """The sender of one direction of a delayed link: writes each chunk delay after it was
        read, in order; a chunk due while blackholed is lost; None (the end) passes the close."""
        while self._open and not pair.closed:
            item = later.get(_POLL)
            if item is None:
                continue
            read_at, data = item
            wait = read_at + self.delay - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if data is None:
                self._src_ended(pair, dst)
                return
            if self.blackholed:
                self.stats["dropped"] += len(data)
                continue
            if not self._send(pair, dst, data):
                return

    def _src_ended(self, pair, dst):
        """Passes a close on, but only once the partition (if any) is healed."""
        while self._open and not pair.closed and not self._healed.wait(_POLL):
            pass
        if dst is None:
            self._drop(pair)
            return
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        with pair.lock:
            pair.done += 1
            both = pair.done >= 2
        if both:
            self._drop(pair)
