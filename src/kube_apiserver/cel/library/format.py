"""Kubernetes' format library: `format.<name>()` constants (dns1123Label, dns1123Subdomain,
dns1035Label, qualifiedName, dns1123LabelPrefix, dns1123SubdomainPrefix, dns1035LabelPrefix,
labelValue, uri, uuid, byte, date, datetime), `format.named(<string>)` (an optional format) and
`<format>.validate(<string>)`, which is optional.none() when the string is valid, else an optional
list of the error messages."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kube_apiserver.apimachinery import validation
from kube_apiserver.cel.errors import NoSuchOverload
from kube_apiserver.cel.interpreter import interpreter
from kube_apiserver.cel.library.urls import URLError, parse
from kube_apiserver.cel.values import FORMAT, tag, untag

_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")


def _is_date(text: str) -> bool:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    """strfmt.IsDateTime."""
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _TIME.search(parts[1])
    return bool(match) and match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _uri(text: str) -> list[str]:
    try:
        parse(text, via_request=True)
    except URLError as err:
        return [str(err)]
    return []


def _check(ok: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if ok(text) else [message]


VALIDATORS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": lambda text: validation.name_is_dns_label(text, False),
    "dns1123Subdomain": lambda text: validation.name_is_dns_subdomain(text, False),
    "dns1035Label": lambda text: validation.name_is_dns1035_label(text, False),
    "qualifiedName": validation.is_qualified_name,
    "dns1123LabelPrefix": lambda text: validation.name_is_dns_label(text, True),
    "dns1123SubdomainPrefix": lambda text: validation.name_is_dns_subdomain(text, True),
    "dns1035LabelPrefix": lambda text: validation.name_is_dns1035_label(text, True),
    "labelValue": validation.is_valid_label_value,
    "uri": _uri,
    "uuid": _check(lambda text: bool(_UUID.match(text)), "does not match the UUID format"),
    "byte": _check(lambda text: bool(_BASE64.match(text)), "invalid base64"),
    "date": _check(_is_date, "invalid date"),
    "datetime": _check(_is_datetime, "invalid datetime"),
}


def named(name: Any) -> Any:
    if type(name) is not str:
        raise NoSuchOverload()
    if name not in VALIDATORS:
        return interpreter().OptionalValue.none()
    return interpreter().OptionalValue.of(tag(FORMAT, name))


def validate(fmt: Any, text: Any) -> Any:
    name = untag(fmt, FORMAT)
    if type(text) is not str:
        raise NoSuchOverload()
    errors = VALIDATORS[name](text)
    return interpreter().OptionalValue.of(errors) if errors else interpreter().OptionalValue.none()


def _constant(name: str) -> Callable[[], dict[str, str]]:
    return lambda: tag(FORMAT, name)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{f"format.{name}": _constant(name) for name in VALIDATORS},
    "format.named": named,
    "validate": validate,
}
