"""The scheduler contract (cluster/scheduler.py), its registry, the Open MPI layout, and the one-line verdict.

Pure: environment mappings in, layouts and lines out; the sinks write to temporary files and run a
stand-in for ``scontrol`` found on PATH.
"""
from __future__ import annotations

import io
import json
import os
import stat
from dataclasses import replace

import pytest

from distdoctor.cluster import schedulers
from distdoctor.cluster.local import LOCAL, TASK_ENV
from distdoctor.cluster.openmpi import OPENMPI, parse_hosts, rank_hosts
from distdoctor.cluster.scheduler import Scheduler
from distdoctor.cluster.slurm import SLURM
from distdoctor.cluster.spec import load_document
from distdoctor.cluster.tfjob import TERMINATION_LOG, TERMINATION_LOG_ENV, TFJOB
from distdoctor.errors import ConfigError
from distdoctor.preflight.rules import check_document
from distdoctor.supervise.outcome import show_outcome, verdict_line
from distdoctor.model import Attempt, Diagnosis

OMPI = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_HOSTNAME": "gpu7"}
SLURM_ENV = {"SLURM_PROCID": "1", "SLURM_STEP_NODELIST": "n[1-2]", "SLURM_STEP_NUM_TASKS": "2",
             "SLURM_STEP_TASKS_PER_NODE": "1(x2)", "SLURM_JOB_ID": "42", "SLURM_LOCALID": "0"}
FAILED = Diagnosis.from_json({"status": "failed", "tasks": {"worker:0": {}, "worker:1": {}},
                              "root_cause": {"code": "DD101", "category": "peer_crashed", "culprit": "worker:1",
                                             "summary": "worker:1 was killed by SIGKILL (exit -9)\nat step 12; "
                                                        "the others waited"}})


def test_every_registered_scheduler_implements_the_contract():
    names = [s.name for s in schedulers.SCHEDULERS]
    assert len(set(names)) == len(names)
    for s in schedulers.SCHEDULERS:
        assert isinstance(s, Scheduler), s
        assert s.title and isinstance(s.log_prefixes, tuple)
        assert schedulers.by_name(s.name) is s


def test_detection_order():
    assert schedulers.detect({}) is None
    assert schedulers.detect(SLURM_ENV) is SLURM
    # mpirun inside an sbatch allocation: the ranks inherit Slurm's step variables, but mpirun started them
    assert schedulers.detect({**SLURM_ENV, **OMPI}) is OPENMPI
    assert schedulers.detect({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "TF_CONFIG": "{}"}) is TFJOB
    assert schedulers.detect({"TF_CONFIG": "{}"}).name == "tf_config"
    # a task `distdoctor run` started itself: its TF_CONFIG and its name
    assert schedulers.detect({"TF_CONFIG": "{}", TASK_ENV: "worker:1"}) is LOCAL
    assert schedulers.detect({**SLURM_ENV, "TF_CONFIG": "{}", TASK_ENV: "worker:1"}) is SLURM


def test_identities():
    ident = OPENMPI.identity(OMPI)
    assert (ident.rank, ident.size, ident.local_rank, ident.host, ident.label) == (1, 2, 1, "gpu7", "rank-1")
    ident = SLURM.identity(SLURM_ENV)
    assert (ident.rank, ident.size, ident.local_rank, ident.label) == (1, 2, 0, "slurm-1")
    ident = TFJOB.identity({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "mnist-worker-3"})
    assert ident.label == "worker-3"


def test_openmpi_layout_on_one_host_numbers_ports_by_local_rank():
    lay = OPENMPI.layout(OMPI, port_base=9000)
    assert lay.jobs == (("worker", ("gpu7:9000", "gpu7:9001")),)
    assert (lay.task_type, lay.task_index) == ("worker", 1)
    doc = load_document(tf_config=None, cluster_file=None, task=None, environ=OMPI, port_base=9000)
    assert doc.kind == "openmpi" and "OMPI_COMM_WORLD_RANK=1" in doc.origin
    spec = check_document(doc, "auto").spec
    assert str(spec.task) == "worker:1" and spec.address_of(spec.task) == "gpu7:9001"


