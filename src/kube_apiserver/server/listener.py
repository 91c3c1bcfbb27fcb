"""The serving socket, bound: where a port in use or an address not ours fails, in Go's words (one line, as
net.Listen's error wrapped by the serving options)."""

from __future__ import annotations

import socket

from ..apimachinery import goos


def bind(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:  # --permit-port-sharing: replicas on one machine listen on one address
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise OSError(f"failed to listen on {address}: listen tcp {address}: bind: {goos.reason(err)}") from None
    except BaseException:
        sock.close()
        raise
    return sock
