"""API Priority and Fairness (k8s.io/apiserver pkg/util/flowcontrol): requests classified by the
FlowSchemas, queued per priority level with shuffle sharding and fair queuing, and dispatched within each
level's share of the server's concurrency limit."""
