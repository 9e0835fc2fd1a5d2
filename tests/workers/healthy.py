"""A real MultiWorkerMirroredStrategy job that is healthy but pauses the way real jobs do.

It does not import distdoctor. Usage (under ``distdoctor run --workers 2``)::

    python healthy.py --scenario NAME [--pause S] [--epochs E] [--steps N]

Every scenario ends with each task exiting 0. Between epoch 1 and epoch 2 (custom loop) one task
does something long while the other waits in the next step's all-reduce:

  eval_python  worker:0 (the chief) evaluates in plain Python, CPU-bound, for --pause seconds
  download     worker:0 reads a slow HTTP download ($DD_SLOW_URL) into memory: little CPU, bytes keep arriving
  save         worker:0 saves a large checkpoint to slow storage (writes in chunks, little CPU)
  trace        worker:0 traces and runs a large new tf.function (a long first trace)
  cache        worker:1 fills a tf.data cache file before it goes on
  sleep_all    every worker sleeps --pause seconds (nobody waits on anybody)
  slow_input   worker:1's input pipeline is slow every step (a straggler; no pause)
  fit_val      Keras fit with validation data (no pause)
"""
import argparse
import json
import os
import sys
import time
import urllib.request

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--scenario", required=True)
p.add_argument("--pause", type=float, default=22.0)
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--steps", type=int, default=20)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--workdir", default="/tmp")
args = p.parse_args()

cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
chief = me == "worker:0"
keras.utils.set_random_seed(7)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
n = args.steps * args.epochs * args.batch
x = np.random.default_rng(0).normal(size=(n, 16)).astype("float32")
y = (x[:, 0] * 2.0).astype("float32")


def finish(text):
    """Print the result; the chief (the coordination service's leader) leaves last: a peer's exit waits
    for it in TensorFlow's shutdown barrier, and one whose leader left first waits out its heartbeat timeout."""
    print(text, flush=True)
    if chief:
        time.sleep(3)
    elif args.scenario == "slow_input":
        # TensorFlow's from_generator can deadlock at interpreter exit in a multi-worker job (its iterator's
        # finalizer needs the Python thread state); the training is over and its output flushed: leave now
        sys.stderr.flush()
        os._exit(0)
    raise SystemExit(0)


def say(text):
    print(f"{me}: {text} at {time.time():.3f}", flush=True)


def eval_python(seconds):
    """Chief-only evaluation in Python: CPU-bound, no TensorFlow."""
    end, acc, i = time.time() + seconds, 0.0, 0
    while time.time() < end:
        for j in range(20000):
            acc += (i * j) % 7
        i += 1
    return acc


def download(seconds):
    """Read a slow download into memory (bytes keep arriving; the CPU stays idle)."""
    got = 0
    end = time.time() + seconds
    while time.time() < end:
        with urllib.request.urlopen(os.environ["DD_SLOW_URL"] + f"?seconds={end - time.time():.1f}", timeout=30) as r:
            while True:
                chunk = r.read(16384)
                if not chunk:
                    break
                got += len(chunk)
    return got


def save(seconds, model):
    """A large checkpoint written to slow storage: 1 MiB chunks, throttled; removed afterwards."""
    path = os.path.join(args.workdir, f"ckpt-{os.getpid()}.bin")
    blob = np.concatenate([w.ravel() for w in model.get_weights()] * 64).tobytes()
    blob = (blob * (1 + (1 << 20) // max(1, len(blob))))[: 1 << 20]
    end = time.time() + seconds
    with open(path, "wb") as fh:
        while time.time() < end:
            fh.write(blob)
            fh.flush()
            time.sleep(0.04)
    os.remove(path)


def long_trace(seconds):
    """A new, large tf.function: tracing it takes ``seconds`` of Python building ops (CPU-bound)."""
    @tf.function
    def big(v):
        end = time.time() + seconds / 4   # running the graph built takes about 3 times as long again
        while time.time() < end:   # a Python loop, unrolled into the graph while tracing
            v = v * 1.0001 + 0.0001
        return v
    return float(big(tf.constant(1.0)))


def fill_cache(seconds):
    """One worker builds its tf.data cache file first (decode-like work per element, then the cache write)."""
    path = os.path.join(args.workdir, f"cache-{os.getpid()}")
    end = time.time() + seconds

    def work(i):
        return tf.reduce_sum(tf.signal.rfft(tf.random.stateless_normal((4096,), seed=tf.stack([i, i]))))

    ds = tf.data.Dataset.range(10 ** 9).map(work).take_while(lambda _: tf.py_function(lambda: time.time() < end, [], tf.bool))
    n_el = sum(1 for _ in ds.cache(path))
    for f in os.listdir(args.workdir):
        if f.startswith(os.path.basename(path)):
            os.remove(os.path.join(args.workdir, f))
    return n_el


with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(16,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")

options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF

if args.scenario == "fit_val":
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(args.batch).with_options(options)
    val = tf.data.Dataset.from_tensor_slices((x[:256], y[:256])).batch(args.batch).with_options(options)
    hist = model.fit(ds.repeat(), epochs=args.epochs, steps_per_epoch=args.steps, validation_data=val,
                     validation_steps=4, verbose=2)
    finish(f"{me} final loss {hist.history['loss'][-1]:.6f} val_loss {hist.history['val_loss'][-1]:.6f}")

if args.scenario == "slow_input":
    def gen():
        for _ in range(2):
            for i in range(0, n, args.batch):
                if me == "worker:1":
                    time.sleep(0.2)   # a slow reader on this worker only
                yield x[i:i + args.batch], y[i:i + args.batch]
    ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec((None, 16), tf.float32),
                                                               tf.TensorSpec((None,), tf.float32)))
    hist = model.fit(ds.with_options(options), epochs=args.epochs, steps_per_epoch=args.steps * 2, verbose=2)
    finish(f"{me} final loss {hist.history['loss'][-1]:.6f}")
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(args.batch)
dist = strategy.experimental_distribute_dataset(ds.with_options(options))
opt = model.optimizer


@tf.function
def train_step(batch):
    def step(bx, by):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(bx, training=True)[:, 0] - by))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    per = strategy.run(step, args=tuple(batch))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, per, axis=None)


def pause_point():
    s, secs = args.scenario, args.pause
    if s == "sleep_all":
        say("sleeping"); time.sleep(secs)
    elif chief and s == "eval_python":
        say("evaluating in Python"); eval_python(secs)
    elif chief and s == "download":
        say("downloading"); say(f"downloaded {download(secs)} bytes")
    elif chief and s == "save":
        say("saving a large checkpoint"); save(secs, model)
    elif chief and s == "trace":
        say("tracing a large function"); long_trace(secs)
    elif me == "worker:1" and s == "cache":
        say("filling the dataset cache"); say(f"cached {fill_cache(secs)} elements")
    say("pause over")


step = 0
loss = None
it = iter(dist)
for step in range(1, args.steps * args.epochs + 1):
    batch = next(it)
    if step == args.steps + 1:
        pause_point()   # the batch is fetched: the peer already waits in this step's all-reduce
    loss = train_step(batch)
    if step % 10 == 0:
        print(f"step {step} loss {float(loss):.6f}", flush=True)
finish(f"{me} final loss {float(loss):.6f} after {step} steps")
