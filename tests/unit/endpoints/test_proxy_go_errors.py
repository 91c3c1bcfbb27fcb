"""The proxy's and the aggregator's error texts for a failed round trip, worded as Go's transport words them."""

from __future__ import annotations

import errno
import socket
from types import SimpleNamespace

import aiohttp
import pytest

from kube_apiserver.endpoints.proxy.transport import go_error

KEY = SimpleNamespace(host="10.0.0.7", port=443, ssl=True)


def connector_error(os_error: OSError) -> aiohttp.ClientConnectorError:
    return aiohttp.ClientConnectorError(KEY, os_error)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("os_error", "text"),
    [
        # asyncio's connect raises them with the address as their text
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed ('10.0.0.7', 443)"),
         "dial tcp 10.0.0.7:443: connect: connection refused"),
        (OSError(errno.EHOSTUNREACH, "Connect call failed ('10.0.0.7', 443)"), "dial tcp 10.0.0.7:443: connect: no route to host"),
        (OSError(errno.ENETUNREACH, "Network is unreachable"),
         "dial tcp 10.0.0.7:443: connect: network is unreachable"),
        (ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
         "read tcp 10.0.0.7:443: read: connection reset by peer"),
    ],
)
def test_a_failed_dial_reads_as_go_words_it(os_error: OSError, text: str) -> None:
    assert go_error(connector_error(os_error), "10.0.0.7", 443) == text


def test_an_unknown_host_is_a_failed_lookup() -> None:
    err = aiohttp.ClientConnectorDNSError(KEY, socket.gaierror(socket.EAI_NONAME, "Name or service not known"))  # type: ignore[arg-type]
    assert go_error(err, "backend.invalid", 443) == "dial tcp: lookup backend.invalid: no such host"


def test_an_ipv6_address_is_bracketed() -> None:
    err = connector_error(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))
    assert go_error(err, "::1", 8443) == "dial tcp [::1]:8443: connect: connection refused"
