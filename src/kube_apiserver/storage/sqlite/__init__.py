"""The embedded SQLite backend (the default): an etcd-shaped KV in one database file."""

from .kv import SQLiteKV

__all__ = ["SQLiteKV"]
