"""One embedded KV served to several server processes (`--workers`): the process that owns the SQLite file
serves its KV interface over a socket pair per worker (server.py); each worker reaches it through RemoteKV
(client.py), an implementation of the same interface. wire.py is the framing both speak."""

from .client import RemoteKV
from .server import KVServer

__all__ = ["KVServer", "RemoteKV"]
