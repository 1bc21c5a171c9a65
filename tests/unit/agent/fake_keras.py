"""A fake Keras 2 at the boundary the agent hooks: a training module whose
Model.fit drives a CallbackList as Keras's does (set_params with epochs and
steps, on_train_begin, per epoch on_epoch_begin / on_train_batch_end /
on_epoch_end, on_train_end), and a callbacks module with Callback,
CallbackList and BackupAndRestore."""

from __future__ import annotations

import sys
import types


def make_modules(root: str) -> dict[str, types.ModuleType]:
    callbacks = types.ModuleType(f"{root}.src.callbacks")
    training = types.ModuleType(f"{root}.src.engine.training")

    class Callback:
        def __init__(self):
            self.model = None
            self.params = {}

        def set_params(self, params):
            self.params = params

        def set_model(self, model):
            self.model = model

        def on_train_begin(self, logs=None):
            pass

        def on_epoch_begin(self, epoch, logs=None):
            pass

        def on_train_batch_end(self, batch, logs=None):
            pass

        def on_epoch_end(self, epoch, logs=None):
            pass

        def on_train_end(self, logs=None):
            pass

    class CallbackList:
        def __init__(self, callbacks=None):
            self.callbacks = list(callbacks or [])

        def __getattr__(self, hook):
            def call(*args):
                for cb in self.callbacks:
                    getattr(cb, hook)(*args)

            return call

    class BackupAndRestore(Callback):
        def __init__(self, backup_dir, save_freq="epoch"):
            super().__init__()
            self.backup_dir = backup_dir
            self.save_freq = save_freq

    class Recorder(Callback):
        """A user's callback: records every call it gets."""

        def __init__(self):
            super().__init__()
            self.calls = []

        def on_train_begin(self, logs=None):
            self.calls.append(("train_begin",))

        def on_epoch_begin(self, epoch, logs=None):
            self.calls.append(("epoch_begin", epoch))

        def on_train_batch_end(self, batch, logs=None):
            self.calls.append(("batch_end", batch, dict(logs or {})))

        def on_epoch_end(self, epoch, logs=None):
            self.calls.append(("epoch_end", epoch))

        def on_train_end(self, logs=None):
            self.calls.append(("train_end",))

    class NumpyInt:
        """Like numpy.int64: arithmetic and int() work, JSON cannot encode it."""

        def __init__(self, value):
            self.value = value

        def __int__(self):
            return self.value

        __index__ = __int__

        def __add__(self, other):
            return NumpyInt(self.value + int(other))

        __radd__ = __add__

    class History:
        def __init__(self, epochs):
            self.epochs = epochs

    class Model:
        def __init__(self, weights=None):
            np = sys.modules["numpy"]
            self.weights = weights if weights is not None else [np.array([0.5, -1.0]), np.array([2.0])]
            self.calls = []  # what fit received
            self.fail_at = None  # (epoch, batch) -> raise self.failure there
            self.numpy_batches = False  # batch indices as NumPy ints (Keras after a mid-epoch restore)
            self.failure = RuntimeError("collective aborted")

        def get_weights(self):
            return list(self.weights)

        def fit(
            self,
            x=None,
            y=None,
            batch_size=None,
            epochs=1,
            verbose="auto",
            callbacks=None,
            validation_split=0.0,
            validation_data=None,
            shuffle=True,
            class_weight=None,
            sample_weight=None,
            initial_epoch=0,
            steps_per_epoch=None,
            validation_steps=None,
            validation_batch_size=None,
            validation_freq=1,
            max_queue_size=10,
            workers=1,
            use_multiprocessing=False,
        ):
            self.calls.append(
                {
                    "x": x,
                    "epochs": epochs,
                    "callbacks": callbacks,
                    "verbose": verbose,
                    "initial_epoch": initial_epoch,
                    "steps_per_epoch": steps_per_epoch,
                }
            )
            cbl = callbacks if isinstance(callbacks, CallbackList) else CallbackList(callbacks)
            steps = steps_per_epoch if steps_per_epoch is not None else (len(x) if x is not None else None)
            for cb in cbl.callbacks:
                cb.set_params({"epochs": epochs, "steps": steps, "verbose": verbose})
                cb.set_model(self)
            cbl.on_train_begin()
            for epoch in range(initial_epoch, epochs):
                cbl.on_epoch_begin(epoch)
                for batch in range(steps or 0):
                    if self.fail_at == (epoch, batch):
                        raise self.failure
                    self.weights = [w + 0.25 for w in self.weights]
                    index = NumpyInt(batch) if self.numpy_batches else batch
                    cbl.on_train_batch_end(index, {"loss": 1.0 / (epoch * steps + batch + 1)})
                cbl.on_epoch_end(epoch, {"loss": 0.5 / (epoch + 1)})
            cbl.on_train_end()
            return History(epochs)

    for name, value in dict(
        Callback=Callback, CallbackList=CallbackList, BackupAndRestore=BackupAndRestore, Recorder=Recorder
    ).items():
        setattr(callbacks, name, value)
    training.Model = Model
    training.History = History
    pkg = types.ModuleType(root)
    src = types.ModuleType(f"{root}.src")
    engine = types.ModuleType(f"{root}.src.engine")
    return {
        root: pkg,
        f"{root}.src": src,
        f"{root}.src.engine": engine,
        f"{root}.src.callbacks": callbacks,
        f"{root}.src.engine.training": training,
    }
