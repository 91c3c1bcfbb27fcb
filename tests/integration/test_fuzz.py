"""Issue 9's fuzz run, bounded: the valid manifests of tests/manifests/valid with one field made the wrong type
(null, numbers, huge integers, strings, lists, objects, booleans, nesting 1,000 deep), bad query parameters on
list, watch and delete, and bad patch bodies of every patch type. The server answers each with a Status, never a
5xx (except EXPECTED_500, where kube-apiserver answers 500 too) and never logs a traceback.

The run is reproducible (a fixed seed; FUZZ_SEED and FUZZ_MUTATIONS vary it by hand) and bounded: about 4,300
requests on one keep-alive connection, 20 s."""

from __future__ import annotations

import copy
import http.client
import json
import logging
import os
import random
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from conftest import wait_for

Object = dict[str, Any]
TESTS = Path(__file__).resolve().parents[1]
MANIFESTS = sorted((TESTS / "manifests" / "valid").glob("*.yaml"))
SEED = int(os.environ.get("FUZZ_SEED", "20250909"))
MUTATIONS_PER_MANIFEST = int(os.environ.get("FUZZ_MUTATIONS", "14"))
DEEP = 1000
# Marks where the encoded body gets a value nested DEEP levels (json.dumps would recurse too deep for it).
DEEP_OBJECT, DEEP_LIST = "\x00deep-object", "\x00deep-list"
WRONG_VALUES: list[Any] = [
    None, 0, -1, 1.5, 1e300, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, "", "x", "-1", "1.5", "!!", [], [None],
    [1], ["x"], [[]], {}, {"a": None}, {"a": 1}, {"": ""}, True, False, DEEP_OBJECT, DEEP_LIST,
]
SERVING_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService")
# Requests kube-apiserver v1.34 itself answers with 500 (method, the start of its message, why).
EXPECTED_500: list[tuple[str, str, str]] = [
    # Strategic merge patch errors kube-apiserver does not translate (interpretStrategicMergePatchError
    # keeps only a few): an unknown $patch directive, a directive list that is not a list, a patch that
    # descends into a raw extension, answered as a Status of code 500 with the error's text.
    ("PATCH", "unknown patch type: ", "strategicpatch: the $patch directive names no patch type"),
    ("PATCH", "expected a ", "mergepatch.ErrBadArgType: a list or map of the patch is of another type"),
    ("PATCH", "unable to find api field in struct ", "strategicpatch: no patch metadata inside RawExtension"),
    ("PATCH", "list element types are not identical: ", "strategicpatch: sliceElementType"),
    ("PATCH", "map: ", "mergepatch.ErrNoMergeKey: an item of a merged list without its merge key"),
    # Server-side apply: structured-merge-diff's error for a configuration that does not fit the schema (an
    # unknown field, a value of another type) is not a Status.
    ("PATCH", "failed to create typed patch object (", "structuredMergeManager.Apply: ObjectToTyped"),
    ("PATCH", "failed to create typed live object (", "structuredMergeManager.Apply: a live list map an earlier "
     "update left with duplicate keys"),
    # storage.ErrResourceVersionSetOnCreate is not a Status either.
    ("POST", "resourceVersion should not be set on objects to be created", "etcd3 store Create"),
]


