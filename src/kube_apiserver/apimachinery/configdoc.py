"""The configuration files of apiserver.config.k8s.io (AuthenticationConfiguration, AuthorizationConfiguration,
...): YAML or JSON read into a plain document, its apiVersion and kind checked, worded as the scheme's decoder."""

from __future__ import annotations

from typing import Any

import yaml

GROUP = "apiserver.config.k8s.io"


class ConfigDocumentError(ValueError):
    pass


def decode(data: bytes, kind: str, versions: tuple[str, ...]) -> dict[str, Any]:
    if not data.strip():
        raise ConfigDocumentError("empty config data")
    try:
        raw = yaml.safe_load(data)
    except yaml.YAMLError as err:
        raise ConfigDocumentError(f"error converting YAML to JSON: {one_line(err)}") from None
    if not isinstance(raw, dict):
        raise ConfigDocumentError("couldn't get version/kind; json parse error: not an object")
    api_version, found = str(raw.get("apiVersion") or ""), str(raw.get("kind") or "")
    if not found:
        raise ConfigDocumentError(f"Object 'Kind' is missing in '{one_line(data.decode(errors='replace'))[:200]}'")
    group, _, version = api_version.rpartition("/")
    if group != GROUP or version not in versions or found != kind:
        raise ConfigDocumentError(f'no kind "{found}" is registered for version "{api_version}" in scheme '
                                  '"pkg/runtime/scheme.go:100"')
    return raw


def one_line(value: object) -> str:
    """A message on one line (PyYAML's span several): a start failure is one line."""
    return " ".join(str(value).split())


def unknown_fields(raw: Any, path: str, known: tuple[str, ...]) -> list[str]:
    """The strict decoder's unknown fields of one object (`path.name`)."""
    if not isinstance(raw, dict):
        return []
    return [f"{path}.{name}" if path else str(name) for name in raw if name not in known]
