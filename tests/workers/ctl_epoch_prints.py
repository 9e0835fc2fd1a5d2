"""A healthy custom training loop that reports its progress the way TensorFlow's multi_worker_with_ctl tutorial does.

    python ctl_epoch_prints.py [--epochs N] [--steps N]

MultiWorkerMirroredStrategy, a dataset from ``distribute_datasets_from_function``, a ``tf.function`` step under
``strategy.run``, and one line per epoch in the tutorial's own format
(``Epoch: %d, accuracy: %f, train_loss: %f.``) -- no closing line, no Keras progress bar: the log of a run that ended
well simply ends after its last epoch line. Every task exits 0 as soon as its loop is over, so a peer may print
heartbeat or connection errors about a chief that has already left (the shutdown race).
"""
from __future__ import annotations

import argparse
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402   (the tutorial's tf.keras, Keras 2)

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--steps", type=int, default=20, help="steps per epoch")
args = p.parse_args()

strategy = tf.distribute.MultiWorkerMirroredStrategy()
GLOBAL_BATCH = 32


def dataset_fn(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
    batch = ctx.get_per_replica_batch_size(GLOBAL_BATCH)
    x = tf.random.stateless_normal((1024, 16), seed=(1, ctx.input_pipeline_id))
    y = tf.cast(tf.reduce_sum(x, axis=1) > 0, tf.int64)
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch)


with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
    optimizer = keras.optimizers.SGD(0.05)
    train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

data = iter(strategy.distribute_datasets_from_function(dataset_fn))


@tf.function
def train_step(iterator):
    def step_fn(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            per_example = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction=keras.losses.Reduction.NONE)(y, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_accuracy.update_state(y, logits)
        return loss
    per_replica = strategy.run(step_fn, args=(next(iterator),))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


for epoch in range(args.epochs):
    total, n = 0.0, 0
    for _ in range(args.steps):
        total += train_step(data)
        n += 1
    print('Epoch: %d, accuracy: %f, train_loss: %f.' % (epoch, train_accuracy.result().numpy(), total / n))
    train_accuracy.reset_states()
