"""The package version: a leaf, so that the cache salt and the faces read it without
importing the package's face (``tflint_graph/__init__.py`` imports the whole API)."""

__version__ = "0.1.0"
