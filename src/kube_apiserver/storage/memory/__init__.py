"""The in-memory backend (--storage-backend=memory): an etcd-shaped KV that lives and dies with the server."""

from .kv import MemoryKV

__all__ = ["MemoryKV"]
