from pk.model import train_step


def fit(x):
    for epoch in range(3):
        train_step(x, epoch)  # TFG303


def fit_once(x, lr):
    # The same value on every call: one trace.
    for _ in range(3):
        train_step(x, lr)
