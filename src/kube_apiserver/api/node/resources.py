"""RuntimeClass overhead.podFixed: validated as a container's resource limits are
(corevalidation.ValidateContainerResourceRequirements, pkg/apis/core/helper)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, quantity, validation
from ...apimachinery.errors import bad_request
from ...apimachinery.field import ErrorList, Path

STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))
INTEGER_RESOURCES = frozenset((
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"))
HUGEPAGES_PREFIX = "hugepages-"
REQUESTS_PREFIX = "requests."


def is_huge_page(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not validation.is_qualified_name(REQUESTS_PREFIX + name)


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended(name)


def validate_resource_name(name: str, path: Path) -> ErrorList:
    errs = [field.invalid(path, name, m) for m in validation.is_qualified_name(name)]
    if errs:
        return errs
    quota_huge_page = name.startswith((HUGEPAGES_PREFIX, REQUESTS_PREFIX + HUGEPAGES_PREFIX))
    if "/" not in name and name not in STANDARD_RESOURCES and not quota_huge_page:
        return [field.invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(name: str, path: Path) -> ErrorList:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_huge_page(name):
            errs.append(field.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        errs.append(field.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def validate_quantity_value(name: str, value: quantity.Quantity, path: Path) -> ErrorList:
    """ValidateResourceQuantityValue."""
    errs: ErrorList = []
    if value.sign() < 0:
        errs.append(field.invalid(path, str(value), validation.IS_NEGATIVE_ERROR_MSG))
    if is_integer_resource(name) and value.scaled(-3) % 1000:
        errs.append(field.invalid(path, str(value), "must be an integer"))
    return errs


def huge_page_error(name: str, value: quantity.Quantity) -> str | None:
    """validateResourceQuantityHugePageValue: the value must be whole pages."""
    try:
        page = quantity.parse(name[len(HUGEPAGES_PREFIX):])
    except quantity.QuantityError:
        page = None
    if page is not None and page.sign() > 0 and page.scaled(-3) % 1000 == 0 \
            and value.scaled(0) % page.scaled(0) == 0:
        return None
    return f"{value} is not positive integer multiple of {name}"


def parse_resource_list(resources: Any, kind: str) -> dict[str, quantity.Quantity]:
    """The quantities of a ResourceList; a malformed one fails decoding (400), as in Kubernetes."""
    try:
        return {str(k): quantity.parse(v) for k, v in (resources or {}).items()}
    except quantity.QuantityError as err:
        raise bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {err}') from None


def validate_limits(limits: dict[str, quantity.Quantity], path: Path) -> ErrorList:
    """ValidateContainerResourceRequirements of {limits: ...} (no requests, no claims)."""
    errs: ErrorList = []
    lim_path = path.child("limits")
    has_cpu_or_memory = has_huge_pages = False
    for name in sorted(limits):
        value, key_path = limits[name], lim_path.key(name)
        errs += validate_container_resource_name(name, key_path)
        errs += validate_quantity_value(name, value, key_path)
        if is_huge_page(name):
            has_huge_pages = True
            if (why := huge_page_error(name, value)) is not None:
                errs.append(field.invalid(key_path, str(value), why))
        has_cpu_or_memory = has_cpu_or_memory or name in ("cpu", "memory")
    if has_huge_pages and not has_cpu_or_memory:
        errs.append(field.forbidden(path, "HugePages require cpu or memory"))
    return errs


def canonical_resource_list(resources: dict[str, quantity.Quantity]) -> dict[str, str]:
    return {name: str(value) for name, value in resources.items()}

