"""A collective's abort carries the status that caused it (TensorFlow's base_collective_executor.cc logs
"StartAbort " << status; a failing kernel logs "OP_REQUIRES failed at <file>:<line> : " << status). The status says
whether the abort began with this task's own op or with a peer: an argument, lookup or precondition error is the
op's own (DD1470), an INTERNAL one TensorFlow's (DD1471); CANCELLED, UNAVAILABLE and the iterator's end of input
stay what they were (a symptom of a peer, a finished loop)."""
from __future__ import annotations

import pytest

from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category

W = "2019-11-06 11:12:15.48{}: W tensorflow/"
SLICE = ("{}core/framework/op_kernel.cc:1622] OP_REQUIRES failed at strided_slice_op.cc:108 : Invalid argument: slice "
         "index 10 of dimension 0 out of bounds.\n{}core/common_runtime/base_collective_executor.cc:216] "
         "BaseCollectiveExecutor::StartAbort Invalid argument: {{{{function_node __inference_Dataset_map_35}}}} slice "
         "index 10 of dimension 0 out of bounds.\n         [[{{{{node strided_slice}}}}]]").format(W.format(1), W.format(9))


def _verdict(text: str):
    hits, facts = scan_bytes("worker-0.log", (text + "\n").encode())
    return reason(hits, [facts])


@pytest.mark.parametrize("text,category,code", [
    (SLICE, Category.USER_CODE_ERROR, "DD1470"),
    (W.format(3) + "core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort Failed "
     "precondition: Attempting to use uninitialized value dense/bias", Category.USER_CODE_ERROR, "DD1470"),
    (W.format(3) + "core/common_runtime/base_collective_executor.cc:217] BaseCollectiveExecutor::StartAbort Internal: "
     "No unary variant device copy function found for direction: 1", Category.OTHER, "DD1471"),
])
def test_an_abort_whose_status_is_the_tasks_own_error_is_not_a_peers_symptom(text, category, code):
    v = _verdict(text)
    assert (v.category, v.code) == (category, code), v.summary
    assert "only symptoms" not in v.summary


@pytest.mark.parametrize("text", [
    W.format(3) + "core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::StartAbort "
    "Cancelled: [_Derived_]Cancelled",
    W.format(3) + "core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::StartAbort "
    "Unavailable: Socket closed",
    # the status is about the collective itself (tasks that disagree) or derived from another task's failure
    W.format(3) + "core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::StartAbort "
    "Internal: [_Derived_]No unary variant device copy function found",
    W.format(3) + "core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::StartAbort "
    "Invalid argument: Collective instance 122 expected type 0 and data_type 1 but got type 0 and data_type 9",
])
def test_an_abort_for_a_peer_stays_a_symptom(text):
    hits, facts = scan_bytes("worker-0.log", (text + "\n").encode())
    assert not {"DD1470", "DD1471"} & {h.sig.code for h in hits}


def test_the_iterators_own_end_of_input_is_no_op_error():
    """How every finite iterator ends (the caller catches it) is no op error; a file the iterator cannot find is."""
    end = W.format(3) + "core/framework/op_kernel.cc:1622] OP_REQUIRES failed at iterator_ops.cc:1010 : Out of range: "
    missing = W.format(3) + "core/framework/op_kernel.cc:1622] OP_REQUIRES failed at iterator_ops.cc:1010 : Not found: "
    assert "DD1470" not in {h.sig.code for h in scan_bytes("w.log", (end + "End of sequence\n").encode())[0]}
    assert "DD1470" in {h.sig.code for h in scan_bytes("w.log", (missing + "/data/train-0.tfrecord; No such file or "
                                                                            "directory\n").encode())[0]}


@pytest.mark.parametrize("text,code", [
    ("r3 | MPI_Allreduce returned error code 15: b'MPI_ERR_TRUNCATE: message truncated' - aborting", "DD1473"),
    ("mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated", None),   # a point-to-point receive: the code's own
])
def test_a_collective_truncated_on_receive_is_ranks_that_disagree(text, code):
    """MPI_ERR_TRUNCATE is 'message truncated on receive'; in a collective every rank must pass matching sizes, so
    there it reads as ranks that entered it with different buffers. On its own (an irecv's buffer) it does not."""
    hits, _ = scan_bytes("output.log", (text + "\n").encode())
    assert ("DD1473" in {h.sig.code for h in hits}) == (code is not None)
    if code:
        v = _verdict(text)
        assert (v.category, v.code, v.confidence) == (Category.HANG_COLLECTIVE_MISMATCH, code, "medium")


def test_a_cuda_symbol_missing_from_a_library_is_a_build_for_other_gpus():
    v = _verdict("gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'")
    assert (v.category, v.code, v.confidence) == (Category.VERSION_MISMATCH, "DD1474", "medium")

