"""The equivalent resource registry (k8s.io/apimachinery/pkg/runtime EquivalentResourceRegistry): what
each installed group version serves, registered by the API installer as it installs a group version (the
custom resource handler's too) and forgotten when it removes one. Made with the server's configuration and
shared by the servers of the chain, it is how admission finds the resources equivalent to a request's
(matchPolicy Equivalent), the kind each is, and the request scope's object interfaces (conversion between
versions, defaulting), without reaching into any server's routes."""

from __future__ import annotations

from typing import Any

# (group, version) -> {"resource" or "resource/subresource": its request scope (.info, .storage)}
Scopes = dict[str, Any]


class EquivalentResourceRegistry:
    def __init__(self) -> None:
        self.group_versions: dict[tuple[str, str], Scopes] = {}
        self.generation = 0  # moves with every change, so readers know when to re-index

    def register(self, group: str, version: str, scopes: Scopes) -> None:
        self.group_versions[(group, version)] = scopes
        self.generation += 1

    def unregister(self, group: str, version: str) -> None:
        if self.group_versions.pop((group, version), None) is not None:
            self.generation += 1

    def scope(self, group: str, version: str, key: str) -> Any:
        """The request scope serving `key` ("resource" or "resource/subresource") at group/version."""
        return self.group_versions.get((group, version), {}).get(key)
