"""The watch cache (k8s.io/apiserver/pkg/storage/cacher): LIST and WATCH served from memory."""

from .cacher import Cacher

__all__ = ["Cacher"]
