"""leafd's IDs in-process, for Python: a binding of libleafd-client over ctypes.

    import leafd
    c = leafd.Client("http://127.0.0.1:8080", options="log=0")
    order_id = c.next("segment:order")
    ids = c.next_many("snowflake:event", 100)
    c.close()

The semantics are the C library's (docs/man/leafd_client.3): IDs are taken from ranges the
library fetched ahead, never one twice across all clients and nodes; segment IDs ascend per
handle and key (per thread); with every node down the buffer is served, then leafd.Error with
code EUNAVAILABLE. Strict keys ("sequence:<name>", "keyed:<space>:<key>") are fetched by the
calls themselves, nothing ahead: every ID is issued after its call began, and concurrent calls
for one key (threads of this process on one Client) share one round trip, handed out in the
order they arrived; next_many(key, n) is n consecutive IDs of one round trip (n at most
STRICT_MAX). A child made by fork() (multiprocessing's fork start method, a pre-fork
server) may go on using its parent's Client: it drops the IDs its parent had buffered and fetches
its own. The library is found as $LIBLEAFD_CLIENT, else libleafd-client.so.1
where the dynamic loader looks. A Client may be shared by threads; the C calls release the GIL.
"""
import ctypes
import ctypes.util
import os
import threading

__all__ = ["Client", "Error", "EINVAL", "EUNAVAILABLE", "EAUTH", "ENOTFOUND", "ENOMEM",
           "EREFUSED", "EORDER", "MANY_MAX", "STRICT_MAX"]

# The error codes of <leafd/client.h> (its table LEAFD_CLIENT_ERRNO_MAP): the same names and
# numbers, which tests/unit/test_client_codes.c checks.
EINVAL = -1
EUNAVAILABLE = -2
EAUTH = -3
ENOTFOUND = -4
ENOMEM = -5
EREFUSED = -6
EORDER = -7
# LEAFD_CLIENT_MANY_MAX: the most IDs of one next_many() call.
MANY_MAX = 1000000
# The most IDs of one next_many() call on a strict key: one request's (leafd's ?count= limit).
STRICT_MAX = 10000


class Error(Exception):
    """A call the library refused; .code is one of the E* codes above."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


_lib = None
_lib_lock = threading.Lock()


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        path = os.environ.get("LIBLEAFD_CLIENT")
        names = [path] if path else ["libleafd-client.so.1", ctypes.util.find_library("leafd-client")]
        last = None
        for name in names:
            if not name:
                continue
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError as e:
                last = e
        else:
            raise OSError("libleafd-client not found (set LIBLEAFD_CLIENT): %s" % last)
        lib.leafd_client_open.restype = ctypes.c_void_p
        lib.leafd_client_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                          ctypes.c_size_t]
        lib.leafd_client_next.restype = ctypes.c_int
        lib.leafd_client_next.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                          ctypes.POINTER(ctypes.c_int64)]
        lib.leafd_client_next_many.restype = ctypes.c_int
        lib.leafd_client_next_many.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                               ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]
        lib.leafd_client_close.restype = None
        lib.leafd_client_close.argtypes = [ctypes.c_void_p]
        lib.leafd_client_strerror.restype = ctypes.c_char_p
        lib.leafd_client_strerror.argtypes = [ctypes.c_int]
        lib.leafd_client_error.restype = ctypes.c_char_p
        lib.leafd_client_error.argtypes = [ctypes.c_void_p]
        _lib = lib
        return lib


def _error(lib, h, code, key):
    # The C library's text of this thread's failed call (leafd_client_error: what the nodes
    # said), read on the same thread right after the call; the code's name when it has none.
    text = lib.leafd_client_error(h).decode(errors="replace")
    return Error(code, text or "%s: %s" % (key, lib.leafd_client_strerror(code).decode()))


class Client:
    """A handle on leafd nodes: Client(endpoints, options=None), as leafd_client_open()."""

    def __init__(self, endpoints, options=None):
        self._lib = _load()
        err = ctypes.create_string_buffer(512)
        h = self._lib.leafd_client_open(endpoints.encode(),
                                        options.encode() if options is not None else None,
                                        err, len(err))
        if not h:
            raise Error(EINVAL, err.value.decode(errors="replace"))
        self._h = h
        self._keys = {}
        self._one = threading.local()

    def _key(self, key):
        k = self._keys.get(key)
        if k is None:
            k = self._keys[key] = key.encode()
        return k

    def next(self, key):
        """One ID of key ("segment:<tag>", "snowflake:<key>", "sequence:<name>" or
        "keyed:<space>:<key>"), an int."""
        h = self._h
        if h is None:
            raise Error(EINVAL, "closed")
        slot = getattr(self._one, "v", None)
        if slot is None:
            slot = self._one.v = ctypes.c_int64()
        rc = self._lib.leafd_client_next(h, self._key(key), ctypes.byref(slot))
        if rc != 0:
            raise _error(self._lib, h, rc, key)
        return slot.value

    def next_many(self, key, n):
        """n IDs of key, a list of ints (segment IDs ascending; a strict key's n consecutive
        IDs of one round trip)."""
        h = self._h
        if h is None:
            raise Error(EINVAL, "closed")
        if not 1 <= n <= MANY_MAX:
            raise Error(EINVAL, "n must be from 1 to %d" % MANY_MAX)
        buf = (ctypes.c_int64 * n)()
        rc = self._lib.leafd_client_next_many(h, self._key(key), buf, n)
        if rc != 0:
            raise _error(self._lib, h, rc, key)
        return buf[:]  # a list of ints, built in C (list(buf) goes through the iterator)

    def close(self):
        """Stops the refill and frees the handle; its unused IDs are a gap. Calls after it
        raise Error(EINVAL); no call may be under way on another thread."""
        h, self._h = self._h, None
        if h is not None:
            self._lib.leafd_client_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass
