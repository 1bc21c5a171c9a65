"""A fake Keras 3 at the boundary the agent hooks (keras/src/backend/tensorflow/trainer.py
and keras/src/callbacks/backup_and_restore.py of Keras 3.15, read): the TF backend's
``TensorFlowTrainer.fit``, the base of Keras 3's Model, calls ``on_train_begin`` and
then trains from ``self._initial_epoch or initial_epoch``; its BackupAndRestore
restores ``latest.weights.h5`` and sets ``_initial_epoch`` from
``training_metadata.json`` at train begin, writes both at each epoch end (or every
``save_freq`` batches) and removes ``backup_dir`` at train end. The weights file is
JSON here: the agent only looks whether it is there."""

from __future__ import annotations

import json
import os
import shutil
import sys
import types


def make_modules(root: str) -> dict[str, types.ModuleType]:
    callbacks = types.ModuleType(f"{root}.src.callbacks")
    trainer = types.ModuleType(f"{root}.src.backend.tensorflow.trainer")

    class Callback:
        def __init__(self):
            self.params = None
            self._model = None

        def set_params(self, params):
            self.params = params

        def set_model(self, model):
            self._model = model

        @property
        def model(self):
            return self._model

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

    class CallbackList:  # Keras 3's is a Callback too; its hooks call each callback's
        def __init__(self, callbacks=None, model=None, **params):
            self.callbacks = list(callbacks or [])
            for cb in self.callbacks:
                cb.set_model(model)
                cb.set_params(params)

        def __getattr__(self, hook):
            def call(*args, **kwargs):
                for cb in self.callbacks:
                    getattr(cb, hook)(*args, **kwargs)

            return call

    class BackupAndRestore(Callback):
        def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
            super().__init__()
            self.backup_dir, self.save_freq, self.delete_checkpoint = backup_dir, save_freq, delete_checkpoint
            self._weights_path = os.path.join(backup_dir, "latest.weights.h5")
            self._metadata_path = os.path.join(backup_dir, "training_metadata.json")
            self._current_epoch = self._last_batch_seen = self._since = 0

        def on_train_begin(self, logs=None):
            if os.path.exists(self._weights_path):
                with open(self._weights_path) as f:
                    self.model.load_weights(json.load(f))
            if os.path.exists(self._metadata_path):
                with open(self._metadata_path) as f:
                    self.model._initial_epoch = json.load(f)["epoch"]

        def on_epoch_end(self, epoch, logs=None):
            self._current_epoch, self._last_batch_seen = epoch + 1, 0
            if self.save_freq == "epoch":
                self._save()

        def on_train_batch_end(self, batch, logs=None):
            if self.save_freq != "epoch":
                self._since, self._last_batch_seen = self._since + 1, batch
                if self._since >= self.save_freq:
                    self._since = 0
                    self._save()

        def _save(self):
            os.makedirs(self.backup_dir, exist_ok=True)
            with open(self._weights_path, "w") as f:
                json.dump([list(map(float, w)) for w in self.model.get_weights()], f)
            with open(self._metadata_path, "w") as f:
                json.dump({"epoch": self._current_epoch, "batch": self._last_batch_seen}, f)

        def on_train_end(self, logs=None):
            if self.delete_checkpoint and os.path.exists(self.backup_dir):
                shutil.rmtree(self.backup_dir)

    class History:
        def __init__(self, epochs):
            self.epochs = epochs

    class TensorFlowTrainer:
        def __init__(self, weights=None):
            np = sys.modules["numpy"]
            self.weights = weights if weights is not None else [np.array([0.5, -1.0]), np.array([2.0])]
            self._initial_epoch = None
            self.stop_training = False
            self.kill_at = None  # (epoch, batch): raise SystemExit there, as a SIGKILL would stop it

        def get_weights(self):
            return list(self.weights)

        def load_weights(self, weights):
            np = sys.modules["numpy"]
            self.weights = [np.array(w) for w in weights]

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
        ):
            steps = steps_per_epoch if steps_per_epoch is not None else len(x)
            if not isinstance(callbacks, CallbackList):
                callbacks = CallbackList(callbacks, model=self, verbose=verbose, epochs=epochs, steps=steps)
            callbacks.on_train_begin()
            initial_epoch = self._initial_epoch or initial_epoch
            for epoch in range(initial_epoch, epochs):
                callbacks.on_epoch_begin(epoch)
                for batch in range(steps):
                    if self.kill_at == (epoch, batch):
                        raise SystemExit(137)
                    self.weights = [w + 0.25 for w in self.weights]
                    callbacks.on_train_batch_end(batch, {"loss": 1.0 / (epoch * steps + batch + 1)})
                callbacks.on_epoch_end(epoch, {"loss": 0.5 / (epoch + 1)})
            callbacks.on_train_end(logs=None)
            return History(epochs)

    class Model(TensorFlowTrainer):
        pass

    for name, value in dict(Callback=Callback, CallbackList=CallbackList, BackupAndRestore=BackupAndRestore).items():
        setattr(callbacks, name, value)
    trainer.TensorFlowTrainer = TensorFlowTrainer
    trainer.Model = Model  # keras.src.models.model.Model in Keras 3: here beside its base
    trainer.History = History
    return {f"{root}.src.callbacks": callbacks, f"{root}.src.backend.tensorflow.trainer": trainer}
