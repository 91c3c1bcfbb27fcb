"""Run: config -> create_server_chain -> prepare_run -> run (cmd/kube-apiserver/app/server.go)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import version
from ..admission.webhook.serviceresolution import ServiceResolver
from ..aggregator.server import new_aggregator_server
from ..api import schemas
from ..api.core import podspec
from ..api.flowcontrol import bootstrap as flowcontrol_bootstrap
from ..api.flowcontrol.common import GROUP as FLOWCONTROL_GROUP
from ..api.resource import features as resource_features
from ..apiextensions.server import new_apiextensions_server
from ..apimachinery.clock import install as install_time_sources
from ..apimachinery.equivalence import EquivalentResourceRegistry
from ..apimachinery.openapischema import SchemaSource
from ..authentication.bootstrap import BootstrapTokenAuthenticator
from ..authentication.loopback import loopback_authenticator, new_loopback_token
from ..authentication.request import (
    PUBLIC_PATHS,
    AnonymousAuthenticator,
    BearerTokenAuthenticator,
    UnionAuthenticator,
    UnionTokenAuthenticator,
)
from ..authentication.requestheader import IssuerCheck, RequestHeaderAuthenticator, RequestHeaderConfig
from ..authentication.review import TokenReviewer
from ..authentication.serviceaccount import ServiceAccountTokenAuthenticator
from ..authentication.token_file import StaticTokenAuthenticator
from ..authentication.webhook import WebhookTokenAuthenticator
from ..authentication.x509 import X509Authenticator
from ..authorization.authorizer import Authorizer, UnionAuthorizer
from ..authorization.config import AuthorizationConfiguration, WebhookSpec
from ..authorization.metrics import AuthorizationMetrics
from ..authorization.modes import ReloadingAuthorizer, new_authorizer
from ..authorization.node import Graph, NodeAuthorizer, add_graph_event_handlers
from ..authorization.webhook import WebhookAuthorizer
from ..client.informers import SharedInformerFactory
from ..client.rest import Client, LoopbackTransport
from ..controllers.aggregated import aggregated_resources
from ..controlplane.bootstrappolicy.policy import node_rules
from ..controlplane.clusterauthenticationtrust import ClusterAuthenticationInfo
from ..controlplane.instance import ExtraConfig, new_instance
from ..controlplane.rbac import InformerRuleSource, bootstrap_roles
from ..endpoints.http import Request, Response, text
from ..flowcontrol.controller import Controller as FlowControl
from ..flowcontrol.controller import InformerSource
from ..registry.context import UserInfo
from ..server import healthz
from ..server.config import CompletedConfig, Config
from ..server.dynamiccerts import SNICertKey
from ..server.generic_api_server import EmptyDelegate, GenericAPIServer
from ..server.options.authentication import BuiltInAuthenticationOptions, RequestHeaderAuthenticationOptions
from ..server.options.authorization import BuiltInAuthorizationOptions
from ..server.peers import PeerExpositions
from ..server.serving import SecureServingInfo
from ..serviceaccount.claims import ObjectGetter
from ..serviceaccount.getter import storage_getter
from ..serviceaccount.issuer import TokenConfig
from ..storage import interface as storage
from ..storage.factory import StorageFactory
from ..storage.kv import KV
from ..storage.kvsocket import RemoteKV
from ..storage.objectstore import ObjectStore
from ..webhook.generic import REQUEST_TIMEOUT, ConfigError, GenericWebhook
from . import admin, workers
from .admission import AdmissionPlugins, new_admission
from .completion import CompletedOptions
from .encryption import apply_encryption, load_encryption
from .signals import stop_on_signals
from .storage_backend import StorageBackend, open_storage
from .testing_endpoints import install_testing_endpoints

log = logging.getLogger("kube_apiserver")


@dataclass
class ServerConfig:
    generic: CompletedConfig
    extra: ExtraConfig
    serving: SecureServingInfo
    admin_token: str
    rbac_source: InformerRuleSource | None
    admission: AdmissionPlugins | None = None
    # The loopback client every internal actor uses, and the informers its readers share.
    loopback: Client | None = None
    informers: SharedInformerFactory | None = None
    # --enable-testing-endpoints: /debug/testing/* (cmd/testing_endpoints.py), for test suites only.
    testing_endpoints: bool = False
    # --proxy-client-cert-file and --proxy-client-key-file: the aggregator's client certificate.
    proxy_client_cert: tuple[str, str] | None = None


async def new_storage(opts: CompletedOptions) -> StorageBackend:
    """The backend of --storage-backend, with values written as --storage-media-type says."""
    media_type = opts.etcd.storage_media_type
    return await open_storage(opts.etcd, opts.data_dir, lambda kv: ObjectStore(kv, media_type))


def new_authenticator(opts: CompletedOptions, admin_token: str, service_accounts: TokenConfig,
                      get_object: ObjectGetter, loopback_token: str = "") -> tuple[UnionAuthenticator, TokenReviewer]:
    """The request authenticator, and the token reviewer TokenReview asks. The loopback token is asked
    first (AuthorizeClientBearerToken puts it in front of the configured authenticators)."""
    tokens = StaticTokenAuthenticator({})
    if opts.authentication.token_auth_file:
        tokens = StaticTokenAuthenticator.from_file(opts.authentication.token_auth_file)
    tokens.add(admin_token, UserInfo(admin.ADMIN_USER, admin.ADMIN_UID, admin.ADMIN_GROUPS))
    tokens.implicit_audiences = tuple(service_accounts.api_audiences)
    # Anonymous requests reach only what Kubernetes leaves open to everyone; anything else is 401.
    authn = opts.authentication
    paths = PUBLIC_PATHS if authn.anonymous_public_paths_only else None
    anonymous = AnonymousAuthenticator(paths) if authn.anonymous else None
    if (configured := authn.oidc.anonymous_paths()) is not None:  # --authentication-config's anonymous
        anonymous = AnonymousAuthenticator(configured[1]) if configured[0] else None
    account_tokens = ServiceAccountTokenAuthenticator(service_accounts, get_object)
    token_authenticators: list[Any] = [tokens, account_tokens]
    if loopback_token:
        token_authenticators.insert(0, loopback_authenticator(loopback_token, tuple(service_accounts.api_audiences)))
    if authn.enable_bootstrap_token_auth:
        token_authenticators.append(BootstrapTokenAuthenticator(get_object))
    # The JWT issuers (--oidc-* or --authentication-config), after the local ones, before the webhook.
    token_authenticators += authn.oidc.authenticators(service_accounts.issuers, tuple(service_accounts.api_audiences))
    if authn.token_webhook_config_file:  # remote last, as kube-apiserver orders them
        token_authenticators.append(WebhookTokenAuthenticator(
            _webhook(authn.token_webhook_config_file, "authentication token webhook"), authn.token_webhook_version,
            authn.token_webhook_cache_ttl, tuple(service_accounts.api_audiences)))
    bearer = UnionTokenAuthenticator(token_authenticators)
    authenticators: list[Any] = [BearerTokenAuthenticator(bearer)]
    if authn.client_ca_file:  # kube-apiserver asks x509 first, after the front proxy's certificate
        authenticators.insert(0, X509Authenticator(IssuerCheck.from_file(authn.client_ca_file)))
    if authn.request_header.client_ca_file:
        authenticators.insert(0, RequestHeaderAuthenticator(request_header_config(authn.request_header)))
    reviewer = TokenReviewer(bearer, list(service_accounts.api_audiences), account_tokens)
    return UnionAuthenticator(authenticators, anonymous), reviewer


def _webhook(path: str, what: str, timeout: float = REQUEST_TIMEOUT) -> GenericWebhook:
    """The webhook of a kubeconfig file; a file that does not load stops the start in one line."""
    try:
        return GenericWebhook.from_file(path, timeout=timeout)
    except ConfigError as err:
        raise SystemExit(f"Error: unable to load the {what} configuration {path}: {err}") from None


def new_webhook_authorizer(name: str, spec: WebhookSpec, measured: AuthorizationMetrics) -> WebhookAuthorizer:
    webhook = _webhook(spec.kubeconfig_file, "authorization webhook", spec.timeout)
    return WebhookAuthorizer(webhook, spec.subject_access_review_version,
                             spec.authorized_ttl if spec.cache_authorized else 0.0,
                             spec.unauthorized_ttl if spec.cache_unauthorized else 0.0,
                             failure_policy=spec.failure_policy, match_conditions=spec.match_conditions, name=name,
                             measured=measured)


def new_configured_authorizer(opts: BuiltInAuthorizationOptions, informers: SharedInformerFactory,
                              measured: AuthorizationMetrics) -> tuple[Authorizer, InformerRuleSource | None]:
    """The chain of --authorization-config (read again when it changes) or of --authorization-mode, and RBAC's
    rule source (the bootstrap policy waits for its listers)."""
    config = opts.configuration()
    types = {spec.type for spec in config.authorizers}
    # the RBAC authorizer's listers and the node graph: informers the server starts
    rbac_source = InformerRuleSource(informers) if "RBAC" in types else None
    node = new_node_authorizer(informers) if "Node" in types else None

    def build(configuration: AuthorizationConfiguration) -> UnionAuthorizer:
        if "RBAC" in {s.type for s in configuration.authorizers} and rbac_source is None:
            raise ValueError("RBAC cannot be added by a reload: its listers start with the server")
        if "Node" in {s.type for s in configuration.authorizers} and node is None:
            raise ValueError("Node cannot be added by a reload: its graph starts with the server")
        return new_authorizer(configuration, rbac_source, node=node, measured=measured,
                              new_webhook=lambda name, spec: new_webhook_authorizer(name, spec, measured))

    if opts.config_file:
        return ReloadingAuthorizer(opts.config_file, build, config), rbac_source
    return build(config), rbac_source


def new_node_authorizer(informers: SharedInformerFactory) -> NodeAuthorizer:
    """The Node authorizer, its graph kept by the loopback informers (asked for now: the server starts them)."""
    graph = Graph()
    add_graph_event_handlers(graph, informers)
    return NodeAuthorizer(graph, node_rules())


def request_header_config(options: RequestHeaderAuthenticationOptions) -> RequestHeaderConfig:
    return RequestHeaderConfig(_read_bytes(options.client_ca_file), options.client_ca_file, list(options.allowed_names),
                               list(options.username_headers), list(options.uid_headers),
                               list(options.group_headers), list(options.extra_headers_prefix))


def _authentication_info(authn: BuiltInAuthenticationOptions) -> ClusterAuthenticationInfo:
    header = authn.request_header
    if not header.client_ca_file:
        return ClusterAuthenticationInfo(_read_bytes(authn.client_ca_file))
    return ClusterAuthenticationInfo(_read_bytes(authn.client_ca_file), _read_bytes(header.client_ca_file),
                                     list(header.allowed_names), list(header.username_headers),
                                     list(header.uid_headers), list(header.group_headers),
                                     list(header.extra_headers_prefix))


def _read_bytes(path: str) -> bytes:
    if not path:
        return b""
    with open(path, "rb") as f:
        return f.read()


async def new_config(opts: CompletedOptions, shared_kv: KV | None = None) -> ServerConfig:
    """`shared_kv`: a KV another server in this process owns (replicas in tests share one SQLite KV, whose
    file admits one opener); its owner compacts it, expires its leases and closes it."""
    encryption = load_encryption(opts.etcd)  # a bad file stops the start before any storage opens
    if shared_kv is None:
        backend = await new_storage(opts)
    else:  # nothing of it to maintain or close: only this server's own work (the object count poll)
        backend = StorageBackend(shared_kv, ObjectStore(shared_kv, opts.etcd.storage_media_type))
    kv, store = backend.kv, backend.store

    async def get_namespace(name: str) -> dict | None:
        try:
            return await store.get(f"/registry/namespaces/{name}")
        except storage.KeyNotFoundError:
            return None

    get_object = storage_getter(store)
    loopback = Client(LoopbackTransport(new_loopback_token()))
    informers = SharedInformerFactory(loopback)
    # ValidatingAdmissionPolicy asks the authorizer too
    authorization_metrics = AuthorizationMetrics()
    authorizer, rbac_source = new_configured_authorizer(opts.authorization, informers, authorization_metrics)
    equivalents = EquivalentResourceRegistry()  # the servers' installers fill it, admission reads it
    admission = new_admission(opts.admission.enabled_plugin_names(), get_namespace, get_object,
                              opts.admission.config_file, authorizer, informers, equivalents)
    podspec.set_allow_privileged(opts.allow_privileged)
    resource_features.configure(opts.features.feature_gates)
    admin_token = admin.ensure_admin_credential(opts.data_dir)
    host = opts.advertise_address
    service_accounts = opts.authentication.service_accounts.token_config()
    authenticator, token_reviewer = new_authenticator(opts, admin_token, service_accounts, get_object,
                                                      loopback.token)
    generic = Config(
        authenticator=authenticator,
        authorizer=authorizer,
        admission=admission.chain,
        request_timeout=opts.generic.request_timeout,
        min_request_timeout=float(opts.generic.min_request_timeout),
        shutdown_delay=opts.generic.shutdown_delay_duration,
        shutdown_send_retry_after=opts.generic.shutdown_send_retry_after,
        livez_grace_period=opts.generic.livez_grace_period,
        shutdown_watch_termination_grace_period=opts.generic.shutdown_watch_termination_grace_period,
        cors_allowed_origins=list(opts.generic.cors_allowed_origins),
        hsts_directives=list(opts.generic.hsts_directives),
        enable_profiling=opts.features.enable_profiling,
        version=version.VERSION,
        external_address=f"{host}:{opts.secure_port}",
        schemas=SchemaSource(schemas.definitions, schemas.schema_name),
        equivalent_resources=equivalents,
    )
    generic.metrics.collectors.append(authorization_metrics.lines)
    _configure_flow_control(opts, generic, informers)
    try:
        opts.audit.apply_to(generic)
    except ValueError as err:
        raise SystemExit(f"Error: {err}") from None
    backend.start(opts.etcd)
    generic.destroy_functions.append(backend.stop)
    factory = StorageFactory(store, opts.etcd.enable_watch_cache, opts.event_ttl, backend.overrides)
    generic.destroy_functions.insert(0, factory.stop)
    apply_encryption(encryption, opts.etcd, generic, factory)  # --encryption-provider-config: values, never keys
    counter = backend.count_objects(factory, generic.metrics, opts.etcd.count_metric_poll_period)
    await _share_metrics(generic)
    if counter is not None and generic.flow_control is not None:
        # counter.counts is replaced by each poll: read through the counter
        generic.flow_control.object_count = lambda group, resource: counter.counts.get((group, resource))
    tls = opts.secure_serving.tls()
    serving = SecureServingInfo(opts.bind_address, opts.secure_port, opts.cert_file, opts.key_file,
                                min_tls_version=tls.minimum_version, cipher_suites=tls.ciphers,
                                client_ca_file=opts.authentication.client_ca_file,
                                requestheader_client_ca_file=opts.authentication.request_header.client_ca_file,
                                sni_cert_keys=tuple(SNICertKey(*pair) for pair in opts.secure_serving.sni_cert_keys),
                                reuse_port=opts.secure_serving.permit_port_sharing,
                                handoff=workers.connection_socket())
    extra = ExtraConfig(factory, str(opts.primary_service_cluster_ip_range or ""),
                        opts.api_server_service_ip or "", host, opts.secure_port, opts.controllers,
                        opts.service_node_port_range, serving, service_accounts, token_reviewer,
                        _read_bytes(opts.ca_file).decode())
    extra.loopback = loopback  # the controllers write through it
    extra.csr_signing, extra.hpa = opts.csr_signing, opts.hpa
    extra.endpoint_slices = opts.endpoint_slices
    extra.nodes = opts.nodes
    extra.terminated_pod_gc_threshold = opts.terminated_pod_gc_threshold
    extra.authentication_info = _authentication_info(opts.authentication)
    _configure_replica(opts, extra, exclusive=shared_kv is None and getattr(kv, "exclusive", False))
    return ServerConfig(generic.complete(), extra, serving, admin_token, rbac_source, admission, loopback, informers,
                        opts.enable_testing_endpoints, opts.authentication.proxy_client())


def _configure_flow_control(opts: CompletedOptions, generic: Config, informers: SharedInformerFactory) -> None:
    """API Priority and Fairness over the loopback informers' FlowSchemas and PriorityLevelConfigurations,
    sharing out the two in-flight limits summed (FeatureOptions.ApplyTo); or, when it is disabled, those two
    limits on their own."""
    generic.max_requests_inflight = opts.generic.max_requests_inflight
    generic.max_mutating_requests_inflight = opts.generic.max_mutating_requests_inflight
    if not opts.features.enable_priority_and_fairness:
        return
    limit = opts.generic.max_requests_inflight + opts.generic.max_mutating_requests_inflight
    if limit <= 0:
        raise SystemExit(f"Error: invalid configuration: MaxRequestsInFlight={opts.generic.max_requests_inflight} "
                         f"and MaxMutatingRequestsInFlight={opts.generic.max_mutating_requests_inflight}; they "
                         "must add up to something positive")
    source = InformerSource(informers.for_resource(FLOWCONTROL_GROUP, "v1", "flowschemas"),
                            informers.for_resource(FLOWCONTROL_GROUP, "v1", "prioritylevelconfigurations"))
    generic.flow_control = FlowControl(limit, opts.generic.request_timeout / 4,
                                       flowcontrol_bootstrap.MANDATORY_PRIORITY_LEVELS,
                                       flowcontrol_bootstrap.MANDATORY_FLOW_SCHEMAS, source)
    generic.metrics.collectors.append(generic.flow_control.metric_lines)


async def _share_metrics(generic: Config) -> None:
    """A worker of --workers answers the others' scrapes with its metrics, and merges theirs into its own."""
    directory = workers.peers_dir()
    if directory is None:
        return
    peers = PeerExpositions(directory, workers.worker_index(), generic.metrics.exposition)
    await peers.start()
    generic.destroy_functions.append(peers.stop)
    generic.metrics.peers = peers.others


