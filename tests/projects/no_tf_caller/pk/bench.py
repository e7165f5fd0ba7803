import time

from pk.model import train_step


def bench(x):
    start = time.perf_counter()
    train_step(x, 0.1)  # TFG403
    return time.perf_counter() - start


def bench_warm(x):
    train_step(x, 0.1)  # warm-up: traces once
    start = time.perf_counter()
    train_step(x, 0.1)
    return time.perf_counter() - start
