"""A TensorFlow-free task that dies on a library's fatal line: one task prints it and exits, the others wait.

    python fatal_line.py [--task worker:1] [--code 1] [--after S] [--wait S] [--line TEXT] [--peer-lost]

The named task prints ``--line`` (by default Horovod's version-mismatch error) to stderr after ``--after``
seconds and exits with ``--code``; every other task sleeps ``--wait`` seconds and exits 0 -- or, with
``--peer-lost``, reports the named task lost the way TensorFlow's collectives do and exits 1.
"""
import argparse
import json
import os
import sys
import time

HOROVOD = ("horovod.common.exceptions.HorovodVersionMismatchError: Framework tensorflow installed with version "
           "2.3.0 but found version 2.4.1.")

p = argparse.ArgumentParser()
p.add_argument("--task", default="worker:1")
p.add_argument("--code", type=int, default=1)
p.add_argument("--after", type=float, default=0.5)
p.add_argument("--wait", type=float, default=3.0)
p.add_argument("--line", default=HOROVOD)
p.add_argument("--peer-lost", action="store_true")
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
print(f"{me} started", flush=True)
if me == args.task:
    time.sleep(args.after)
    print(args.line, file=sys.stderr, flush=True)
    sys.exit(args.code)
time.sleep(args.wait)
if args.peer_lost:
    job, _, idx = args.task.partition(":")
    print("tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: failed to "
          f"connect to all addresses. Additional GRPC error information from remote target /job:{job}/replica:0/"
          f"task:{idx}: Connection reset by peer", file=sys.stderr, flush=True)
    sys.exit(1)
print(f"{me} done", flush=True)