def _install_flow_control_debug(config: ServerConfig, server: GenericAPIServer) -> None:
    """/debug/api_priority_and_fairness/dump_*, unlisted, as the controller's Install does."""
    flow_control = config.generic.flow_control
    if flow_control is None:
        return
    for name, dump in (("dump_priority_levels", flow_control.dump_priority_levels),
                       ("dump_queues", flow_control.dump_queues)):
        async def serve(req: Request, dump: Any = dump) -> Response:
            return text(200, dump())
        server.handler.non_restful_mux.handle_unlisted(f"/debug/api_priority_and_fairness/{name}", serve)


def _configure_replica(opts: CompletedOptions, extra: ExtraConfig, exclusive: bool) -> None:
    """What makes this server one replica among several: its controllers' leader election, how the
    kubernetes Service's endpoints list the replicas, and its identity Lease. `exclusive`: the storage
    admits this process only (an SQLite file it locked), so no other candidate for a lease is alive."""
    extra.leader_election = opts.leader_election
    extra.endpoint_reconciler_type = opts.endpoint_reconciler_type
    extra.apiserver_count = opts.apiserver_count
    # --workers: the workers are one apiserver to their clients, with the one identity the first keeps
    extra.identity_lease = opts.features.enabled("APIServerIdentity") and not workers.worker_index()
    extra.exclusive_storage = exclusive
    extra.worker = workers.worker_name()


