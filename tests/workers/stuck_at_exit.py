"""A TensorFlow-free task whose code ends without an error but whose process never exits by itself: an exit
handler that waits for ever (what TensorFlow's destructors sometimes do at interpreter exit: a tf.data iterator's
threads, a coordination service whose peers left).

    python stuck_at_exit.py [--stuck TASK ...] [--work S] [--busy-exit S] [--thread S]

Each task prints, works ``--work`` seconds and returns; a task named by ``--stuck`` then waits for ever in an exit
handler, idle. ``--busy-exit S``: the stuck tasks first compute S seconds in the handler (an exit handler that
still works, e.g. an upload) before they wait. ``--thread S``: the stuck tasks leave a thread of their own (not a
daemon) that sleeps S seconds, as an upload waiting on the network does, and the interpreter waits for it at exit.
"""
import argparse
import atexit
import json
import os
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--stuck", action="append", default=[])
p.add_argument("--work", type=float, default=1.0)
p.add_argument("--busy-exit", type=float, default=0.0)
p.add_argument("--thread", type=float, default=0.0)
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"


def teardown():
    end = time.time() + args.busy_exit
    x = 0
    while time.time() < end:    # an exit handler that still works
        x += 1
    print(f"{me} exit handler waits", flush=True)
    threading.Event().wait()    # idle for ever


def upload():
    time.sleep(args.thread)
    print(f"{me} upload thread done", flush=True)


if me in args.stuck:
    atexit.register(teardown)
print(f"{me} started", flush=True)
time.sleep(args.work)
print(f"{me} final loss 0.25", flush=True)
if me in args.stuck and args.thread:
    threading.Thread(target=upload, name="upload").start()
