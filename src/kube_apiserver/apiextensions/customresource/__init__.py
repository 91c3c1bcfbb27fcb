"""Serving custom resources (apiextensions-apiserver pkg/registry/customresource and the crdHandler): each
served version of an established CustomResourceDefinition becomes a group version of the apiextensions
server, with the generic Store under a strategy made from the CRD."""
