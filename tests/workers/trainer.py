"""A tiny real MultiWorkerMirroredStrategy trainer that can inject one fault.

It does not import distdoctor. Usage (under ``distdoctor run``)::

    python trainer.py [--loop fit|custom] [--fault NAME] [--fault-task worker:1] [--fault-step N] [--verbose 1]

Faults (applied on --fault-task only, at --fault-step):
  sigkill, segv, abort, exception, exception_stuck_exit (an exception, while a non-daemon thread of the task's
  never ends: the process cannot exit, as when TensorFlow's teardown waits for a peer), stall (deadlock on a lock in a callback), sleep (sleep forever in a callback),
  import_error (a shared library this node lacks), remote_path (read a shard on s3://, a file system this
  TensorFlow lacks),
  stall_input (the input generator blocks), sigstop, oom (allocate until the
  memory cgroup in $DD_TEST_CGROUP kills us), fewer_batches (this task's data
  has fewer batches), straggler (0.15 s extra per step), pause_all (every task
  sleeps $DD_PAUSE_S seconds at the fault step), nan (loss becomes NaN).

For restarts: --backup DIR adds Keras' BackupAndRestore; --fault-epoch E (1-based)
fires the fault only in that epoch; --fault-once FILE fires it only while FILE does
not exist (it is created just before), i.e. on the first attempt only.
"""
import argparse
import ctypes
import json
import os
import signal
import sys
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--loop", default="fit", choices=["fit", "custom"])
p.add_argument("--fault", default="none")
p.add_argument("--fault-task", default="worker:1")
p.add_argument("--fault-step", type=int, default=8)
p.add_argument("--steps", type=int, default=30)
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--verbose", type=int, default=2)   # Keras' own: 1 draws a progress bar per epoch
p.add_argument("--backup", default=None)
p.add_argument("--fault-epoch", type=int, default=None)
p.add_argument("--fault-once", default=None)
p.add_argument("--input", default="distributed", choices=["distributed", "local"],
               help="custom loop: iterate strategy.experimental_distribute_dataset (TF stops every worker at the "
                    "shortest input) or each worker's own tf.data dataset directly (a worker whose data ends leaves "
                    "the step loop while its peers wait in the all-reduce)")
p.add_argument("--preempt-dir", default=None,
               help="custom loop: wrap each step in TF's PreemptionCheckpointHandler saving to this folder")
p.add_argument("--save-before-preemption", action="store_true",
               help="BackupAndRestore(save_before_preemption=True): TF's PreemptionCheckpointHandler saves on SIGTERM")
p.add_argument("--linger", type=float, default=0.0,
               help="after training, a non-daemon thread (an uploader, say) keeps the process alive this long")
p.add_argument("--after-loop", default="exit", choices=["exit", "reduce"],
               help="custom loop: after the loop, exit, or all-reduce the step count (another collective)")
p.add_argument("--print-every", type=int, default=10, help="custom loop: print the step and loss every N steps (0: never)")
args = p.parse_args()

cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
faulty = me == args.fault_task
fault = args.fault if (faulty or args.fault == "pause_all") else "none"

if fault == "oom" and os.environ.get("DD_TEST_CGROUP"):
    with open(os.path.join(os.environ["DD_TEST_CGROUP"], "cgroup.procs"), "w") as fh:
        fh.write(str(os.getpid()))

keras.utils.set_random_seed(1234)
strategy = tf.distribute.MultiWorkerMirroredStrategy()

n_steps = args.steps * args.epochs
rng = np.random.default_rng(0)


# fewer_batches in the custom loop: this task's own data is shorter (its shard holds fewer records)
n_records = n_steps * args.batch
if fault == "fewer_batches" and args.loop == "custom":
    n_records = (n_steps * 2 // 3) * args.batch


def gen():
    for i in range(n_records):
        if fault == "stall_input" and i == args.fault_step * args.batch:
            print(f"{me}: input pipeline blocks now", flush=True)
            time.sleep(100000)
        x = rng.normal(size=(16,)).astype("float32")
        yield x, np.float32(x[0] * 2.0 + (np.nan if fault == "nan" and i >= args.fault_step * args.batch else 0.0))


ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec((16,), tf.float32), tf.TensorSpec((), tf.float32)))
ds = ds.batch(args.batch)
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
ds = ds.with_options(options)

hog = []


current_epoch = [0]


