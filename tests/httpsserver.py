"""A small HTTPS JSON server for tests that need a webhook (conversion, admission): a throwaway CA, a
certificate for 127.0.0.1 and a service name, and answers computed per path."""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import os
import ssl
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Answer = Callable[[Any], tuple[int, Any]]  # request JSON -> (status code, JSON answer)


def certificate(subject: str, key: Any, issuer: x509.Name | None, issuer_key: Any,
                sans: list[x509.GeneralName], ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name).public_key(key.public_key()) \
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5)) \
        .not_valid_after(now + datetime.timedelta(days=1)) \
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def serving_files(directory: str, sans: list[x509.GeneralName], subject: str = "webhook",
                  ) -> tuple[str, str, bytes]:
    """A throwaway CA and a serving certificate it signed for `sans`: (cert file, key file, CA PEM)."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate(f"{subject}-ca", ca_key, None, ca_key, [], True)
    cert = certificate(subject, key, ca.subject, ca_key, sans, False)
    cert_file, key_file = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    with open(cert_file, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_file, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_file, key_file, ca.public_bytes(serialization.Encoding.PEM)


class HTTPSJSONServer:
    """Answers JSON POSTs by path (`answers`), recording each request body and query string."""

    def __init__(self, dns_name: str = "webhook.default.svc", host: str = "127.0.0.1",
                 extra_ips: tuple[str, ...] = ()) -> None:
        self.answers: dict[str, Answer] = {}
        self.received: dict[str, list[Any]] = {}
        self.queries: dict[str, list[str]] = {}
        sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", *extra_ips)]
        sans.append(x509.DNSName(dns_name))
        cert_file, key_file, ca_pem = serving_files(tempfile.mkdtemp(), sans)
        self.ca_bundle = base64.b64encode(ca_pem).decode()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.httpd = http.server.ThreadingHTTPServer((host, 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def respond(self, path: str, request: Any) -> tuple[int, bytes, str]:
        """(status code, body, content type) for one request."""
        code, answer = self.answers.get(path, lambda r: (404, {}))(request)
        return code, json.dumps(answer).encode(), "application/json"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                path, _, query = self.path.partition("?")
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.received.setdefault(path, []).append(request)
                server.queries.setdefault(path, []).append(query)
                code, body, content_type = server.respond(path, request)
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
