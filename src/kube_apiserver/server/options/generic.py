"""Generic server flags (k8s.io/apiserver/pkg/server/options/server_run_options.go)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kube_apiserver import logs
from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.server.options.serving import SecureServingOptions, is_unspecified

LOOPBACK_ADVERTISE_ADDRESS = "127.0.0.1"
LOOPBACK_ADVERTISE_ADDRESS_V6 = "::1"


@dataclass
class GenericServerRunOptions:
    advertise_address: str | None = None
    cors_allowed_origins: list[str] = field(default_factory=list)
    hsts_directives: list[str] = field(default_factory=list)
    external_host: str = ""
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0
    goaway_chance: float = 0.0
    livez_grace_period: float = 0.0
    min_request_timeout: int = 1800
    storage_initialization_timeout: float = 60.0
    shutdown_delay_duration: float = 0.0
    shutdown_send_retry_after: bool = False
    shutdown_watch_termination_grace_period: float = 0.0

    def add_flags(self, fs: FlagSet) -> None:
        fs.ip_var(self, "advertise_address", "advertise-address", _ADVERTISE_HELP)
        fs.string_slice_var(self, "cors_allowed_origins", "cors-allowed-origins", _CORS_HELP)
        fs.string_slice_var(self, "hsts_directives", "strict-transport-security-directives",
                            "List of directives for HSTS, comma separated. If this list is empty, then HSTS "
                            "directives will not be added. Example: 'max-age=31536000,includeSubDomains,preload'")
        fs.string_var(self, "external_host", "external-hostname", _EXTERNAL_HOST_HELP)
        fs.int_var(self, "max_requests_inflight", "max-requests-inflight", _INFLIGHT_HELP)
        fs.int_var(self, "max_mutating_requests_inflight", "max-mutating-requests-inflight", _MUTATING_HELP)
        fs.duration_var(self, "request_timeout", "request-timeout", _REQUEST_TIMEOUT_HELP)
        fs.float_var(self, "goaway_chance", "goaway-chance", _GOAWAY_HELP)
        fs.duration_var(self, "livez_grace_period", "livez-grace-period", _LIVEZ_HELP)
        fs.int_var(self, "min_request_timeout", "min-request-timeout", _MIN_REQUEST_TIMEOUT_HELP)
        fs.duration_var(
            self, "storage_initialization_timeout", "storage-initialization-timeout", _STORAGE_INIT_HELP
        )
        fs.duration_var(self, "shutdown_delay_duration", "shutdown-delay-duration", _SHUTDOWN_DELAY_HELP)
        fs.bool_var(self, "shutdown_send_retry_after", "shutdown-send-retry-after", _RETRY_AFTER_HELP)
        fs.duration_var(
            self,
            "shutdown_watch_termination_grace_period",
            "shutdown-watch-termination-grace-period",
            _WATCH_GRACE_HELP,
        )

    def default_advertise_address(self, secure: SecureServingOptions, ipv6: bool = False) -> None:
        """The bind address if it is a specific one, else loopback (127.0.0.1, or ::1 when the service
        network is IPv6): unlike kube-apiserver we never guess a network interface."""
        if not is_unspecified(self.advertise_address):
            return
        bind = secure.bind_address
        loopback = LOOPBACK_ADVERTISE_ADDRESS_V6 if ipv6 else LOOPBACK_ADVERTISE_ADDRESS
        self.advertise_address = loopback if is_unspecified(bind) else bind

    def default_external_host(self) -> None:
        if not self.external_host:
            self.external_host = self.advertise_address or LOOPBACK_ADVERTISE_ADDRESS
            logs.info("external host was not specified, using %s", self.external_host)

    def validate(self) -> list[str]:
        errors = [message for failed, message in self._checks() if failed]
        errors.extend(_cors_errors(self.cors_allowed_origins))
        errors.extend(_hsts_errors(self.hsts_directives))
        return errors

    def _checks(self) -> list[tuple[bool, str]]:
        return [
            (self.livez_grace_period < 0, "--livez-grace-period can not be a negative value"),
            (self.max_requests_inflight < 0, "--max-requests-inflight can not be negative value"),
            (
                self.max_mutating_requests_inflight < 0,
                "--max-mutating-requests-inflight can not be negative value",
            ),
            (self.request_timeout < 0, "--request-timeout can not be negative value"),
            (
                not 0 <= self.goaway_chance <= 0.02,
                "--goaway-chance can not be less than 0 or greater than 0.02",
            ),
            (self.min_request_timeout < 0, "--min-request-timeout can not be negative value"),
            (
                self.storage_initialization_timeout < 0,
                "--storage-initialization-timeout can not be negative value",
            ),
            (self.shutdown_delay_duration < 0, "--shutdown-delay-duration can not be negative value"),
            (
                self.shutdown_watch_termination_grace_period < 0,
                "shutdown-watch-termination-grace-period, if provided, can not be a negative value",
            ),
        ]


def _hsts_errors(directives: list[str]) -> list[str]:
    """validateHSTSDirectives: max-age=<seconds>, includeSubDomains and preload (RFC 6797 6.1)."""
    errors = []
    for directive in directives:
        if not directive.strip():
            errors.append("empty value in strict-transport-security-directives")
        elif directive not in ("includeSubDomains", "preload"):
            parts = directive.split("=")
            if len(parts) != 2 or parts[0] != "max-age":
                errors.append("--strict-transport-security-directives invalid, allowed values: max-age=expireTime, "
                              "includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for "
                              "more information")
    return errors


def _cors_errors(origins: list[str]) -> list[str]:
    errors = []
    for origin in origins:
        if not origin:
            errors.append(f"empty value in --cors-allowed-origins, help: {_CORS_HELP}")
            continue
        try:
            re.compile(origin)
        except re.error as err:
            errors.append(
                f"--cors-allowed-origins has an invalid regular expression: {err}, help: {_CORS_HELP}"
            )
    return errors


_ADVERTISE_HELP = (
    "The IP address on which to advertise the apiserver to members of the cluster. This address must be "
    "reachable by the rest of the cluster. If blank, the --bind-address will be used. If --bind-address is "
    "unspecified, the loopback address is used (kube-apiserver would use the host's default interface)."
)
_CORS_HELP = (
    "List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to "
    "support subdomain matching. If this list is empty CORS will not be enabled. Please ensure each "
    "expression matches the entire hostname by anchoring to the start with '^' or including the '//' "
    "prefix, and by anchoring to the end with '$' or including the ':' port separator suffix. Examples of "
    "valid expressions are '//example\\.com(:|$)' and '^https://example\\.com(:|$)'"
)
_EXTERNAL_HOST_HELP = (
    "The hostname to use when generating externalized URLs for this master (e.g. Swagger API Docs or "
    "OpenID Discovery)."
)
_INFLIGHT_HELP = (
    "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency "
    "limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits "
    "the maximum number of non-mutating requests in flight, or a zero value disables the limit completely."
)
_MUTATING_HELP = (
    "This and --max-requests-inflight are summed to determine the server's total concurrency limit (which "
    "must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum "
    "number of mutating requests in flight, or a zero value disables the limit completely."
)
_REQUEST_TIMEOUT_HELP = (
    "An optional field indicating the duration a handler must keep a request open before timing it out. "
    "This is the default request timeout for requests but may be overridden by flags such as "
    "--min-request-timeout for specific types of requests."
)
_GOAWAY_HELP = (
    "To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection "
    "(GOAWAY). The client's other in-flight requests won't be affected, and the client will reconnect, "
    "likely landing on a different apiserver after going through the load balancer again. This argument "
    "sets the fraction of requests that will be sent a GOAWAY. Clusters with single apiservers, or which "
    "don't use a load balancer, should NOT enable this. Min is 0 (off), Max is .02 (1/50 requests); .001 "
    "(1/1000) is a recommended starting point."
)
_LIVEZ_HELP = (
    "This option represents the maximum amount of time it should take for apiserver to complete its "
    "startup sequence and become live. From apiserver's start time to when this amount of time has "
    "elapsed, /livez will assume that unfinished post-start hooks will complete successfully and therefore "
    "return true."
)
_MIN_REQUEST_TIMEOUT_HELP = (
    "An optional field indicating the minimum number of seconds a handler must keep a request open before "
    "timing it out. Currently only honored by the watch request handler, which picks a randomized value "
    "above this number as the connection timeout, to spread out load."
)
_STORAGE_INIT_HELP = (
    "Maximum amount of time to wait for storage initialization before declaring apiserver ready. "
    "Defaults to 1m."
)
_SHUTDOWN_DELAY_HELP = (
    "Time to delay the termination. During that time the server keeps serving requests normally. The "
    "endpoints /healthz and /livez will return success, but /readyz immediately returns failure. Graceful "
    "termination starts after this delay has elapsed. This can be used to allow load balancer to stop "
    "sending traffic to this server."
)
_RETRY_AFTER_HELP = (
    "If true the HTTP Server will continue listening until all non long running request(s) in flight have "
    "been drained, during this window all incoming requests will be rejected with a status code 429 and a "
    "'Retry-After' response header, in addition 'Connection: close' response header is set in order to "
    "tear down the TCP connection when idle."
)
_WATCH_GRACE_HELP = (
    "This option, if set, represents the maximum amount of grace period the apiserver will wait for active "
    "watch request(s) to drain during the graceful server shutdown window."
)
