"""A cluster printed in a log, judged by the preflight rules (diagnose/logs/clusters.py) inside the reasoning."""
from __future__ import annotations

import json
import subprocess
import sys

from distdoctor.diagnose.logs.demux import task_from_filename
from distdoctor.diagnose.logs.clusters import PrintedCluster, defects, printed_clusters
from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category, Status

MWMS_SPEC = ("INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {{'worker': {workers}}}, task_type = "
             "'worker', task_id = 0, num_workers = 2, local_devices = ('/job:worker/task:0',), communication = "
             "CommunicationImplementation.AUTO\n")
WAITING = ("2023-05-02 10:11:22.130000: I tensorflow/core/distributed_runtime/master.cc:268] CreateSession still "
           "waiting for response from worker: /job:worker/replica:0/task:1\n")


def verdict(text: str, name: str = "output.log"):
    hits, facts = scan_bytes(name, text.encode(), task_from_filename(name))
    return reason(hits, [facts])


def test_a_peer_at_localhost_among_remote_hosts_is_why_the_session_waits():
    v = verdict(MWMS_SPEC.format(workers="['10.0.0.5:2222', 'localhost:2222']") + WAITING * 2)
    assert (v.status, v.category, v.code, v.culprit) == (Status.HUNG, Category.CONFIG_TF_CONFIG, "DD309", "worker:1")
    assert "cluster_spec" in v.root.text
    assert any("CreateSession still waiting" in h.text for h in v.consequences), "the wait is the consequence"
    assert v.alternatives and v.alternatives[0].category == Category.PEER_UNRESPONSIVE


def test_a_sound_cluster_leaves_the_wait_as_it_was():
    v = verdict(MWMS_SPEC.format(workers="['10.0.0.5:2222', '10.0.0.6:2222']") + WAITING * 2)
    assert (v.status, v.category, v.culprit) == (Status.HUNG, Category.PEER_UNRESPONSIVE, "worker:1")


def test_channel_caches_of_one_task_are_merged_into_its_cluster():
    text = ("I tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:215] Initialize GrpcChannelCache for job ps -> "
            "{0 -> node1:2222}\n"
            "I tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:215] Initialize GrpcChannelCache for job worker "
            "-> {0 -> node2:2222, 1 -> node2:2222}\n"
            "E tensorflow/core/distributed_runtime/master.cc:269] UnavailableError: failed to connect to all "
            "addresses\n")
    hits, _ = scan_bytes("worker-0.log", text.encode())
    pcs = printed_clusters(hits)
    assert [pc.jobs for pc in pcs] == [{"ps": ["node1:2222"], "worker": ["node2:2222", "node2:2222"]}]
    v = verdict(text, "worker-0.log")
    assert (v.category, v.code, v.culprit) == (Category.CONFIG_TF_CONFIG, "DD307", "worker:1")


def test_a_sparse_channel_cache_is_not_a_whole_job():
    hits, _ = scan_bytes("w.log", b"Initialize GrpcChannelCache for job worker -> {1 -> localhost:2223}\n")
    assert printed_clusters(hits) == []


def test_a_specific_cause_is_not_overridden_by_the_cluster():
    v = verdict(MWMS_SPEC.format(workers="['10.0.0.5:2222', 'localhost:2222']")
                + "[123456.789] Out of memory: Killed process 4242 (python) total-vm:20000000kB, anon-rss:15000000kB\n")
    assert v.category == Category.OOM_HOST


def test_a_printed_tf_config_alone_with_a_defect_is_reported_but_the_job_state_stays_unknown():
    cfg = {"cluster": {"worker": ["host1:2222", "host2:2222"]}, "task": {"type": "worker", "index": 2}}
    v = verdict(f"TF_CONFIG: {json.dumps(cfg)}\nEpoch 1/3\n")
    assert (v.status, v.category, v.code, v.culprit, v.confidence) == \
        (Status.UNKNOWN, Category.CONFIG_TF_CONFIG, "DD306", "worker:2", "low")
    from distdoctor.diagnose.logs.verdict import finding_of
    from distdoctor.model import Severity
    assert finding_of(v).severity == Severity.ERROR, "a defect found is an error even when the job's state is unknown"


