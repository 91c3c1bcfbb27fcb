"""The horizontalpodautoscaling controller (pkg/controller/podautoscaler): `horizontal` the controller, `config` its
flags (importing the package imports neither, so that checking the flags does not import the controller)."""
