"""The configured webhooks as the dispatchers see them (pkg/admission/plugin/webhook/accessors.go, and
the configuration managers that read them): parsed once per stored configuration, in configuration
name order, read from the configurations' shared informer and re-read only when the informer has moved."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ...apimachinery import errors, labels
from ...client.informers import Lister, SharedIndexInformer, SharedInformerFactory
from .client import ClientConfig
from .conditions import Matcher
from .predicates import parse_selector
from .rules import GROUP

Object = dict[str, Any]
SERVICE_PORT = 443


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
        self.informer: SharedIndexInformer | None = None
        self._version: Any = None
        self._hooks: list[Hook] = []
        self._parsed: dict[tuple[str, str], list[Hook]] = {}

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.informer = informers.for_resource(GROUP, "v1", self.resource)

    async def hooks(self) -> list[Hook]:
        if self.informer is None:
            return []
        if not await Lister(self.informer).ready():  # the dispatcher's "not yet ready to handle request"
            raise errors.StatusError(403, "Forbidden", "not yet ready to handle request")
        version = self.informer.version
        if version == self._version:
            return self._hooks
        items = self.informer.indexer.list()
        parsed: dict[tuple[str, str], list[Hook]] = {}
        for item in sorted(items, key=lambda o: o["metadata"].get("name", "")):
            key = (item["metadata"].get("name", ""), item["metadata"].get("resourceVersion", ""))
            parsed[key] = self._parsed.get(key) or hooks_of(item, self.mutating)
        self._parsed, self._version = parsed, version
        self._hooks = [hook for hooks in parsed.values() for hook in hooks]
        return self._hooks
