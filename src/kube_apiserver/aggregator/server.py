"""The aggregator, the outermost link (k8s kube-aggregator): it answers /apis with every group of
the chain (discovery is shared), and passes everything else to kube-apiserver. Proxying to
external API servers through APIServices comes with the apiregistration group."""

from __future__ import annotations

from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer


def new_aggregator_server(config: CompletedConfig, delegate: DelegationTarget) -> GenericAPIServer:
    server = config.new("kube-aggregator", delegate)
    server.restful.root_paths.add("/apis")
    return server
