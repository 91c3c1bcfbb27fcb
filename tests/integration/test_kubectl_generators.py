"""Issue 3's kubectl commands, each run once with its stderr checked: kubectl must print no warning that
kube-apiserver v1.34 would not send. The generators' own semantics are tested next to their resources
(test_apps, test_batch_autoscaling, test_rbac, test_services...); here: that the objects they send are
accepted as sent, `kubectl explain deployment.spec.strategy`, `get all`, `scale` and `create token`."""

from __future__ import annotations

import base64
import json
import subprocess

import pytest

pytestmark = pytest.mark.usefixtures("kubectl_available")

NS = "gen"
# kubectl create <generator args>, what it prints, then a jsonpath on the created object and its value.
GENERATORS = [
    (["deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=8080"], "deployment.apps/web",
     "deployment", "{.spec.template.spec.containers[0].ports[0].containerPort},{.spec.strategy.type}",
     "8080,RollingUpdate"),
    (["service", "clusterip", "web", "--tcp=80:8080"], "service/web",
     "service", "{.spec.type},{.spec.ports[0].name},{.spec.selector.app}", "ClusterIP,80-8080,web"),
    (["job", "once", "--image=busybox:1.36", "--", "date"], "job.batch/once",
     "job", "{.spec.template.spec.restartPolicy},{.spec.template.spec.containers[0].command[0]}", "Never,date"),
    (["cronjob", "tick", "--image=busybox:1.36", "--schedule=*/5 * * * *", "--", "date"], "cronjob.batch/tick",
     "cronjob", "{.spec.schedule},{.spec.jobTemplate.spec.template.spec.restartPolicy}", "*/5 * * * *,OnFailure"),
    (["role", "reader", "--verb=get,list,watch", "--resource=pods,pods/log,deployments.apps"],
     "role.rbac.authorization.k8s.io/reader", "role", "{.rules[*].apiGroups}", '[""] ["apps"]'),
    (["rolebinding", "reader", "--role=reader", "--serviceaccount=gen:bot", "--user=jane"],
     "rolebinding.rbac.authorization.k8s.io/reader", "rolebinding", "{.roleRef.kind}/{.subjects[*].kind}",
     "Role/User ServiceAccount"),
    (["clusterrole", "gen-viewer", "--verb=get,list", "--resource=nodes", "--resource-name=worker-1"],
     "clusterrole.rbac.authorization.k8s.io/gen-viewer", "clusterrole", "{.rules[0].resourceNames[0]}", "worker-1"),
    (["secret", "generic", "creds", "--from-literal=user=admin", "--type=Opaque"], "secret/creds",
     "secret", "{.type},{.data.user}", "Opaque," + base64.b64encode(b"admin").decode()),
    (["configmap", "settings", "--from-literal=mode=fast", "--from-literal=level=3"], "configmap/settings",
     "configmap", "{.data.level},{.data.mode}", "3,fast"),
    (["serviceaccount", "bot"], "serviceaccount/bot", "serviceaccount", "{.metadata.name}", "bot"),
    (["quota", "small", "--hard=cpu=1,memory=1G,pods=10", "--scopes=NotTerminating"], "resourcequota/small",
     "resourcequota", "{.spec.hard.pods},{.spec.scopes[0]}", "10,NotTerminating"),
    (["poddisruptionbudget", "web", "--selector=app=web", "--max-unavailable=25%"],
     "poddisruptionbudget.policy/web", "poddisruptionbudget", "{.spec.maxUnavailable}", "25%"),
    (["priorityclass", "gen-low", "--value=10", "--preemption-policy=Never", "--description=batch"],
     "priorityclass.scheduling.k8s.io/gen-low", "priorityclass", "{.value},{.preemptionPolicy}", "10,Never"),
    (["ingress", "web", "--class=corpus", "--rule=gen.example.com/*=web:80", "--rule=gen.example.com/api=api:http"],
     "ingress.networking.k8s.io/web", "ingress", "{.spec.rules[0].http.paths[*].pathType}", "Prefix Exact"),
]


