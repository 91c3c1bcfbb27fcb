"""A custom resource's table (pkg/registry/customresource/tableconvertor): Name, then the CRD's
additionalPrinterColumns evaluated as JSONPath, each cell typed as its column says."""

from __future__ import annotations

import datetime
from typing import Any

from ...apimachinery import jsonpath
from ...apimachinery.clock import wall_now
from ...registry.rest import TableColumn
from ...registry.table import CREATED_DESCRIPTION, NAME, TableConvertor, human_duration, name

Object = dict[str, Any]
# What a CRD version without printer columns shows (the apiextensions server's default column).
DEFAULT_COLUMNS = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                    "description": CREATED_DESCRIPTION}]


def _date(value: Any) -> Any:
    try:
        moment = datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    except (TypeError, ValueError):
        return "<invalid>"
    return human_duration((wall_now() - moment).total_seconds())


def cell(kind: str, value: Any) -> Any:
    """cellForJSONValue: a value of the wrong type for its column shows as nothing."""
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return _date(value)
    if kind == "string":
        return jsonpath.text(value)
    return None


def new_table(columns: list[Object] | None) -> TableConvertor:
    columns = columns or DEFAULT_COLUMNS
    finders = [jsonpath.compile_path(c.get("jsonPath", "")) for c in columns]
    kinds = [c.get("type", "string") for c in columns]
    headers = (NAME, *(TableColumn(c["name"], c.get("type", "string"), c.get("format", ""),
                                   c.get("description") or "Custom resource definition column (in JSONPath "
                                                           f"format): {c.get('jsonPath', '')}",
                                   c.get("priority", 0)) for c in columns))

    def cells(obj: Object) -> list[Any]:
        row: list[Any] = [name(obj)]
        for find, kind in zip(finders, kinds, strict=True):
            found = find(obj)
            row.append(cell(kind, found[0]) if found else None)
        return row
    return TableConvertor(headers, cells)
