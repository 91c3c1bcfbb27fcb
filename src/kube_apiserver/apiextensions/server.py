"""The apiextensions link of the chain, the last before 404 (k8s apiextensions-apiserver).

CustomResourceDefinitions and custom resources are served from here; until they are (issue #5),
this server only passes what it does not claim to its delegate."""

from __future__ import annotations

from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer


def new_apiextensions_server(config: CompletedConfig, delegate: DelegationTarget) -> GenericAPIServer:
    return config.new("apiextensions-apiserver", delegate)
