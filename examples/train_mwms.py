"""A small, real MultiWorkerMirroredStrategy training job (synthetic data).

Run it under distdoctor:

    distdoctor run --workers 2 -- python examples/train_mwms.py

It reads TF_CONFIG like any multi-worker TensorFlow script and does not
import distdoctor.
"""
import argparse
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="steps per epoch")
    parser.add_argument("--batch", type=int, default=64, help="global batch size")
    args = parser.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    n = args.steps * args.batch
    x = rng.normal(size=(n, 32)).astype("float32")
    y = (x[:, :1] * 2.0 + 0.5).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(args.batch)

    with strategy.scope():
        model = keras.Sequential([
            keras.layers.Dense(64, activation="relu", input_shape=(32,)),
            keras.layers.Dense(1),
        ])
        model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps, verbose=2)
    print(f"final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
