"""SetObjectDefaults_CustomResourceDefinition for apiextensions.k8s.io/v1 (JSONSchemaProps have no
defaults of their own)."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
DEFAULT_SERVICE_PORT = 443


def default_crd(crd: Object) -> None:
    """Fill in the defaults of a v1 CRD in place."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        spec = crd["spec"] = {}
    default_spec(spec)
    status = crd.get("status")
    if not (isinstance(status, dict) and status.get("storedVersions")):
        storage = next(
            (v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")),
            None,
        )
        if storage is not None:
            # a present status is kept; the stored versions start with the storage version
            status = status if isinstance(status, dict) else crd.setdefault("status", {})
            crd["status"] = status
            status["storedVersions"] = [storage]
    _default_service_port(spec)


def default_spec(spec: Object) -> None:
    """SetDefaults_CustomResourceDefinitionSpec."""
    names = spec.get("names")
    if isinstance(names, dict):
        kind = names.get("kind") or ""
        # empty values are omitted when serialized, so only non-empty defaults are written
        if not names.get("singular") and kind.lower():
            names["singular"] = kind.lower()
        if not names.get("listKind") and kind:
            names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}


def _default_service_port(spec: Object) -> None:
    """SetDefaults_ServiceReference: a conversion webhook service listens on 443 unless told otherwise."""
    webhook = (spec.get("conversion") or {}).get("webhook")
    client = webhook.get("clientConfig") if isinstance(webhook, dict) else None
    service = client.get("service") if isinstance(client, dict) else None
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = DEFAULT_SERVICE_PORT
