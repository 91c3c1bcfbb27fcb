"""The horizontalpodautoscaling controller in the real server (opt-in) with resource metrics served by
an aggregated API: a small HTTPS server plays metrics-server behind a selector-less Service, registered
as the v1beta1.metrics.k8s.io APIService. Two pods using 100% of their CPU request against a 50% target
double the Deployment through its scale subresource, with upstream's conditions, status and event."""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Iterator

import pytest
from cryptography import x509
from test_aggregator import JSONHandler, TrackingServer, available, host_ip

from conftest import Server, wait_for, with_controllers
from httpsserver import serving_files

NS = "default"
METRICS_GV = "/apis/metrics.k8s.io/v1beta1"
RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "metrics.k8s.io/v1beta1",
    "resources": [
        {
            "name": "pods",
            "singularName": "",
            "namespaced": True,
            "kind": "PodMetrics",
            "verbs": ["get", "list"],
        },
        {
            "name": "nodes",
            "singularName": "",
            "namespaced": False,
            "kind": "NodeMetrics",
            "verbs": ["get", "list"],
        },
    ],
}


class MetricsHandler(JSONHandler):
    """metrics-server's answers: every pod named in `usage` uses that much CPU."""

    usage: dict[str, str] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.partition("?")[0]
        if path == METRICS_GV:
            self._json(200, RESOURCES)
        elif path == f"{METRICS_GV}/namespaces/{NS}/pods":
            items = [
                {
                    "metadata": {"name": name, "namespace": NS},
                    "timestamp": "2026-01-01T00:00:00Z",
                    "window": "30s",
                    "containers": [{"name": "c", "usage": {"cpu": cpu, "memory": "10Mi"}}],
                }
                for name, cpu in type(self).usage.items()
            ]
            self._json(
                200,
                {
                    "kind": "PodMetricsList",
                    "apiVersion": "metrics.k8s.io/v1beta1",
                    "metadata": {},
                    "items": items,
                },
            )
        else:
            self._json(
                404,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "code": 404,
                    "reason": "NotFound",
                },
            )


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    ip = host_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback address for an Endpoints object")
    cert, key, ca_pem = serving_files(
        tempfile.mkdtemp(), [x509.DNSName("metrics-server.kube-system.svc")], "metrics"
    )
    httpd = TrackingServer.serving_tls(MetricsHandler, cert, key)
    port = httpd.server_address[1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("kube_apiserver.aggregator.lister.RESYNC_SECONDS", 1.0)
        server = Server(
            str(tmp_path_factory.mktemp("hpa")),
            [with_controllers("horizontalpodautoscaling"), "--horizontal-pod-autoscaler-sync-period=1s"],
        ).start()
    service = {
        "metadata": {"name": "metrics-server"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
    }
    endpoints = {
        "metadata": {"name": "metrics-server"},
        "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port}]}],
    }
    assert server.request("POST", "/api/v1/namespaces/kube-system/services", service).status == 201
    assert server.request("POST", "/api/v1/namespaces/kube-system/endpoints", endpoints).status == 201
    registration = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "service": {"namespace": "kube-system", "name": "metrics-server"},
            "caBundle": base64.b64encode(ca_pem).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    assert server.request("POST", "/apis/apiregistration.k8s.io/v1/apiservices", registration).status == 201
    wait_for(lambda: available(server, "v1beta1.metrics.k8s.io").get("status") == "True")
    yield server
    server.stop()
    httpd.stop()


def _pod(name: str) -> dict:
    return {
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
    }


def _ready(srv: Server, name: str) -> None:
    path = f"/api/v1/namespaces/{NS}/pods/{name}/status"
    pod = srv.request("GET", path).json()
    pod["status"] = {
        "phase": "Running",
        "startTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }
    assert srv.request("PUT", path, pod).status == 200


def test_resource_metrics_scale_the_target_up(srv: Server) -> None:
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _pod("ignored") | {"metadata": {"labels": {"app": "web"}}},
        },
    }
    assert srv.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", deployment).status == 201
    for name in ("web-a", "web-b"):  # no deployment controller here: the test makes the pods
        assert srv.request("POST", f"/api/v1/namespaces/{NS}/pods", _pod(name)).status == 201
        _ready(srv, name)
    MetricsHandler.usage = {"web-a": "100m", "web-b": "100m"}
    hpa = {
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }
    hpas = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
    assert srv.request("POST", hpas, hpa).status == 201
    wait_for(
        lambda: (
            srv.request("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/web").json()["spec"]["replicas"]
            == 4
        )
    )

    def scaled() -> dict | None:
        status = srv.request("GET", f"{hpas}/web").json().get("status") or {}
        return status if status.get("desiredReplicas") == 4 else None

    status = wait_for(scaled)
    assert status["currentMetrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "current": {"averageValue": "100m", "averageUtilization": 100}},
        }
    ]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert (conditions["AbleToScale"]["reason"], conditions["AbleToScale"]["message"]) == (
        "SucceededRescale",
        "the HPA controller was able to update the target scale to 4",
    )
    assert conditions["ScalingActive"]["status"] == "True"
    assert conditions["ScalingActive"]["message"] == (
        "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"
    )
    assert conditions["ScalingLimited"]["status"] == "False"

    def rescales() -> list[str]:
        events = srv.request("GET", f"/api/v1/namespaces/{NS}/events").json()["items"]
        return [e["message"] for e in events if e["reason"] == "SuccessfulRescale"]

    assert wait_for(rescales) == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]
