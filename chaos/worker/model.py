"""The workload: a small dense regression model whose train step also reports
this worker's own loss next to the global one.

Under MWMS Keras's logged ``loss`` is all-reduced; the reused-seed symptom
(every worker trains on the same data) only shows in the *local* losses, so
the train step returns both.
"""

from __future__ import annotations


def build_model(tf, keras, features: int, hidden: int, learning_rate: float):
    class ChaosModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                pred = self(x, training=True)
                local_loss = tf.reduce_mean(tf.square(pred - y))
                # Scale so the gradients all-reduced (SUM) by MWMS average over workers.
                replicas = tf.distribute.get_strategy().num_replicas_in_sync
                scaled = local_loss / tf.cast(replicas, local_loss.dtype)
            grads = tape.gradient(scaled, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            ctx = tf.distribute.get_replica_context()
            global_loss = ctx.all_reduce(tf.distribute.ReduceOp.SUM, scaled)
            return {"loss": global_loss, "local_loss": local_loss}

    inputs = keras.Input(shape=(features,))
    h = keras.layers.Dense(hidden, activation="relu")(inputs)
    outputs = keras.layers.Dense(1)(h)
    model = ChaosModel(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=learning_rate, momentum=0.9))
    # Keras's default ("auto") SUMs train_step outputs across workers under
    # MWMS; "first" keeps each worker's own values (the global one is already
    # all-reduced above).
    model.distribute_reduction_method = "first"
    return model
