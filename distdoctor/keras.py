"""Optional explicit instrumentation: exact step counts and losses from Keras.

``distdoctor run`` needs no change to the training script; this callback only
makes step counts exact (and reports the loss, for NaN detection)::

    from distdoctor.keras import DoctorCallback
    model.fit(ds, callbacks=[DoctorCallback()])

Outside ``distdoctor run`` it does nothing. Importing this module imports
Keras (tf-keras when ``TF_USE_LEGACY_KERAS=1``, else ``tensorflow.keras``).
"""
from __future__ import annotations

import os

from . import step as _step

if os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes"):
    import tf_keras as _keras
else:  # pragma: no cover - depends on the installed Keras flavour
    from tensorflow import keras as _keras

__all__ = ["DoctorCallback"]


class DoctorCallback(_keras.callbacks.Callback):
    """Reports every finished training batch to the supervising ``distdoctor run``."""

    def __init__(self) -> None:
        super().__init__()
        self._steps = 0

    def on_train_batch_end(self, batch, logs=None):
        self._steps += 1
        loss = None
        if logs and "loss" in logs:
            try:
                loss = float(logs["loss"])
            except (TypeError, ValueError):
                loss = None
        if loss is None:
            _step(self._steps)
        else:
            _step(self._steps, loss=loss)
