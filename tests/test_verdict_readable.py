"""A verdict read in full (issue 23, item 6): the whole exception message, the last frame in the user's code, no
frame of distdoctor's own, no lookalike alternatives for Python's own exception in the user's file, the tf_keras
advice for Keras 3 under a strategy, and a report that wraps instead of cropping at any width from 60 columns.

Pure: recorded text (TensorFlow 2.21's own output, trimmed) and hand-built observations."""
from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from distdoctor.diagnose.engine import diagnose
from distdoctor.diagnose.events import EventKind, LogEvent
from distdoctor.diagnose.logparse import TaskLogParser
from distdoctor.diagnose.logs.frames import last_user_frame
from distdoctor.diagnose.observations import JobObservation, TaskObservation
from distdoctor.model import Alternative, Diagnosis, Evidence
from distdoctor.report.terminal import render_diagnosis

CORPUS = Path(__file__).resolve().parent / "corpus"
T = 1_700_000_000.0
SITE = "/opt/venv/lib/python3.11/site-packages"
BOOT = "/opt/venv/lib/python3.11/site-packages/distdoctor/supervise/bootstrap/sitecustomize.py"

# TF 2.21, an op that fails when the graph runs (recorded from a tf.function reshaping 16 values to 15)
GRAPH_ERROR = f"""Traceback (most recent call last):
  File "/home/u/train.py", line 5, in <module>
    step(tf.ones((4, 4)))
  File "{SITE}/tensorflow/python/util/traceback_utils.py", line 167, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "{BOOT}", line 146, in call_function
    return orig(self, name, *args, **kwargs)
  File "{SITE}/tensorflow/python/eager/execute.py", line 53, in quick_execute
    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,
  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:

Detected at node Reshape defined at (most recent call last):
  File "/home/u/train.py", line 5, in <module>

  File "/home/u/train.py", line 4, in step

Input to reshape is a tensor with 16 values, but the requested shape has 15
\t [[{{{{node Reshape}}}}]] [Op:__inference_step_9]
W0000 00:00:1795838575.599701   18725 generator_dataset_op.cc:113] Error occurred when finalizing GeneratorDataset iterator
"""

# TF 2.21, the same op failing while the function is traced
IN_USER_CODE = f"""Traceback (most recent call last):
  File "/home/u/train.py", line 5, in <module>
    step(tf.ones((4, 4)))
  File "{SITE}/tensorflow/python/util/traceback_utils.py", line 167, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "/tmp/__autograph_generated_filevqam8cmx.py", line 12, in tf__step
    retval_ = ag__.converted_call(ag__.ld(tf).reshape, (ag__.ld(x), (3, 5)), None, fscope)
    ^^^^^
ValueError: in user code:

    File "/home/u/train.py", line 4, in step  *
        return tf.reshape(x, (3, 5))

    ValueError: Cannot reshape a tensor with 16 elements to shape [3,5] (15 elements) for '{{{{node Reshape}}}}'
"""

ZERO = f"""Traceback (most recent call last):
  File "{BOOT}", line 146, in call_function
    return orig(self, name, *args, **kwargs)
  File "/home/u/train.py", line 3, in <module>
    print(1 / x)
          ~~^~~
ZeroDivisionError: division by zero
"""

# TF 2.21 with Keras 3, the MultiWorkerMirroredStrategy Keras tutorial as written (recorded under `distdoctor run`)
PER_REPLICA = f"""Traceback (most recent call last):
  File "/home/u/tut.py", line 13, in <module>
    model.fit(ds, epochs=2, steps_per_epoch=5)
  File "{SITE}/keras/src/utils/traceback_utils.py", line 122, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "{SITE}/tensorflow/python/framework/constant_op.py", line 108, in convert_to_eager_tensor
    return ops.EagerTensor(value, ctx.device_name, dtype)
ValueError: Attempt to convert a value (PerReplica:{{
  0: <tf.Tensor: shape=(16, 28, 28), dtype=float32, numpy=
array([[[0.0985297 , 0.72179586, 0.40479228, ..., 0.21509683,
         0.7702414 , 0.32506114],
        ...,
        [0.42744216, 0.0829955 , 0.8173353 , ..., 0.34166914,
         0.35434377, 0.9945634 ]],

       [[0.78047955, 0.7119195 , 0.9863561 , ..., 0.0871463 ,
         0.2673516 , 0.18812473]]], shape=(16, 28, 28), dtype=float32)>
}}) with an unsupported type (<class 'tensorflow.python.distribute.values.PerReplica'>) to a Tensor.
"""


