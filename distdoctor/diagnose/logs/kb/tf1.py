"""TensorFlow 1.x between-graph training: SessionManager, MonitoredSession, Supervisor, SyncReplicasOptimizer
(codes DD680-DD699). Messages quoted from the tensorflow-1.15.5 wheel's python/training/*.py."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

SRC = "TensorFlow 1.15 source"

add("DD680", "tf1-session-not-ready", C.PEER_UNRESPONSIVE, R.CAUSE, ("Session was not ready after waiting",),
    "A non-chief task gave up waiting for the chief to initialise the model", rank=55,
    remedy="The chief never made the model ready: check that the chief runs and reaches its init op (its log), that it "
    "can reach the parameter servers, and that every variable is initialised by the chief's init_op or local_init_op.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/session_manager.py (wait_for_session) (triggered on this machine with TF 2.21's compat.v1)",
    fixture="tensorflow.python.framework.errors_impl.DeadlineExceededError: Session was not ready after waiting 2 secs.")
add("DD681", "tf1-waiting-for-checkpoint", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Waiting for checkpoint to be available.",),
    "A task waits for the chief to write a first checkpoint", rank=15,
    remedy="Expected briefly at start; if it repeats, the chief is not writing checkpoints to this (shared) directory.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/session_manager.py (_restore_checkpoint) (triggered on this machine with TF 2.21's compat.v1)",
    fixture="INFO:tensorflow:Waiting for checkpoint to be available.")
add("DD682", "tf1-session-recreated", C.PEER_CRASHED, R.SYMPTOM,
    ("This may be due to a preemption in a connected worker or parameter server",
     "An error occurred when attempting to close the session"),
    "MonitoredSession recreates its session after an error (a peer went away)", rank=20,
    remedy="A connected worker or parameter server failed or restarted: find its own first error.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/monitored_session.py (_RecoverableSession)",
    fixture="INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker or parameter "
            "server. The current session will be closed and a new session will be created. This error may also occur "
            "due to a gRPC failure caused by high memory or network bandwidth usage in the parameter servers.")
add("DD683", "tf1-sync-replicas-tokens", C.USER_CODE_ERROR, R.CAUSE, ("Too few tokens to finish the first step",),
    "SyncReplicasOptimizer was given too few initial tokens for the first step", rank=60,
    remedy="With replicas_to_aggregate > total_num_replicas, pass enough num_tokens to get_init_tokens_op (or the default).",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/sync_replicas_optimizer.py (triggered on this machine with TF 2.21's compat.v1)", fixture="ValueError: Too few tokens to finish the first step: 1 (given) vs 2 (needed)")
add("DD684", "tf1-sync-replicas-config", C.OTHER, R.CONTEXT, ("SyncReplicasV2: replicas_to_aggregate=",),
    "SyncReplicasOptimizer's aggregation settings", rank=0,
    remedy="A step completes only when replicas_to_aggregate gradients arrived: with fewer live workers than that, "
    "training stalls.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/sync_replicas_optimizer.py",
    fixture="INFO:tensorflow:SyncReplicasV2: replicas_to_aggregate=4; total_num_replicas=4")
add("DD685", "tf1-graph-finalized", C.USER_CODE_ERROR, R.CAUSE, ("Graph is finalized and cannot be modified",),
    "Ops were added to a graph after a MonitoredSession/Supervisor finalized it", rank=60,
    remedy="Build every op (savers, summaries, init ops, dataset iterators) before creating the MonitoredTrainingSession "
    "or Supervisor; create them in a hook's begin() if they must come later.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " framework/ops.py (triggered on this machine with TF 2.21's compat.v1)",
    fixture="RuntimeError: Graph is finalized and cannot be modified.")
add("DD686", "tf1-global-step-waiter", C.PEER_UNRESPONSIVE, R.CONTEXT, ("before starting training.",),
    "A worker waits for the chief's global step before it starts", regex=r"Waiting for global step \d+ before starting training",
    rank=5, remedy="Expected at start with a start delay; if it never ends, the chief is not training.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/basic_session_run_hooks.py (GlobalStepWaiterHook) (triggered on this machine with TF 2.21's compat.v1)",
    fixture="INFO:tensorflow:Waiting for global step 2000 before starting training.")
add("DD687", "tf1-run-after-stop", C.USER_CODE_ERROR, R.CAUSE, ("Run called even after should_stop requested",),
    "A MonitoredSession was run after it asked to stop", rank=55,
    remedy="Loop with `while not mon_sess.should_stop():` so that no step runs after a hook requested the stop.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/monitored_session.py (triggered on this machine with TF 2.21's compat.v1)", fixture="RuntimeError: Run called even after should_stop requested.")
add("DD688", "tf1-master-session-started", C.OTHER, R.CONTEXT, ("Start master session",),
    "The master created its session: every task it waited for answered", rank=0,
    remedy="Nothing to do: an earlier 'CreateSession still waiting' was answered.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " distributed_runtime/master_session.cc",
    fixture="I tensorflow/core/distributed_runtime/master_session.cc:1192] Start master session 3f1a2b4c5d6e7f80 with config: ")
add("DD689", "tf1-recv-from-peer", C.PEER_CRASHED, R.SYMPTOM, ("send_device=",),
    "The failed op received a tensor sent by another task (a _Recv node): the sender is the peer that went away",
    regex=r"_Recv\[.*send_device=\"/job:(?P<job>[A-Za-z_]+)/replica:\d+/task:(?P<index>\d+)", rank=10,
    remedy="The task named as send_device stopped serving: read its own log, exit status and the node's `dmesg`.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " (graph partitioning: _Recv nodes carry send_device / recv_device)",
    fixture='\t [[Node: emb/lookup_S41 = _Recv[client_terminated=false, recv_device="/job:worker/replica:0/task:0/device:CPU:0", '
            'send_device="/job:ps/replica:0/task:1/device:CPU:0", send_device_incarnation=-57, tensor_name="edge_88", '
            'tensor_type=DT_FLOAT, _device="/job:worker/replica:0/task:0/device:CPU:0"]()]]', expect="ps:1")
