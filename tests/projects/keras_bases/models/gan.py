from models import mid


class GAN(mid.Mid):
    def train_step(self, data):
        print("step")  # TFG101
        return {}


class NotKeras(object):
    def train_step(self, data):
        print("eager")