def events(text: str, task: str = "worker:1") -> list[LogEvent]:
    p = TaskLogParser(task)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        out += p.feed(i, line)
    return out + p.close()


def exception(text: str) -> LogEvent:
    return next(e for e in events(text) if e.kind in (EventKind.PY_EXCEPTION, EventKind.PEER_SYMPTOM) and e.frames)


# -- the parser -------------------------------------------------------------------------------------------------------

def test_a_graph_execution_error_carries_the_message_on_the_lines_after_it():
    e = exception(GRAPH_ERROR)
    assert e.text.startswith("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:")
    assert "Input to reshape is a tensor with 16 values, but the requested shape has 15" in e.text
    assert "[Op:__inference_step_9]" in e.text and "Detected at node" not in e.text
    uf = last_user_frame(e.frames)
    assert (uf.where, uf.func) == ("train.py:4", "step")    # where the failing op was defined


def test_the_lines_read_while_the_message_is_awaited_are_read_as_usual():
    """The exception waits for its message; every line in between still gives its own events, in order."""
    log = (CORPUS / "run-exception" / "worker-0.log").read_text()
    held = events(log, "worker:0")
    plain = events(log.replace("Graph execution error:", "Graph execution failed."), "worker:0")
    assert [(e.line_no, e.kind, e.peer) for e in held] == [(e.line_no, e.kind, e.peer) for e in plain]
    assert any(e.peer == "worker:1" for e in held)


def test_a_message_printed_over_several_lines_is_read_whole():
    """The value in between (a tensor's numbers, blank lines among them) is left out; the words around it stay."""
    e = exception(PER_REPLICA)
    assert e.text == ("ValueError: Attempt to convert a value (PerReplica:{ … }) with an unsupported type "
                      "(<class 'tensorflow.python.distribute.values.PerReplica'>) to a Tensor.")


def test_a_message_left_open_does_not_hold_back_the_lines_after_it():
    """A logged exception whose message opens a bracket it never closes ends at the first line that is no printed
    value: training's progress after it is read at once."""
    p = TaskLogParser("worker:0")
    assert p.feed(1, "Traceback (most recent call last):") == []
    p.feed(2, '  File "/home/u/train.py", line 9, in <module>')
    assert p.feed(3, "ValueError: bad shape (3,") == []
    out = p.feed(4, "Epoch 2/3")
    assert [e.kind for e in out] == [EventKind.PY_EXCEPTION, EventKind.EPOCH] and not p.busy


def test_an_error_while_tracing_names_the_users_line_not_autographs_copy():
    e = exception(IN_USER_CODE)
    assert "Cannot reshape a tensor with 16 elements to shape [3,5]" in e.text
    uf = last_user_frame(e.frames)
    assert uf.describe() == "train.py:4 in step: return tf.reshape(x, (3, 5))"


def test_distdoctors_own_frames_are_left_out_of_a_quoted_traceback():
    e = exception(ZERO)
    assert not any("sitecustomize" in f or "call_function" in f for f in e.frames)
    assert last_user_frame(e.frames).describe() == "train.py:3 in <module>: print(1 / x)"


def test_a_recorded_run_traceback_drops_the_bootstrap_frame_and_keeps_the_real_message():
    log = (CORPUS / "run-exception" / "worker-0.log").read_text()
    assert "sitecustomize.py" in log          # the recording has distdoctor's frame in it
    e = exception(log)
    assert not any("sitecustomize" in f for f in e.frames)
    assert "Collective ops is aborted by: Socket closed" in e.text
    assert last_user_frame(e.frames).where == "trainer.py:120"