def inject(step):
    if step != args.fault_step and fault not in ("straggler",):
        return
    if args.fault_epoch is not None and current_epoch[0] != args.fault_epoch:
        return
    if args.fault_once and fault != "none":
        if os.path.exists(args.fault_once):
            return
        open(args.fault_once, "w").close()
    if fault == "straggler":
        time.sleep(0.15)
        return
    if fault != "none":
        print(f"FAULT {fault} injected by {me} at {time.time():.6f}", flush=True)
    if fault == "none":
        return
    elif fault == "sigkill":
        print(f"{me}: killing myself with SIGKILL", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    elif fault == "sigterm":
        print(f"{me}: SIGTERM from outside (a preemption notice)", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1.0)  # the handler saves at the next step
    elif fault == "segv":
        ctypes.string_at(0)
    elif fault == "abort":
        os.abort()
    elif fault == "exception":
        raise ValueError(f"bad record in shard of {me}")
    elif fault == "exception_stuck_exit":
        import threading
        threading.Thread(target=threading.Event().wait, name="uploader").start()   # never ends, not a daemon
        raise ValueError(f"bad record in shard of {me}")
    elif fault == "stall":
        print(f"{me}: stuck in a callback", flush=True)
        threading_lock = __import__("threading").Lock()
        threading_lock.acquire()
        threading_lock.acquire()  # deadlock
    elif fault == "remote_path":
        # a shard on a file system this TensorFlow has no plugin for (s3:// left the wheel for tensorflow-io in 2.6)
        tf.io.gfile.GFile("s3://training-data/shard-00001.tfrecord").read()
    elif fault == "import_error":
        # a lazily imported extension whose library this node lacks (another CUDA): a message the knowledge base knows
        raise ImportError("libcudart.so.12: cannot open shared object file: No such file or directory")
    elif fault == "sleep":
        print(f"{me}: sleeping forever in a callback", flush=True)
        time.sleep(10 ** 6)
    elif fault == "sigstop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif fault == "pause_all":
        time.sleep(float(os.environ.get("DD_PAUSE_S", "40")))
    elif fault == "oom":
        print(f"{me}: allocating memory", flush=True)
        while True:
            hog.append(np.ones(16 * 1024 * 1024, dtype=np.uint8))


class Inject(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        current_epoch[0] = epoch + 1

    def on_train_batch_end(self, batch, logs=None):
        inject(batch + 1)


with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(16,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")

if args.loop == "fit":
    # fewer_batches: each task derives steps_per_epoch from the size of its own shard, the
    # classic mistake; the faulty task's shard is half as big.
    spe = args.steps // 2 if fault == "fewer_batches" else args.steps
    callbacks = [Inject()]
    if args.backup:
        callbacks.insert(0, keras.callbacks.BackupAndRestore(backup_dir=args.backup,
                                                             save_before_preemption=args.save_before_preemption))
    hist = model.fit(ds.repeat(), epochs=args.epochs, steps_per_epoch=spe,
                     callbacks=callbacks, verbose=args.verbose)
    print(f"{me} final loss {hist.history['loss'][-1]:.6f}", flush=True)
else:
    dist = strategy.experimental_distribute_dataset(ds) if args.input == "distributed" else ds
    opt = model.optimizer

    @tf.function
    def train_step(batch):
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True)[:, 0] - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        per = strategy.run(step, args=tuple(batch))
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, per, axis=None)

    step = 0
    handler = None
    if args.preempt_dir:
        ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
        handler = tf.distribute.experimental.PreemptionCheckpointHandler(strategy.cluster_resolver, ckpt,
                                                                         args.preempt_dir)
        step = int(handler.total_run_calls)
        print(f"{me}: restored at step {step}", flush=True)
        dist = strategy.experimental_distribute_dataset(ds.skip(step)) if args.input == "distributed" else ds.skip(step)
    for batch in dist:
        loss = handler.run(train_step, batch) if handler else train_step(batch)
        step += 1
        inject(step)
        if args.print_every and step % args.print_every == 0:
            print(f"step {step} loss {float(loss):.6f}", flush=True)
    print(f"{me} final loss {float(loss):.6f} after {step} steps", flush=True)
    if args.after_loop == "reduce":
        # an end-of-epoch reduce of the step count across workers: another collective than the step's
        @tf.function
        def count_steps(n):
            return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.cast(n, tf.float32)), axis=None)
        print(f"{me}: steps over all workers {float(count_steps(tf.constant(step))):.0f}", flush=True)
if args.linger:
    __import__("threading").Thread(target=time.sleep, args=(args.linger,), name="uploader").start()
