"""The optional Dropout of the built-in model, and a hash of its mask per step.

The layer sits between the hidden Dense's linear output and its ReLU:
relu(dropout(z)) equals dropout(relu(z)) with the same mask, and z is nonzero
almost surely, so the mask is exactly where the output is nonzero; after the
ReLU a dropped unit and an inactive one would look alike. The hash lets the
checks compare the masks workers drew at the same step.
"""

from __future__ import annotations

MASK_LOG = "dropout_mask"  # the train step's log key carrying the hash


def hidden_with_dropout(tf, keras, hidden: int, rate: float):
    """(layers to apply in order, the dropout layer whose mask is hashed)."""

    class MaskHashingDropout(keras.layers.Dropout):
        # Set at each call; the train step reads it in the same traced graph.
        last_mask_hash = None

        def call(self, inputs, training=None):
            outputs = super().call(inputs, training=training)
            kept = tf.cast(tf.not_equal(outputs, 0), tf.int8)
            joined = tf.strings.reduce_join(tf.strings.as_string(tf.reshape(kept, [-1])))
            self.last_mask_hash = tf.strings.to_hash_bucket_fast(joined, 2**62)
            return outputs

    drop = MaskHashingDropout(rate)
    return [keras.layers.Dense(hidden), drop, keras.layers.Activation("relu")], drop


def mask_digest(value) -> str:
    """The hash a step's logs carry, as the hex the step event reports ('' if none)."""
    if value is None:
        return ""
    try:
        return f"{int(value):016x}"
    except (TypeError, ValueError):
        return ""
