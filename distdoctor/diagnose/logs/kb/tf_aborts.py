"""The status a TensorFlow abort carries (codes DD1470-DD1471): whether a collective's abort began with this task's own
op or with a peer. Read from TensorFlow's source: base_collective_executor.cc logs ``"StartAbort " << status``,
op_kernel.cc ``"OP_REQUIRES failed at <file>:<line> : " << status``; the codes are absl's."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add
from .tf import SRC

# A collective aborts with the status that caused it (base_collective_executor.cc: "StartAbort " << status), and a
# kernel that fails logs its own status (op_kernel.cc: "OP_REQUIRES failed at <file>:<line> : " << status). Where
# that status is an argument, lookup or precondition error, the abort began with this task's own op, not a peer: an
# INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION is what the op was given (a shape, an index, a key, an
# uninitialised value); an INTERNAL one is TensorFlow's own invariant broken. Not where the status is about the
# collective itself (tasks that disagree on a shape, a type or a group: TF 2.21 reports those as INVALID_ARGUMENT and
# INTERNAL too) or was derived from another task's failure ("[_Derived_]").
_NOT_ACROSS_TASKS = r"(?!.*(?:_Derived_|[Cc]ollective|[Ii]nconsistent|[Mm]ismatch|group_size|[Gg]roup key))"
add("DD1470", "tf-op-error-aborts", C.USER_CODE_ERROR, R.CAUSE, ("StartAbort", "OP_REQUIRES failed at"),
    "An op of this task failed on what it was given (invalid argument, not found, failed precondition) and aborted "
    "its collectives", regex=r"(?:StartAbort|OP_REQUIRES failed at \S+ :) "
    r"(?:Invalid argument|Not found|Failed precondition|Permission denied):" + _NOT_ACROSS_TASKS, rank=45,   # (GENERIC_RANK: the
    # StartAbort line is DD604's symptom too, and a cause below it on a symptom's line is read as the symptom)
    remedy="The op's own message says what it was given wrong (a shape, an index out of range, a missing key or file, "
    "an uninitialised value): fix that input or call; the peers' aborts follow from it.",
    component="tensorflow", versions=">=2.1", source=SRC + " base_collective_executor.cc (StartAbort), op_kernel.cc "
    "(OP_REQUIRES failed at), absl status codes",
    fixture="W tensorflow/core/framework/op_kernel.cc:1622] OP_REQUIRES failed at strided_slice_op.cc:108 : Invalid "
    "argument: slice index 10 of dimension 0 out of bounds.")
add("DD1471", "tf-internal-error-aborts", C.OTHER, R.CAUSE, ("StartAbort Internal:",),
    "A collective aborted with an INTERNAL error: TensorFlow's (or its collective library's) own invariant broke",
    regex=r"StartAbort Internal:" + _NOT_ACROSS_TASKS, rank=45,
    remedy="An internal error is the framework's, not the job's: read the message (an NCCL or driver error it wraps, "
    "a known TensorFlow bug for this version), try another TensorFlow release or collective implementation "
    "(CommunicationImplementation.RING), and report it with the message.",
    component="tensorflow", versions=">=2.1", source=SRC + " base_collective_executor.cc (StartAbort), absl status codes",
    fixture="W tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort "
    "Internal: Tensor shapes differ")
