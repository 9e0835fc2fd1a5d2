"""The signature knowledge base, one module per source family.

Importing this package registers every signature (and its catalogue rule).
Codes: DD600-DD699 TensorFlow's runtime (DD660-DD679 input pipelines and files in
tf_data.py, DD680-DD699 TF 1.x training in tf1.py), DD700-DD759 communication libraries
(gRPC, NCCL, Horovod, MPI, Gloo), DD760-DD799 CUDA, native crashes and the
host, DD800-DD859 schedulers and platforms (Kubernetes, Slurm, YARN, Spark,
TonY), DD860-DD899 Python and generic lines. Messages mined from each component's own
source have a module per component: horovod.py (DD900-DD917), nccl_gloo.py (DD918-DD933,
DD706-DD709), mpi.py (Open MPI, MPICH, Intel MPI: DD934-DD959), slurm.py (Slurm and PMIx:
DD960-DD974), gpu.py (NVML, CUDA runtime, XLA: DD975-DD989), keras.py (DD990-DD999),
k8s.py (Kubernetes and the training operator: DD845-DD859, DD876-DD888) and
yarn_spark_ray.py (YARN, Spark, TensorFlowOnSpark, Ray: DD787-DD799, DD891-DD897 and
DD679, DD729, DD869, DD889). DD1000 and up (four digits: every three-digit code of the
DD600-DD999 range is taken) are the later additions beside the modules they extend: comm.py
(DD1000-DD1003), system.py (DD1004-DD1008), platform.py (DD1009-DD1010), python.py
(DD1011-DD1012), and after the third blind set yarn_spark_ray.py (DD1013), nccl_gloo.py (DD1014), system.py
(DD1015), mpi.py (DD1016), gpu.py (DD1017); maintainers.py (DD1200-DD1239) holds the messages the
components' own troubleshooting guides explain (Horovod, Open MPI, Slurm); platform_msgs.py (DD1240-DD1269) the
control planes' refusals mined from their sources (Kubernetes API server, admission and scheduler, container
runtimes, Volcano, the training operator, YARN); hpc_msgs.py (DD1300-DD1349) the launch stack's messages mined
from its source (Open MPI help files, Slurm's refusals, OpenSSH, NCCL's /dev/shm, SIGBUS); versions.py (DD1350-DD1389)
the version, implementation and platform mismatches each component detects (Ray, MPI launchers, TensorFlow, the
dynamic loader, CPython, NumPy, protobuf, Keras 3, container images, Slurm, pip, kubectl); resources_msgs.py (DD1390-DD1439)
the accelerator and host memory, preemption, NVSwitch, NCCL network plugin, Slurm GRES and Gloo interface messages
mined from each component's source (XLA, Dask, systemd-oomd, TF failure handling, AWS NTH, Karpenter, the kubelet,
CUDA, the NVSwitch driver, NCCL, Slurm, Gloo, PyTorch); training_msgs.py (DD1440-DD1462) a stalled collective, a
collapsed fp16 loss scale, Slurm's pending nodes, the clouds' quota and capacity refusals, the Fabric Manager's
version check and TensorFlow's file-system registry (PyTorch, DeepSpeed, MPICH, Slurm, Google Cloud, AWS, NVIDIA,
TensorFlow); then LSF's termination reasons in hpc_msgs.py (DD1463-DD1467), a VM's ACPI power key and preemption
said in words in resources_msgs.py (DD1468-DD1469), the status a TensorFlow abort carries in tf_aborts.py
(DD1470-DD1471) and libtpu's missing functions in versions.py (DD1472), then the collective truncated on receive (mpi.py, DD1473),
CUDA's missing symbol (gpu.py, DD1474), c10d's store wait (training_msgs.py, DD1475), the loader's missing symbol
version and UCX's API check (versions.py, DD1476-DD1477), UCX's listener (comm.py, DD1478) and a call with an
argument of another release (versions.py, DD1479); then GPU allocations and peer mappings (gpu.py, DD1480,
DD1485), LightGBM's port (comm.py, DD1481), HTCondor's memory hold (resources_msgs.py, DD1482), MPI before
MPI_INIT (mpi.py, DD1483), argparse's refusal (python.py, DD1484), an IB port down (nccl_gloo.py, DD1486) and
Keras' slot variables in another scope (keras.py, DD1487), torchrun's rendezvous store (training_msgs.py,
DD1488), DeepSpeed's CUDA check (versions.py, DD1489), Ray Tune's placement (yarn_spark_ray.py, DD1490)
and TFDS's file sharding (tf_data.py, DD1491), horovodrun's MPI detection and RDMA memory registration
(horovod.py, DD1492-DD1493), icefall's collapsed grad scale (training_msgs.py, DD1494), PySpark's Python versions
(yarn_spark_ray.py, DD1495) and CUDA's error 2 in a CHECK (gpu.py, DD1496), a port taken said in words (comm.py, DD1497), the NGC
containers' driver check (versions.py, DD1498), Hydra's rank header (mpi.py, DD1499), DDP's reducer (training_msgs.py,
DD1500-DD1501), DGL's bind to an address not on the machine (comm.py, DD1502), MPI's invalid count (mpi.py, DD1503),
torch.multiprocessing's signalled child (training_msgs.py, DD1504), PyTorch's builds without a backend
(training_msgs.py, DD1505), the launcher's --local-rank refused by a 1.x script (python.py, DD1506), a
launcher's variables missing (training_msgs.py, DD1507), a firewall's logged drop and SELinux's refused
port (system.py, DD1508-DD1509), srun's exit-code report split from DD823 (platform.py, DD1510), a module without a name the code uses
(python.py, DD1511) and an object without an attribute it asks for (python.py, DD1514), a PyTorch without its distributed API (training_msgs.py, DD1512) an OOM kill said in words
(system.py, DD1513), a connection to a netmask and a mesh's RBAC denial (system.py, DD1515-DD1516) and JAX's
initialize called too late (training_msgs.py, DD1517), Lightning's misconfiguration (training_msgs.py, DD1521), glibc's heap checks split from DD765 (system.py, DD1518) HDF5's
file held by another writer (system.py, DD1519) and the Google API client's harmless cache notice (platform.py, DD1520), and a platform runtime that could not spawn the job's program
(platform_msgs.py, DD1522), HCCL's port bind failure and socket timeout (nccl_gloo.py, DD1523-DD1524), a stale NFS handle (system.py, DD1525), torchrun's agent stopped by a signal (training_msgs.py, DD1526), a connection that timed out before it was made (comm.py, DD1527), the rank Fujitsu MPI's launcher reports aborted (mpi.py, DD1528), the DDP wrapper asked for the wrapped model's attribute (python.py, DD1529), DeepSpeed's communication used before it was set up (training_msgs.py, DD1530), AWS Neuron's ranks with different collectives (nccl_gloo.py, DD1531), TensorRT-LLM's world size against its engine (mpi.py, DD1532) and TensorFlow's ROCm build out of GPU memory (resources_msgs.py, DD1533). Every signature names
its ``component``, ``versions`` and
``source`` (``distdoctor rules`` shows them).
"""
from . import tf, tf_data, tf1, comm, system, platform, python  # noqa: F401  (registration)
from . import horovod, nccl_gloo, mpi, slurm, gpu, keras, k8s, yarn_spark_ray  # noqa: F401  (registration)
from . import maintainers, platform_msgs, hpc_msgs, versions, resources_msgs  # noqa: F401  (registration)
from . import training_msgs, tf_aborts  # noqa: F401  (registration)
from ..signature import SIGNATURES

__all__ = ["SIGNATURES"]
