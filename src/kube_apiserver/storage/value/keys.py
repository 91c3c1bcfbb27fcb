"""Which transformer a stored key's value goes through: the resource the key belongs to, under the
encryption configuration in force (replaced whole when the file is reloaded)."""

from __future__ import annotations

from collections.abc import Mapping

from .config import EncryptionConfiguration, GroupResource
from .transformer import KeyContext, Transformer

KEY_ROOT = "/registry"


class KeyTransformers:
    """`resources`: resource key prefix (`/registry/secrets`, `/registry/services/specs`) -> (group,
    resource), as the storage factory registers them; keys of no registered prefix are custom resources
    (`/registry/<group>/<resource>/...`) or else core. `stored_root` is what the KV stores `/registry` as
    (--etcd-prefix): the authenticated data is the etcd key itself, as kube-apiserver's."""

    def __init__(
        self,
        config: EncryptionConfiguration,
        resources: Mapping[str, GroupResource],
        stored_root: str = KEY_ROOT,
    ):
        self.config = config
        self.resources = resources
        self.stored_root = stored_root

    def set(self, config: EncryptionConfiguration) -> None:
        self.config = config

    def resource_of(self, key: str) -> GroupResource:
        parts = key.split("/", 4)  # "", "registry", first, second, rest
        if len(parts) > 3:
            found = self.resources.get("/".join(parts[:4]))
            if found is not None:
                return found
        found = self.resources.get("/".join(parts[:3]))
        if found is not None:
            return found
        if len(parts) > 3 and "." in parts[2]:
            return parts[2], parts[3]
        return "", parts[2] if len(parts) > 2 else ""

    def for_key(self, key: str) -> tuple[Transformer, KeyContext]:
        group, resource = self.resource_of(key)
        stored = self.stored_root + key[len(KEY_ROOT) :] if key.startswith(KEY_ROOT) else key
        label = f"{resource}.{group}" if group else resource
        return self.config.for_resource(group, resource), KeyContext(stored.encode(), label)
