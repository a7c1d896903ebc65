"""TODO stage docstring."""
