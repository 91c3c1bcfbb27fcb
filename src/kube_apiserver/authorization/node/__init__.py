"""The Node authorization mode: kubelets reach only what the pods bound to them need."""

from .authorizer import NodeAuthorizer, node_identity
from .graph import Graph
from .graph_populator import add_graph_event_handlers

__all__ = ["Graph", "NodeAuthorizer", "add_graph_event_handlers", "node_identity"]
