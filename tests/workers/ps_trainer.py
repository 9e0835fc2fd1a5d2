"""A tiny real ParameterServerStrategy job (chief + workers + ps); does not import distdoctor.

Workers and ps serve (``server.join()``); the chief coordinates with
``ClusterCoordinator`` through Keras ``model.fit``.

    python ps_trainer.py [--kill TASK] [--kill-after S]

``--kill ps:0`` / ``--kill worker:1``: that task SIGKILLs itself after S seconds.
"""
import argparse
import json
import os
import signal
import threading
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--kill", default="")
p.add_argument("--kill-after", type=float, default=12.0)
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--steps", type=int, default=40)
args = p.parse_args()

cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"

if args.kill == me:
    def _die():
        time.sleep(args.kill_after)
        print(f"{me}: killing myself with SIGKILL", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=_die, daemon=True).start()

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
if resolver.task_type in ("worker", "ps"):
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol="grpc", start=True)
    print(f"{me}: serving", flush=True)
    server.join()
else:
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)

    def dataset_fn(input_context):
        x = tf.random.stateless_normal((512, 8), seed=(1, 2))
        y = tf.reduce_sum(x, axis=1, keepdims=True)
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).repeat().batch(32).prefetch(2)

    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(8,)), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.legacy.SGD(0.01), loss="mse", steps_per_execution=1)
    hist = model.fit(keras.utils.experimental.DatasetCreator(dataset_fn), epochs=args.epochs,
                     steps_per_epoch=args.steps, verbose=2)
    print(f"{me} final loss {hist.history['loss'][-1]:.4f}", flush=True)
