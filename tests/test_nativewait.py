"""A task idle outside TensorFlow by its Python frames but blocked inside TensorFlow's native code waits on
TensorFlow: never the stalled culprit, and no hang is declared before its native stack was looked at.

The parser runs on a real ``py-spy dump --native`` of a TensorFlow 2.21 process whose main thread waited in a
tf.data GetNext (tests/data/pyspy/native-getnext.txt); the detector is driven with plain numbers."""
from pathlib import Path

from distdoctor.supervise.detect import assess
from distdoctor.supervise.nativewait import main_thread_frames, tf_native_wait
from test_detect import T0, job, task as _task

DATA = Path(__file__).parent / "data" / "pyspy"

SLEEPING = '''Process 42: python train.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 42 (idle): "MainThread"
    clock_nanosleep (libc.so.6)
    time_sleep (libpython3.11.so.1.0)
    inject (train.py:93)
    on_epoch_end (tensorflow/python/keras/callbacks.py:1200)
Thread 50 (idle)
    syscall (libc.so.6)
    tensorflow::data::PrefetchDatasetOp::Dataset::Iterator::GetNextInternal (tensorflow/libtensorflow_cc.so.2)
'''

TEARDOWN = '''Thread 7 (idle): "MainThread"
    syscall (libc.so.6)
    absl::lts_20250814::CondVar::WaitCommon (tensorflow/libtensorflow_framework.so.2)
    tensorflow::data::MultiDeviceIterator::~MultiDeviceIterator (tensorflow/libtensorflow_cc.so.2)
    tensorflow::core::RefCounted::Unref (tensorflow/libtensorflow_framework.so.2)
    EagerTensor_dealloc (tensorflow/python/_pywrap_tfe.so)
    <module> (train.py:95)
'''


def test_a_real_native_dump_inside_tf_data_is_a_tensorflow_wait():
    text = (DATA / "native-getnext.txt").read_text()
    frames = main_thread_frames(text)
    assert frames[0][0] == "syscall" and frames[-1] == ("<module>", "getnext.py:9")
    what = tf_native_wait(text)
    assert what and what.startswith("a tf.data pipeline") and "GetNextInternal" in what


def test_a_sleeping_main_thread_is_not_waiting_in_tensorflow():
    # the other thread's TensorFlow frames do not count, nor do Python frames inside the tensorflow package
    assert tf_native_wait(SLEEPING) is None
    assert tf_native_wait("") is None and tf_native_wait(None) is None


def test_an_iterator_teardown_is_named():
    assert tf_native_wait(TEARDOWN).startswith("destroying a tf.data iterator (tensorflow::data::MultiDeviceIterator")


def _job(*tasks, hang_timeout=None):
    return job(*tasks, hang_timeout=hang_timeout)


def _chief(**kw):
    return _task("worker:0", in_call=None, in_tf_code=False, location="train.py:95 in <module>", **kw)


def test_the_chief_in_an_iterator_teardown_is_not_a_stalled_worker():
    """The custom-loop tutorial after a chief-only pause: worker:1 waits in the all-reduce, worker:0's Python frame
    is the loop's head (``iterator = iter(dataset)``) while TensorFlow destroys the last epoch's iterator (40 s
    measured here). Never a hang by default, however long: TensorFlow's runtime works on something of its own."""
    w0, w1 = _chief(native_wait=tf_native_wait(TEARDOWN)), _task("worker:1")
    for after in (11, 21, 60, 300, 3600):
        a = assess(_job(w0, w1), T0 + 5 + after)
        assert a.status == "suspect" and a.verdict is None and a.suspect == "worker:0", (after, a)
    assert "not in a collective" in a.reason and "destroying a tf.data iterator" in a.reason
    # the user's --hang-timeout bounds it
    a = assess(_job(w0, w1, hang_timeout=30), T0 + 5 + 31)
    assert a.status == "hung" and a.verdict.kind == "collective_mismatch" and "--hang-timeout" in a.reason


def test_no_stall_is_declared_before_the_native_look():
    w0, w1 = _chief(native_looked=False), _task("worker:1")
    assert assess(_job(w0, w1), T0 + 5 + 30).status == "suspect"
    # looked, and nothing of TensorFlow's there: idle in its own code, declared as before
    w0 = _chief(native_looked=True, native_wait=None)
    a = assess(_job(w0, w1), T0 + 5 + 21)
    assert a.status == "hung" and a.verdict.kind == "stalled_worker" and a.verdict.culprits == ("worker:0",)


def test_the_frames_are_kept_as_one_line_of_evidence():
    from distdoctor.supervise.nativewait import native_summary
    line = native_summary((DATA / "native-getnext.txt").read_text())
    assert "\n" not in line and line.startswith("syscall (libc.so.6) <- ") and "GetNextInternal" in line
