"""distdoctor's in-process agent, injected into every task that ``distdoctor run`` launches.

``distdoctor run`` puts this folder first on the task's PYTHONPATH, so Python
imports this file at start-up without the training script importing anything.
It:

* enables :mod:`faulthandler`, so a SIGSEGV/SIGABRT/SIGBUS prints every
  thread's Python stack into the task's log;
* counts calls of TensorFlow functions (``Context.call_function``: one per
  ``tf.function`` call, i.e. one per training step in Keras) and remembers
  which function the main thread is inside and since when -- the answer to
  "is this task waiting in a collective / graph execution?";
* notices where the job checkpoints: it wraps the constructors of Keras'
  ``BackupAndRestore``, ``tf.train.CheckpointManager`` and
  ``PreemptionCheckpointHandler`` as their modules are imported, and reports
  each directory (what ``run --restarts`` resumes from);
* runs a daemon sampler thread that sends, every ``DISTDOCTOR_SAMPLE_S``
  seconds, one small JSON datagram to the supervisor's Unix socket: the main
  thread's stack, the call counters, explicit steps, and whether another
  Python thread is busy in user code (a tf.data generator, say).

It must never change the training's result and must fail open: every piece is
wrapped so that an error disables the agent, never the training. Datagrams
are sent non-blocking; if the supervisor is slow they are dropped.

Only the first Python process of a task activates (``DISTDOCTOR_AGENT_PID``);
its Python children keep faulthandler but send nothing. Any other
``sitecustomize`` on the path is still run afterwards.
"""
import os
import sys


def _chain_next_sitecustomize():
    # Run the sitecustomize we shadow, if there is one (e.g. a distro's).
    try:
        import importlib.util
        here = os.path.dirname(os.path.abspath(__file__))
        for entry in sys.path:
            try:
                if os.path.abspath(entry or ".") == here:
                    continue
            except Exception:
                continue
            cand = os.path.join(entry or ".", "sitecustomize.py")
            if os.path.isfile(cand):
                spec = importlib.util.spec_from_file_location("_distdoctor_chained_sitecustomize", cand)
                if spec and spec.loader:
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                return
    except Exception:
        pass


