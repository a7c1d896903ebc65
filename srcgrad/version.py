"""The version of srcgrad, in a leaf module so that any stage can read it
(cache keys, export headers) without importing the package facade."""

__version__ = "0.1.0"
