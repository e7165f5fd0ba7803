"""Dynamic mode (``--dynamic``, SPEC §4): import, trace and confirm findings with TensorFlow."""
