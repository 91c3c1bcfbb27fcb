"""Modules imported on first use, so that a server start does not pay for what only some requests need.

    if TYPE_CHECKING:
        import aiohttp
    else:
        aiohttp = lazy_import("aiohttp")   # its code runs when an attribute is first read

aiohttp, for one, costs ~0.2 s to import (it builds TLS contexts at import time) and is only needed when a
webhook, a conversion webhook, a proxy subresource or an aggregated API is called; the CRD validation and
the structural schema machinery are only needed once a CRD exists.

This is importlib.util.LazyLoader as Python 3.12 has it: the module object is the real one (no cost per
attribute read once loaded), and a thread reading an attribute while another runs the module's code waits
for it instead of seeing a half-initialized module (Python 3.11's LazyLoader lets it through).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from importlib.machinery import ModuleSpec
from types import ModuleType

_lock = threading.RLock()  # one for all: loads are rare, and a module's code may load another lazy one
_loading: set[str] = set()


class _LazyModule(ModuleType):
    """A module whose code has not run yet; the first attribute read runs it."""

    def __getattribute__(self, attr: str) -> object:
        with _lock:
            if object.__getattribute__(self, "__class__") is _LazyModule:
                spec = object.__getattribute__(self, "__spec__")
                if spec.name in _loading:  # the module's own code (or an import it makes) reads it
                    return object.__getattribute__(self, attr)
                _load(self, spec)
        return getattr(self, attr)


def _load(module: ModuleType, spec: ModuleSpec) -> None:
    _loading.add(spec.name)
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except BaseException:
        sys.modules.pop(spec.name, None)  # as a failed import leaves it
        raise
    finally:
        _loading.discard(spec.name)
        module.__class__ = ModuleType


def lazy_import(name: str) -> ModuleType:
    """The module `name`, whose code runs when one of its attributes is first read.

    Raises ModuleNotFoundError now, as `import name` would, when the module does not exist.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)  # imports the parent packages, not the module
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _LazyModule
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)  # as `import parent.child` binds it
    return module
