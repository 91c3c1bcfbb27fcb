"""An operator written with kopf runs against the server: it sees its custom resources created,
records its handler's result in their status, and handles their deletion through its finalizer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
EXAMPLES = "/apis/kopf.dev/v1/namespaces/default/kopfexamples"
OPERATOR = '''
import kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.watching.server_timeout = 30
    settings.posting.enabled = True

@kopf.on.create("kopf.dev", "v1", "kopfexamples")
def create_fn(spec, name, logger, **_):
    logger.info("creating %s", name)
    return {"message": f"hello {name}", "size": spec.get("size")}

@kopf.on.delete("kopf.dev", "v1", "kopfexamples")
def delete_fn(name, **_):
    with open(MARKS, "a") as f:
        f.write(f"deleted {name}\\n")
'''


def crd() -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "kopfexamples.kopf.dev"},
            "spec": {"group": "kopf.dev", "scope": "Namespaced",
                     "names": {"plural": "kopfexamples", "singular": "kopfexample", "kind": "KopfExample",
                               "shortNames": ["kex"]},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                       "status": {"type": "object",
                                                  "x-kubernetes-preserve-unknown-fields": True}}}}}]}}




@pytest.fixture
def operator(server, tmp_path):
    assert server.request("POST", CRDS, crd()).status == 201
    wait_for(lambda: server.request("GET", EXAMPLES).status == 200)
    marks = tmp_path / "marks.txt"
    script = tmp_path / "operator.py"
    script.write_text(f"MARKS = {str(marks)!r}\n" + OPERATOR)
    env = {**os.environ, "KUBECONFIG": server.kubeconfig}
    proc = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default",
                             str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield proc, marks
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_kopf_operator_handles_create_and_delete(server, operator):
    proc, marks = operator
    example = {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": "kopf-example-1"},
               "spec": {"size": "large"}}
    assert server.request("POST", EXAMPLES, example).status == 201

    def handled():
        obj = server.request("GET", f"{EXAMPLES}/kopf-example-1").json()
        return obj if (obj.get("status") or {}).get("create_fn") else None

    try:
        obj = wait_for(handled)
    except AssertionError:
        proc.terminate()
        raise AssertionError(proc.communicate(timeout=20)[0][-4000:]) from None
    assert obj["status"]["create_fn"] == {"message": "hello kopf-example-1", "size": "large"}
    assert "kopf.zalando.org/KopfFinalizerMarker" in obj["metadata"]["finalizers"]
    assert server.request("DELETE", f"{EXAMPLES}/kopf-example-1").status == 200
    wait_for(lambda: server.request("GET", f"{EXAMPLES}/kopf-example-1").status == 404)
    assert marks.read_text() == "deleted kopf-example-1\n"
