"""A kopf operator: for each Greeting it creates a ConfigMap holding the greeting, owned by the Greeting, and
records the ConfigMap's name in the Greeting's status.

Run it against any cluster: `kopf run --standalone --namespace default greeting_operator.py` (it logs in
with the kubeconfig named by $KUBECONFIG, or ~/.kube/config). Named greeting_operator, not operator: kopf imports the file by its name,
and `operator` is a standard library module."""

import os
from typing import Any

import kopf
import kubernetes


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """kopf's connection and the kubernetes client's default configuration, from the same kubeconfig, read
    when the operator starts (the kubernetes package reads $KUBECONFIG once, when it is imported)."""
    kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.create("example.com", "v1", "greetings")
def greet(spec: dict[str, Any], name: str, namespace: str, patch: kopf.Patch, **_: Any) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-greeting"},
        "data": {"message": f"Hello, {spec.get('name', 'world')}!"},
    }
    kopf.adopt(configmap)  # owned by the Greeting: deleted with it by the garbage collector
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, configmap)
    patch.status["configMap"] = configmap["metadata"]["name"]
    patch.status["phase"] = "Greeted"
