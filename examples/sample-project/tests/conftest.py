"""Helpers shared by the sample project's tests. The servers come from the kube_apiserver pytest plugin
(installed with the kube-apiserver-py package): nothing here starts one."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def wait_for(condition: Callable[[], Any], timeout: float = 30.0, what: str = "the condition") -> Any:
    """Polls until `condition()` is truthy and returns it; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(0.05)


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict:
    metadata: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data or {}}