# -- the verdict ------------------------------------------------------------------------------------------------------

def _job(text: str, task: str = "worker:1") -> Diagnosis:
    bad = TaskObservation(task=task, pid=101, started_at=T, ended_at=T + 20, exit_code=1, state="exited",
                          events=tuple(events(text, task)))
    ok = TaskObservation(task="worker:0", pid=100, started_at=T, ended_at=T + 21, exit_code=1, state="exited")
    return diagnose(JobObservation(tasks={"worker:0": ok, task: bad}), detected_at=T + 30)


def test_a_user_code_error_names_its_last_frame_and_whole_message():
    root = _job(ZERO).root_cause
    assert root.code == "DD104" and root.culprit == "worker:1"
    assert root.summary == "worker:1 raised ZeroDivisionError at train.py:3 (print(1 / x)): division by zero"
    texts = [e.text for e in root.evidence]
    assert any(t.startswith('File "/home/u/train.py", line 3') and t.endswith("print(1 / x)") for t in texts)
    assert not any("sitecustomize" in t for t in texts)


def test_a_graph_error_summary_carries_the_real_message():
    root = _job(GRAPH_ERROR).root_cause
    assert "Input to reshape is a tensor with 16 values" in root.summary
    assert "train.py:4" in root.summary


def test_keras3_under_a_strategy_says_what_to_install_even_in_a_generic_verdict():
    root = _job(PER_REPLICA).root_cause
    assert root.code == "DD104"          # the structural reading is generic ...
    assert "pip install tf_keras" in root.remedy and "TF_USE_LEGACY_KERAS=1" in root.remedy   # ... its remedy is not
    assert "DD1011" in root.remedy
    assert root.summary.endswith("}) with an unsupported type (<class 'tensorflow.python.distribute.values.PerReplica'>)"
                                 " to a Tensor.") and " at tut.py:13 (model.fit(" in root.summary


def test_an_exception_the_knowledge_base_reads_has_that_reading_as_its_only_alternative(tmp_path):
    from distdoctor.diagnose.command import diagnose_paths
    (tmp_path / "worker-1.log").write_text(PER_REPLICA)
    (tmp_path / "worker-0.log").write_text("started\n")
    diag, _ = diagnose_paths([str(tmp_path)], None)
    root = diag.root_cause
    if root.code == "DD104":   # the structural reading: the knowledge base's reading is its one alternative
        assert [a.category.value for a in root.alternatives] in (["version_mismatch"], [])
    else:                      # the knowledge base's reading itself (as `run` adopts it)
        assert (root.code, root.category.value, root.culprit) == ("DD1011", "version_mismatch", "worker:1")
    assert "pip install tf_keras" in root.remedy


def test_pythons_own_exception_in_the_users_file_gets_no_made_up_lookalikes(tmp_path):
    """The reasoning offers no lookalike for it; the alternatives printed are the learned reading's next most
    probable causes, each saying so with its probability."""
    from distdoctor.diagnose.command import diagnose_paths
    for i, text in enumerate((ZERO, "started\n")):
        (tmp_path / f"worker-{1 - i}.log").write_text(text)
    diag, _ = diagnose_paths([str(tmp_path)], None)
    assert diag.root_cause.category.value == "user_code_error"
    alts = diag.root_cause.alternatives
    assert alts and all("learned reading" in a.why for a in alts)
    one = tmp_path / "one" / "train.log"
    one.parent.mkdir()
    one.write_text(ZERO)
    diag, _ = diagnose_paths([str(one)], None)
    assert diag.root_cause.category.value == "user_code_error"
    alts = diag.root_cause.alternatives
    assert alts and all("learned reading" in a.why for a in alts)
    assert "(at train.py:3: print(1 / x))" in diag.root_cause.summary


