"""WarningsOnCreate / WarningsOnUpdate of the CRD strategy: string formats the server does not
recognize (and will therefore not validate)."""

from __future__ import annotations

from typing import Any

from .internal import schema_of, spec_to_internal
from .schemawalk import schema_has

Object = dict[str, Any]

# Formats supported at the default compatibility version of a 1.34 server (1.33): the ones every
# release knows. k8s-short-name and k8s-long-name arrive with compatibility version 1.34.
SUPPORTED_FORMATS = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
    }
)


def _unrecognized_in_schema(schema: Object | None) -> list[str]:
    found: list[str] = []

    def visit(node: Object) -> bool:
        fmt = node.get("format")
        # go-openapi normalizes format names by dropping dashes; only string formats are checked
        if (
            isinstance(fmt, str)
            and fmt
            and node.get("type") == "string"
            and fmt.replace("-", "") not in SUPPORTED_FORMATS
        ):
            found.append(fmt)
        return False

    schema_has(schema, visit)
    return found


def unrecognized_formats(crd: Object) -> list[str]:
    """getUnrecognizedFormatsInCRD, over the internal spec (a schema shared by all versions counts once)."""
    spec = spec_to_internal(crd.get("spec") or {})
    found = _unrecognized_in_schema(schema_of(spec.get("validation")))
    for version in spec.get("versions") or []:
        found += _unrecognized_in_schema(schema_of(version.get("schema")))
    return found


def warnings_on_create(crd: Object) -> list[str]:
    return [f'unrecognized format "{fmt}"' for fmt in unrecognized_formats(crd)]


def warnings_on_update(crd: Object, old: Object) -> list[str]:
    """Only formats the update introduces are warned about."""
    known = set(unrecognized_formats(old))
    return [f'unrecognized format "{fmt}"' for fmt in unrecognized_formats(crd) if fmt not in known]
