"""The ground floor: findings, configuration, ``# noqa``, the facts modules exchange, the
TensorFlow/Keras vocabulary.  Imports nothing else of the package."""
