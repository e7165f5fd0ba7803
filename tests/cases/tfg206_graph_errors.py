"""TFG206 cases: Python try/except in traced code expecting runtime TensorFlow errors;
trace-time handlers, eager code and re-raising handlers are fine."""
import tensorflow as tf
import tensorflow as tf2
from tensorflow import errors
from tensorflow.errors import OutOfRangeError
from tensorflow.python.framework.errors_impl import InvalidArgumentError


@tf.function
def specific(x):
    try:
        y = tf.debugging.check_numerics(x, "nan")
    except tf.errors.InvalidArgumentError:  # TFG206
        y = tf.zeros_like(x)
    try:
        y = tf.math.log(y)
    except (ValueError, tf2.errors.OpError) as exc:  # TFG206
        raise RuntimeError("log failed") from exc
    try:
        y = tf.reshape(y, [-1])
    except errors.ResourceExhaustedError:  # TFG206
        pass
    try:
        y = y + 1.0
    except InvalidArgumentError:  # TFG206
        pass
    return y


@tf.function
def dataset_loop(ds):
    it = iter(ds)
    total = tf.constant(0, tf.int64)
    for _ in tf.range(3):
        try:
            total += next(it)
        except OutOfRangeError:  # TFG206
            break
    return total


@tf.function
def broad(x):
    try:
        y = tf.io.decode_png(x)
    except Exception:  # TFG206
        y = tf.zeros([1, 1, 3], tf.uint8)
    try:
        z = tf2.cast(y, tf2.float32) / 255.0
    except:  # noqa: E722  # TFG206
        z = None
    try:
        w = x.to_tensor()  # a tensor method runs an op
    except BaseException:  # TFG206
        w = z
    return w


@tf.function
def trace_time(x, config):
    try:
        scale = config["scale"]
    except KeyError:
        scale = 1.0
    try:
        y = tf.reshape(x, [2, -1])
    except ValueError:  # a static shape error is raised while tracing
        y = x
    try:
        import extra_ops  # noqa: F401
    except Exception:
        extra_ops = None
    try:
        y = tf.nn.relu(y)
    except TypeError:
        pass
    try:
        y = tf.nn.relu(y)
    except tf.errors.OperatorNotAllowedInGraphError:  # raised while tracing
        pass
    return y * scale


@tf.function
def broad_but_reraises(x):
    try:
        y = tf.math.sqrt(x)
    except Exception as exc:
        tf.print("failed")
        raise ValueError("bad input") from exc
    try:
        y = tf.math.sqrt(y)
    except Exception:
        raise
    return y


@tf.function
def python_side(x, path):
    try:
        with tf.io.gfile.GFile(path) as f:  # TFG108
            text = f.read()
    except tf.errors.NotFoundError:
        text = ""
    try:
        raise tf.errors.InvalidArgumentError(None, None, "raised in Python")
    except tf.errors.InvalidArgumentError:
        pass
    try:
        ckpt = tf.train.load_checkpoint(path)
    except Exception:
        ckpt = None
    try:
        reader = tf.train.load_checkpoint(path)  # reads the checkpoint while tracing
        ckpt = tf.constant(reader.get_tensor("w"))
    except Exception:
        ckpt = tf.zeros([1])
    return x, text, ckpt


@tf.function
def eager_guarded(x):
    if tf.executing_eagerly():
        try:
            return tf.debugging.check_numerics(x, "nan")
        except tf.errors.InvalidArgumentError:
            return tf.zeros_like(x)
    with tf.init_scope():
        try:
            table = tf.constant([1.0]) / 0
        except Exception:
            table = None
    return x, table


@tf.function
def nested_definitions(x):
    try:

        def later(v):
            return tf.math.log(v)  # runs when called, not inside this try

    except Exception:
        later = None
    return later(x)


def eager_caller(x):
    try:
        return specific(x)
    except tf.errors.InvalidArgumentError:  # eager code: the runtime error lands here
        return None


def eager_broad(x):
    try:
        return tf.math.log(x)
    except Exception:
        return None


def parse(record):
    try:
        image = tf.io.decode_jpeg(record)
    except errors.InvalidArgumentError:  # TFG206
        image = tf.zeros([8, 8, 3], tf.uint8)
    return image


ds = tf.data.Dataset.from_tensor_slices([b"x"]).map(parse)
