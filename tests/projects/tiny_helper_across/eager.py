from utils import entry_point


def main(x):
    return entry_point(x)
