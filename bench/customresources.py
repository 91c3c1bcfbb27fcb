"""Custom resource write path: what a create costs in the strategy (prune, default, OpenAPI and CEL
validation) for a cert-manager-like Certificate, next to a built-in Deployment's defaulting and
validation. Prints figures; asserts nothing.

    python3 bench/customresources.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import copy
import time

from kube_apiserver.api.apps.deployment import INFO as DEPLOYMENT_INFO
from kube_apiserver.api.apps.deployment import DeploymentStrategy
from kube_apiserver.apiextensions.customresource.strategy import CustomResourceStrategy, VersionSchema
from kube_apiserver.registry.context import Context
from kube_apiserver.registry.rest import ResourceInfo

CERTIFICATE_SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["secretName", "issuerRef"], "properties": {
        "secretName": {"type": "string", "maxLength": 253},
        "commonName": {"type": "string", "maxLength": 64},
        "dnsNames": {"type": "array", "items": {"type": "string"}, "maxItems": 100},
        "duration": {"type": "string", "default": "2160h"},
        "renewBefore": {"type": "string"},
        "isCA": {"type": "boolean", "default": False},
        "usages": {"type": "array", "items": {"type": "string", "enum": [
            "digital signature", "key encipherment", "server auth", "client auth"]}},
        "privateKey": {"type": "object", "properties": {
            "algorithm": {"type": "string", "enum": ["RSA", "ECDSA", "Ed25519"], "default": "RSA"},
            "size": {"type": "integer", "minimum": 0},
            "rotationPolicy": {"type": "string", "enum": ["Never", "Always"]}}},
        "issuerRef": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "kind": {"type": "string"}, "group": {"type": "string"}}},
    }, "x-kubernetes-validations": [
        {"rule": "!has(self.renewBefore) || duration(self.renewBefore) < duration(self.duration)"},
        {"rule": "size(self.dnsNames) <= 100"},
        {"rule": "self.issuerRef.name != ''", "message": "issuerRef.name must be set"}]},
    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}}


def certificate(i: int) -> dict:
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": f"cert-{i}", "namespace": "bench", "labels": {"app": "web"}},
            "spec": {"secretName": f"cert-{i}-tls", "commonName": "example.com",
                     "dnsNames": ["example.com", "www.example.com", "api.example.com"],
                     "renewBefore": "360h", "usages": ["server auth", "digital signature"],
                     "privateKey": {"algorithm": "ECDSA", "size": 256},
                     "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}}}


def deployment(i: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"web-{i}", "namespace": "bench", "labels": {"app": "web"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                         {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}}}}


def per_object(strategy, make, rounds: int) -> float:
    ctx = Context("bench")
    objects = [make(i) for i in range(rounds)]
    began = time.perf_counter()
    for obj in objects:
        strategy.default(obj)
        strategy.prepare_for_create(ctx, obj)
        errs = strategy.validate(ctx, obj)
        assert not errs, errs
    return (time.perf_counter() - began) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    info = ResourceInfo("cert-manager.io", "v1", "certificates", "Certificate", "certificate", True)
    version = {"name": "v1", "schema": {"openAPIV3Schema": CERTIFICATE_SCHEMA}}
    cr = CustomResourceStrategy(info, VersionSchema.of(version), True, None)
    builtin = DeploymentStrategy(DEPLOYMENT_INFO)
    per_object(cr, certificate, 50)  # warm the caches (compiled CEL programs, schema nodes)
    cr_us = per_object(cr, certificate, rounds)
    deploy_us = per_object(builtin, deployment, rounds)
    without_rules = copy.deepcopy(version)
    without_rules["schema"]["openAPIV3Schema"]["properties"]["spec"].pop("x-kubernetes-validations")
    plain = CustomResourceStrategy(info, VersionSchema.of(without_rules), True, None)
    plain_us = per_object(plain, certificate, rounds)
    print(f"Certificate (custom resource, 3 CEL rules): {cr_us:7.1f} us per create in the strategy")
    print(f"Certificate without its CEL rules:         {plain_us:7.1f} us")
    print(f"Deployment (built-in):                      {deploy_us:7.1f} us")
    print(f"custom resource / built-in: {cr_us / deploy_us:.2f}x; CEL share of the custom resource: "
          f"{(cr_us - plain_us) / cr_us:.0%}")


if __name__ == "__main__":
    main()
