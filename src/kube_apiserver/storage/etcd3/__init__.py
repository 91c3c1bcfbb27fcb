"""The etcd3 backend (--storage-backend=etcd3): the KV interface over etcd's v3 gRPC API."""

from .client import TLSConfig
from .kv import EtcdError, EtcdKV

__all__ = ["EtcdError", "EtcdKV", "TLSConfig"]
