"""The endpointslice and endpointslicemirroring controllers (pkg/controller/endpointslice,
pkg/controller/endpointslicemirroring) and what they share with the endpoint controller."""
