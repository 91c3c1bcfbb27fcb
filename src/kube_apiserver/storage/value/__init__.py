"""Value transformers: encryption at rest between the storage codec and the KV (k8s.io/apiserver/pkg/storage/value)."""
