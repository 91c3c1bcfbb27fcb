"""kubectl paging, label-selected watches, patch types and diff against the server."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import yaml

pytestmark = pytest.mark.usefixtures("kubectl_available")


def test_get_chunk_size_over_1000_objects(server, tmp_path):
    server.kubectl("create", "namespace", "chunks")
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c-{i:04d}", "namespace": "chunks"}}
             for i in range(1000)]
    path = tmp_path / "many.yaml"
    path.write_text("---\n".join(yaml.safe_dump(item) for item in items))
    server.kubectl("create", "-f", str(path), timeout=300)
    out = server.kubectl("get", "cm", "-n", "chunks", "--chunk-size=10", "-o", "name", "-v=6", timeout=300)
    names = [n for n in out.stdout.split() if n != "configmap/kube-root-ca.crt"]  # every namespace has it
    assert names == [f"configmap/c-{i:04d}" for i in range(1000)]
    pages = [line for line in out.stderr.splitlines() if "limit=10" in line and " 200 OK" in line]
    assert len(pages) == 101  # 1001 configmaps (with kube-root-ca.crt), ten a page


def test_watch_with_label_selector(server):
    watch = subprocess.Popen(["kubectl", "--kubeconfig", server.kubeconfig, "get", "cm", "-w", "-l", "team=blue",
                              "--output-watch-events", "--no-headers"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        server.kubectl("create", "cm", "blue-one")
        server.kubectl("label", "cm", "blue-one", "team=blue")
        server.kubectl("label", "cm", "blue-one", "team=red", "--overwrite")
        server.kubectl("create", "cm", "unlabelled")
        time.sleep(1.5)
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=10)
    assert [line.split()[:2] for line in out.splitlines()] == [["ADDED", "blue-one"], ["DELETED", "blue-one"]]


def test_patch_types(server):
    server.kubectl("create", "cm", "patched", "--from-literal=a=1")
    server.kubectl("patch", "cm", "patched", "--type=merge", "-p", '{"data":{"b":"2"}}')
    server.kubectl("patch", "cm", "patched", "--type=json", "-p", '[{"op":"remove","path":"/data/a"}]')
    server.kubectl("patch", "cm", "patched", "--type=strategic", "-p", '{"metadata":{"labels":{"x":"y"}}}')
    obj = json.loads(server.kubectl("get", "cm", "patched", "-o", "json").stdout)
    assert obj["data"] == {"b": "2"} and obj["metadata"]["labels"] == {"x": "y"}
    failed = server.kubectl("patch", "cm", "patched", "--type=json", "-p",
                            '[{"op":"test","path":"/data/b","value":"9"}]', check=False)
    assert failed.returncode != 0 and "test failed" in failed.stderr


def test_diff(server, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diffed\ndata:\n  k: one\n")
    server.kubectl("apply", "-f", str(manifest))
    same = server.kubectl("diff", "-f", str(manifest), check=False)
    assert same.returncode == 0, same.stderr
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diffed\ndata:\n  k: two\n")
    changed = server.kubectl("diff", "-f", str(manifest), check=False)
    assert changed.returncode == 1 and "-  k: one" in changed.stdout and "+  k: two" in changed.stdout
    assert server.kubectl("get", "cm", "diffed", "-o", "jsonpath={.data.k}").stdout == "one"
