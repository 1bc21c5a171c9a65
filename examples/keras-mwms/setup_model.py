"""The data and the model both jobs train (TF's tutorial keeps these in
mnist_setup.py). A synthetic regression set stands in for MNIST, which would
need a download.

The training set is fixed: ``examples`` rows made from ``seed``, read again
from the start every epoch. That is what lets a job resumed from an epoch's
backup see the same batches as a job that never stopped (BackupAndRestore
restores the model, the optimizer and the epoch, not a position in the input).
"""

import numpy as np
import tensorflow as tf

FEATURES = 20


def training_set(seed, examples):
    rng = np.random.default_rng(seed)
    true_weights = rng.normal(size=(FEATURES, 1))
    x = rng.normal(size=(examples, FEATURES)).astype("float32")
    y = np.tanh(x @ true_weights) + rng.normal(scale=0.1, size=(examples, 1))
    return x, y.astype("float32")


def build_model():
    return tf.keras.Sequential(
        [
            tf.keras.layers.Input(shape=(FEATURES,)),
            tf.keras.layers.Dense(32, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )
