"""A TensorFlow-free task whose code ends without an error but whose process never exits by itself: an exit
handler that waits for ever (what TensorFlow's destructors sometimes do at interpreter exit: a tf.data iterator's
threads, a coordination service whose peers left).

    python stuck_at_exit.py [--stuck TASK ...] [--work S] [--busy-exit S] [--thread S] [--upload S --sink PORT]

Each task prints, works ``--work`` seconds and returns; a task named by ``--stuck`` then waits for ever in an exit
handler, idle. ``--busy-exit S``: the stuck tasks first compute S seconds in the handler (an exit handler that
still works, e.g. an upload) before they wait. ``--thread S``: the stuck tasks leave a thread of their own (not a
daemon) that sleeps S seconds, as an upload waiting on the network does, and the interpreter waits for it at exit.
``--upload S``: the stuck tasks' exit handler first uploads for S seconds to the loopback port ``--sink``, slowly
(a chunk, then a sleep: almost no CPU, and sockets are not counted in ``/proc/PID/io``), before it waits.
"""
import argparse
import atexit
import json
import os
import socket
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--stuck", action="append", default=[])
p.add_argument("--work", type=float, default=1.0)
p.add_argument("--busy-exit", type=float, default=0.0)
p.add_argument("--thread", type=float, default=0.0)
p.add_argument("--upload", type=float, default=0.0)
p.add_argument("--sink", type=int, default=0)
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"


def teardown():
    end = time.time() + args.busy_exit
    x = 0
    while time.time() < end:    # an exit handler that still works
        x += 1
    if args.upload:
        with socket.create_connection(("127.0.0.1", args.sink)) as conn:
            end = time.time() + args.upload
            while time.time() < end:    # an upload over a slow link: 256 KiB/s
                conn.sendall(b"x" * (64 << 10))
                time.sleep(0.25)
        print(f"{me} exit handler uploaded", flush=True)
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
