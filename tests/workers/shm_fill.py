"""A TensorFlow-free task whose shared memory runs out, as a data loader's does in a container with a small
``/dev/shm``: the task named by ``--fill`` maps a file in /dev/shm as large as ``--size`` MiB and writes it,
``--step`` KiB every ``--every`` seconds, until a page the tmpfs cannot back is touched: the kernel sends SIGBUS.
The other tasks wait ``--wait`` seconds.

    python shm_fill.py --fill worker:1 [--size 64] [--step 256] [--every 0.2] [--wait 60]
"""
import argparse
import json
import mmap
import os
import time

p = argparse.ArgumentParser()
p.add_argument("--fill", required=True)
p.add_argument("--size", type=int, default=64)
p.add_argument("--step", type=int, default=256)
p.add_argument("--every", type=float, default=0.2)
p.add_argument("--wait", type=float, default=60.0)
args = p.parse_args()
cfg = json.loads(os.environ["TF_CONFIG"])
me = f"{cfg['task']['type']}:{cfg['task']['index']}"
print(f"{me} started", flush=True)
if me == args.fill:
    path = f"/dev/shm/distdoctor-test-{os.getpid()}"
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o600)
    size, step = args.size << 20, args.step << 10
    os.ftruncate(fd, size)              # sparse: the tmpfs gives pages only as they are written
    buf = mmap.mmap(fd, size)
    os.unlink(path)                     # as shm_open + unlink: gone with the process
    for off in range(0, size, step):
        buf[off:off + step] = b"x" * step
        print(f"{me} filled {(off + step) >> 20} MiB", flush=True)
        time.sleep(args.every)
    print(f"{me} filled {args.size} MiB without a bus error", flush=True)
else:
    time.sleep(args.wait)
