"""The Go shapes of Service, Endpoints and ReplicationController (k8s.io/api/core/v1), for the type
errors decoding reports (apimachinery/jsontypes.py); a body that does not fit is a 400, as in
Kubernetes: `Service in version "v1" cannot be handled as a Service: json: cannot unmarshal ...`."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, jsontypes
from ...apimachinery.jsontypes import ListOf, Struct

Object = dict[str, Any]

OBJECT_META = Struct("ObjectMeta", "v1.ObjectMeta", {
    "name": "string", "generateName": "string", "namespace": "string", "labels": "map[string]string",
    "annotations": "map[string]string"})
SERVICE_PORT = Struct("ServicePort", "v1.ServicePort", {
    "name": "string", "protocol": "string", "appProtocol": "string", "port": "int32", "targetPort": "IntOrString",
    "nodePort": "int32"})
CLIENT_IP = Struct("ClientIPConfig", "v1.ClientIPConfig", {"timeoutSeconds": "int32"})
SERVICE_SPEC = Struct("ServiceSpec", "v1.ServiceSpec", {
    "ports": ListOf(SERVICE_PORT), "selector": "map[string]string", "clusterIP": "string", "clusterIPs": "[]string",
    "type": "string", "externalIPs": "[]string", "sessionAffinity": "string", "loadBalancerIP": "string",
    "loadBalancerSourceRanges": "[]string", "externalName": "string", "externalTrafficPolicy": "string",
    "healthCheckNodePort": "int32", "publishNotReadyAddresses": "bool",
    "sessionAffinityConfig": Struct("SessionAffinityConfig", "v1.SessionAffinityConfig", {"clientIP": CLIENT_IP}),
    "ipFamilies": "[]string", "ipFamilyPolicy": "string", "allocateLoadBalancerNodePorts": "bool",
    "loadBalancerClass": "string", "internalTrafficPolicy": "string", "trafficDistribution": "string"})
INGRESS = Struct("LoadBalancerIngress", "v1.LoadBalancerIngress", {"ip": "string", "hostname": "string",
                                                                    "ipMode": "string"})
SERVICE = Struct("Service", "v1.Service", {
    "metadata": OBJECT_META, "spec": SERVICE_SPEC,
    "status": Struct("ServiceStatus", "v1.ServiceStatus", {
        "loadBalancer": Struct("LoadBalancerStatus", "v1.LoadBalancerStatus", {"ingress": ListOf(INGRESS)})})})

ADDRESS = Struct("EndpointAddress", "v1.EndpointAddress", {"ip": "string", "hostname": "string",
                                                            "nodeName": "string"})
ENDPOINT_PORT = Struct("EndpointPort", "v1.EndpointPort", {"name": "string", "port": "int32", "protocol": "string",
                                                           "appProtocol": "string"})
ENDPOINTS = Struct("Endpoints", "v1.Endpoints", {
    "metadata": OBJECT_META,
    "subsets": ListOf(Struct("EndpointSubset", "v1.EndpointSubset", {
        "addresses": ListOf(ADDRESS), "notReadyAddresses": ListOf(ADDRESS), "ports": ListOf(ENDPOINT_PORT)}))})

REPLICATION_CONTROLLER = Struct("ReplicationController", "v1.ReplicationController", {
    "metadata": OBJECT_META,
    "spec": Struct("ReplicationControllerSpec", "v1.ReplicationControllerSpec", {
        "replicas": "int32", "minReadySeconds": "int32", "selector": "map[string]string",
        "template": Struct("PodTemplateSpec", "v1.PodTemplateSpec", {"metadata": OBJECT_META})}),
    "status": Struct("ReplicationControllerStatus", "v1.ReplicationControllerStatus", {
        "replicas": "int32", "fullyLabeledReplicas": "int32", "readyReplicas": "int32",
        "availableReplicas": "int32", "observedGeneration": "int64"})})


def check_decodable(kind: str, obj: Object, shape: Struct) -> None:
    try:
        jsontypes.check(obj, shape)
    except jsontypes.TypeMismatch as err:
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {err}') from None
