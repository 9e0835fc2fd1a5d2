"""The tutorials' mnist_setup.py shape: MNIST-shaped synthetic data (no download) and a small CNN."""
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def mnist_arrays(n=60000):
    """As many examples as MNIST's training set, so the shuffle buffer (and its fill) is the tutorial's."""
    rng = np.random.default_rng(7)
    x = rng.random((n, 28, 28), dtype=np.float32)  # x_train / 255.0
    y = (x[:, :14].sum(axis=(1, 2)) > x[:, 14:].sum(axis=(1, 2))).astype(np.int64)
    return x, y


def mnist_dataset(batch_size):
    x_train, y_train = mnist_arrays()
    return tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).repeat().batch(batch_size)


def dataset_fn(global_batch_size, input_context):
    batch_size = input_context.get_per_replica_batch_size(global_batch_size)
    dataset = mnist_dataset(batch_size)
    dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset


def build_cnn_model():
    import tf_keras as keras
    return keras.Sequential([
        keras.layers.InputLayer(input_shape=(28, 28)),
        keras.layers.Reshape(target_shape=(28, 28, 1)),
        keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(10),
    ])


def build_and_compile_cnn_model():
    import tf_keras as keras
    model = build_cnn_model()
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(learning_rate=0.001), metrics=["accuracy"])
    return model
