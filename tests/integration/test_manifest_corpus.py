"""Issue 3's corpus of valid manifests: one realistic manifest per built-in kind under tests/manifests/valid,
created in file-name order with `kubectl create -f`; `kubectl get` then prints the columns kube-apiserver v1.34
prints (pkg/printers/internalversion/printers.go), and kubectl's stderr holds only what Kubernetes warns about."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.usefixtures("kubectl_available")

TESTS = Path(__file__).resolve().parents[1]
MANIFESTS = sorted((TESTS / "manifests" / "valid").glob("*.yaml"))
NS = "corpus"
# Warnings kube-apiserver v1.34 itself sends for a manifest (kubectl prints them on stderr).
ENDPOINTS_DEPRECATED = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
WARNINGS = {"03-endpoints.yaml": [ENDPOINTS_DEPRECATED]}
CREATED_AT = ["NAME", "CREATED AT"]  # the default table of resources without a printer (roles, limitranges...)
CONTAINERS = ["CONTAINERS", "IMAGES", "SELECTOR"]
# Events' wide columns are interleaved with the others, so this is the whole wide header.
EVENTS_WIDE = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"]

# resource, name, namespaced, columns, the columns `-o wide` adds at the end (printers.go, v1.34).
COLUMNS: list[tuple[str, str, bool, list[str], list[str]]] = [
    ("namespaces", NS, False, ["NAME", "STATUS", "AGE"], []),
    ("nodes", "worker-1", False, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
     ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]),
    ("pods", "web-0", True, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
     ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]),
    ("podtemplates", "debug-shell", True, ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"], []),
    ("replicationcontrollers", "legacy-frontend", True, ["NAME", "DESIRED", "CURRENT", "READY", "AGE"], CONTAINERS),
    ("services", "web", True, ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], ["SELECTOR"]),
    ("endpoints", "external-db", True, ["NAME", "ENDPOINTS", "AGE"], []),
    ("configmaps", "web-config", True, ["NAME", "DATA", "AGE"], []),
    ("secrets", "registry-credentials", True, ["NAME", "TYPE", "DATA", "AGE"], []),
    ("serviceaccounts", "monitor", True, ["NAME", "SECRETS", "AGE"], []),
    ("limitranges", "container-defaults", True, CREATED_AT, []),
    ("resourcequotas", "compute", True, ["NAME", "REQUEST", "LIMIT", "AGE"], []),
    ("persistentvolumes", "corpus-pv-1", False,
     ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
      "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"], ["VOLUMEMODE"]),
    ("persistentvolumeclaims", "data", True,
     ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"],
     ["VOLUMEMODE"]),
    ("events", "web-0.17f3a2b4c5d6e7f8", True, ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
     EVENTS_WIDE),
    ("events.events.k8s.io", "web.17f3a2b4c5d6e7f9", True, ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
     EVENTS_WIDE),
    ("deployments", "web", True, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], CONTAINERS),
    ("replicasets", "cache", True, ["NAME", "DESIRED", "CURRENT", "READY", "AGE"], CONTAINERS),
    ("statefulsets", "db", True, ["NAME", "READY", "AGE"], ["CONTAINERS", "IMAGES"]),
    ("daemonsets", "log-agent", True,
     ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"], CONTAINERS),
    ("controllerrevisions", "db-7d4b9c8f6", True, ["NAME", "CONTROLLER", "REVISION", "AGE"], []),
    ("jobs", "migrate", True, ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], CONTAINERS),
    ("cronjobs", "nightly-backup", True,
     ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"], CONTAINERS),
    ("horizontalpodautoscalers", "web", True,
     ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"], []),
    ("poddisruptionbudgets", "web", True,
     ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"], []),
    ("ingresses", "web", True, ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"], []),
    ("ingressclasses", "corpus-nginx", False, ["NAME", "CONTROLLER", "PARAMETERS", "AGE"], []),
    ("networkpolicies", "db-from-web", True, ["NAME", "POD-SELECTOR", "AGE"], []),
    ("servicecidrs", "corpus-extra", False, ["NAME", "CIDRS", "AGE"], []),
    ("ipaddresses", "10.200.0.10", False, ["NAME", "PARENTREF"], []),
    ("endpointslices", "external-db-abc12", True, ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], []),
    ("roles", "config-editor", True, CREATED_AT, []),
    ("rolebindings", "config-editor", True, ["NAME", "ROLE", "AGE"], ["USERS", "GROUPS", "SERVICEACCOUNTS"]),
    ("clusterroles", "corpus-node-reader", False, CREATED_AT, []),
    ("clusterrolebindings", "corpus-node-reader", False, ["NAME", "ROLE", "AGE"],
     ["USERS", "GROUPS", "SERVICEACCOUNTS"]),
    ("storageclasses", "corpus-ssd", False,
     ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"], []),
    ("volumeattributesclasses", "corpus-gold", False, ["NAME", "DRIVERNAME", "AGE"], []),
    ("csidrivers", "csi.corpus.example.com", False,
     ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES",
      "AGE"], []),
    ("csinodes", "worker-1", False, ["NAME", "DRIVERS", "AGE"], []),
    ("csistoragecapacities", "csisc-zone-a-ssd", True, ["NAME", "STORAGECLASSNAME", "CAPACITY"], []),
    ("volumeattachments", "csi-0f3c5e8a9b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f", False,
     ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"], []),
    ("leases", "corpus-controller", True, ["NAME", "HOLDER", "AGE"], []),
    ("priorityclasses", "corpus-high", False, ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"], []),
    ("runtimeclasses", "gvisor", False, ["NAME", "HANDLER", "AGE"], []),
    ("certificatesigningrequests", "jane", False,
     ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"], []),
    ("flowschemas", "corpus-batch-jobs", False,
     ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"], []),
    ("prioritylevelconfigurations", "corpus-batch", False,
     ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"], []),
    ("validatingwebhookconfigurations", "corpus-policy", False, ["NAME", "WEBHOOKS", "AGE"], []),
    ("mutatingwebhookconfigurations", "corpus-sidecar-injector", False, ["NAME", "WEBHOOKS", "AGE"], []),
    ("validatingadmissionpolicies", "replica-limit", False, ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"], []),
    ("validatingadmissionpolicybindings", "replica-limit-production", False,
     ["NAME", "POLICYNAME", "PARAMREF", "AGE"], []),
    ("deviceclasses", "corpus-gpu", False, ["NAME", "AGE"], []),
    ("resourceclaims", "shared-gpu", True, ["NAME", "STATE", "AGE"], []),
    ("resourceclaimtemplates", "single-gpu", True, ["NAME", "AGE"], []),
    ("resourceslices", "worker-1-gpu.corpus.example.com-x7k2p", False, ["NAME", "NODE", "DRIVER", "POOL", "AGE"], []),
    ("customresourcedefinitions", "backups.corpus.example.com", False, CREATED_AT, []),
    ("backups.corpus.example.com", "nightly", True, ["NAME", "AGE"], []),  # a custom resource: no printer columns
    ("apiservices", "v1beta1.metrics.corpus.example.com", False, ["NAME", "SERVICE", "AVAILABLE", "AGE"], []),
]


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """What kubectl printed on stderr, less its own client/server version-skew notice."""
    return [line for line in proc.stderr.splitlines() if line.strip() and "version difference" not in line]


def header(out: str) -> list[str]:
    """kubectl's column names: separated by at least two spaces, a single one inside a name (NOMINATED NODE)."""
    return re.split(r" {2,}", out.splitlines()[0].strip())


