"""A TensorFlow-free task that prints Keras-like epochs, checkpoints, and fails on the first attempt only.

    python flaky.py --ckpt DIR [--fault sigkill|exception|sigterm_self] [--fault-task worker:1] [--fault-epoch 2]

It resumes from the epoch saved in DIR (like BackupAndRestore); the fault fires only while
DIR/fired does not exist, except --fault exception-always, which fires on every attempt.
"""
import argparse
import json
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ckpt", required=True)
p.add_argument("--fault", default="none")
p.add_argument("--fault-task", default="worker:1")
p.add_argument("--fault-epoch", type=int, default=2)
p.add_argument("--epochs", type=int, default=4)
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
os.makedirs(args.ckpt, exist_ok=True)
state = os.path.join(args.ckpt, f"epoch-{me}")
start = int(open(state).read()) if os.path.exists(state) else 0
fired = os.path.join(args.ckpt, "fired")
for epoch in range(start, args.epochs):
    print(f"Epoch {epoch + 1}/{args.epochs}", flush=True)
    for step in range(1, 6):
        time.sleep(0.05)
        print(f"{step}/5 - 0s - loss: {1.0 / (epoch * 5 + step):.4f}", flush=True)
        if me == args.fault_task and epoch + 1 == args.fault_epoch and step == 3:
            if args.fault == "exception-always" or (args.fault != "none" and not os.path.exists(fired)):
                open(fired, "w").close()
                if args.fault == "sigkill":
                    os.kill(os.getpid(), signal.SIGKILL)
                raise ValueError(f"bad record in shard of {me}")
    # written whole or not at all (as checkpoint libraries do): a SIGTERM between truncating and writing
    # would otherwise leave an empty file that the next attempt cannot read
    with open(state + ".tmp", "w") as fh:
        fh.write(str(epoch + 1))
    os.replace(state + ".tmp", state)
print(f"{me} done", flush=True)
sys.exit(0)