def _start_agent():
    import faulthandler
    try:
        if not faulthandler.is_enabled():
            faulthandler.enable(file=sys.stderr, all_threads=True)
    except Exception:
        pass
    sock_path = os.environ.get("DISTDOCTOR_SOCK")
    task = os.environ.get("DISTDOCTOR_TASK")
    if not sock_path or not task:
        return
    owner = os.environ.get("DISTDOCTOR_AGENT_PID")
    if owner and owner != str(os.getpid()):
        try:
            os.kill(int(owner), 0)
            return  # our parent (or an earlier process of this task) reports already
        except Exception:
            pass
    os.environ["DISTDOCTOR_AGENT_PID"] = str(os.getpid())
    if os.environ.get("DISTDOCTOR_PDEATHSIG", "1") == "1":
        try:  # die with the process that started us: no orphans if the supervisor is killed
            import ctypes
            import signal
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:
                os._exit(137)
        except Exception:
            pass

    import json
    import socket
    import threading
    import time
    import types

    period = float(os.environ.get("DISTDOCTOR_SAMPLE_S", "0.5"))
    main_ident = threading.main_thread().ident
    state = {"calls": 0, "in_call": None, "call_since": None, "steps": None, "step_ts": None,
             "hooked": False, "loss": None, "checkpoints": [], "final": False, "uncaught": None}
    # calls entered per TF function on the main thread (bounded): the most-called one is the step function,
    # and how many times each task entered it is how many steps it ran (or began) -- the count that tells
    # which task left the synchronous loop first
    fn_calls = {}
    lock = threading.Lock()

    agent = types.ModuleType("_distdoctor_agent")

    def report_step(n=None, metrics=None):
        with lock:
            state["steps"] = (state["steps"] or 0) + 1 if n is None else int(n)
            state["step_ts"] = time.time()
            if metrics and "loss" in metrics:
                try:
                    state["loss"] = float(metrics["loss"])
                except Exception:
                    pass

    agent.report_step = report_step
    agent.state = state
    sys.modules["_distdoctor_agent"] = agent

    def hook_tensorflow():
        ctx_mod = sys.modules.get("tensorflow.python.eager.context")
        if ctx_mod is None:
            return False
        Context = getattr(ctx_mod, "Context", None)
        orig = getattr(Context, "call_function", None)
        if orig is None:
            # the module is in sys.modules while it is still being imported (Context not defined yet),
            # or this TensorFlow has no call_function: try again at the next sample
            return False
        if getattr(orig, "_distdoctor", False):
            return True

        def call_function(self, name, *args, **kwargs):
            on_main = threading.get_ident() == main_ident
            if on_main:
                try:
                    fn = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
                    state["in_call"] = fn
                    state["call_since"] = time.time()
                    # every trace of one Python function is another concrete function
                    # (__inference_train_step_462, _981 after a retrace): count them as one
                    base = fn.rstrip("0123456789").rstrip("_") or fn
                    if base in fn_calls or len(fn_calls) < 64:
                        fn_calls[base] = fn_calls.get(base, 0) + 1
                except Exception:
                    pass
            try:
                return orig(self, name, *args, **kwargs)
            finally:
                if on_main:
                    state["in_call"] = None
                    state["call_since"] = None
                state["calls"] += 1

        call_function._distdoctor = True
        Context.call_function = call_function
        return True

    # Where the job checkpoints: module -> (class, how to read its directory from the instance).
    checkpointers = {
        "tf_keras.src.callbacks": ("BackupAndRestore", "backup_dir"),
        "keras.src.callbacks.backup_and_restore": ("BackupAndRestore", "backup_dir"),
        "tensorflow.python.checkpoint.checkpoint_management": ("CheckpointManager", "_directory"),
        "tensorflow.python.distribute.failure_handling.failure_handling": ("PreemptionCheckpointHandler", "_checkpoint_dir"),
    }

    def patch_checkpointer(modname, module):
        cls_name, attr = checkpointers[modname]
        cls = getattr(module, cls_name, None)
        orig = getattr(cls, "__init__", None)
        if orig is None or getattr(orig, "_distdoctor", False):
            return

        def __init__(self, *args, **kwargs):
            orig(self, *args, **kwargs)
            try:
                where = getattr(self, attr, None)
                if where is None and attr == "_checkpoint_dir":
                    where = getattr(getattr(self, "_write_checkpoint_manager", None), "_directory", None)
                entry = [cls_name, os.path.abspath(str(where)) if where else None]
                with lock:
                    if entry not in state["checkpoints"] and len(state["checkpoints"]) < 8:
                        state["checkpoints"].append(entry)
            except Exception:
                pass

        __init__._distdoctor = True
        cls.__init__ = __init__
        save = getattr(cls, "_save_checkpoint", None) if cls_name == "PreemptionCheckpointHandler" else None
        if save is not None and not getattr(save, "_distdoctor", False):
            def _save_checkpoint(self, *args, **kwargs):
                result = save(self, *args, **kwargs)
                try:  # one line of evidence in the task's log: this exit is a save after a termination notice
                    where = getattr(getattr(self, "_write_checkpoint_manager", None), "directory", None)
                    sys.stderr.write(f"distdoctor agent: PreemptionCheckpointHandler saved a checkpoint in {where} "
                                     f"after a termination notice (run {getattr(self, 'total_run_calls', '?')})\n")
                    sys.stderr.flush()
                except Exception:
                    pass
                return result

            _save_checkpoint._distdoctor = True
            cls._save_checkpoint = _save_checkpoint

    def patch_loaded_checkpointers():
        for name in checkpointers:
            mod = sys.modules.get(name)
            if mod is not None:
                try:
                    patch_checkpointer(name, mod)
                except Exception:
                    pass

    class CheckpointerFinder:
        """Patches the checkpointing classes right after their modules are executed."""

        def find_spec(self, name, path=None, target=None):
            if name not in checkpointers:
                return None
            try:
                import importlib.machinery
                spec = importlib.machinery.PathFinder.find_spec(name, path)
                loader = spec.loader if spec else None
                orig_exec = getattr(loader, "exec_module", None)
                if orig_exec is None:
                    return None

                def exec_module(module):
                    orig_exec(module)
                    try:
                        patch_checkpointer(name, module)
                    except Exception:
                        pass

                loader.exec_module = exec_module
                return spec
            except Exception:
                return None

    try:
        sys.meta_path.insert(0, CheckpointerFinder())
    except Exception:
        pass

    site_markers = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
    stdlib = os.path.dirname(os.__file__)

    def is_user_file(fn):
        return not (fn.startswith("<") or any(m in fn for m in site_markers) or fn.startswith(stdlib)
                    or fn == __file__)

    def describe(frame, limit=40):
        frames = []
        while frame is not None and len(frames) < limit:
            code = frame.f_code
            frames.append((code.co_filename, frame.f_lineno, code.co_name))
            frame = frame.f_back
        frames.reverse()  # outermost first
        return frames

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setblocking(False)
    pid = os.getpid()

    def sample():
        frames = sys._current_frames()
        main = frames.get(main_ident)
        stack = describe(main) if main is not None else []
        user_threads = []
        for ident, fr in frames.items():
            if ident == main_ident or ident == threading.get_ident():
                continue
            st = describe(fr, limit=25)
            user = [f for f in st if is_user_file(f[0])]
            if user and st and not (st[-1][2] in ("wait", "_wait_for_tstate_lock", "select", "poll", "accept", "recv", "read")):
                user_threads.append({"stack": st[-12:], "user": user[-1]})
        loc = None
        for f in reversed(stack):
            if is_user_file(f[0]):
                loc = f
                break
        try:   # the job's own threads that the interpreter will wait for at exit (non-daemon, alive)
            joining = sum(1 for th in threading.enumerate() if not th.daemon and th is not threading.main_thread()
                          and th.is_alive())
        except Exception:
            joining = None
        with lock:
            msg = {
                "v": 1, "task": task, "pid": pid, "ts": time.time(),
                "calls": state["calls"], "in_call": state["in_call"], "call_since": state["call_since"],
                "steps": state["steps"], "step_ts": state["step_ts"], "loss": state["loss"],
                "hooked": state["hooked"],
                "stack": stack[-30:], "location": loc, "user_threads": user_threads[:4],
                "tf_loaded": "tensorflow" in sys.modules, "checkpoints": list(state["checkpoints"]),
                "fn_calls": sorted(fn_calls.items(), key=lambda kv: -kv[1])[:3], "final": state["final"],
                "tf_config": (os.environ.get("TF_CONFIG") or "")[:16384] or None,
                "uncaught": state["uncaught"], "joining": joining,
            }
        data = json.dumps(msg).encode()
        if len(data) > 60000:
            msg["stack"] = stack[-8:]
            msg["user_threads"] = []
            data = json.dumps(msg).encode()
        sock.sendto(data, sock_path)

    def loop():
        failures = 0
        while True:
            try:
                if not state["hooked"]:
                    state["hooked"] = hook_tensorflow()
                patch_loaded_checkpointers()
                sample()
                failures = 0
            except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
                failures += 1
            except Exception:
                failures += 1
            if failures > 600:  # the supervisor is gone for good: stop quietly
                return
            time.sleep(period)

    t = threading.Thread(target=loop, name="distdoctor-sampler", daemon=True)
    t.start()

    def note_uncaught(exc_type, at):
        # The main thread's code ended with an uncaught exception: the process is on its way out, and the
        # supervisor gives it the failure grace to get there (TensorFlow's teardown can wait forever for a
        # peer that waits for it). Only the exception's type name leaves the process; its text is in the log.
        if state["uncaught"] is None and exc_type is not None and not issubclass(exc_type, SystemExit):
            state["uncaught"] = [getattr(exc_type, "__name__", "Exception")[:200], at]

    previous_hook = sys.excepthook

    def excepthook(exc_type, exc, tb):
        try:
            note_uncaught(exc_type, time.time())
            sample()
        except Exception:
            pass
        return previous_hook(exc_type, exc, tb)

    sys.excepthook = excepthook

    def final_sample():
        # The periodic sample can be up to one period (and a GIL hold) old when the task exits: at a few
        # ms per step, dozens of steps. One last sample, marked final, makes the counts at exit exact.
        if state["final"]:
            return
        state["final"] = True
        try:   # an exception the main thread's code ended with, even where the job replaced sys.excepthook
            last = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
            if last is not None:
                note_uncaught(type(last), time.time())
        except Exception:
            pass
        try:
            sample()
        except Exception:
            pass

    try:  # runs when the main thread's code ends, before TensorFlow's own atexit teardown
        threading._register_atexit(final_sample)
    except Exception:
        pass
    try:
        import atexit
        atexit.register(final_sample)
    except Exception:
        pass


try:
    _start_agent()
except Exception:  # fail open: training must go on
    pass
_chain_next_sitecustomize()
