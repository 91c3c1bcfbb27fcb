"""The named API groups this server installs, in the order kube-apiserver lists them in /apis.

Each entry names a module of this package with `new_api_group_info(storage)` and, optionally,
`post_start_hooks(group_versions) -> dict[name, hook]`. A module that needs more of the server than its
storage (the review resources ask the server's authenticator and authorizer) names it in `DEPENDENCIES`
and receives it as a keyword argument: `token_reviewer`, `authorizer`. A group is added by writing its
module and its line here; nothing else changes."""

from __future__ import annotations

import importlib
from types import ModuleType

# (module, group): the module under this package, the API group it serves.
GROUP_MODULES = (
    ("apps", "apps"),
    ("events", "events.k8s.io"),
    ("authentication", "authentication.k8s.io"),
    ("authorization", "authorization.k8s.io"),
    ("autoscaling", "autoscaling"),
    ("batch", "batch"),
    ("certificates", "certificates.k8s.io"),
    ("networking", "networking.k8s.io"),
    ("policy", "policy"),
    ("rbac", "rbac.authorization.k8s.io"),
    ("storage", "storage.k8s.io"),
    ("admissionregistration", "admissionregistration.k8s.io"),
    ("scheduling", "scheduling.k8s.io"),
    ("coordination", "coordination.k8s.io"),
    ("node", "node.k8s.io"),
    ("discovery", "discovery.k8s.io"),
    ("flowcontrol", "flowcontrol.apiserver.k8s.io"),
    ("resource", "resource.k8s.io"),
)
GROUP_ORDER = [group for _, group in GROUP_MODULES]


def installed_groups() -> list[ModuleType]:
    """The group modules that exist (the list above is the target; groups arrive one by one)."""
    modules = []
    for name, _group in GROUP_MODULES:
        spec = importlib.util.find_spec(f"{__package__}.{name}")
        if spec is not None:
            modules.append(importlib.import_module(f"{__package__}.{name}"))
    return modules
