import random

from models.layers import Block, Plain


class NoisyBlock(Block):
    def call(self, inputs):
        return inputs * random.random()  # TFG103


class PlainChild(Plain):
    def call(self, inputs):
        return inputs * random.random()
