"""Start-to-ready and stop times of kube_apiserver.testing.APIServer: in-process (a fresh data dir, one with a
shared PKI, one copied from a bootstrapped Template) and as a subprocess, next to envtest's and kind's
published start times. Start-to-ready: from APIServer.start() to /readyz answering 200 (every post-start hook
done, the server's and the embedded controllers' informers synced); "first answer" is start to a GET answered
right after. Stop: until the server's thread has ended and its
garbage is collected (which the next start would otherwise pay for, every other time). The first start of the
process, which imports the server, is shown apart.

    python bench/testing_server.py [runs]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from kube_apiserver.testing import PKI, APIServer, Template

# Published figures for the tools test suites use today (a cold start to a usable API server).
PUBLISHED = (
    ("envtest (kube-apiserver + etcd binaries)", "5-15 s"),
    ("kind (a node container)", "12-17 s"),
)


def timed_runs(make: Callable[[], APIServer], runs: int) -> tuple[list[float], list[float], list[float]]:
    """Start to ready, start to a first request answered, and stop, per run."""
    starts, answers, stops = [], [], []
    for _ in range(runs):
        server = make()
        began = time.perf_counter()
        server.start()
        starts.append(time.perf_counter() - began)
        server.request("GET", "/api/v1/namespaces/default")
        answers.append(time.perf_counter() - began)
        began = time.perf_counter()
        server.stop()
        stops.append(time.perf_counter() - began)
    return starts, answers, stops


def line(label: str, values: list[float]) -> str:
    return (
        f"{label:<56} best {min(values) * 1000:5.0f} ms   median {statistics.median(values) * 1000:5.0f} ms"
    )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    began = time.perf_counter()
    APIServer().start().stop()
    print(f"{'first start and stop (imports the server)':<56} {(time.perf_counter() - began) * 1000:5.0f} ms")
    pki, template = PKI.create(), Template.create()
    for label, make in (
        ("thread, fresh data dir", lambda: APIServer()),
        ("thread, shared PKI", lambda: APIServer(pki=pki)),
        ("thread, from a Template", lambda: APIServer(template=template)),
    ):
        starts, answers, stops = timed_runs(make, runs)
        print(line(f"{label}: start to ready", starts))
        print(line(f"{label}: start to first answer", answers))
        print(line(f"{label}: stop", stops))
    for label, make in (
        ("subprocess, fresh data dir", lambda: APIServer(mode="subprocess")),
        ("subprocess, from a Template", lambda: APIServer(mode="subprocess", template=template)),
    ):
        starts, _, _ = timed_runs(make, max(1, runs // 2))
        print(line(f"{label}: start to ready", starts))
    pki.remove()
    template.remove()
    print("published start times:")
    for tool, figure in PUBLISHED:
        print(f"  {tool:<54} {figure}")


if __name__ == "__main__":
    main()
