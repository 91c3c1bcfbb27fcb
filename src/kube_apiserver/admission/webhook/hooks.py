"""The configured webhooks as the dispatchers see them (pkg/admission/plugin/webhook/accessors.go, and
the configuration managers that read them): parsed once per stored configuration, in configuration
name order, read from the configurations' watch cache and re-read only when the cache has moved."""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any

from ...apimachinery import labels
from ...registry.context import Context
from ...registry.options import ListQuery
from ..lister import ADMISSION_USER, RouteTable, route_storage
from .client import ClientConfig
from .conditions import Matcher
from .predicates import parse_selector
from .rules import GROUP

Object = dict[str, Any]
SERVICE_PORT = 443
UNCACHED_REFRESH_SECONDS = 1.0


def client_config(client: Object) -> ClientConfig:
    """hookClientConfigForWebhook."""
    service = client.get("service") if isinstance(client.get("service"), dict) else None
    try:
        ca = base64.b64decode(client.get("caBundle") or "").decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        ca = "\x00"  # fails as Go fails loading it, when the webhook is called
    if service is None:
        return ClientConfig(client.get("url"), "", "", "", SERVICE_PORT, ca)
    return ClientConfig(None, service.get("namespace") or "", service.get("name") or "", service.get("path") or "",
                        service.get("port") or SERVICE_PORT, ca)


class Hook:
    """One webhook of one configuration; selectors and match conditions compiled on first use."""

    def __init__(self, uid: str, configuration: str, spec: Object, mutating: bool):
        self.uid, self.configuration, self.spec, self.mutating = uid, configuration, spec, mutating
        self.name: str = spec.get("name") or ""
        self.rules: list[Any] = spec.get("rules") or []
        self.failure_policy: str | None = spec.get("failurePolicy")
        self.match_policy: str | None = spec.get("matchPolicy")
        self.side_effects: str | None = spec.get("sideEffects")
        self.timeout: int | None = spec.get("timeoutSeconds")
        self.review_versions: list[Any] = spec.get("admissionReviewVersions") or []
        self.reinvoke_if_needed = spec.get("reinvocationPolicy") == "IfNeeded"
        self.client = client_config(spec.get("clientConfig") or {})
        self._selectors: dict[str, labels.Selector] = {}
        self._conditions: Matcher | None = None

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"

    def selector(self, key: str) -> labels.Selector:
        """namespaceSelector or objectSelector, parsed (a 500 when it cannot be)."""
        if key not in self._selectors:
            self._selectors[key] = parse_selector(self.spec.get(key))
        return self._selectors[key]

    @property
    def conditions(self) -> Matcher:
        if self._conditions is None:
            self._conditions = Matcher([c for c in self.spec.get("matchConditions") or [] if isinstance(c, dict)],
                                       self.failure_policy)
        return self._conditions


def hooks_of(configuration: Object, mutating: bool) -> list[Hook]:
    """A configuration's webhooks, with uids unique even when names repeat."""
    name = (configuration.get("metadata") or {}).get("name") or ""
    seen: dict[str, int] = {}
    hooks = []
    for spec in configuration.get("webhooks") or []:
        if isinstance(spec, dict):
            index = seen[spec.get("name") or ""] = seen.get(spec.get("name") or "", -1) + 1
            hooks.append(Hook(f"{name}/{spec.get('name') or ''}/{index}", name, spec, mutating))
    return hooks


class HookSource:
    """Source.Webhooks() over one configuration resource."""

    def __init__(self, resource: str, mutating: bool):
        self.resource, self.mutating = resource, mutating
        self.store: Any = None
        self._version: Any = None
        self._hooks: list[Hook] = []
        self._parsed: dict[tuple[str, str], list[Hook]] = {}

    def bind(self, group_versions: RouteTable) -> None:
        self.store = route_storage(group_versions, GROUP, self.resource)

    def _cache_version(self) -> Any:
        """The watch cache's revision: nothing changed while it stands still. Without a watch cache
        (--watch-cache=false) the list is read again at most every second, as an informer would lag."""
        cache = getattr(getattr(self.store, "storage", None), "cache", None)
        if cache is None:
            return int(time.monotonic() / UNCACHED_REFRESH_SECONDS)
        return cache.resource_version

    async def hooks(self) -> list[Hook]:
        if self.store is None:
            return []
        version = self._cache_version()
        if version == self._version:
            return self._hooks
        listed = await self.store.list(Context("", ADMISSION_USER), ListQuery(resource_version="0"))
        parsed: dict[tuple[str, str], list[Hook]] = {}
        for item in sorted(listed["items"], key=lambda o: o["metadata"].get("name", "")):
            key = (item["metadata"].get("name", ""), item["metadata"].get("resourceVersion", ""))
            parsed[key] = self._parsed.get(key) or hooks_of(item, self.mutating)
        self._parsed, self._version = parsed, version
        self._hooks = [hook for hooks in parsed.values() for hook in hooks]
        return self._hooks
