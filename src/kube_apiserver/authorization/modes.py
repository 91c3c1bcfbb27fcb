"""The authorizer chain of an AuthorizationConfiguration (--authorization-config, or --authorization-mode
turned into one): its authorizers in order, after the system:masters rule; with --authorization-config the
file is read again when it changes."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..apimachinery.filewatch import FileWatch
from ..registry.context import UserInfo
from .authorizer import (
    AlwaysAllow,
    AlwaysDeny,
    Attributes,
    Authorizer,
    PrivilegedGroups,
    Rules,
    UnionAuthorizer,
)
from .config import AuthorizationConfiguration, AuthorizerSpec, ConfigError, WebhookSpec, load_file
from .metrics import AuthorizationMetrics, Instrumented
from .rbac import RBACAuthorizer, RuleSource

log = logging.getLogger("kube_apiserver.authorization")
RELOAD_CHECK_SECONDS = 1.0  # how often the file is looked at (a stat); upstream re-reads it every minute
WebhookFactory = Callable[[str, WebhookSpec], Authorizer]  # (authorizer name, its webhook)


def new_authorizer(config: AuthorizationConfiguration, rbac_source: RuleSource | None = None, *,
                   node: Authorizer | None = None, new_webhook: WebhookFactory | None = None,
                   measured: AuthorizationMetrics | None = None) -> UnionAuthorizer:
    authorizers: list[Authorizer] = [PrivilegedGroups()]
    rbac = RBACAuthorizer(rbac_source) if rbac_source is not None else None
    for spec in config.authorizers:
        authorizer = _authorizer(spec, rbac, node, new_webhook)
        authorizers.append(Instrumented(authorizer, spec.type, spec.name, measured) if measured else authorizer)
    return UnionAuthorizer(authorizers)


def _authorizer(spec: AuthorizerSpec, rbac: Authorizer | None, node: Authorizer | None,
                new_webhook: WebhookFactory | None) -> Authorizer:
    if spec.type == "AlwaysAllow":
        return AlwaysAllow()
    if spec.type == "AlwaysDeny":
        return AlwaysDeny()
    if spec.type == "RBAC":
        assert rbac is not None, "RBAC needs the roles and bindings"
        return rbac
    if spec.type == "Node":
        assert node is not None, "Node needs the node graph"
        return node
    if spec.type == "Webhook":
        assert new_webhook is not None and spec.webhook is not None, "Webhook needs its configuration"
        return new_webhook(spec.name, spec.webhook)
    raise ValueError(f"authorization mode {spec.type} is not implemented")


class ReloadingAuthorizer:
    """The chain of --authorization-config, built again when the file changes. A file that does not load or
    validate keeps the chain in force (logged). The authorizers with state of their own (RBAC's listers, the
    node graph) are kept across reloads; webhooks are made anew."""

    def __init__(self, path: str, build: Callable[[AuthorizationConfiguration], UnionAuthorizer],
                 initial: AuthorizationConfiguration):
        self.path = path
        self.build = build
        self.current = build(initial)
        self.watch = FileWatch(path, RELOAD_CHECK_SECONDS)

    def _reload_if_changed(self) -> None:
        if not self.watch.changed():
            return
        try:
            self.current = self.build(load_file(self.path))
        except (ConfigError, ValueError) as err:
            log.error("error reloading authorization config %s, keeping the one in force: %s", self.path, err)
            return
        log.info("reloaded authorization config %s", self.path)

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        self._reload_if_changed()
        return await self.current.authorize(attrs)

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return await self.current.rules_for(user, namespace)