def create_server_chain(config: ServerConfig) -> GenericAPIServer:
    """aggregator -> kube-apiserver -> apiextensions -> 404."""
    services = ServiceResolver(config.informers)  # CRD conversion webhooks' services
    api_extensions = new_apiextensions_server(config.generic, EmptyDelegate(), config.extra.storage, services)
    kube_api_server = new_instance(config.generic, config.extra, api_extensions)
    kube_api_server.add_post_start_hook("rbac/bootstrap-roles",
                                        lambda: bootstrap_roles(_loopback(config), config.rbac_source))
    server = new_aggregator_server(config.generic, kube_api_server, config.extra.storage, config.proxy_client_cert)
    _connect_loopback(config, server)
    _install_flow_control_debug(config, server)
    if config.testing_endpoints:
        install_testing_endpoints(config, server)
    # The namespace controller discovers the aggregated servers' resources too, as through the aggregator.
    kube_api_server.controllers.discovery.add_source(aggregated_resources(server.aggregator))  # type: ignore[attr-defined]
    return server


def _loopback(config: ServerConfig) -> Client:
    assert config.loopback is not None, "the server's own writes go through its loopback client"
    return config.loopback


def _connect_loopback(config: ServerConfig, server: GenericAPIServer) -> None:
    """The loopback client calls the outermost server's handler chain. Its informers start once the server
    serves (the admission initializer's post-start hook), or earlier when a lookup needs one; the listers
    asked for later start as they are first read. They stop before the server drains its watches."""
    if config.loopback is None:
        return
    config.loopback.attach(server.handler)
    informers = config.informers
    if informers is not None:

        async def start_informers() -> None:
            informers.start()

        server.add_post_start_hook("start-kube-apiserver-admission-initializer", start_informers)
        server.add_readyz_checks(healthz.HealthChecker("informer-sync", lambda: _informers_synced(informers)))
        server.add_pre_shutdown_hook("stop-loopback-informers", informers.stop)


