"""kubectl against the real server: the commands of issue #2's acceptance list."""

from __future__ import annotations

import subprocess
import time

import pytest

pytestmark = pytest.mark.usefixtures("kubectl_available")


def no_warnings(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip() and "version difference" not in line]
    assert not lines, stderr


def test_get_namespaces_lists_the_system_namespaces(server):
    proc = server.kubectl("get", "ns", "-o", "name")
    assert set(proc.stdout.split()) >= {"namespace/default", "namespace/kube-system", "namespace/kube-public",
                                        "namespace/kube-node-lease"}
    no_warnings(proc.stderr)
    table = server.kubectl("get", "ns")
    assert table.stdout.split("\n")[0].split() == ["NAME", "STATUS", "AGE"]


def test_create_get_yaml_delete_configmap(server):
    proc = server.kubectl("create", "configmap", "kc-one", "--from-literal=greeting=hello")
    assert "configmap/kc-one created" in proc.stdout
    no_warnings(proc.stderr)
    out = server.kubectl("get", "cm", "kc-one", "-o", "yaml").stdout
    assert "greeting: hello" in out and "resourceVersion:" in out and "uid:" in out
    table = server.kubectl("get", "cm", "kc-one").stdout.split("\n")
    assert table[0].split() == ["NAME", "DATA", "AGE"] and table[1].split()[:2] == ["kc-one", "1"]
    assert 'configmap "kc-one" deleted' in server.kubectl("delete", "cm", "kc-one").stdout
    missing = server.kubectl("get", "cm", "kc-one", check=False)
    assert missing.returncode != 0 and 'configmaps "kc-one" not found' in missing.stderr


def test_apply_creates_then_updates(server, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: one\n")
    first = server.kubectl("apply", "-f", str(manifest))
    assert "configmap/applied created" in first.stdout
    no_warnings(first.stderr)
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: two\n  k2: x\n")
    second = server.kubectl("apply", "-f", str(manifest))
    assert "configmap/applied configured" in second.stdout
    no_warnings(second.stderr)
    assert server.kubectl("get", "cm", "applied", "-o", "jsonpath={.data.k},{.data.k2}").stdout == "two,x"
    unchanged = server.kubectl("apply", "-f", str(manifest))
    assert "configmap/applied unchanged" in unchanged.stdout


def test_watch_sees_changes_as_they_happen(server):
    watch = subprocess.Popen(["kubectl", "--kubeconfig", server.kubeconfig, "get", "cm", "-w",
                              "--output-watch-events"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        server.kubectl("create", "cm", "watched")
        server.kubectl("label", "cm", "watched", "x=y")
        server.kubectl("delete", "cm", "watched")
        time.sleep(1.5)
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=10)
    events = [line.split()[:2] for line in out.splitlines() if "watched" in line]
    assert events == [["ADDED", "watched"], ["MODIFIED", "watched"], ["DELETED", "watched"]]


def test_api_resources_and_versions(server):
    resources = server.kubectl("api-resources").stdout
    header, *rows = resources.splitlines()
    assert header.split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    by_name = {row.split()[0]: row.split() for row in rows}
    assert by_name["configmaps"] == ["configmaps", "cm", "v1", "true", "ConfigMap"]
    assert by_name["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert by_name["secrets"] == ["secrets", "v1", "true", "Secret"]
    assert "v1" in server.kubectl("api-versions").stdout.split()


def test_readyz_verbose(server):
    out = server.kubectl("get", "--raw", "/readyz?verbose").stdout
    assert "[+]ping ok" in out and "[+]etcd ok" in out and out.strip().endswith("readyz check passed")


def test_create_secret_and_explain(server):
    server.kubectl("create", "secret", "generic", "s-one", "--from-literal=password=hunter2")
    assert server.kubectl("get", "secret", "s-one", "-o", "jsonpath={.data.password}").stdout == "aHVudGVyMg=="
    assert "FIELD: data <map[string]string>" in server.kubectl("explain", "configmap.data").stdout
