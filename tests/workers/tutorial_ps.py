"""ParameterServerStrategy with a ClusterCoordinator and a custom training loop, in the shape of TensorFlow's
parameter_server_training tutorial: workers and parameter servers start a ``tf.distribute.Server`` and join it;
the chief builds the model under the strategy, schedules steps on the workers and joins at each epoch's end.
Synthetic data, fewer steps. Does not import distdoctor; tests/workers/tutorial_faults.py injects the fault named in
DD_FAULT (here ``kill9`` on a server task fires when the chief ended its first epoch: a lost parameter server or
worker)."""
import os

import tutorial_faults

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

cluster_resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
if cluster_resolver.task_type in ("worker", "ps"):
    tutorial_faults.server_fault()
    # Set the environment variable to allow reporting worker and ps failure to the
    # coordinator. This is a workaround and won't be necessary in the future.
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    server = tf.distribute.Server(
        cluster_resolver.cluster_spec(),
        job_name=cluster_resolver.task_type,
        task_index=cluster_resolver.task_id,
        protocol=cluster_resolver.rpc_layer or "grpc",
        start=True)
    server.join()

NUM_PS = len(cluster_resolver.cluster_spec().as_dict().get("ps", []))
variable_partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(
    min_shard_bytes=(256 << 10), max_shards=NUM_PS)
strategy = tf.distribute.ParameterServerStrategy(cluster_resolver, variable_partitioner=variable_partitioner)

feature_dim = 16
global_batch_size = 64


def dataset_fn(input_context):
    batch_size = input_context.get_per_replica_batch_size(global_batch_size)
    x = tf.random.stateless_uniform((1024, feature_dim), seed=(1, 2))
    y = tf.cast(tf.reduce_sum(x, axis=1) > feature_dim / 2, tf.int64)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).repeat()
    dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset.batch(batch_size).prefetch(2)


with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(feature_dim,)),
                              keras.layers.Dense(2)])
    optimizer = keras.optimizers.legacy.RMSprop(learning_rate=0.01)
    accuracy = keras.metrics.Accuracy()


@tf.function
def step_fn(iterator):

    def replica_fn(batch_data, labels):
        with tf.GradientTape() as tape:
            pred = model(batch_data, training=True)
            per_example_loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction=keras.losses.Reduction.NONE)(labels, pred)
            loss = tf.nn.compute_average_loss(per_example_loss)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        actual_pred = tf.cast(tf.greater(pred, 0.5), tf.int64)
        accuracy.update_state(labels, actual_pred[:, 0])
        return loss

    batch_data, labels = next(iterator)
    losses = strategy.run(replica_fn, args=(batch_data, labels))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)


@tf.function
def per_worker_dataset_fn():
    return strategy.distribute_datasets_from_function(dataset_fn)


per_worker_dataset = coordinator.create_per_worker_dataset(per_worker_dataset_fn)
per_worker_iterator = iter(per_worker_dataset)

num_epochs = int(os.environ.get("DD_EPOCHS", "4"))
steps_per_epoch = int(os.environ.get("DD_STEPS", "30"))
for i in range(num_epochs):
    accuracy.reset_states()
    for _ in range(steps_per_epoch):
        coordinator.schedule(step_fn, args=(per_worker_iterator,))
    # Wait at epoch boundaries.
    coordinator.join()
    print("Finished epoch %d, accuracy is %f." % (i, accuracy.result().numpy()))
    tutorial_faults.epoch_end(i, model)