async def _informers_synced(informers: SharedInformerFactory) -> None:
    """The informer-sync readiness check: ready once the server's own informers have listed."""
    unsynced = informers.unsynced()
    if unsynced:
        raise healthz.HealthCheckError(f"{len(unsynced)} informers not synced yet: {', '.join(unsynced)}")


async def run(opts: CompletedOptions, stop: asyncio.Event | None = None,
              started: asyncio.Event | None = None, announce: bool = True,
              serving: Callable[[ServerConfig], None] | None = None) -> None:
    """`announce`: print the URL and kubeconfig for the person who ran the command (not for a library's
    server, whose caller reads them from its attributes). `serving`: told the server's config once it
    serves (an in-process library server reaches its loopback client there)."""
    log.info("Version: %s", version.GIT_VERSION)
    sources = opts.deterministic.sources()
    if sources is not None:  # before anything starts: every task of this server inherits them
        install_time_sources(sources.clock, sources.ids)
    stop = stop or stop_on_signals()
    storage_socket = workers.storage_socket()  # a worker of --workers: the storage process serves its KV
    shared_kv = await _connect_storage(storage_socket, stop) if storage_socket is not None else None
    config = await new_config(opts, shared_kv)
    server = create_server_chain(config)
    prepared = server.prepare_run()
    ready = asyncio.Event()
    running = asyncio.ensure_future(prepared.run(config.serving, stop, ready))
    await asyncio.wait({running, asyncio.ensure_future(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if running.done():
        running.result()
        return
    kubeconfig = os.path.join(opts.data_dir, "admin.kubeconfig")
    url = admin.client_url(opts.bind_address, config.serving.port)
    if shared_kv is not None:
        announce = False  # the storage process announces the server once every worker serves
        shared_kv.serving()
    else:
        admin.write_admin_kubeconfig(kubeconfig, url, opts.ca_file, config.admin_token)
        log.info("Admin kubeconfig: %s", kubeconfig)
        announce = announce and workers.worker_index() == 0  # on etcd, --workers' first worker says it serves
    if announce:
        print(f"kube-apiserver is serving on {url}\n"
              f"admin kubeconfig: {kubeconfig}\n"
              f"  kubectl --kubeconfig {kubeconfig} get namespaces", flush=True)
    if serving is not None:
        serving(config)
    if started is not None:
        started.set()
    try:
        await running
    finally:
        if shared_kv is not None:
            await shared_kv.close()


async def _connect_storage(sock: socket.socket, stop: asyncio.Event) -> RemoteKV:
    """A worker's store; the worker stops when the storage process is gone (it could serve nothing)."""

    def lost() -> None:
        if not stop.is_set():
            log.error("lost the connection to the storage process: stopping")
            stop.set()

    return await RemoteKV.connect(sock, on_lost=lost)
