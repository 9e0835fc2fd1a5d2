"""A TensorFlow-free stand-in for a ParameterServerStrategy job: each task sleeps, some exit on cue.

    python roles.py [--exit TASK=CODE@S ...] [--once DIR] [--chief-s S]

The chief exits 0 after --chief-s seconds; workers and ps "serve" until stopped. ``--exit
worker:1=-9@0.5`` makes worker:1 end 0.5 s after start (a negative code: that signal). With
--once DIR an exit fires only on the task's first start (a marker per task in DIR).
"""
import argparse
import json
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--exit", action="append", default=[])
p.add_argument("--once", default=None)
p.add_argument("--chief-s", type=float, default=4.0)
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
print(f"{me} started", flush=True)
plan = {}
for spec in args.exit:
    task, _, rest = spec.partition("=")
    code, _, after = rest.partition("@")
    plan[task] = (int(code), float(after))
if me in plan and args.once:
    marker = os.path.join(args.once, me.replace(":", "-"))
    if os.path.exists(marker):
        plan.pop(me)
    else:
        os.makedirs(args.once, exist_ok=True)
        open(marker, "w").close()
if me in plan:
    code, after = plan[me]
    time.sleep(after)
    print(f"{me} ends with {code}", flush=True)
    if code < 0:
        os.kill(os.getpid(), -code)
    sys.exit(code)
if me == "chief:0":
    time.sleep(args.chief_s)
    print("chief finished training", flush=True)
    sys.exit(0)
print(f"{me} serving", flush=True)
time.sleep(120)
