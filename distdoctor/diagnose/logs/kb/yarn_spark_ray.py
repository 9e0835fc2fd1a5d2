"""YARN, Spark, TensorFlowOnSpark and Ray (codes DD787-DD799, DD891-DD897, DD729, DD679, DD869, DD889; the first
YARN/Spark/TFoS signatures are in platform.py).

TensorFlowOnSpark wording is from yahoo/TensorFlowOnSpark (tensorflowonspark/*.py). The apache/hadoop,
apache/spark and ray-project/ray repositories are larger than this project's mirror allows: their messages are quoted
from the files named in ``source`` (hadoop-yarn-server-nodemanager ContainersMonitorImpl.java and
ContainerExitStatus.java; Spark's YarnAllocator.scala, TaskSchedulerImpl.scala, PythonRunner.scala,
ExecutorPodsLifecycleManager.scala; Ray's python/ray/exceptions.py and the raylet's memory monitor) as users' logs
show them.
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_NM = "apache/hadoop hadoop-yarn-project/.../nodemanager/containermanager/monitor/ContainersMonitorImpl.java"
_EXIT = "apache/hadoop hadoop-yarn-api/.../records/ContainerExitStatus.java"
_SPARK = "apache/spark "
_TFOS = "yahoo/TensorFlowOnSpark tensorflowonspark/"
_RAY = "ray-project/ray "
_YMEM = ("Raise the container's memory (spark.executor.memory + spark.executor.memoryOverhead, TonY's <job>.memory, "
         "mapreduce.*.memory.mb) or lower the batch size and buffers.")
_PEER = ("A consequence: the failed executor/worker's own log says why it failed (memory limits, a lost node, an "
         "exception).")

# -- YARN ---------------------------------------------------------------------------------------------------------
add("DD787", "yarn-beyond-pmem-new", C.OOM_HOST, R.CAUSE, ("beyond the 'PHYSICAL' memory limit",),
    "YARN killed the container for exceeding its physical memory limit (Hadoop 3 wording)", rank=95, remedy=_YMEM,
    component="yarn", versions=">=3.1 (the <=3.0 wording is DD830)", source=_NM,
    fixture="Container [pid=31337,containerID=container_e12_1600000000000_0042_01_000003] is running 532676608B beyond "
            "the 'PHYSICAL' memory limit. Current usage: 4.5 GB of 4 GB physical memory used; 6.2 GB of 8.4 GB virtual "
            "memory used. Killing container.")
add("DD788", "yarn-beyond-vmem", C.OOM_HOST, R.CAUSE,
    ("is running beyond virtual memory limits", "beyond the 'VIRTUAL' memory limit",
     "virtual memory used. Killing container"),
    "YARN killed the container for exceeding its virtual memory limit", rank=93,
    remedy="YARN's virtual-memory check killed it (TensorFlow maps much more virtual than resident memory): raise "
    "yarn.nodemanager.vmem-pmem-ratio or disable yarn.nodemanager.vmem-check-enabled, or give the container more memory.",
    component="yarn", versions="all", source=_NM,
    fixture="Container [pid=4242,containerID=container_1500000000000_0001_01_000002] is running beyond virtual memory "
            "limits. Current usage: 1.1 GB of 2 GB physical memory used; 4.3 GB of 4.2 GB virtual memory used. Killing "
            "container.")
add("DD789", "yarn-exit-status-memory", C.OOM_HOST, R.CAUSE,
    ("status: -104", "status: -103", "Status=-104", "Status=-103", "status -104", "status -103"),
    "A container ended with YARN's memory-kill exit status (-104 physical, -103 virtual)",
    regex=r"(?i)exit ?status[:=]? ?-10[34]\b", rank=90, remedy=_YMEM, component="yarn", versions=">=2.6",
    source=_EXIT + " (KILLED_EXCEEDED_PMEM -104 / KILLED_EXCEEDED_VMEM -103)",
    fixture="Container marked as failed: container_1600000000000_0042_01_000003 on host: node7. Exit status: -104. "
            "Diagnostics: Container killed on request. Exit code is 137")
add("DD790", "yarn-preempted", C.PREEMPTION, R.CAUSE, ("Container preempted by scheduler", "status: -102", "Status=-102"),
    "YARN's scheduler preempted the container", rank=82,
    remedy="A higher-priority queue reclaimed the resources: run in a queue with guaranteed capacity, or checkpoint and "
    "resume.", component="yarn", versions="all", source=_EXIT + " (PREEMPTED -102) / ResourceManager schedulers",
    fixture="Container container_1600000000000_0042_01_000004 on host: node3 was preempted. Diagnostics: Container "
            "preempted by scheduler")
# Spark's YARN allocator names the preempted container itself (the executor it ran is then "lost")
add("DD1013", "spark-container-preempted", C.PREEMPTION, R.CAUSE, ("was preempted.",),
    "YARN preempted the container of a Spark executor", regex=r"Container \S+(?: on host: \S+)? was preempted\.",
    rank=82, remedy="A higher-priority queue reclaimed the executor's resources: run in a queue with guaranteed "
    "capacity (or disable preemption for it), and checkpoint so that a restart resumes.",
    component="spark", versions=">=1.5",
    source="apache/spark resource-managers/yarn YarnAllocator.scala (ContainerExitStatus.PREEMPTED, SPARK-8167)",
    fixture="21/03/02 10:11:12 WARN YarnAllocator: Container container_1614600000000_0007_01_000003 on host: "
            "worker7.example.org was preempted.")
add("DD791", "yarn-killed-on-request", C.PREEMPTION, R.CAUSE, ("Container killed on request. Exit code is",),
    "YARN killed a container on request (the ApplicationMaster, ResourceManager or a user asked)",
    regex=r"Container killed on request\. Exit code is (?P<code>\d+)", rank=32,
    remedy="Something asked YARN to stop the container (the AM after another failure, the RM, a user, a memory "
    "check): the line before it (beyond memory limits, preemption, an exception elsewhere) says why.",
    component="yarn", versions="all", source="apache/hadoop hadoop-yarn-server-nodemanager .../launcher/"
    "ContainerLaunch.java",
    fixture="Container killed on request. Exit code is 143")
add("DD792", "yarn-disks-failed", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("local-dirs are bad", "log-dirs are bad", "status: -101", "usable space is below configured utilization percentage"),
    "YARN's node has no usable local/log directory (disks full or failed)", rank=80,
    remedy="The NodeManager's local directories are full or broken: clean them (old application caches, shuffle files) "
    "or replace the disk; YARN marks the node unhealthy until then.", component="yarn", versions="all",
    source="apache/hadoop hadoop-yarn-server-nodemanager LocalDirsHandlerService.java / " + _EXIT + " (DISKS_FAILED -101)",
    fixture="1/1 local-dirs usable space is below configured utilization percentage/no more usable space [ "
            "/hadoop/yarn/local : used space above threshold of 90.0% ] ; 1/1 log-dirs are bad: /hadoop/yarn/log")
add("DD793", "yarn-am-failed", C.PEER_CRASHED, R.SYMPTOM, ("due to AM Container for",),
    "YARN failed the application because its ApplicationMaster container failed", rank=20, remedy=_PEER,
    component="yarn", versions="all", source="apache/hadoop hadoop-yarn-server-resourcemanager RMAppImpl.java",
    fixture="Application application_1600000000000_0042 failed 2 times due to AM Container for "
            "appattempt_1600000000000_0042_000002 exited with  exitCode: 1")

# -- Spark --------------------------------------------------------------------------------------------------------
add("DD794", "spark-executor-lost-failure", C.PEER_CRASHED, R.SYMPTOM, ("ExecutorLostFailure (executor",),
    "Spark lost the executor that ran a task", rank=30,
    remedy="The reason follows on the same line (a YARN memory kill, a lost node, a heartbeat timeout): fix that.",
    component="spark", versions="all", source=_SPARK + "core/src/main/scala/org/apache/spark/TaskEndReason.scala",
    fixture="ExecutorLostFailure (executor 3 exited caused by one of the running tasks) Reason: Container from a bad "
            "node: container_1600000000000_0042_01_000004 on host: node5. Exit status: 134.")
add("DD795", "java-oom", C.OOM_HOST, R.CAUSE, ("java.lang.OutOfMemoryError",),
    "A JVM (the Spark driver or an executor) ran out of heap memory",
    regex=r"java\.lang\.OutOfMemoryError(?!: unable to create (?:new )?native thread)", rank=85,
    remedy="Raise the JVM's heap (spark.executor.memory / spark.driver.memory), or collect less to the driver and "
    "lower partition sizes.", component="spark", versions="all", source="the JVM's OutOfMemoryError as Spark logs it",
    fixture="java.lang.OutOfMemoryError: Java heap space")
add("DD796", "spark-heartbeat-timeout", C.PEER_UNRESPONSIVE, R.CAUSE, ("Executor heartbeat timed out after",),
    "Spark's driver stopped hearing from an executor", rank=50,
    remedy="The executor froze (long GC pauses, an overloaded node) or died: check its log and GC; raise "
    "spark.network.timeout / spark.executor.heartbeatInterval only if the executor is merely slow.",
    component="spark", versions="all", source=_SPARK + "core/.../HeartbeatReceiver.scala",
    fixture="ERROR TaskSchedulerImpl: Lost executor 2 on node4: Executor heartbeat timed out after 128562 ms")
add("DD797", "spark-no-resources", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Initial job has not accepted any resources",),
    "Spark waits for executors the cluster does not grant", rank=50,
    remedy="The cluster has no room for the requested executors (cores, memory, GPUs): ask for less, or free capacity; "
    "TensorFlowOnSpark needs all its executors at once.", component="spark", versions="all",
    source=_SPARK + "core/.../scheduler/TaskSchedulerImpl.scala",
    fixture="WARN TaskSchedulerImpl: Initial job has not accepted any resources; check your cluster UI to ensure that "
            "workers are registered and have sufficient resources")
add("DD798", "spark-python-worker-crashed", C.PEER_CRASHED, R.CAUSE, ("Python worker exited unexpectedly (crashed)",),
    "A PySpark Python worker process died (the TensorFlow node it hosted with it)", rank=45,
    remedy="The Python process was killed or crashed (the OOM killer, a native crash): check the executor's stderr and "
    "the node's dmesg.", component="spark", versions=">=2.0", source=_SPARK + "core/.../api/python/PythonRunner.scala",
    fixture="org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)")
add("DD799", "spark-k8s-executor-exit", C.OOM_HOST, R.CAUSE, ("possible container OOM",),
    "Spark on Kubernetes: an executor pod was killed with SIGKILL, which Spark reads as a possible OOM",
    regex=r"exited with exit code 137\(SIGKILL, possible container OOM\)", rank=50,
    remedy="Confirm in the pod's status (Reason: OOMKilled) and raise spark.executor.memoryOverhead / memory.",
    component="spark", versions=">=3.0", source=_SPARK + "resource-managers/kubernetes/.../ExecutorPodsLifecycleManager.scala",
    fixture="The executor with id 2 exited with exit code 137(SIGKILL, possible container OOM).")
add("DD891", "spark-barrier-failed", C.PEER_CRASHED, R.SYMPTOM, ("Could not recover from a failed barrier ResultStage",),
    "Spark aborted a barrier stage because one of its tasks failed", rank=18, remedy=_PEER, component="spark",
    versions=">=2.4", source=_SPARK + "core/.../scheduler/DAGScheduler.scala",
    fixture="org.apache.spark.SparkException: Job aborted due to stage failure: Could not recover from a failed barrier "
            "ResultStage. Most recent failure reason: Stage failed because barrier task ResultTask(3, 1) finished "
            "unsuccessfully.")

# -- TensorFlowOnSpark -----------------------------------------------------------------------------------------------
_TFOS_CFG = ("Each TensorFlow node needs its own executor: set --num-executors to the cluster size, one task per "
             "executor (spark.executor.cores = spark.task.cpus), and disable dynamic allocation.")
add("DD892", "tfos-duplicate-node", C.CONFIG_TF_CONFIG, R.CAUSE, ("Duplicate cluster node id detected",),
    "TensorFlowOnSpark placed two TF nodes in one executor", rank=75, remedy=_TFOS_CFG, component="tfos",
    versions=">=1.4", source=_TFOS + "TFCluster.py (run)",
    fixture="Exception: Duplicate cluster node id detected (host=10.0.0.7, executor_id=2)")
add("DD893", "tfos-no-tfmanager", C.CONFIG_TF_CONFIG, R.CAUSE, ("No TFManager found on this node",),
    "A TensorFlowOnSpark task ran on an executor that hosts no TF node", rank=60,
    remedy=_TFOS_CFG + " If those hold, an earlier exception on another node is the cause.", component="tfos",
    versions=">=1.3", source=_TFOS + "TFSparkNode.py (_get_manager)",
    fixture="Exception: No TFManager found on this node, please ensure that:")
add("DD894", "tfos-reservation-timeout", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("timed out waiting for reservations to complete",),
    "TensorFlowOnSpark timed out waiting for all TF nodes to start", rank=60,
    remedy="Not all executors started (too few granted, or a node failed at start): check that the cluster grants "
    "--num-executors at once, and the executors' logs.", component="tfos", versions="all",
    source=_TFOS + "reservation.py (Client.await_reservations)",
    fixture="Exception: timed out waiting for reservations to complete")
add("DD895", "tfos-gpu-unavailable", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("free GPU(s)", "GPU(s) from available GPUs", "Failed to allocate GPU"),
    "TensorFlowOnSpark found no free GPU for a node", regex=r"Unable to (?:find \d+ free GPU\(s\)|allocate \d+ GPU\(s\) "
    r"from available GPUs)|Failed to allocate GPU(?! memory)", rank=70,   # TFoS's own "Failed to allocate GPU" (, trying
    # again...), not a framework's "Failed to allocate GPU memory ... out of memory"
    remedy="The executor's GPUs are busy (another executor or job on the node): schedule one GPU executor per GPU "
    "(spark.executor.resource.gpu.amount) and kill leftovers.", component="tfos", versions="all",
    source=_TFOS + "gpu_info.py / TFSparkNode.py",
    fixture="Exception: Unable to find 1 free GPU(s)")

# -- Ray (Ray Train / Tune, Horovod-on-Ray) --------------------------------------------------------------------------
add("DD896", "ray-actor-died", C.PEER_CRASHED, R.CAUSE,
    ("The actor died unexpectedly before finishing this task", "RayActorError", "ActorDiedError"),
    "A Ray actor (a training worker) died", rank=38,
    regex=r"The actor died unexpectedly|(?:RayActorError|ActorDiedError)\b",
    remedy="The worker process died (the text after it says how: a system error, its node died, the OOM killer); "
    "read the worker's own log (/tmp/ray/session_latest/logs/worker-*.err).", component="ray", versions=">=1.0",
    source=_RAY + "python/ray/exceptions.py (RayActorError / ActorDiedError)",
    fixture="ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.")
add("DD897", "ray-oom", C.OOM_HOST, R.CAUSE,
    ("Task was killed due to the node running low on memory", "killed due to memory pressure (OOM)",
     "which exceeds the memory usage threshold", "System memory low at node with IP"),
    "Ray's memory monitor killed a worker because the node ran low on memory", rank=94,
    remedy="The node ran out of memory: lower per-worker memory (batch size, object store use), use fewer workers per "
    "node, or give the workers a memory resource request so Ray does not overpack nodes.",
    component="ray", versions=">=2.0", source=_RAY + "python/ray/exceptions.py (OutOfMemoryError) / "
    "src/ray/raylet/node_manager.cc (memory monitor; Ray 2.0-2.1's eviction: \"System memory low at node with IP\", "
    "python/ray/tests/test_memory_pressure.py)",
    fixture="ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.")
add("DD729", "ray-node-died", C.PEER_CRASHED, R.CAUSE,
    ("The actor died because its node has died", "has been marked dead because the detector has missed too many heartbeats"),
    "Ray lost a node (and the workers on it)", rank=60,
    remedy="The node crashed, was preempted, or lost the network to the head: check the node; restart training from "
    "the last checkpoint (Ray Train's FailureConfig can retry).", component="ray", versions=">=1.0",
    source=_RAY + "python/ray/exceptions.py / src/ray/gcs/gcs_server/gcs_health_check_manager.cc",
    fixture="The actor died because its node has died. Node Id: 3f2c9a")
add("DD679", "ray-training-failed", C.PEER_CRASHED, R.SYMPTOM,
    ("TrainingFailedError", "Training failed due to worker errors", "Trials did not complete"),
    "Ray Train / Tune reports the run failed", rank=15,
    remedy="A consequence: the worker error printed before it (the first traceback of a worker) is the cause.",
    component="ray", versions=">=1.9", source=_RAY + "python/ray/train/base_trainer.py (TrainingFailedError) / "
    "python/ray/tune/error.py",
    fixture="ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error "
            "messages for a cause.")
add("DD869", "ray-infeasible-resources", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("cannot be scheduled right now", "No available node types can fulfill resource request",
     "is infeasible because there is no node"),
    "Ray cannot place a task or actor: the cluster lacks the resources it asks for", rank=60,
    remedy="No node has the requested CPUs/GPUs/memory free (or at all): ask for fewer resources per worker, fewer "
    "workers, or add nodes of the right type.", component="ray", versions=">=1.0",
    source=_RAY + "python/ray/autoscaler/_private/resource_demand_scheduler.py / src/ray/raylet (infeasible tasks)",
    fixture="Error: No available node types can fulfill resource request {'GPU': 8.0, 'CPU': 1.0}. Add suitable node "
            "types to this cluster to resolve this issue.")
add("DD889", "ray-gcs-unreachable", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Failed to connect to GCS", "Unable to connect to GCS"),
    "A Ray process cannot reach the cluster's head (GCS)", rank=55,
    remedy="The head node's GCS is down or not reachable at the address given (ray start --address / RAY_ADDRESS): "
    "check the head node and that its port (6379) is open from the workers.", component="ray", versions=">=1.0",
    source=_RAY + "python/ray/_private/gcs_utils.py / src/ray/gcs/gcs_client",
    fixture="ConnectionError: Failed to connect to GCS at address 10.0.0.1:6379 within 60 seconds.")

# -- the JVM under Spark, YARN, TonY and TensorFlowOnSpark -----------------------------------------------------------
add("DD1461", "jvm-linkage-error", C.VERSION_MISMATCH, R.CAUSE,
    ("java.lang.AbstractMethodError", "java.lang.NoSuchMethodError", "java.lang.NoSuchFieldError",
     "java.lang.IncompatibleClassChangeError", "java.lang.UnsupportedClassVersionError"),
    "A JVM class runs against another version of a class it was compiled against (a connector or jar built for "
    "another Spark, Hadoop or Java)", rank=70,
    remedy="A jar on the classpath (a connector such as spark-tfrecord or TensorFlowOnSpark's, a TonY or Hadoop "
    "client) was built against another version of Spark, Hadoop, Scala or Java than the cluster runs: use the "
    "release built for the cluster's versions, and the same jars on the driver and every executor.",
    component="jvm", versions="all (Java SE)",
    source="Java SE API java.lang.LinkageError subclasses: AbstractMethodError / NoSuchMethodError / NoSuchFieldError "
    "('this error can only occur at run time if the definition of some class has incompatibly changed since the "
    "currently executing method was last compiled'); UnsupportedClassVersionError (a class file of a newer Java)",
    fixture="java.lang.AbstractMethodError: Method com/linkedin/spark/datasources/tfrecord/TFRecordOutputWriter.path()"
            "Ljava/lang/String; is abstract")
add("DD1490", "ray-tune-insufficient-resources", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Insufficient cluster resources to launch trial",),
    "Ray Tune could not place a trial: the cluster has fewer CPUs or GPUs than one trial requests", rank=80,
    remedy="Request fewer resources per trial (resources_per_trial), wait for the autoscaler's nodes to join before "
    "starting (or let Tune queue the trials), or add nodes with the GPUs a trial needs.",
    component="ray", versions=">=1.0", source=_RAY + "python/ray/tune (TuneError: \"Insufficient cluster resources to "
    "launch trial: trial requested ... but the cluster has only ...\")",
    fixture="ray.tune.error.TuneError: Insufficient cluster resources to launch trial: trial requested 4 CPUs, 1 GPUs, "
            "but the cluster has only 0 CPUs, 0 GPUs, 8.6 GiB heap, 2.93 GiB objects (1.0 node:10.0.0.1).")
add("DD1495", "pyspark-python-version-mismatch", C.VERSION_MISMATCH, R.CAUSE, ("Python in worker has different version",),
    "Spark's executors run another Python minor version than its driver", rank=88,
    remedy="Give the driver and every executor the same Python: set PYSPARK_PYTHON (and PYSPARK_DRIVER_PYTHON) to the "
    "same interpreter, or ship one environment (conda-pack / venv archive) to the executors.",
    component="spark", versions=">=2.0", source=_SPARK + "python/pyspark/worker.py (\"Python in worker has different "
    "version %s than that in driver %s, PySpark cannot run with different minor versions.\")",
    fixture="RuntimeError: Python in worker has different version 3.9 than that in driver 3.10, PySpark cannot run with "
            "different minor versions. Please check environment variables PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON are "
            "correctly set.")