class Client:
    """One keep-alive HTTPS connection (reopened when the server closes it)."""

    def __init__(self, port: int, ca_file: str, token: str):
        self.port, self.token = port, token
        self.context = ssl.create_default_context(cafile=ca_file)
        self.conn: http.client.HTTPSConnection | None = None
        self.answers: list[tuple[int, str, str, bytes, bytes]] = []

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {self.token}"}
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=30)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
                continue
            if resp.getheader("connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            self.answers.append((resp.status, method, path, (body or b"")[:300], data))
            return resp.status, data
        raise AssertionError("unreachable")


def encode(value: Any) -> bytes:
    text = json.dumps(value)
    deep_object = '{"a":' * DEEP + "1" + "}" * DEEP
    deep_list = "[" * DEEP + "]" * DEEP
    return text.replace(json.dumps(DEEP_OBJECT), deep_object).replace(json.dumps(DEEP_LIST), deep_list).encode()


class TracebackCatcher(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Traceback" in record.getMessage():
            self.records.append(self.format(record))


@pytest.fixture
def tracebacks() -> Iterator[TracebackCatcher]:
    catcher = TracebackCatcher()
    root = logging.getLogger()
    root.addHandler(catcher)
    yield catcher
    root.removeHandler(catcher)


def discover(client: Client) -> dict[tuple[str, str], tuple[str, bool]]:
    """(apiVersion, kind) -> (resource, namespaced), from discovery."""
    found: dict[tuple[str, str], tuple[str, bool]] = {}
    versions = [("v1", "/api/v1")]
    _, groups = client.request("GET", "/apis")
    for group in json.loads(groups)["groups"]:
        versions += [(v["groupVersion"], f"/apis/{v['groupVersion']}") for v in group["versions"]]
    for api_version, path in versions:
        status, data = client.request("GET", path)
        assert status == 200, (path, data)
        for resource in json.loads(data)["resources"]:
            if "/" not in resource["name"]:
                found.setdefault((api_version, resource["kind"]), (resource["name"], resource["namespaced"]))
    return found


def collection(obj: Object, resources: dict[tuple[str, str], tuple[str, bool]]) -> str:
    resource, namespaced = resources[(obj["apiVersion"], obj["kind"])]
    base = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
    namespace = f"/namespaces/{obj['metadata'].get('namespace', 'corpus')}" if namespaced else ""
    return f"{base}{namespace}/{resource}"


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside `value` (dict keys and list indexes)."""
    if at:
        yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*at, index))


def mutate(obj: Object, rng: random.Random) -> Object:
    """`obj` with one value replaced by a value of another type, or a null put in a map or list."""
    out = copy.deepcopy(obj)
    candidates = [p for p in paths(out) if p[0] not in ("apiVersion", "kind") and p[:2] != ("metadata", "name")]
    where = rng.choice(candidates) if candidates else ("metadata",)
    parent = out
    for step in where[:-1]:
        parent = parent[step]
    target = parent.get(where[-1]) if isinstance(parent, dict) else parent[where[-1]]
    if isinstance(target, dict) and rng.random() < 0.3:
        target[rng.choice([*target, "extra"])] = None if rng.random() < 0.7 else rng.choice(WRONG_VALUES)
    elif isinstance(target, list) and rng.random() < 0.3:
        target.append(None if rng.random() < 0.7 else rng.choice(WRONG_VALUES))
    else:
        parent[where[-1]] = rng.choice(WRONG_VALUES)
    return out


def load_manifests() -> list[Object]:
    docs = []
    for path in MANIFESTS:
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    # A binding is a subresource of its pod: not created through a collection.
    return [doc for doc in docs if doc["kind"] != "Binding"]


BAD_INTS = ["abc", "-1", "1.5", "1e3", "", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
            "99999999999999999999999", "0x10", " 1"]
LIST_PARAMS = {
    "limit": BAD_INTS,
    "timeoutSeconds": BAD_INTS,
    "resourceVersion": ["abc", "-1", "99999999999999999999", "1.5", "0", ""],
    "resourceVersionMatch": ["bogus", "Exact", "NotOlderThan"],
    "continue": ["abc", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiIn0", "%00"],
    "fieldSelector": ["a", "metadata.name==", "!!", "metadata.name in (a)", "metadata.name=%zz", "=x",
                      "metadata.namespace!=a,", "spec.bogus=1"],
    "labelSelector": ["!!", "a in (", "a=b=c", "a,", "x notin ()", "a==b==c", "-", "a" * 70],
    "watch": ["abc", "maybe", "0", "1"],
    "allowWatchBookmarks": ["abc", "2"],
    "sendInitialEvents": ["abc", "true", "false"],
}
WATCH_PARAMS = ("watch", "sendInitialEvents", "allowWatchBookmarks")
DELETE_PARAMS = {
    "gracePeriodSeconds": BAD_INTS,
    "propagationPolicy": ["", "bogus", "orphan", "Orphan"],
    "dryRun": ["abc", "", "All", "all"],
    "orphanDependents": ["abc", "true"],
}
DELETE_BODIES: list[Any] = [
    {"gracePeriodSeconds": "abc"}, {"gracePeriodSeconds": 1.5}, {"gracePeriodSeconds": 2**64},
    {"gracePeriodSeconds": None}, {"gracePeriodSeconds": -1}, {"propagationPolicy": 5}, {"propagationPolicy": None},
    {"preconditions": "x"}, {"preconditions": {"uid": 5}}, {"preconditions": {"resourceVersion": []}},
    {"orphanDependents": "yes"}, {"dryRun": "All"}, {"dryRun": [5]}, {"dryRun": ["bogus"]}, [], "x", 5, None,
    {"kind": "Pod"}, {"apiVersion": 5}, {"gracePeriodSeconds": DEEP_OBJECT},
]
WRITE_PARAMS = {
    "fieldValidation": ["bogus", "strict", ""],
    "fieldManager": ["", "x" * 200, "\x00"],
    "dryRun": ["bogus", ""],
}
PATCH_BODIES: dict[str, list[Any]] = {
    "application/json-patch+json": [
        [], {}, "x", None, 5, [5], [{}], [{"op": "bogus", "path": "/a"}], [{"op": "add"}],
        [{"op": "add", "path": "/metadata/labels/a", "value": None}], [{"op": "add", "path": 5, "value": 1}],
        [{"op": "replace", "path": "/metadata", "value": None}], [{"op": "remove", "path": "/metadata/name"}],
        [{"op": "copy", "from": "/zz", "path": "/a"}], [{"op": "move", "from": "/metadata", "path": "/metadata/x"}],
        [{"op": "test", "path": "/kind", "value": 5}], [{"op": "add", "path": "/metadata/labels/a", "value": 5}],
        [{"op": "add", "path": "/metadata/annotations", "value": DEEP_OBJECT}],
        [{"op": "add", "path": "/spec", "value": DEEP_LIST}], [{"op": "add", "path": "/-", "value": 1}],
        [{"op": "add", "path": "/metadata/finalizers/99", "value": "a"}],
    ],
    "application/merge-patch+json": [
        [], "x", None, 5, {"metadata": None}, {"metadata": {"labels": {"a": None, "b": 5}}}, {"spec": None},
        {"spec": 5}, {"kind": None}, {"apiVersion": 5}, {"metadata": {"resourceVersion": "abc"}},
        {"metadata": {"annotations": DEEP_OBJECT}}, {"x": DEEP_LIST}, {"metadata": {"finalizers": [None]}},
        {"metadata": {"ownerReferences": [{}]}},
    ],
    "application/strategic-merge-patch+json": [
        [], "x", None, 5, {"$patch": "bogus"}, {"$patch": "delete"}, {"$patch": "replace"},
        {"metadata": {"$setElementOrder/finalizers": 5}}, {"metadata": {"$deleteFromPrimitiveList/finalizers": 5}},
        {"metadata": {"$retainKeys": 5}}, {"metadata": {"finalizers": [{"$patch": "delete"}]}},
        {"metadata": {"ownerReferences": [{"$patch": "delete"}]}}, {"metadata": {"ownerReferences": [None]}},
        {"spec": None}, {"metadata": {"labels": DEEP_OBJECT}}, {"spec": {"$patch": "merge", "x": DEEP_LIST}},
    ],
    "application/apply-patch+yaml": [
        [], "x", None, 5, "a: [", "{", "metadata: 5", "apiVersion: v1", {"apiVersion": 5, "kind": []},
        "&a [*a]",
    ],
}


def test_fuzzed_requests_never_answer_5xx_or_log_a_traceback(server, tracebacks: TracebackCatcher) -> None:
    rng = random.Random(SEED)
    client = Client(server.port, server.ca_file, server.token)
    manifests = load_manifests()
    resources, originals = create_originals(client, manifests)
    fuzz_writes(client, rng, manifests, resources, originals)
    fuzz_patches(client, rng, originals)
    fuzz_queries(client, rng, manifests, resources)
    failures = [answer for answer in client.answers if answer[0] >= 500 and not _expected_500(answer)]
    assert not failures, "\n".join([*map(repr, failures[:20]), *tracebacks.records[:3]])
    assert not tracebacks.records, "\n\n".join(tracebacks.records[:5])


Resources = dict[tuple[str, str], tuple[str, bool]]


def create_originals(client: Client, manifests: list[Object]) -> tuple[Resources, list[tuple[Object, str]]]:
    """Every manifest created as it is (the objects the updates and patches change), and where each is."""
    resources = discover(client)
    originals: list[tuple[Object, str]] = []
    for obj in manifests:
        gvk = (obj["apiVersion"], obj["kind"])
        if gvk not in resources:  # a custom resource: once its CRD is served
            resources = wait_for(lambda gvk=gvk: (found := discover(client)).get(gvk) and found)
        status, data = client.request("POST", collection(obj, resources), encode(obj))
        assert status == 201, (obj["kind"], data)
        name = obj.get("metadata", {}).get("name", "review")  # reviews have no name (nor path)
        originals.append((obj, f"{collection(obj, resources)}/{name}"))
    for obj, path in originals:
        if obj["kind"] in SERVING_KINDS:
            assert client.request("DELETE", path)[0] == 200
    return resources, originals


def fuzz_writes(client: Client, rng: random.Random, manifests: list[Object], resources: Resources,
                originals: list[tuple[Object, str]]) -> None:
    """Each manifest mutated, created as a new object and sent as an update of the original."""
    counter = 0
    for obj, (_, path) in zip(manifests, originals, strict=True):
        # Webhooks and API services that exist would call services that do not: those are dry runs.
        dry_run = "?dryRun=All" if obj["kind"] in SERVING_KINDS else ""
        for _ in range(MUTATIONS_PER_MANIFEST):
            counter += 1
            bad = mutate(obj, rng)
            if isinstance(bad.get("metadata"), dict) and "name" in bad["metadata"]:
                bad["metadata"]["name"] = f"fz-{counter}"  # a new object each time
            if rng.random() < 0.3:
                bad = mutate(bad, rng)  # two fields wrong at once
            # JSON is YAML too: a quarter of the bodies go through the YAML decoder.
            content_type = "application/yaml" if counter % 4 == 0 else "application/json"
            client.request("POST", collection(obj, resources) + dry_run, encode(bad), content_type)
        for _ in range(MUTATIONS_PER_MANIFEST // 2):
            client.request("PUT", path + dry_run, encode(mutate(obj, rng)))


def fuzz_patches(client: Client, rng: random.Random, originals: list[tuple[Object, str]]) -> None:
    """The fixed bad bodies, then the manifest with a field of the wrong type as each kind of patch, and a JSON
    patch replacing one of its values with one of the wrong type."""
    for obj, path in originals:
        dry_run = "dryRun=All&" if obj["kind"] in SERVING_KINDS else ""  # an apply creates what is not there
        for content_type, bodies in PATCH_BODIES.items():
            query = f"?{dry_run}fieldManager=fuzz" if "apply" in content_type else f"?{dry_run}"
            for body in rng.sample(bodies, 4):
                raw = body.encode() if isinstance(body, str) and "apply" in content_type else encode(body)
                client.request("PATCH", path + query, raw, content_type)
            client.request("PATCH", path + query, encode(mutate(obj, rng)), content_type)
        where = rng.choice(list(paths(obj)))
        pointer = "".join(f"/{str(step).replace('~', '~0').replace('/', '~1')}" for step in where)
        operation = [{"op": "replace", "path": pointer, "value": rng.choice(WRONG_VALUES)}]
        client.request("PATCH", path, encode(operation), "application/json-patch+json")


def fuzz_queries(client: Client, rng: random.Random, manifests: list[Object], resources: Resources) -> None:
    """Bad list, watch, write and delete options on a sample of the resources."""
    for round_, obj in enumerate(rng.sample(manifests, 12)):
        base = collection(obj, resources)
        for name, values in LIST_PARAMS.items():
            if name in WATCH_PARAMS and round_ >= 2:
                continue  # a watch that is valid lasts its timeout: two rounds of these
            extra = "&timeoutSeconds=1" if name in WATCH_PARAMS else "" if name == "limit" else "&limit=1"
            for value in values:
                client.request("GET", f"{base}?{name}={quote(value)}{extra}")
        for name, values in WRITE_PARAMS.items():
            for value in values:
                client.request("POST", f"{base}?{name}={quote(value)}", encode(mutate(obj, rng)))
        for name, values in DELETE_PARAMS.items():
            for value in values:
                client.request("DELETE", f"{base}/fz-none?{name}={quote(value)}")
                client.request("DELETE", f"{base}?dryRun=All&{name}={quote(value)}&labelSelector=fuzz%3Dnone")
        for body in DELETE_BODIES:
            client.request("DELETE", f"{base}/fz-none", encode(body))


def _expected_500(answer: tuple[int, str, str, bytes, bytes]) -> bool:
    """A 500 kube-apiserver answers too: its Status has no reason (Unknown) and the expected message."""
    _, method, _, _, data = answer
    status = json.loads(data)
    return "reason" not in status and any(
        method == m and status["message"].startswith(start) for m, start, _ in EXPECTED_500)


# ---- The fuzz run's causes, one by one, with kube-apiserver's answers ----

CM_PATH = "/api/v1/namespaces/default/configmaps"


def _deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize(("method", "path", "body", "status", "message"), [
    ("GET", f"{CM_PATH}?limit=9223372036854775807", None, 200, None),
    ("GET", f"{CM_PATH}?limit=9223372036854775808", None, 400,
     'strconv.ParseInt: parsing "9223372036854775808": value out of range'),
    ("GET", f"{CM_PATH}?timeoutSeconds=abc", None, 400, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("GET", f"{CM_PATH}?resourceVersion=99999999999999999999", None, 400,
     'invalid resource version: resourceVersion: Invalid value: "99999999999999999999": strconv.ParseUint: '
     'parsing "99999999999999999999": value out of range'),
    ("POST", CM_PATH, {"metadata": {"name": "label-null", "labels": {"a": None}}}, 201, None),
    ("POST", CM_PATH, {"metadata": {"name": "rv-abc", "resourceVersion": "abc"}}, 201, None),
    ("POST", CM_PATH, {"metadata": {"name": "rv-5", "resourceVersion": "5"}}, 500,
     "resourceVersion should not be set on objects to be created"),
    ("POST", CM_PATH, {"metadata": {"name": "bad-b64"}, "binaryData": {"a": "YWJj", "b": "!!"}}, 400,
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0'),
    ("POST", "/api/v1/namespaces/default/secrets", {"metadata": {"name": "bad-b64"}, "data": {"a": "YQ="}}, 400,
     'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'),
    ("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": {"name": "value-null"}, "value": None},
     201, None),
    ("POST", "/api/v1/nodes", {"metadata": {"name": "spec-null"}, "spec": None}, 201, None),
    ("DELETE", f"{CM_PATH}/label-null?gracePeriodSeconds=abc", None, 400,
     'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("DELETE", f"{CM_PATH}/label-null", {"gracePeriodSeconds": "abc"}, 400,
     "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
     {"metadata": {"name": "min-list"}, "spec": {"minAvailable": [1]}}, 400,
     'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: json: cannot unmarshal '
     "array into Go struct field PodDisruptionBudgetSpec.spec.minAvailable of type int32"),
    ("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
     {"metadata": {"name": "min-bool"}, "spec": {"minAvailable": True}}, 400,
     'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: json: cannot unmarshal '
     "bool into Go struct field PodDisruptionBudgetSpec.spec.minAvailable of type int32"),
    ("POST", "/apis/networking.k8s.io/v1/servicecidrs", {"metadata": {"name": "cidr-null"},
                                                         "spec": {"cidrs": [None]}}, 422, None),
    ("POST", "/api/v1/namespaces/default/events", {"metadata": {}, "involvedObject": {"namespace": "default"}},
     400, "Name parameter required."),
    ("PATCH", f"{CM_PATH}/label-null", [{"op": "add", "path": 5, "value": 1}], 422,
     "add operation failed to decode path: missing value"),
    ("POST", CM_PATH, f'{{"metadata":{{"name":"deep-1000"}},"x":{_deep(1000)}}}', 201, None),
    ("POST", "/apis/apps/v1/namespaces/default/controllerrevisions",
     f'{{"metadata":{{"name":"deep-5000"}},"revision":1,"data":{_deep(5000)}}}', 201, None),
    ("POST", CM_PATH, f'{{"metadata":{{"name":"deep-10001"}},"x":{_deep(10_001)}}}', 400,
     "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
     "error: invalid character '{' exceeded max depth ({\"metadata\":{\"name\":\"deep-1000 ...)"),
])
def test_the_fuzz_runs_causes(server, tracebacks, method, path, body, status, message) -> None:
    content_type = "application/json-patch+json" if method == "PATCH" else "application/json"
    resp = server.request(method, path, body, {"Content-Type": content_type})
    assert resp.status == status, resp.body
    if message is not None:
        assert resp.json()["message"] == message
    assert not tracebacks.records


def test_null_label_and_wrapped_base64_are_stored_as_go_decodes_them(server) -> None:
    body = {"metadata": {"name": "wrapped", "labels": {"a": None}}, "binaryData": {"b": "YWJj\r\nZGVm"}}
    assert server.request("POST", CM_PATH, body).status == 201
    stored = server.request("GET", f"{CM_PATH}/wrapped").json()
    assert (stored["metadata"]["labels"], stored["binaryData"]) == ({"a": ""}, {"b": "YWJjZGVm"})
    secret = {"metadata": {"name": "wrapped"}, "data": {"b": "YWJj\nZGVm"}}
    assert server.request("POST", "/api/v1/namespaces/default/secrets", secret).status == 201
    assert server.request("GET", "/api/v1/namespaces/default/secrets/wrapped").json()["data"] == {"b": "YWJjZGVm"}
    priority = {"metadata": {"name": "stored-value-null"}, "value": None}
    assert server.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority).json()["value"] == 0
    revisions = "/apis/apps/v1/namespaces/default/controllerrevisions"
    body = f'{{"metadata":{{"name":"stored-deep"}},"revision":1,"data":{_deep(5000)}}}'
    assert server.request("POST", revisions, body, {"Content-Type": "application/json"}).status == 201
    revision = server.request("GET", f"{revisions}/stored-deep")
    assert revision.status == 200 and revision.body.count(b'{"a":') == 5000


def test_an_update_repeating_a_node_port_is_invalid(server) -> None:
    """Kubernetes validates an update before it allocates: a repeated nodePort is a Duplicate value (422)."""
    services = "/api/v1/namespaces/default/services"
    svc = {"metadata": {"name": "repeated-node-port"},
           "spec": {"type": "NodePort", "selector": {"a": "b"}, "ports": [{"name": "a", "port": 80}]}}
    assert server.request("POST", services, svc).status == 201
    current = server.request("GET", f"{services}/repeated-node-port").json()
    node_port = current["spec"]["ports"][0]["nodePort"]
    current["spec"]["ports"].append({"name": "b", "port": 81, "nodePort": node_port})
    resp = server.request("PUT", f"{services}/repeated-node-port", current)
    assert resp.status == 422, resp.body
    assert resp.json()["details"]["causes"] == [
        {"reason": "FieldValueDuplicate", "message": f"Duplicate value: {node_port}", "field": "spec.ports[1].nodePort"}]
