"""SavedModel export of the item ranker, with per-request auditing."""
import json
import os
import uuid
from datetime import datetime

import tensorflow as tf

AUDIT_DIR = "/var/log/ranker"
EXPORT_DIR = "export/ranker/1"
NUM_FEATURES = 16


class RankerModule(tf.Module):
    def __init__(self, model, vocabulary):
        super().__init__()
        self.model = model
        self.lookup = tf.keras.layers.StringLookup(vocabulary=vocabulary)
        self.served = tf.Variable(0, dtype=tf.int64, trainable=False)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="item_ids"),
            tf.TensorSpec([None, NUM_FEATURES], tf.float32, name="features"),
        ]
    )
    def serve(self, item_ids, features):
        request_id = str(uuid.uuid4())  # TFG103
        ids = self.lookup(item_ids)
        scores = self.model({"ids": ids, "features": features})
        self.served.assign_add(tf.cast(tf.shape(item_ids)[0], tf.int64))
        tf.print("request", request_id, "items:", tf.shape(item_ids)[0])
        self._audit(request_id)
        return {"scores": scores, "request_id": tf.constant(request_id)}

    @tf.function(input_signature=[])
    def stats(self):
        return {"served": self.served.read_value()}

    def _audit(self, request_id):
        record = {"id": request_id, "ts": datetime.now().isoformat()}  # TFG104
        with open(os.path.join(AUDIT_DIR, "requests.jsonl"), "a") as f:  # TFG108
            json.dump(record, f)  # TFG108
            f.write("\n")  # TFG108


def build_dummy_model(vocab_size):
    ids = tf.keras.Input(shape=(), dtype=tf.int64, name="ids")
    feats = tf.keras.Input(shape=(NUM_FEATURES,), name="features")
    emb = tf.keras.layers.Embedding(vocab_size + 1, 8)(ids)
    hidden = tf.keras.layers.Concatenate()([emb, feats])
    score = tf.keras.layers.Dense(1)(tf.keras.layers.Dense(32, activation="relu")(hidden))
    return tf.keras.Model({"ids": ids, "features": feats}, score)


def export(model, vocabulary, export_dir=EXPORT_DIR):
    module = RankerModule(model, vocabulary)
    os.makedirs(export_dir, exist_ok=True)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    tf.saved_model.save(
        module,
        export_dir,
        signatures={"serving_default": module.serve, "stats": module.stats},
    )
    with open(os.path.join(export_dir, "export_info.json"), "w") as f:
        json.dump({"exported_at": stamp, "export_id": str(uuid.uuid4())}, f)
    print("exported to", export_dir)


if __name__ == "__main__":
    vocab = [f"item_{i}" for i in range(1000)]
    export(build_dummy_model(len(vocab)), vocab)
