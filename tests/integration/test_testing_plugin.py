"""The pytest plugin (kube_apiserver.testing.pytest_plugin), as a project that only installed the package uses
it: sample test files run by pytest in a subprocess, with the session, module and per-test servers, the mark
(CRDs from a directory, controllers, admission plugins, authorization mode), the options, and pytest-xdist
workers each with their own servers."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
# not a CRD: skipped
apiVersion: v1
kind: ConfigMap
metadata: {name: not-applied}
"""

HELPERS = """\
import time

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
PODS = "/api/v1/namespaces/default/pods"
AS_JANE = {"Impersonate-User": "jane"}  # the admin acting as a user no RBAC rule names


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def configmap(name):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def widget(name):
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}}


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)
"""

# The module's mark configures its module server and its per-test servers, not the session's.
SAMPLE_MARKED = """\
import pytest
from helpers import AS_JANE, CONFIGMAPS, PODS, WIDGETS, configmap, pod, wait_for, widget

pytestmark = pytest.mark.kube_apiserver(crds="crds")
URLS = {}


def test_session_server_takes_the_options(kube_apiserver_session):
    URLS["session"] = kube_apiserver_session.url
    assert "--controllers=namespace" in kube_apiserver_session.args
    assert kube_apiserver_session.request("POST", CONFIGMAPS, configmap("shared")).status == 201
    assert kube_apiserver_session.request("GET", WIDGETS).status == 404  # module marks are not its own
    # the ServiceAccount admission plugin refuses a pod: no serviceaccount controller made "default"
    assert kube_apiserver_session.request("POST", PODS, pod("p")).status == 403


def test_module_server_has_the_module_crds(kube_apiserver_module):
    URLS["module"] = kube_apiserver_module.url
    assert kube_apiserver_module.url != URLS["session"]
    assert kube_apiserver_module.request("POST", WIDGETS, widget("w1")).status == 201
    skipped = kube_apiserver_module.request("GET", CONFIGMAPS + "/not-applied")
    assert skipped.status == 404


def test_module_server_is_shared_by_the_module(kube_apiserver_module):
    assert kube_apiserver_module.url == URLS["module"]
    assert kube_apiserver_module.request("GET", WIDGETS + "/w1").status == 200


@pytest.mark.kube_apiserver(
    controllers=["serviceaccount"], admission_plugins=["AlwaysPullImages"], authorization_mode="RBAC"
)
def test_fresh_server_takes_the_test_marks(kube_apiserver):
    assert kube_apiserver.url not in URLS.values()
    assert kube_apiserver.request("GET", WIDGETS).json()["items"] == []  # the module's CRDs, fresh
    assert kube_apiserver.request("GET", CONFIGMAPS, headers=AS_JANE).status == 403  # RBAC
    assert "--enable-admission-plugins=AlwaysPullImages" in kube_apiserver.args
    # the serviceaccount controller runs (only it: the mark replaces the ini's list)
    assert "--controllers=serviceaccount" in kube_apiserver.args
    wait_for(lambda: kube_apiserver.request("GET", "/api/v1/namespaces/default/serviceaccounts/default").status == 200)
    assert kube_apiserver.request("POST", PODS, pod("p")).status == 201
"""

SAMPLE_UNMARKED = """\
import pytest
from helpers import AS_JANE, CONFIGMAPS, PODS, WIDGETS, pod


def test_session_server_is_shared_across_modules(kube_apiserver_session):
    assert kube_apiserver_session.request("GET", CONFIGMAPS + "/shared").status == 200


def test_module_server_is_the_modules_own(kube_apiserver_module):
    assert kube_apiserver_module.request("GET", WIDGETS).status == 404  # no marks here: no CRDs
    assert kube_apiserver_module.request("GET", CONFIGMAPS + "/shared").status == 404


@pytest.mark.kube_apiserver(disable_admission_plugins=["ServiceAccount"], authorization_mode="AlwaysAllow")
def test_fresh_server_starts_empty(kube_apiserver):
    assert kube_apiserver.request("GET", CONFIGMAPS + "/shared").status == 404
    assert kube_apiserver.request("GET", CONFIGMAPS, headers=AS_JANE).status == 200  # AlwaysAllow
    assert kube_apiserver.request("POST", PODS, pod("p")).status == 201  # no ServiceAccount admission
"""


def test_fixture_scopes_marks_and_options(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkube_apiserver_controllers = namespace\n")
    pytester.mkdir("crds")
    (pytester.path / "crds" / "widgets.yaml").write_text(WIDGET_CRD)
    pytester.makepyfile(helpers=HELPERS, test_marked=SAMPLE_MARKED, test_unmarked=SAMPLE_UNMARKED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=7)


# 16 tests on 8 workers: each creates the same ConfigMap in its fresh server (it never exists there yet), and
# records its worker's session server, which must be that worker's alone.
SAMPLE_PARALLEL = """\
import os
import pytest


@pytest.mark.parametrize("n", range(16))
def test_fresh_state(n, kube_apiserver, kube_apiserver_session):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fixed"}}
    created = kube_apiserver.request("POST", "/api/v1/namespaces/default/configmaps", body)
    assert created.status == 201, created.body
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.environ["SEEN_FILE"], "a") as f:
        f.write(f"{worker} {kube_apiserver_session.url}\\n")
"""


def test_xdist_workers_get_their_own_servers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen_file = pytester.path / "seen.txt"
    monkeypatch.setenv("SEEN_FILE", str(seen_file))
    pytester.makepyfile(test_parallel=SAMPLE_PARALLEL)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "8", "--kube-apiserver-controllers=", timeout=600
    )
    result.assert_outcomes(passed=16)
    rows = [line.split() for line in seen_file.read_text().splitlines()]
    session_of_worker: dict[str, set[str]] = {}
    for worker, session_url in rows:
        session_of_worker.setdefault(worker, set()).add(session_url)
    assert len(session_of_worker) > 1, rows  # the tests ran on several workers
    assert all(len(urls) == 1 for urls in session_of_worker.values()), rows  # one session server per worker
    session_urls = [next(iter(urls)) for urls in session_of_worker.values()]
    assert len(set(session_urls)) == len(session_urls), rows  # and no two workers share one