def test_tf1_master_is_read_as_the_chief():
    pc = PrintedCluster({"master": ["m-0:2222"], "ps": ["ps-0:2222"], "worker": ["w-0:2222", "w-1:2222"]},
                        "worker:0", ())
    assert defects(pc) == []
    v = verdict('TF_CONFIG: {"cluster":{"master":["m-0:2222"],"ps":["ps-0:2222"],"worker":["w-0:2222"]},'
                '"task":{"type":"worker","index":0}}\n')
    assert (v.status, v.category) == (Status.UNKNOWN, Category.OTHER)


def test_the_cli_names_the_loopback_peer(tmp_path):
    log = tmp_path / "node-a.log"
    log.write_text(MWMS_SPEC.format(workers="['10.0.0.5:2222', 'localhost:2222']") + WAITING)
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", "--json", str(log)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    rc = json.loads(out.stdout)["root_cause"]
    assert (rc["code"], rc["category"], rc["culprit"]) == ("DD309", "config_tf_config", "worker:1")


TB = ('Traceback (most recent call last):\n'
      '  File "train.py", line 40, in <module>\n'
      '    strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
      '  File "/usr/local/lib/python3.8/dist-packages/tensorflow/python/distribute/multi_worker_util.py", line 93, '
      'in _validate_cluster_spec\n'
      '    raise ValueError(msg)\n')


def test_a_generic_exception_raised_in_tensorflows_cluster_code_is_a_cluster_error():
    v = verdict(TB + "ValueError: something this version words differently\n", "worker-1.log")
    assert (v.status, v.category, v.code, v.culprit, v.confidence) == \
        (Status.FAILED, Category.CONFIG_TF_CONFIG, "DD898", "worker:1", "medium")
    assert v.root.text.startswith("ValueError") and "multi_worker_util.py" in v.context[0].text


def test_a_cut_traceback_that_ends_in_cluster_code_is_a_cluster_error():
    v = verdict(TB, "worker-1.log")
    assert (v.category, v.code, v.confidence) == (Category.CONFIG_TF_CONFIG, "DD898", "low")


def test_the_same_exception_from_other_code_stays_a_code_error():
    other = TB.replace("distribute/multi_worker_util.py", "keras/engine/training.py").replace(
        "_validate_cluster_spec", "fit")
    v = verdict(other + "ValueError: something this version words differently\n", "worker-1.log")
    assert v.category == Category.USER_CODE_ERROR
    # a frame far above the exception (another traceback's) does not count
    v = verdict(TB + "".join(f'  File "x.py", line {i}, in f\n    g()\n' for i in range(5))
                + "ValueError: from user code\n", "worker-1.log")
    assert v.category == Category.USER_CODE_ERROR


def test_a_channel_cache_that_lists_its_own_task_at_localhost_is_sound():
    """TF's gRPC server prints itself as localhost in its channel cache: not a peer at loopback."""
    text = ("I tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:258] Initialize GrpcChannelCache for job worker "
            "-> {0 -> localhost:12345, 1 -> worker-1:12345}\n"
            "I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:365] Started server with target: "
            "grpc://localhost:12345\n")
    hits, _ = scan_bytes("output.log", text.encode())
    assert [defects(pc) for pc in printed_clusters(hits)] == [[]]
    assert verdict(text + WAITING).category == Category.PEER_UNRESPONSIVE


def test_startup_defects_explain_a_crash_after_the_cluster_is_printed():
    from distdoctor.diagnose.logs.clusters import startup_defect
    ps_only = PrintedCluster({"ps": ["p:1"], "worker": ["w:1"]}, "ps:0", ())
    assert "no chief" in startup_defect(ps_only, "ps:0") and defects(ps_only) == []   # TF-version dependent: not alone
    assert "own job (evaluator)" in startup_defect(PrintedCluster({"chief": ["c:1"], "worker": ["w:1"]}, None, ()),
                                                   "evaluator:0")
    # a cut traceback after per-job channel-cache lines (not a whole cluster) is not read against them
    text = ("Initialize GrpcChannelCache for job ps -> {0 -> ps-0:2222}\n" + TB.replace("multi_worker_util", "x"))
    v = verdict(text, "ps-0.log")
    assert v.category == Category.USER_CODE_ERROR
