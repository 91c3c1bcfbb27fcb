"""The handler chain's filters: each is a plain decorator `with_x(handler, ...) -> handler`."""
