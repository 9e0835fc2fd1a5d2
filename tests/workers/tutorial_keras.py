"""Keras ``model.fit`` under MultiWorkerMirroredStrategy, in the shape of TensorFlow's multi_worker_with_keras
tutorial (main.py + mnist_setup.py), with synthetic MNIST-shaped data and fewer steps. Does not import distdoctor;
tests/workers/tutorial_faults.py injects the fault named in DD_FAULT."""
import json
import os

import tutorial_faults

tutorial_faults.corrupt_tf_config()

import mnist_setup  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

per_worker_batch_size = 64
tf_config = json.loads(os.environ["TF_CONFIG"])
num_workers = len(tf_config["cluster"]["worker"])

strategy = tf.distribute.MultiWorkerMirroredStrategy()

global_batch_size = per_worker_batch_size * num_workers
multi_worker_dataset = tutorial_faults.shard(mnist_setup.mnist_dataset(global_batch_size))

with strategy.scope():
    # Model building/compiling need to be within `strategy.scope()`.
    multi_worker_model = mnist_setup.build_and_compile_cnn_model()

epochs = int(os.environ.get("DD_EPOCHS", "3"))
steps = int(os.environ.get("DD_STEPS", "30"))
callbacks = [keras.callbacks.LambdaCallback(
    on_epoch_end=lambda epoch, logs: tutorial_faults.epoch_end(epoch, multi_worker_model))]
multi_worker_model.fit(multi_worker_dataset, epochs=epochs, steps_per_epoch=steps, callbacks=callbacks)
