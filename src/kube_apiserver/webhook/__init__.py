"""Webhooks configured by a kubeconfig file (k8s.io/apiserver/pkg/util/webhook): the token authentication and
authorization webhooks."""
