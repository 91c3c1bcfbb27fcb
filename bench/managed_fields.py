"""The managedFields stage alone: FieldManager.update on k8sbench's writes, CPU µs per call.

    python3 bench/managed_fields.py [-n 2000] [--rounds 5] [--profile FILE]

Workloads, as bench/write_path.py's requests reach `RequestScope.track`:
  create  a ConfigMap (4 keys of 252 B, 2 labels) against the kind's empty object
  update  the stored ConfigMap (one Update entry) with one key changed, the GET's managedFields sent back
  patch   the same, as a merge patch leaves it (the live entries in the patched object)
  pod     a defaulted Pod (one container) against the kind's empty object
Prints the median and the best of the rounds per workload (the best is the steadier on a shared machine); `--src` measures another tree's src (e.g. a worktree taken
before a change) in the same process layout, for a before/after comparison run back to back."""

from __future__ import annotations

import argparse
import base64
import copy
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]


def rand_str(rnd: random.Random) -> str:
    return base64.b64encode(rnd.randbytes(189)).decode()  # 252 characters, as k8sbench's


def configmap(rnd: random.Random) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm-00001", "namespace": "bench", "labels": {"app": "k8sbench", "shard": "1"}},
        "data": {f"k{j}": rand_str(rnd) for j in range(4)},
    }


def defaulted_pod() -> Obj:
    """A k8sbench pod after defaulting (what the field manager sees on a pod create)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod-00001", "namespace": "bench", "labels": {"app": "k8sbench"}},
        "spec": {
            "automountServiceAccountToken": False,
            "containers": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {},
    }


def stored(obj: Obj, entries: Any) -> Obj:
    out = copy.deepcopy(obj)
    out["metadata"].update(
        uid="8c5d1e5a-0000-4000-8000-000000000001",
        resourceVersion="1001",
        creationTimestamp="2026-01-01T00:00:00Z",
        managedFields=entries,
    )
    return out


def workloads(manager_cls: Any, schemas: Any) -> dict[str, tuple[Any, Any, Obj]]:
    source = schemas[1](schemas[0].definitions, schemas[0].schema_name)
    clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
    cms = manager_cls(source.for_kind("", "v1", "ConfigMap"), "v1", kind="ConfigMap", clock=clock)
    pods = manager_cls(
        source.for_kind("", "v1", "Pod"), "v1", kind="Pod", reset_fields=[("status",)], clock=clock
    )
    rnd = random.Random(1)
    created = cms.update(None, configmap(rnd), "k8sbench")
    live = stored(created, created["metadata"]["managedFields"])
    updated = copy.deepcopy(live)
    updated["data"]["k0"] = rand_str(rnd)
    patched = copy.deepcopy(live)
    patched["data"]["k1"] = rand_str(rnd)
    return {
        "create": (cms, None, configmap(rnd)),
        "update": (cms, live, updated),
        "patch": (cms, live, patched),
        "pod": (pods, None, defaulted_pod()),
    }


def measure(call: Any, count: int) -> float:
    start = time.thread_time()
    for _ in range(count):
        call()
    return (time.thread_time() - start) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=2000, help="calls per workload per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--src", default="", help="the src directory of the tree to measure")
    parser.add_argument("--profile", default="", help="write a cProfile of one round of every workload here")
    args = parser.parse_args()
    if args.src:
        sys.path.insert(0, args.src)
    from kube_apiserver.api import schemas
    from kube_apiserver.apimachinery.managedfields import FieldManager
    from kube_apiserver.apimachinery.openapischema import SchemaSource

    print(f"kube_apiserver from {schemas.__file__.rsplit('/api/', 1)[0]}")
    cases = workloads(FieldManager, (schemas, SchemaSource))
    calls = {
        name: (lambda m=m, live=live, new=new: m.update(live, new, "k8sbench"))
        for name, (m, live, new) in cases.items()
    }
    for call in calls.values():
        measure(call, 50)  # warm-up: derived schema data
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.thread_time)
        profiler.runcall(lambda: [measure(call, args.n) for call in calls.values()])
        profiler.dump_stats(args.profile)
    figures: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            figures[name].append(measure(call, args.n))
    print(
        f"FieldManager.update, CPU µs per call (median and best of {args.rounds} rounds of {args.n}; "
        f"src={args.src or 'this tree'})"
    )
    for name, values in figures.items():
        print(f"  {name:<7} median {statistics.median(values):7.1f}   best {min(values):7.1f}")


if __name__ == "__main__":
    main()
