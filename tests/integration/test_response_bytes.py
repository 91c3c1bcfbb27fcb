"""Response bytes as kube-apiserver writes them: JSON from Go's json.Encoder ends with a newline (objects, lists,
Status errors, discovery, each watch event); people's user agents (curl, Wget, browsers) get json.MarshalIndent's
indented form, which has none, unless `pretty=false`."""

from __future__ import annotations

import json

import pytest

NS = "/api/v1/namespaces/default"
CURL = {"User-Agent": "curl/8.5.0"}


@pytest.fixture(scope="module")
def configmap(server) -> str:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bytes"}, "data": {"k": "v"}}
    created = server.request("POST", f"{NS}/configmaps", body)
    assert created.status == 201 and created.body.endswith(b"}\n") and not created.body.endswith(b"\n\n")
    return f"{NS}/configmaps/bytes"


@pytest.mark.parametrize(
    "path",
    [
        "{cm}",
        "/api/v1/namespaces/default/configmaps",
        "/api/v1",
        "/apis",
        "/api/v1/namespaces/default/configmaps/absent",
    ],
)
def test_json_ends_with_one_newline(server, configmap, path):
    resp = server.request("GET", path.format(cm=configmap), headers={"User-Agent": "kubectl/v1.34.0"})
    assert resp.body.endswith(b"}\n") and not resp.body.endswith(b"\n\n") and b"\n" not in resp.body[:-1]
    json.loads(resp.body)


@pytest.mark.parametrize(
    "agent", ["curl/8.5.0", "Wget/1.21.4", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"]
)
def test_people_get_indented_json(server, configmap, agent):
    for path in (configmap, f"{NS}/configmaps/absent", "/api/v1"):
        resp = server.request("GET", path, headers={"User-Agent": agent})
        assert resp.body.startswith(b'{\n  "') and resp.body.endswith(b"\n}"), resp.body[-20:]


def test_pretty_query_decides(server, configmap):
    compact = server.request("GET", f"{configmap}?pretty=false", headers=CURL)
    assert compact.body.startswith(b'{"') and compact.body.endswith(b"}\n")
    assert server.request("GET", f"{configmap}?pretty=0", headers=CURL).body == compact.body
    assert server.request("GET", f"{configmap}?pretty=t").body.startswith(b'{\n  "')
    # Go's ParseBool: anything else is an error, read as false.
    assert server.request("GET", f"{configmap}?pretty=yes", headers=CURL).body.startswith(b'{"')


def test_watch_events_are_lines_even_for_curl(server, configmap):
    resp = server.request(
        "GET",
        f"{NS}/configmaps?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dbytes",
        headers=CURL,
    )
    lines = resp.body.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2 and json.loads(lines[0])["type"] == "ADDED"


def test_html_characters_escaped_as_go_does(server):
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "html"},
        "data": {"page": "<a href='x'>&\u2028</a>"},
    }
    escaped = b"\\u003ca href='x'\\u003e\\u0026\\u2028\\u003c/a\\u003e"
    created = server.request("POST", f"{NS}/configmaps", body)
    assert (
        created.status == 201 and escaped in created.body and json.loads(created.body)["data"] == body["data"]
    )
    assert escaped in server.request("GET", f"{NS}/configmaps/html", headers=CURL).body
    watched = server.request(
        "GET", f"{NS}/configmaps?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dhtml"
    )
    assert escaped in watched.body
