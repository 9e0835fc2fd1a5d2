"""A task that leaves processes behind: a child in its own process group, and a grandchild that double-forks into its
own session (setsid) -- what a task that starts a helper daemon does. Writes their pids (and its own) to the file
named by argv[1], one per line; ``--stay`` keeps the task itself alive (for a SIGKILLed supervisor); ``--tidy``
starts a child that ends by itself before the task does (nothing is left behind)."""
import os
import subprocess
import sys
import time

out, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)"]
if mode == "--tidy":
    subprocess.run([sys.executable, "-c", "print('helper done')"], check=True)
    with open(out, "w") as fh:
        fh.write(f"{os.getpid()}\n")
    print("tidy task done", flush=True)
    sys.exit(0)
child = subprocess.Popen(SLEEPER)                       # same process group as the task
r, w = os.pipe()
if os.fork() == 0:                                      # the daemon: double fork, its own session
    os.setsid()
    if os.fork() == 0:
        os.close(r)
        os.write(w, f"{os.getpid()}\n".encode())
        os.close(w)
        os.execv(sys.executable, SLEEPER)
    os._exit(0)
os.close(w)
daemon = int(os.read(r, 64).decode().strip())
os.wait()
with open(out + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()}\n{child.pid}\n{daemon}\n")
os.replace(out + ".tmp", out)
print(f"task {os.getpid()} left child {child.pid} and daemon {daemon}", flush=True)
if mode == "--stay":
    time.sleep(300)