def test_openmpi_layout_across_hosts_follows_by_slot_mapping():
    env = {**OMPI, "OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "DISTDOCTOR_MPI_HOSTS": "a:2,b:2"}
    lay = OPENMPI.layout(env)
    assert lay.jobs == (("worker", ("a:8888", "a:8889", "b:8888", "b:8889")),)
    assert lay.task_index == 2
    assert rank_hosts(parse_hosts("a,b:3"), 3) == ["a", "b", "b"]
    assert rank_hosts(parse_hosts("[fd00::1]:2"), 2) == ["fd00::1", "fd00::1"]


@pytest.mark.parametrize("change, message", [
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "1"}, "more than one host"),             # several hosts, no list
    ({"OMPI_COMM_WORLD_RANK": "2"}, "out of range"),
    ({"OMPI_COMM_WORLD_SIZE": "two"}, "not a non-negative integer"),
    ({"DISTDOCTOR_MPI_HOSTS": "a:1"}, "1 slots for OMPI_COMM_WORLD_SIZE=2"),
    ({"DISTDOCTOR_MPI_HOSTS": "a b"}, "is not HOST or HOST:SLOTS"),
    ({"DISTDOCTOR_MPI_HOSTS": "a,b"}, "mapped differently"),                 # rank 1 on b would be local rank 0
])
def test_openmpi_layout_names_what_is_inconsistent(change, message):
    with pytest.raises(ConfigError, match=message):
        OPENMPI.layout({**OMPI, **change})


def test_tf_config_wins_over_the_schedulers_variables():
    env = {**OMPI, "TF_CONFIG": '{"cluster": {"worker": ["h:1", "h:2"]}, "task": {"type": "worker", "index": 0}}'}
    assert load_document(tf_config=None, cluster_file=None, task=None, environ=env).origin == "TF_CONFIG"


def test_verdict_line():
    line = verdict_line(FAILED)
    assert line == ("distdoctor: status=failed category=peer_crashed culprit=worker:1 code=DD101: "
                    "worker:1 was killed by SIGKILL (exit -9) at step 12; the others waited")
    short = verdict_line(FAILED, limit=90)
    assert len(short) <= 90 and short.endswith("...") and "culprit=worker:1 code=DD101: worker:1" in short
    assert verdict_line(Diagnosis.from_json({"status": "succeeded", "tasks": {"worker:0": {}, "worker:1": {}},
                                             "root_cause": None})) == "distdoctor: status=succeeded tasks=2"
    two = replace(FAILED, attempts=tuple(Attempt(n, 0.0, 1.0, "failed", None, "restart", "") for n in (1, 2)))
    assert "code=DD101 attempts=2:" in verdict_line(two)
    assert "culprit=unknown" in verdict_line(Diagnosis.from_json({"status": "failed", "root_cause": {
        "category": "other", "code": "DD201"}}))
    assert "\n" not in verdict_line(FAILED)


def test_termination_message_only_where_there_is_one(tmp_path):
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    sink = TFJOB.outcome_sink(env)
    assert sink.path == TERMINATION_LOG and sink.writer == "every" and not sink.create
    if not os.path.exists(TERMINATION_LOG):
        assert show_outcome(sink, FAILED, collector=False, stream=io.StringIO()) is None   # not in a container
    path = tmp_path / "termination-log"
    sink = TFJOB.outcome_sink({**env, TERMINATION_LOG_ENV: str(path)})
    said = show_outcome(sink, FAILED, collector=False, stream=io.StringIO())   # every node writes its own
    assert said and "termination message" in said
    assert path.read_text() == verdict_line(FAILED) + "\n"


def test_slurm_comment_is_written_by_the_collector_only(tmp_path, monkeypatch):
    record = tmp_path / "argv"
    fake = tmp_path / "scontrol"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    sink = SLURM.outcome_sink(SLURM_ENV)
    assert show_outcome(sink, FAILED, collector=False, stream=io.StringIO()) is None and not record.exists()
    said = show_outcome(sink, FAILED, collector=True, stream=io.StringIO())
    assert said == "verdict written to job 42's Comment (scontrol show job 42)"
    assert record.read_text().splitlines() == ["update", "JobId=42", "Comment=" + verdict_line(FAILED, 250)]
    assert SLURM.outcome_sink({k: v for k, v in SLURM_ENV.items() if k != "SLURM_JOB_ID"}) is None
    fake.write_text("#!/bin/sh\necho 'slurm_update error: Access/permission denied' >&2\nexit 1\n")
    said = show_outcome(sink, FAILED, collector=True, stream=io.StringIO())
    assert "exited 1: slurm_update error: Access/permission denied" in said


def test_openmpi_rank_0_prints_the_verdict():
    sink = OPENMPI.outcome_sink(OMPI)
    out = io.StringIO()
    assert show_outcome(sink, FAILED, collector=False, stream=out) is None and out.getvalue() == ""
    show_outcome(sink, FAILED, collector=True, stream=out)
    assert out.getvalue() == verdict_line(FAILED) + "\n"
    assert OPENMPI.exit_codes.ends_job_on_failure and not SLURM.exit_codes.ends_job_on_failure


