"""kube_apiserver.testing: a real kube-apiserver for tests (APIServer), and helpers for what tests do with
it (users, webhooks, state, faults, history)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import PKI, APIServer, Response, Template

__all__ = ["PKI", "APIServer", "Response", "Template"]


def __getattr__(name: str) -> Any:
    # The server module loads on first use, not with the package: the pytest plugin (this package's
    # pytest_plugin, loaded by every pytest run once the package is installed) must not slow pytest's start.
    if name in __all__:
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
