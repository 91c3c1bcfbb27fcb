"""Each Pod Security check on pods that pass it and pods that fail it, with Kubernetes' reasons and details."""

from __future__ import annotations

import pytest

from kube_apiserver.admission.podsecurity import baseline, restricted
from kube_apiserver.admission.podsecurity.checks import CheckPod


def ctr(name: str, **security_context) -> dict:
    container: dict = {"name": name, "image": "busybox"}
    if security_context:
        container["securityContext"] = security_context
    return container


def spec(*containers: dict, **fields) -> dict:
    return {"containers": list(containers), **fields}


FORBIDDEN = [
    (baseline.privileged_1_0, {}, spec(ctr("a"), ctr("d", privileged=True), ctr("e", privileged=True)),
     "privileged", 'containers "d", "e" must not set securityContext.privileged=true'),
    (baseline.host_namespaces_1_0, {}, spec(ctr("a"), hostIPC=True, hostNetwork=True, hostPID=True),
     "host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true"),
    (baseline.host_path_volumes_1_0, {}, spec(ctr("a"), volumes=[
        {"name": "a", "hostPath": {"path": "/"}}, {"name": "e", "emptyDir": {}}, {"name": "b", "hostPath": {}}]),
     "hostPath volumes", 'volumes "a", "b"'),
    (baseline.host_ports_1_0, {}, spec(ctr("a"), {**ctr("b"), "ports": [{"containerPort": 1, "hostPort": 20},
                                                                         {"containerPort": 2, "hostPort": 10}]},
                                       {**ctr("c"), "ports": [{"containerPort": 3, "hostPort": 30}]}),
     "hostPort", 'containers "b", "c" use hostPorts 10, 20, 30'),
    (baseline.host_ports_1_0, {}, spec({**ctr("b"), "ports": [{"containerPort": 1, "hostPort": 20}]}),
     "hostPort", 'container "b" uses hostPort 20'),
    (baseline.capabilities_baseline_1_0, {}, spec(ctr("a", capabilities={"add": ["FOO", "CHOWN"]}),
                                                  ctr("b", capabilities={"add": ["BAZ", "BAR"]}),
                                                  ctr("c", capabilities={"add": ["KILL"]})),
     "non-default capabilities", 'containers "a", "b" must not include "BAR", "BAZ", "FOO" in '
                                 "securityContext.capabilities.add"),
    (baseline.proc_mount_1_0, {}, spec(ctr("a", procMount="Default"), ctr("d", procMount="Unmasked"),
                                       ctr("e", procMount="other")),
     "procMount", 'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"'),
    (baseline.app_armor_profile_1_0, {}, spec(ctr("a"), securityContext={"appArmorProfile": {"type": "Unconfined"}}),
     "forbidden AppArmor profile", 'pod must not set AppArmor profile type to "Unconfined"'),
    (baseline.app_armor_profile_1_0, {"annotations": {
        "container.apparmor.security.beta.kubernetes.io/b": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/a": "bad"}},
     spec(ctr("foo", appArmorProfile={"type": "Unconfined"})),
     "forbidden AppArmor profiles", 'container "foo" and annotations must not set AppArmor profile type to '
                                    '"Unconfined", "container.apparmor.security.beta.kubernetes.io/a="bad"", '
                                    '"container.apparmor.security.beta.kubernetes.io/b="unconfined""'),
    (baseline.se_linux_options_1_31, {},
     spec(ctr("e", seLinuxOptions={"type": "bar"}), ctr("f", seLinuxOptions={"user": "u"}),
          securityContext={"seLinuxOptions": {"type": "foo", "role": "r"}}),
     "seLinuxOptions", 'pod and containers "e", "f" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; '
                       "user may not be set; role may not be set"),
    (baseline.se_linux_options_1_0, {}, spec(ctr("a", seLinuxOptions={"type": "container_engine_t"})),
     "seLinuxOptions", 'container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t"'),
    (baseline.seccomp_profile_baseline_1_0, {"annotations": {
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
        "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
        "container.seccomp.security.alpha.kubernetes.io/b": "unknown"}}, spec(ctr("a"), ctr("b")),
     "seccompProfile", 'forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", '
                       'container.seccomp.security.alpha.kubernetes.io/b="unknown", '
                       'seccomp.security.alpha.kubernetes.io/pod="unconfined"'),
    (baseline.seccomp_profile_baseline_1_19, {},
     spec(ctr("c", seccompProfile={"type": "Unconfined"}), ctr("d", seccompProfile={"type": "Unconfined"}),
          securityContext={"seccompProfile": {"type": "Unconfined"}}),
     "seccompProfile", 'pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"'),
    (baseline.sysctls_1_32, {}, spec(ctr("a"), securityContext={"sysctls": [
        {"name": "a", "value": "1"}, {"name": "net.ipv4.tcp_wmem", "value": "1"}, {"name": "b", "value": "1"}]}),
     "forbidden sysctls", "a, b"),
    (baseline.sysctls_1_29, {}, spec(ctr("a"), securityContext={"sysctls": [{"name": "net.ipv4.tcp_rmem"}]}),
     "forbidden sysctls", "net.ipv4.tcp_rmem"),
    (baseline.windows_host_process_1_0, {},
     spec(ctr("a"), ctr("e", windowsOptions={"hostProcess": True}), ctr("f", windowsOptions={"hostProcess": True}),
          securityContext={"windowsOptions": {"hostProcess": True}}),
     "hostProcess", 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true'),
    (baseline.host_probes_and_host_lifecycle_1_34, {},
     spec({**ctr("a"), "livenessProbe": {"httpGet": {"host": "localhost", "port": 1}},
           "readinessProbe": {"tcpSocket": {"host": "::1", "port": 1}},
           "lifecycle": {"preStop": {"httpGet": {"host": "127.0.0.1", "port": 1}}}}),
     "probe or lifecycle host", 'container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost"'),
    (baseline.host_probes_and_host_lifecycle_1_34, {},
     {"initContainers": [{**ctr("invalid2"), "startupProbe": {"httpGet": {"host": "b.com", "port": 1}}}],
      "containers": [{**ctr("invalid1"), "lifecycle": {"postStart": {"tcpSocket": {"host": "a.com", "port": 1}}}}]},
     "probe or lifecycle host", 'containers "invalid1", "invalid2" use probe or lifecycle hosts "a.com", "b.com"'),
    (restricted.allow_privilege_escalation_1_8, {},
     spec(ctr("a"), ctr("b", allowPrivilegeEscalation=True), ctr("c", allowPrivilegeEscalation=False)),
     "allowPrivilegeEscalation != false",
     'containers "a", "b" must set securityContext.allowPrivilegeEscalation=false'),
    (restricted.capabilities_restricted_1_22, {},
     spec(ctr("a", capabilities={"add": ["FOO", "BAR"]}), ctr("b", capabilities={"add": ["BAZ"], "drop": ["NET_RAW"]}),
          ctr("c", capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL"]})),
     "unrestricted capabilities", 'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
                                  'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in '
                                  "securityContext.capabilities.add"),
    (restricted.restricted_volumes_1_0, {}, spec(ctr("a"), volumes=[
        {"name": "ok", "configMap": {"name": "x"}}, {"name": "b", "hostPath": {"path": "/"}},
        {"name": "c", "nfs": {"server": "s", "path": "/"}}, {"name": "d", "gitRepo": {"repository": "r"}}]),
     "restricted volume types", 'volumes "b", "c", "d" use restricted volume types "gitRepo", "hostPath", "nfs"'),
    (restricted.run_as_non_root_1_0, {}, spec(ctr("a"), ctr("b", runAsNonRoot=True)),
     "runAsNonRoot != true", 'pod or container "a" must set securityContext.runAsNonRoot=true'),
    (restricted.run_as_non_root_1_0, {}, spec(ctr("a"), ctr("c", runAsNonRoot=False),
                                             securityContext={"runAsNonRoot": False}),
     "runAsNonRoot != true", 'pod and container "c" must not set securityContext.runAsNonRoot=false'),
    (restricted.run_as_user_1_23, {}, spec(ctr("a", runAsUser=1), ctr("c", runAsUser=0), ctr("d", runAsUser=0)),
     "runAsUser=0", 'containers "c", "d" must not set runAsUser=0'),
    (restricted.run_as_user_1_23, {}, spec(ctr("a"), securityContext={"runAsUser": 0}),
     "runAsUser=0", "pod must not set runAsUser=0"),
    (restricted.seccomp_profile_restricted_1_19, {}, spec(ctr("a"), ctr("b", seccompProfile={"type": "Localhost"})),
     "seccompProfile", 'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
                       '"Localhost"'),
    (restricted.seccomp_profile_restricted_1_19, {}, spec(ctr("a"), securityContext={"seccompProfile": {}}),
     "seccompProfile", 'pod must not set securityContext.seccompProfile.type to ""'),
]

ALLOWED = [
    (baseline.privileged_1_0, {}, spec(ctr("a", privileged=False), ctr("b"))),
    (baseline.host_namespaces_1_0, {}, spec(ctr("a"), hostNetwork=False)),
    (baseline.host_ports_1_0, {}, spec({**ctr("a"), "ports": [{"containerPort": 80, "hostPort": 0}]})),
    (baseline.capabilities_baseline_1_0, {}, spec(ctr("a", capabilities={"add": ["CHOWN", "NET_BIND_SERVICE"]}))),
    (baseline.app_armor_profile_1_0, {"annotations": {
        "container.apparmor.security.beta.kubernetes.io/a": "localhost/p", "env": "prod"}},
     spec(ctr("a", appArmorProfile={"type": "RuntimeDefault"}))),
    (baseline.se_linux_options_1_31, {}, spec(ctr("a", seLinuxOptions={"type": "container_engine_t", "level": "s0"}))),
    (baseline.seccomp_profile_baseline_1_0,
     {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "docker/default"}},
     spec(ctr("a"))),
    (baseline.sysctls_1_32, {}, spec(ctr("a"), securityContext={"sysctls": [{"name": "net.ipv4.tcp_wmem"}]})),
    (baseline.proc_mount_1_0, {}, spec(ctr("a", procMount="Default"))),
    (baseline.host_probes_and_host_lifecycle_1_34, {},
     spec({**ctr("a"), "livenessProbe": {"httpGet": {"port": 1}}, "lifecycle": {"preStop": {"exec": {}}}})),
    (restricted.allow_privilege_escalation_1_8, {}, spec(ctr("a", allowPrivilegeEscalation=False))),
    (restricted.capabilities_restricted_1_22, {},
     spec(ctr("a", capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}))),
    (restricted.restricted_volumes_1_0, {}, spec(ctr("a"), volumes=[
        {"name": key, key: {}} for key in restricted.ALLOWED_VOLUME_SOURCES])),
    (restricted.run_as_non_root_1_0, {}, spec(ctr("a"), ctr("b", runAsNonRoot=True),
                                             securityContext={"runAsNonRoot": True})),
    (restricted.run_as_user_1_23, {}, spec(ctr("a", runAsUser=1000), securityContext={"runAsUser": 1000})),
    (restricted.seccomp_profile_restricted_1_19, {},
     spec(ctr("a"), ctr("b", seccompProfile={"type": "Localhost"}),
          securityContext={"seccompProfile": {"type": "RuntimeDefault"}})),
]


@pytest.mark.parametrize(("check", "meta", "pod_spec", "reason", "detail"), FORBIDDEN)
def test_forbidden(check: CheckPod, meta: dict, pod_spec: dict, reason: str, detail: str) -> None:
    result = check(meta, pod_spec)
    assert (result.allowed, result.forbidden_reason, result.forbidden_detail) == (False, reason, detail)


@pytest.mark.parametrize(("check", "meta", "pod_spec"), ALLOWED)
def test_allowed(check: CheckPod, meta: dict, pod_spec: dict) -> None:
    assert check(meta, pod_spec).allowed


def test_ephemeral_and_init_containers_are_checked_too() -> None:
    pod_spec = {"initContainers": [ctr("i", privileged=True)], "containers": [ctr("c")],
                "ephemeralContainers": [ctr("e", privileged=True)]}
    assert baseline.privileged_1_0({}, pod_spec).forbidden_detail == (
        'containers "i", "e" must not set securityContext.privileged=true')


@pytest.mark.parametrize("check", [restricted.allow_privilege_escalation_1_25, restricted.capabilities_restricted_1_25,
                                   restricted.seccomp_profile_restricted_1_25])
def test_windows_pods_pass_the_linux_only_restricted_checks_from_v1_25(check: CheckPod) -> None:
    linux = spec(ctr("a"))
    assert not check({}, linux).allowed
    assert check({}, {**linux, "os": {"name": "windows"}}).allowed


def test_sysctls_allowed_grow_with_the_policy_version() -> None:
    keepalive = spec(ctr("a"), securityContext={"sysctls": [{"name": "net.ipv4.tcp_keepalive_time"}]})
    assert not baseline.sysctls_1_27({}, keepalive).allowed
    assert baseline.sysctls_1_29({}, keepalive).allowed
    reserved = spec(ctr("a"), securityContext={"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports"}]})
    assert not baseline.sysctls_1_0({}, reserved).allowed and baseline.sysctls_1_27({}, reserved).allowed
