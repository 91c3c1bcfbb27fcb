"""podtemplates (pkg/registry/core/podtemplate): a PodTemplateSpec stored on its own."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import NAME, TableConvertor, name
from ...storage.factory import StorageFactory
from .pod.strategy import decode_defaults
from .podspec import PodValidationOptions, default_pod_template_spec, validate_pod_template_spec

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "podtemplates", "PodTemplate", "podtemplate", True)
TEMPLATE = field.Path("template")


def set_defaults(obj: Object) -> None:
    template = obj.get("template")
    if not isinstance(template, dict):
        template = obj["template"] = {}
    default_pod_template_spec(template)


class PodTemplateStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: Object) -> None:
        decode_defaults("PodTemplate", set_defaults, obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                               field.Path("metadata"))
        return errs + validate_pod_template_spec(obj.get("template"), TEMPLATE, PodValidationOptions())


def _images(obj: Object) -> tuple[str, str]:
    containers = ((obj.get("template") or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def _selector(obj: Object) -> str:
    labels = ((obj.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


TABLE = TableConvertor((
    NAME,
    TableColumn("Containers", "string", "", "Names of each container in the template."),
    TableColumn("Images", "string", "", "Images referenced by each container in the template."),
    TableColumn("Pod Labels", "string", "", "The labels for the pod template."),
), lambda o: [name(o), *_images(o), _selector(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"podtemplates": Store(INFO, PodTemplateStrategy(INFO), storage, "/registry/podtemplates", TABLE)}
