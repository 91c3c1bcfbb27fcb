"""Records the reference answers that tests/integration/test_reference_defaults.py and
test_invalid_corpus.py compare against. Not a test (pytest does not collect it): run it by hand against
the reference control plane of ../shared/reference (kube-apiserver v1.20.2):

    WITH_KCM=1 bash ../shared/reference/refcluster.sh start   # the controllers make the default ServiceAccount
    python3 tests/reference/record.py [--server https://127.0.0.1:16443] [--token admintoken]
    bash ../shared/reference/refcluster.sh stop

It writes tests/data/reference/defaults-v1.20.2.json and invalid-v1.20.2.json with the server's version and
the date. Kinds that are GA in v1.34 but beta in v1.20 are sent as the beta version v1.20 serves and the
answer is relabelled with the v1.34 apiVersion (recorded as `postedAs`)."""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import pathlib
import ssl
import sys
from dataclasses import dataclass
from typing import Any

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "integration"))

import test_invalid_corpus as corpus  # noqa: E402
import test_reference_defaults as defaults  # noqa: E402

# v1.34 GA version -> what v1.20 serves for the same kind.
V120_VERSIONS = {
    ("batch/v1", "CronJob"): "batch/v1beta1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "autoscaling/v2beta2",
    ("policy/v1", "PodDisruptionBudget"): "policy/v1beta1",
    ("discovery.k8s.io/v1", "EndpointSlice"): "discovery.k8s.io/v1beta1",
}


@dataclass
class Response:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Reference:
    def __init__(self, url: str, token: str):
        host, port = url.removeprefix("https://").rsplit(":", 1)
        self.host, self.port, self.token = host, int(port), token
        self.ctx = ssl._create_unverified_context()  # the reference serves a self-signed certificate

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Response:
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        hdrs = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        if body is not None:
            body = json.dumps(to_v120(body))
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, to_v120_path(path), body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return Response(resp.status, data)


def to_v120(obj: Any) -> Any:
    if isinstance(obj, dict) and (obj.get("apiVersion"), obj.get("kind")) in V120_VERSIONS:
        return {**obj, "apiVersion": V120_VERSIONS[obj["apiVersion"], obj["kind"]]}
    return obj


def to_v120_path(path: str) -> str:
    for (ga, kind), beta in V120_VERSIONS.items():
        plural = defaults.PLURALS[kind]
        if path.startswith(f"/apis/{ga}/") and f"/{plural}" in path:
            return path.replace(f"/apis/{ga}/", f"/apis/{beta}/", 1)
    return path


def to_v134(obj: Any, ga: str) -> Any:
    """Relabel an answer given for the beta version with the GA apiVersion it stands for."""
    if isinstance(obj, dict) and obj.get("apiVersion") != ga:
        beta = obj.get("apiVersion")
        obj["apiVersion"] = ga
        for entry in (obj.get("metadata") or {}).get("managedFields") or []:
            if entry.get("apiVersion") == beta:
                entry["apiVersion"] = ga
    return obj


def record_defaults(ref: Reference) -> dict[str, Any]:
    results = {}
    for name, obj in defaults.load_inputs().items():
        status, got = defaults.create_and_delete(ref.request, obj)
        entry = {"status": status, "object": defaults.normalize(to_v134(got, obj["apiVersion"]))}
        if to_v120(obj) is not obj:
            entry["postedAs"] = to_v120(obj)["apiVersion"]
        results[name] = entry
        print(f"defaults {name}: {status}")
    return results


def record_invalid(ref: Reference) -> dict[str, Any]:
    results = {}
    for name, docs in corpus.load_cases().items():
        status, body = corpus.run_case(ref.request, docs)
        results[name] = {"status": status, "body": body}
        print(f"invalid {name}: {status} {body.get('reason') if isinstance(body, dict) else ''}")
    return results


def write(path: pathlib.Path, ref: Reference, results: dict[str, Any]) -> None:
    version = ref.request("GET", "/version").json()["gitVersion"]
    doc = {"reference": {"server": "kube-apiserver", "version": version,
                         "recorded": datetime.date.today().isoformat(),
                         "by": "tests/reference/record.py against ../shared/reference/refcluster.sh (WITH_KCM=1)"},
           "results": results}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="https://127.0.0.1:16443")
    parser.add_argument("--token", default="admintoken")
    parser.add_argument("--only", choices=("defaults", "invalid"))
    args = parser.parse_args()
    ref = Reference(args.server, args.token)
    if args.only in (None, "defaults"):
        write(defaults.RECORDED, ref, record_defaults(ref))
    if args.only in (None, "invalid"):
        write(corpus.RECORDED, ref, record_invalid(ref))


if __name__ == "__main__":
    main()
