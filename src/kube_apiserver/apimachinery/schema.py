"""Group, version, kind and resource names (k8s.io/apimachinery/pkg/runtime/schema)."""

from __future__ import annotations

from typing import NamedTuple


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: (group, version), or None for a string with more than one '/' (its
    `unexpected GroupVersion string` error); "" and "/" are the empty group version."""
    if api_version in ("", "/"):
        return "", ""
    if api_version.count("/") > 1:
        return None
    group, slash, version = api_version.partition("/")
    return (group, version) if slash else ("", api_version)


class GroupVersion(NamedTuple):
    group: str
    version: str

    def __str__(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        if "/" in api_version:
            group, _, version = api_version.partition("/")
            return cls(group, version)
        return cls("", api_version)


class GroupVersionKind(NamedTuple):
    group: str
    version: str
    kind: str

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)


class GroupVersionResource(NamedTuple):
    group: str
    version: str
    resource: str


class GroupResource(NamedTuple):
    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource
