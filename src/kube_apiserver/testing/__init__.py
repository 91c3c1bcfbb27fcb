"""kube_apiserver.testing: a real kube-apiserver for tests (APIServer), and helpers for what tests do with
it (users, webhooks, state, faults, history)."""

from .server import PKI, APIServer, Response, Template

__all__ = ["PKI", "APIServer", "Response", "Template"]
