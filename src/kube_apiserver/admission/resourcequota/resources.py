"""ResourceList arithmetic for quota (k8s.io/apiserver/pkg/quota/v1/resources.go): a ResourceList is a
dict of resource name to Quantity."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...apimachinery import quantity
from ...apimachinery.quantity import Quantity

ResourceList = dict[str, Quantity]


def parse(raw: Any) -> ResourceList:
    """The well-formed quantities of a stored ResourceList (defaulting refused malformed ones)."""
    out: ResourceList = {}
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        try:
            out[str(name)] = quantity.parse(value)
        except quantity.QuantityError:
            continue
    return out


def to_strings(resources: ResourceList) -> dict[str, str]:
    return {name: str(value) for name, value in sorted(resources.items())}


def equals(a: ResourceList, b: ResourceList) -> bool:
    return a.keys() == b.keys() and all(a[k].value == b[k].value for k in a)


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """Whether a <= b for each key of b found in a, and the keys of a that exceed b."""
    exceeded = [key for key, limit in b.items() if key in a and a[key].value > limit.value]
    return not exceeded, exceeded


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    result = {key: quantity.add(value, b[key]) if key in b else value for key, value in a.items()}
    for key, value in b.items():
        result.setdefault(key, value)
    return result


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """a - b, a negative difference counted as zero; keys only in b are zero."""
    result: ResourceList = {}
    for key, value in a.items():
        diff = quantity.sub(value, b[key]) if key in b else value
        result[key] = diff if diff.value > 0 else quantity.ZERO
    for key in b:
        result.setdefault(key, quantity.ZERO)
    return result


def mask(resources: ResourceList, names: Iterable[str]) -> ResourceList:
    wanted = set(names)
    return {key: value for key, value in resources.items() if key in wanted}


def names(resources: ResourceList | dict[str, Any]) -> list[str]:
    return list(resources)


def intersection(a: Iterable[str], b: Iterable[str]) -> list[str]:
    """The names in both, without repeats, sorted."""
    other = set(b)
    return sorted({item for item in a if item in other})


def difference(a: Iterable[str], b: Iterable[str]) -> list[str]:
    other = set(b)
    return sorted({item for item in a if item not in other})


def remove_zeros(resources: ResourceList) -> ResourceList:
    return {key: value for key, value in resources.items() if value.value != 0}


def negative(resources: ResourceList) -> list[str]:
    return [key for key, value in resources.items() if value.value < 0]


def pretty_print(resources: ResourceList) -> str:
    """prettyPrint: name=value pairs sorted by name, joined with commas."""
    return ",".join(f"{key}={resources[key]}" for key in sorted(resources))


def pretty_print_names(resource_names: Iterable[str]) -> str:
    return ",".join(sorted(resource_names))
