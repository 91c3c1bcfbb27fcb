"""/debug/testing/*: what a test suite drives the server with when --enable-testing-endpoints is set (the
library kube_apiserver.testing uses them, in-process or against a subprocess). Each mechanism installs its own
unlisted paths under /debug/testing/; off by default, authorized as any non-resource URL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .testing_clock import install_testing_clock
from .testing_faults import install_faults_and_history
from .testing_snapshots import install_snapshot_endpoints
from .testing_users import install_testing_users

if TYPE_CHECKING:
    from ..server.generic_api_server import GenericAPIServer
    from .server import ServerConfig

TESTING_PREFIX = "/debug/testing"


def install_testing_endpoints(config: ServerConfig, server: GenericAPIServer) -> None:
    """Each mechanism's paths: snapshots (/debug/testing/snapshots...), faults (/debug/testing/faults),
    request history (/debug/testing/requests), users' tokens (/debug/testing/users), the clock
    (/debug/testing/clock)."""
    install_faults_and_history(config, server)
    install_snapshot_endpoints(config, server)
    install_testing_users(config, server)
    install_testing_clock(config, server)
