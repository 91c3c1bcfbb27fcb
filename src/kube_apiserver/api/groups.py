"""The named API groups this server installs, in the order kube-apiserver lists them in /apis.

Each entry names a module of this package with `new_api_group_info(storage)` and, optionally,
`post_start_hooks(group_versions) -> dict[name, hook]`. A group is added by writing its module and its
line here; nothing else changes."""

from __future__ import annotations

import importlib
from types import ModuleType

GROUP_MODULES = (
    "apps",
    "events",
    "authentication",
    "authorization",
    "autoscaling",
    "batch",
    "certificates",
    "networking",
    "policy",
    "rbac",
    "storage",
    "admissionregistration",
    "scheduling",
    "coordination",
    "node",
    "discovery",
    "flowcontrol",
    "resource",
)


def installed_groups() -> list[ModuleType]:
    """The group modules that exist (the list above is the target; groups arrive one by one)."""
    modules = []
    for name in GROUP_MODULES:
        spec = importlib.util.find_spec(f"{__package__}.{name}")
        if spec is not None:
            modules.append(importlib.import_module(f"{__package__}.{name}"))
    return modules
