"""TFG207: a module that defines its own range() and tf."""
import tensorflow


class tf:  # noqa: N801 - a stand-in, not TensorFlow
    @staticmethod
    def range(n):
        return [0, 1]


def range(n):
    return [0, 1]


@tensorflow.function
def shadowed(x, n):
    out = []
    for i in range(n):
        out.append(x)
    for i in tf.range(n):
        out.append(x)
    return tensorflow.stack(out)


@tensorflow.function
def real(x, n):
    out = []
    for i in tensorflow.range(n):
        out.append(x)  # TFG207
    return tensorflow.stack(out)