def quiet(proc: subprocess.CompletedProcess[str]) -> str:
    """stdout, after checking that stderr has nothing but kubectl's own version-skew notice."""
    noise = [line for line in proc.stderr.splitlines() if line.strip() and "version difference" not in line]
    assert not noise, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def namespace(server) -> str:
    quiet(server.kubectl("create", "namespace", NS))
    return NS


@pytest.mark.parametrize(("args", "printed", "resource", "jsonpath", "value"), GENERATORS,
                         ids=[" ".join(g[0][:2]) if g[0][0] in ("service", "secret") else g[0][0] for g in GENERATORS])
def test_create_generator(server, namespace, args, printed, resource, jsonpath, value):
    name = args[2] if args[0] in ("service", "secret") else args[1]
    assert quiet(server.kubectl("create", "-n", namespace, *args)) == f"{printed} created\n"
    got = quiet(server.kubectl("get", resource, name, "-n", namespace, "-o", f"jsonpath={jsonpath}"))
    assert got == value
    assert len(quiet(server.kubectl("get", resource, name, "-n", namespace)).splitlines()) == 2


def test_generators_dry_run_server_sends_nothing(server, namespace):
    out = quiet(server.kubectl("create", "deployment", "ghost", "--image=nginx", "--dry-run=server", "-n",
                               namespace, "-o", "jsonpath={.spec.progressDeadlineSeconds}"))
    assert out == "600"  # defaulted by the server, then dropped
    missing = server.kubectl("get", "deployment", "ghost", "-n", namespace, check=False)
    assert missing.returncode == 1 and 'deployments.apps "ghost" not found' in missing.stderr


def test_explain_deployment_strategy(server):
    out = quiet(server.kubectl("explain", "deployment.spec.strategy"))
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[:5] == ["GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "",
                         "FIELD: strategy <DeploymentStrategy>"]
    assert lines[7:9] == ["DESCRIPTION:", "    The deployment strategy to use to replace existing pods with new ones."]
    assert "  rollingUpdate\t<RollingUpdateDeployment>" in lines and "  type\t<string>" in lines
    # IntOrString is published with v3's oneOf, so kubectl names the type instead of saying <string>.
    recursive = quiet(server.kubectl("explain", "deployment.spec.strategy", "--recursive")).rstrip().splitlines()
    assert recursive[-4:] == ["  rollingUpdate\t<RollingUpdateDeployment>", "    maxSurge\t<IntOrString>",
                              "    maxUnavailable\t<IntOrString>", "  type\t<string>"]


def test_get_all_lists_the_generated_workloads(server, namespace):
    quiet(server.kubectl("create", "deployment", "all-web", "--image=nginx", "-n", namespace))
    quiet(server.kubectl("create", "job", "all-job", "--image=busybox", "-n", namespace))
    out = quiet(server.kubectl("get", "all", "-n", namespace))
    assert "deployment.apps/all-web" in out and "job.batch/all-job" in out
    # Only the "all" category: no configmaps, secrets, roles or quotas even when the namespace holds some.
    assert "configmap" not in out and "secret" not in out and "resourcequota" not in out


def test_scale_deployment_with_a_precondition(server, namespace):
    quiet(server.kubectl("create", "deployment", "scaled", "--image=nginx", "--replicas=2", "-n", namespace))
    out = quiet(server.kubectl("scale", "deployment", "scaled", "--replicas=4", "--current-replicas=2",
                               "-n", namespace))
    assert out == "deployment.apps/scaled scaled\n"
    stale = server.kubectl("scale", "deployment", "scaled", "--replicas=1", "--current-replicas=2", "-n", namespace,
                           check=False)
    assert stale.returncode == 1 and "Expected replicas to be 2, was 4" in stale.stderr
    assert quiet(server.kubectl("get", "deployment", "scaled", "-n", namespace, "-o",
                                "jsonpath={.spec.replicas}")) == "4"


def test_create_token_with_duration_and_audience(server, namespace):
    quiet(server.kubectl("create", "serviceaccount", "tokened", "-n", namespace))
    token = quiet(server.kubectl("create", "token", "tokened", "-n", namespace, "--duration=10m",
                                 "--audience=https://gen.example.com")).strip()
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["aud"] == ["https://gen.example.com"] and claims["exp"] - claims["iat"] == 600
    assert claims["sub"] == f"system:serviceaccount:{namespace}:tokened"
