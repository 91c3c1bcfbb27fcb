"""Service account tokens (k8s pkg/serviceaccount and k8s.io/apiserver pkg/authentication/serviceaccount):
keys, signed JWTs, their claims, and the OpenID discovery documents of the issuer."""
