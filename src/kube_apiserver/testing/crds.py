"""CustomResourceDefinitions from files for a test server, as envtest's CRDInstallOptions load them: every
CustomResourceDefinition in the YAML or JSON files given (a directory: its *.yaml, *.yml and *.json files,
not its subdirectories), applied (server-side apply, so applying twice is harmless), then waited for until
each is Established and its resource is listed by discovery for every served version, so a test's first
request finds it. Other kinds in those files are skipped.

    install_crds(server, "config/crd/bases")

`server` is anything with `.request(method, path, body=None, headers=None)` answering `.status`, `.body` and
`.json()` (kube_apiserver.testing.APIServer)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import yaml

from .serverlike import ResponseLike, ServerLike

CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD_KIND = "CustomResourceDefinition"
CRD_FILE_SUFFIXES = (".yaml", ".yml", ".json")
FIELD_MANAGER = "kube-apiserver-testing"
POLL_INTERVAL = 0.02  # seconds between two looks at a CRD's conditions and discovery


class CRDInstallError(RuntimeError):
    """A CRD file could not be read, a CRD was refused, or it was not served in time."""


def crd_files(path: str | os.PathLike[str]) -> list[str]:
    """`path` itself if it is a file, else the CRD files directly in that directory, in name order."""
    path = os.fspath(path)
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise CRDInstallError(f"CRD path {path!r} does not exist")
    names = sorted(name for name in os.listdir(path) if name.endswith(CRD_FILE_SUFFIXES))
    return [os.path.join(path, name) for name in names if os.path.isfile(os.path.join(path, name))]


def read_crds(*paths: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition in `paths` (files or directories), in file and document order."""
    crds: list[dict[str, Any]] = []
    for path in paths:
        for file in crd_files(path):
            for document in _documents(file):
                if document.get("kind") != CRD_KIND:
                    continue
                if not (document.get("metadata") or {}).get("name"):
                    raise CRDInstallError(f"{file}: a CustomResourceDefinition without metadata.name")
                crds.append(document)
    return crds


def _documents(file: str) -> Iterator[dict[str, Any]]:
    """The objects in a YAML stream or a JSON file, a List's items included."""
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
        loaded = [json.loads(text)] if file.endswith(".json") else list(yaml.safe_load_all(text))
    except (OSError, ValueError, yaml.YAMLError) as err:
        raise CRDInstallError(f"{file}: {err}") from err
    for document in loaded:
        if not isinstance(document, dict):
            continue  # an empty document between two '---', or a stray scalar
        if isinstance(document.get("items"), list) and str(document.get("kind", "")).endswith("List"):
            yield from (item for item in document["items"] if isinstance(item, dict))
        else:
            yield document


def install_crds(
    server: ServerLike, *paths: str | os.PathLike[str], timeout: float = 60.0
) -> list[dict[str, Any]]:
    """Applies every CRD in `paths` and returns once all are served; the CRDs as the server holds them."""
    return apply_crds(server, read_crds(*paths), timeout)


def apply_crds(server: ServerLike, crds: list[dict[str, Any]], timeout: float = 60.0) -> list[dict[str, Any]]:
    """Applies these CRD objects and returns once all are served; the CRDs as the server holds them."""
    for crd in crds:
        apply_crd(server, crd)
    deadline = time.monotonic() + timeout
    return [wait_for_crd(server, crd, deadline) for crd in crds]


def apply_crd(server: ServerLike, crd: dict[str, Any]) -> dict[str, Any]:
    name = crd["metadata"]["name"]
    response = server.request(
        "PATCH",
        f"{CRDS_PATH}/{quote(name, safe='')}?fieldManager={FIELD_MANAGER}&force=true",
        json.dumps(crd),
        {"Content-Type": "application/apply-patch+yaml"},
    )
    if response.status not in (200, 201):
        raise CRDInstallError(f"CustomResourceDefinition {name!r} was refused: {_message(response)}")
    return response.json()


def wait_for_crd(server: ServerLike, crd: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Polls until the CRD is Established and discovery lists its resource in every served version."""
    name = crd["metadata"]["name"]
    while True:
        current = server.request("GET", f"{CRDS_PATH}/{quote(name, safe='')}")
        if current.status == 200 and _established(current.json()) and _discoverable(server, current.json()):
            return current.json()
        if time.monotonic() > deadline:
            state = _conditions(current.json()) if current.status == 200 else _message(current)
            raise CRDInstallError(f"CustomResourceDefinition {name!r} was not served in time: {state}")
        time.sleep(POLL_INTERVAL)


def _conditions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    return (crd.get("status") or {}).get("conditions") or []


def _established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in _conditions(crd))


def _discoverable(server: ServerLike, crd: dict[str, Any]) -> bool:
    spec = crd["spec"]
    plural = spec["names"]["plural"]
    for version in spec["versions"]:
        if not version.get("served"):
            continue
        found = server.request("GET", f"/apis/{spec['group']}/{version['name']}")
        if found.status != 200:
            return False
        if not any(resource.get("name") == plural for resource in found.json().get("resources") or []):
            return False
    return True


def _message(response: ResponseLike) -> str:
    try:
        return f"{response.status} {response.json().get('message', '')}"
    except ValueError:
        return f"{response.status} {response.body[:200]!r}"
