"""The signature knowledge base, one module per source family.

Importing this package registers every signature (and its catalogue rule).
Codes: DD600-DD699 TensorFlow's runtime (DD660-DD679 input pipelines and files in
tf_data.py, DD680-DD699 TF 1.x training in tf1.py), DD700-DD759 communication libraries
(gRPC, NCCL, Horovod, MPI, Gloo), DD760-DD799 CUDA, native crashes and the
host, DD800-DD859 schedulers and platforms (Kubernetes, Slurm, YARN, Spark,
TonY), DD860-DD899 Python and generic lines.
"""
from . import tf, tf_data, tf1, comm, system, platform, python  # noqa: F401  (registration)
from ..signature import SIGNATURES

__all__ = ["SIGNATURES"]