def test_a_fragment_with_no_task_names_the_users_frame_too():
    from distdoctor.diagnose.logs.reason import reason
    from distdoctor.diagnose.logs.scan import scan_bytes
    hits, facts = scan_bytes("<stdin>", ZERO.encode())
    v = reason(hits, [facts])
    assert v.category.value == "user_code_error" and v.summary.endswith("(at train.py:3: print(1 / x))")
    assert v.alternatives == ()


def test_a_library_exception_keeps_its_alternatives(tmp_path):
    from distdoctor.diagnose.command import diagnose_paths
    (tmp_path / "worker-1.log").write_text(GRAPH_ERROR)
    (tmp_path / "worker-0.log").write_text("started\n")
    diag, _ = diagnose_paths([str(tmp_path)], None)
    assert diag.root_cause.alternatives and all(a.settle for a in diag.root_cause.alternatives)


# -- the report: wrap, never crop -------------------------------------------------------------------------------------

LONG_REMEDY = ("With TF >= 2.16, tf.keras is Keras 3, which does not train under a tf.distribute strategy: run "
               "`pip install tf_keras` and set TF_USE_LEGACY_KERAS=1 in every task's environment, so that tf.keras "
               "is the legacy Keras 2; or pin TF < 2.16. Fix the error the traceback ends with (its last frame in "
               "your code is where to look).")


def _diag() -> Diagnosis:
    root = _job(GRAPH_ERROR).root_cause
    from dataclasses import replace
    alt = Alternative(root.category.__class__("version_mismatch"), "worker:1",
                      "a library of another version raises the same error from its own code",
                      "the versions each node runs (`pip freeze`) against what the code was built for")
    root = replace(root, remedy=LONG_REMEDY, alternatives=(alt,),
                   evidence=root.evidence + (Evidence(task="worker:0", ts=T + 21, role="consequence",
                                                      text="Collective ops is aborted by: Socket closed; the peer "
                                                           "worker:1 went away while the others waited for it"),))
    d = _job(GRAPH_ERROR)
    return replace(d, root_cause=root, findings=(root,) + tuple(f for f in d.findings if f.code != root.code))


def _squash(s: str) -> str:
    return re.sub(r"[\s│╭╮╰╯─]+", "", s)


@pytest.mark.parametrize("soft_wrap", [False, True])     # `diagnose` prints on a soft-wrapping console
@pytest.mark.parametrize("width", [60, 80, 120])
def test_summary_evidence_and_remedy_are_whole_at_any_width(width, soft_wrap):
    diag = _diag()
    console = Console(file=StringIO(), width=width, color_system=None, legacy_windows=False, soft_wrap=soft_wrap)
    render_diagnosis(diag, console)
    out = console.file.getvalue()
    assert max(len(line) for line in out.splitlines()) <= width
    flat = _squash(out)
    root = diag.root_cause
    wholes = [root.summary, root.remedy] + [e.text for e in root.evidence]
    wholes += [a.why for a in root.alternatives] + [a.settle for a in root.alternatives]
    for text in wholes:
        assert _squash(text) in flat, text


def test_run_adopting_the_known_cause_says_the_whole_message_once():
    """`run` adopts DD1011 over its generic DD104; the signature matched the message's first line, the run's own
    evidence holds the whole message: the verdict says it whole, with the tf_keras advice."""
    from distdoctor.diagnose.logs.reason import reason
    from distdoctor.diagnose.logs.scan import scan_bytes
    from distdoctor.diagnose.logs.verdict import decide
    structural = _job(PER_REPLICA)
    hits, facts = scan_bytes("worker-1.log", PER_REPLICA.encode(), writer="worker:1")
    diag = decide(reason(hits, [facts]), structural, source="run", detected_at=T + 30, hits=hits)
    root = diag.root_cause
    assert root.code == "DD1011" and "pip install tf_keras" in root.remedy and "TF_USE_LEGACY_KERAS=1" in root.remedy
    assert "to a Tensor." in root.summary
    assert sum(e.text.startswith("ValueError: Attempt to convert") for e in root.evidence) == 1
    assert structural.root_cause.summary in root.alternatives[0].why     # the run's own reading, whole
