"""Proxying to backends: the connect subresources' proxy handler and the shared transport."""
