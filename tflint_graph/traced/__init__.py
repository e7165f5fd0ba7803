"""Which functions TensorFlow traces (SPEC §1), the calls of tf.functions and export sites.

``find_traced(ctx)`` returns the module's ``TracedCode``; ``roots.py`` holds one function per
traced-code kind, ``follow.py`` what traced code reaches.
"""

from tflint_graph.traced.code import TracedCode, find_traced, traced_of

__all__ = ["TracedCode", "find_traced", "traced_of"]
