"""The apiextensions link of the chain, the last before 404 (apiextensions-apiserver's
CustomResourceDefinitions server): it serves apiextensions.k8s.io and, through its controllers, every
custom resource of an established CRD; what it does not claim goes to its delegate."""

from __future__ import annotations

from ..admission.webhook.client import WebhookClient
from ..admission.webhook.serviceresolution import ServiceResolver
from ..server.api_group_info import APIGroupInfo
from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer
from ..storage.factory import StorageFactory
from . import crd
from .controllers import CRDControllers
from .customresource.conversion import Converter, NoneConverter
from .customresource.serving import CustomResourceServing
from .customresource.webhookconversion import WebhookConverter


def new_apiextensions_server(config: CompletedConfig, delegate: DelegationTarget, storage: StorageFactory,
                             services: ServiceResolver) -> GenericAPIServer:
    """`services`: how conversion webhooks named by a service are reached (bound once the kube-apiserver
    link, which serves services, exists)."""
    server = config.new("apiextensions-apiserver", delegate)
    storages = crd.new_storage(storage)
    server.install_api_groups(APIGroupInfo(crd.GROUP, {"v1": storages}))
    client = WebhookClient(services)

    def new_converter(definition: dict) -> Converter:
        if (definition["spec"].get("conversion") or {}).get("strategy") == "Webhook":
            return WebhookConverter(definition, client)
        return NoneConverter()

    serving = CustomResourceServing(server, storage, new_converter)
    controllers = CRDControllers(storages["customresourcedefinitions"], storages["customresourcedefinitions/status"],
                                 serving)
    server.add_post_start_hook("start-apiextensions-controllers", controllers.start)
    server.add_pre_shutdown_hook("stop-apiextensions-controllers", controllers.stop)
    return server
