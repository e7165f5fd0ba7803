"""Re-exports: `from shop import normalize` reaches shop/core/ops.py."""

from .core.ops import normalize, scale_and_log