@pytest.fixture(scope="module")
def created(server) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every manifest created in file-name order: namespaces and referenced objects come first."""
    return {path.name: server.kubectl("create", "-f", str(path), check=False) for path in MANIFESTS}


def test_every_creatable_kind_has_a_manifest():
    discovery = json.loads((TESTS / "data" / "discovery-v1.34.json").read_text())
    creatable = {(r["group"], r["kind"]) for r in discovery if "create" in r["verbs"] and "/" not in r["name"]}
    covered = set()
    for path in MANIFESTS:
        doc = yaml.safe_load(path.read_text())
        group = doc["apiVersion"].rpartition("/")[0]
        covered.add((group, doc["kind"]))
    assert creatable - covered == set()


@pytest.mark.parametrize("manifest", [path.name for path in MANIFESTS])
def test_manifest_is_created_without_warnings(created, manifest):
    proc = created[manifest]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(" created"), proc.stdout
    assert stderr_lines(proc) == WARNINGS.get(manifest, [])


@pytest.mark.parametrize(("resource", "name", "namespaced", "columns", "wide"), COLUMNS,
                         ids=[entry[0] for entry in COLUMNS])
def test_get_prints_kube_apiserver_columns(server, created, resource, name, namespaced, columns, wide):
    scope = ["-n", NS] if namespaced else []
    expected_stderr = [ENDPOINTS_DEPRECATED] if resource == "endpoints" else []
    table = server.kubectl("get", resource, name, *scope)
    assert header(table.stdout) == columns
    assert len(table.stdout.splitlines()) == 2, table.stdout  # the header and the object's row
    assert stderr_lines(table) == expected_stderr
    table = server.kubectl("get", resource, name, *scope, "-o", "wide")
    assert header(table.stdout) == (wide if wide == EVENTS_WIDE else columns + wide)
    assert stderr_lines(table) == expected_stderr


def table_cells(server, path: str) -> list:
    got = server.request("GET", path, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    return got["rows"][0]["cells"]


def test_event_rows_follow_printers_go(server, created):
    """printEvent: SOURCE falls back to the reporting controller and instance, COUNT to 1 for a singleton,
    LAST SEEN to FIRST SEEN, and both to eventTime; events.k8s.io events print through their core form."""
    core = table_cells(server, f"/api/v1/namespaces/{NS}/events/web-0.17f3a2b4c5d6e7f8")
    assert core[1:7] == ["Normal", "Pulled", "pod/web-0", "spec.containers{nginx}", "kubelet, worker-1",
                         'Successfully pulled image "nginx:1.27" in 1.2s']
    assert core[8:] == [2, "web-0.17f3a2b4c5d6e7f8"]
    new = table_cells(server, f"/apis/events.k8s.io/v1/namespaces/{NS}/events/web.17f3a2b4c5d6e7f9")
    assert new[1:] == ["Normal", "ScalingReplicaSet", "deployment/web", "",
                       "deployment-controller, kube-controller-manager-cp-1", "Scaled up replica set web-5d4b9c8f6 to 3",
                       new[0], 1, "web.17f3a2b4c5d6e7f9"]


def test_get_all_shows_every_workload_of_the_corpus(server, created):
    """The "all" category: pods, services, controllers, autoscalers and jobs, nothing else."""
    out = server.kubectl("get", "all", "-n", NS, "-o", "name")
    assert stderr_lines(out) == []
    assert sorted(out.stdout.split()) == sorted([
        "pod/web-0", "replicationcontroller/legacy-frontend", "service/web", "daemonset.apps/log-agent",
        "deployment.apps/web", "replicaset.apps/cache", "statefulset.apps/db",
        "horizontalpodautoscaler.autoscaling/web", "cronjob.batch/nightly-backup", "job.batch/migrate"])