def test_declared_log_prefixes_are_the_ones_diagnose_reads():
    """Each scheduler's prefix, as it declares it, is split off by diagnose's demultiplexer, naming the writer: a
    strict one on a single line, a loose one in a stream of such lines."""
    import re

    from distdoctor.diagnose.logs.prefixes import split_combined, split_prefix
    seen = 0
    for s in schedulers.SCHEDULERS:
        for p in s.log_prefixes:
            line = p.example + "Epoch 1/2"
            assert re.match(p.pattern, line), (s.name, p)
            if p.strict:
                writer, rest, style = split_prefix(line)
                assert writer is not None and rest == "Epoch 1/2", (s.name, writer, rest, style)
                assert style == p.style, (s.name, style)
            if p.splits:
                out = split_combined((line + "\n") .encode() * 3, p.family, {}, {})
                assert len(out) == 1 and list(out.values())[0][0].endswith(b"Epoch 1/2"), (s.name, out)
            seen += 1
    assert seen >= 5


def test_a_slurmstepd_line_under_srun_label_names_no_writer(tmp_path):
    """srun --label relays slurmstepd's own lines through some task's stream ("280: slurmstepd: error: Detected 1
    oom-kill event(s)"): the label is not who it is about; srun's "task 302: Out Of Memory" names the task."""
    import json
    import subprocess
    import sys

    from distdoctor.diagnose.logs.prefixes import split_prefix
    assert split_prefix("280: slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1.0.")[0] is None
    assert split_prefix("280: Epoch 1/2")[0] == "rank:280"
    from distdoctor.diagnose.logs.prefixes import split_combined
    split = split_combined(b"280: Epoch 3/10\n302: Epoch 3/10\n280: slurmstepd: error: *** STEP 1.0 ON n1 CANCELLED AT "
                           b"2025-01-01T00:00:00 ***", "slurm", {}, {})
    assert split == {"rank:280": [b"Epoch 3/10"], "rank:302": [b"Epoch 3/10"]}, split   # not task 280's output
    log = tmp_path / "slurm-46030512.out"
    log.write_text("280: Epoch 3/10\n302: Epoch 3/10\n280: slurmstepd: error: Detected 1 oom-kill event(s) in "
                   "StepId=46030512.0. Some of your processes may have been killed by the cgroup out-of-memory "
                   "handler.\nsrun: error: h32m33: task 302: Out Of Memory\n")
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", str(log), "--json"], capture_output=True,
                         text=True, timeout=120)
    rc = json.loads(out.stdout)["root_cause"]
    assert (rc["category"], rc["culprit"]) == ("oom_host", "rank:302"), rc


def test_diagnose_reads_its_prefix_table_from_the_schedulers(monkeypatch):
    """A scheduler's prefix is declared once, by the scheduler: diagnose's table is built from the declarations, so
    a new scheduler's prefix is read with no line in diagnose."""
    from distdoctor.cluster.scheduler import LogPrefix
    from distdoctor.diagnose.logs import prefixes
    declared = [(p.pattern, p.example) for s in schedulers.SCHEDULERS for p in s.log_prefixes]
    table = [(p.pattern, p.example) for p in prefixes.PREFIXES]
    assert all(d in table for d in declared)
    assert len(table) - len(declared) == 4   # only the prefixes no scheduler prints: [name], name |, compose's, [rankN]:

    class Fake:
        name, title = "fake", "a fake launcher"
        log_prefixes = (LogPrefix(r"<(?P<label>\d+)> ", "<3> ", "fakerun --label", style="fake", names="rank"),)

    monkeypatch.setattr(prefixes, "SCHEDULERS", schedulers.SCHEDULERS + (Fake(),))
    got = [p for p in prefixes._table() if p.style == "fake"]
    assert len(got) == 1 and got[0].task(got[0].rx.match("<3> x").group("label")) == "rank:3"


def test_local_launcher_tells_each_task_its_cluster_and_name():
    cluster = LOCAL.plan(2, ps=1)
    assert cluster.tasks == ["chief:0", "worker:0", "worker:1", "ps:0"]   # PS needs a coordinator
    ports = [a.rsplit(":", 1)[1] for addrs in cluster.jobs.values() for a in addrs]
    assert len(set(ports)) == 4
    env = LOCAL.task_environ(cluster, "worker:1")
    assert json.loads(env["TF_CONFIG"])["task"] == {"type": "worker", "index": 1}
    assert LOCAL.detect(env) and schedulers.detect(env) is LOCAL
    ident = LOCAL.identity(env)
    assert (ident.scheduler, ident.label, ident.rank) == ("local", "worker-1", 1)
    assert schedulers.task_label(env) == "worker-1"
    assert LOCAL.layout(env) is None and LOCAL.outcome_sink(env) is None
    assert LOCAL.exit_codes.ends_job_on_failure


def test_local_launcher_prefix_matches_its_own_terminal_lines():
    import re
    (prefix,) = LOCAL.log_prefixes
    rx = re.compile(prefix.pattern)
    assert rx.match(prefix.example) and rx.match("[chief:0] Epoch 1/3")
    assert not rx.match("[1,0]<stdout>:hello") and not rx.match("[pod/mnist-worker-1/tensorflow] x")
