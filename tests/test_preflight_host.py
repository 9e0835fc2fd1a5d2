"""This host and this environment: pure judges on plain numbers, then the real machine."""
from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

import pytest

from distdoctor.model import Category, Severity
from distdoctor.preflight.fingerprint import Fingerprint, collect, judge_environment, read_build_info
from distdoctor.preflight.host import (GIB, Gpu, HostFacts, PortProbe, ProcessRef, Resolution, collect_host_facts,
                                       judge_host)
from distdoctor.cluster.spec import Address

from mesh_helpers import clean_env, free_ports, tf_config

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

ADDR = Address("w1.example", 2222)
HEALTHY = HostFacts(task="worker:1", address=ADDR, resolution=Resolution("w1.example", ("10.0.0.5",)),
                    local_addresses=("127.0.0.1", "10.0.0.5"), port=PortProbe(2222, True), mem_total=64 * GIB,
                    mem_available=40 * GIB, checkpoint_dir="/ckpt", disk_total=500 * GIB, disk_free=200 * GIB,
                    disk_writable=True, shm_total=8 * GIB, nofile_soft=65536, nofile_hard=65536, core_soft=None,
                    core_pattern="core")


def facts(**changes) -> HostFacts:
    return HostFacts(**{**HEALTHY.__dict__, **changes})


def test_healthy_host_has_no_findings():
    assert judge_host(HEALTHY) == ()


HOST_CASES = [
    ("DD410", facts(resolution=Resolution("w1.example", ("10.0.0.9",))), Severity.ERROR, "not an address"),
    ("DD411", facts(resolution=Resolution("w1.example", error="Name or service not known")), Severity.ERROR,
     "does not resolve"),
    ("DD412", facts(port=PortProbe(2222, False, "EADDRINUSE", (ProcessRef(4242, "python3", "python3 -m http.server"),))),
     Severity.ERROR, "pid 4242 python3"),
    ("DD413", facts(port=PortProbe(80, False, "EACCES")), Severity.ERROR, "permission denied"),
    ("DD414", facts(mem_available=1 * GIB), Severity.WARNING, "1.0 GiB"),
    ("DD414", facts(cgroup_limit=8 * GIB, cgroup_usage=7.5 * GIB), Severity.WARNING, "of 8.0 GiB"),
    ("DD415", facts(disk_free=2 * GIB), Severity.WARNING, "2.0 GiB free"),
    ("DD415", facts(disk_writable=False), Severity.ERROR, "not writable"),
    ("DD416", facts(shm_total=64 << 20), Severity.WARNING, "64 MiB"),
    ("DD417", facts(nofile_soft=256), Severity.WARNING, "256"),
    ("DD417", facts(nofile_soft=1024), Severity.INFO, "1024"),
    ("DD418", facts(core_soft=0), Severity.INFO, "ulimit -c"),
    ("DD418", facts(core_pattern="|/usr/lib/systemd/systemd-coredump %P"), Severity.INFO, "systemd-coredump"),
    ("DD419", facts(gpus=(Gpu(0, "H100", 80 * GIB, 10 * GIB, (ProcessRef(77, "python", "70.0 GiB"),)),)),
     Severity.WARNING, "pid 77"),
]


@pytest.mark.parametrize("code,f,severity,needle", HOST_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(HOST_CASES)])
def test_host_rule(code, f, severity, needle):
    found = [x for x in judge_host(f) if x.code == code]
    assert len(found) == 1, judge_host(f)
    assert found[0].severity is severity and found[0].culprit == "worker:1"
    assert needle in found[0].summary


def test_loopback_resolution_counts_as_local():
    assert judge_host(facts(resolution=Resolution("localhost", ("127.0.0.1",)), local_addresses=())) == ()


def fingerprint(packages: dict, env: dict | None = None, tf: str | None = "2.21.0", dists=None) -> Fingerprint:
    return Fingerprint(python="3.11.7", platform="Linux", hostname="h", tensorflow=tf,
                       tensorflow_distributions=tuple(sorted((dists or ({"tensorflow": tf} if tf else {})).items())),
                       tf_build=(), keras_flavour="?", nvidia_driver=None, nccl=None,
                       env=tuple(sorted((env or {}).items())), packages=tuple(sorted(packages.items())))


ENV_CASES = [
    ("DD401", fingerprint({"keras": "3.15.1", "tf-keras": "2.21.0"}), True, Severity.WARNING, "TF_USE_LEGACY_KERAS=1"),
    ("DD401", fingerprint({"keras": "3.15.1"}), True, Severity.WARNING, "pip install tf-keras==2.21.0"),
    ("DD402", fingerprint({"keras": "3.15.1"}, {"TF_USE_LEGACY_KERAS": "1"}), True, Severity.ERROR, "tf-keras"),
    ("DD403", fingerprint({"tf-keras": "2.15.0"}, {"TF_USE_LEGACY_KERAS": "True"}), True, Severity.WARNING, "2.15.0"),
    ("DD404", fingerprint({}, tf=None), True, Severity.WARNING, "no TensorFlow"),
    ("DD405", fingerprint({}, dists={"tensorflow": "2.21.0", "tensorflow-cpu": "2.20.0"}), False, Severity.WARNING,
     "tensorflow-cpu 2.20.0"),
]


@pytest.mark.parametrize("code,fp,mwms,severity,needle", ENV_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(ENV_CASES)])
def test_environment_rule(code, fp, mwms, severity, needle):
    found = [f for f in judge_environment(fp, multi_worker_mirrored=mwms, task="worker:0") if f.code == code]
    assert len(found) == 1
    assert found[0].severity is severity
    assert needle in found[0].summary + found[0].remedy


def test_keras3_rule_needs_mwms_and_respects_legacy_flag():
    k3 = {"keras": "3.15.1", "tf-keras": "2.21.0"}
    assert judge_environment(fingerprint(k3), multi_worker_mirrored=False, task=None) == ()
    assert judge_environment(fingerprint(k3, {"TF_USE_LEGACY_KERAS": "1"}), multi_worker_mirrored=True, task=None) == ()
    f = judge_environment(fingerprint(k3), multi_worker_mirrored=True, task=None)[0]
    assert "PerReplica" in f.summary and "observed" in f.summary


def test_build_info_is_read_without_executing(tmp_path):
    p = tmp_path / "build_info.py"
    p.write_text("import collections\nraise SystemExit('must not run')\nbuild_info = collections.OrderedDict("
                 "[('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', True), "
                 "('cuda_compute_capabilities', ['sm_80', 'sm_90'])])\n")
    assert read_build_info(str(p)) == {"cuda_version": "12.5.1", "cudnn_version": "9", "is_cuda_build": "True",
                                       "cuda_compute_capabilities": "sm_80,sm_90"}
    assert read_build_info(str(tmp_path / "missing.py")) == {}


def test_fingerprint_never_imports_tensorflow():
    code = ("import sys, json; from distdoctor.preflight.fingerprint import collect; fp = collect(); "
            "print(json.dumps({'tf': fp.tensorflow, 'build': dict(fp.tf_build), 'flavour': fp.keras_flavour, "
            "'loaded': sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'tf_keras'))}))")
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=clean_env(TF_USE_LEGACY_KERAS="1"))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["loaded"] == []
    try:
        tf_version = md.version("tensorflow")
    except md.PackageNotFoundError:
        pytest.skip("tensorflow is not installed here")
    assert out["tf"] == tf_version and "cuda_version" in out["build"]
    assert out["flavour"] == ("tf-keras (legacy)" if _has("tf-keras") else "missing (TF_USE_LEGACY_KERAS set, no tf-keras)")


def _has(dist: str) -> bool:
    try:
        md.version(dist)
        return True
    except md.PackageNotFoundError:
        return False


def test_fingerprint_records_behaviour_variables_but_no_secrets():
    fp = collect({"TF_CPP_MIN_LOG_LEVEL": "2", "NCCL_DEBUG": "INFO", "TF_CONFIG": "{}", "GRPC_API_KEY": "s3cret",
                  "LD_LIBRARY_PATH": "/x", "HOME": "/root"})
    assert dict(fp.env) == {"TF_CPP_MIN_LOG_LEVEL": "2", "NCCL_DEBUG": "INFO", "LD_LIBRARY_PATH": "/x"}
    assert fp.package("pytest") == md.version("pytest")
    assert Fingerprint.from_json(json.loads(json.dumps(fp.to_json()))) == fp


def test_collect_host_facts_on_this_machine_without_gpu(tmp_path):
    port = free_ports(1)[0]
    f = collect_host_facts("worker:0", Address("127.0.0.1", port), str(tmp_path / "not" / "yet"))
    assert f.port.bindable and f.resolution.addresses == ("127.0.0.1",)
    assert f.mem_total > 0 and f.disk_total > 0 and f.disk_writable
    assert f.nvml in ("absent", "ok")
    assert not [x for x in judge_host(f) if x.severity is Severity.ERROR]


@pytest.fixture
def port_holder():
    """A process of ours that holds a port; ended by pid afterwards."""
    port = free_ports(1)[0]
    proc = subprocess.Popen([PY, "-c", "import socket, sys, time; s = socket.socket(); "
                             f"s.bind(('127.0.0.1', {port})); s.listen(); print('ready', flush=True); time.sleep(120)"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield port, proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_port_in_use_names_the_holder(port_holder):
    port, pid = port_holder
    cfg = tf_config({"worker": [f"127.0.0.1:{port}", "127.0.0.1:1"]}, "worker:0")
    p = subprocess.run([PY, "-m", "distdoctor", "check", "--json", "--tf-config", cfg], capture_output=True, text=True,
                       cwd=ROOT, timeout=60, env=clean_env())
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    f = next(f for f in doc["findings"] if f["code"] == "DD412")
    assert f["category"] == Category.PORT_IN_USE.value and f["culprit"] == "worker:0"
    assert f"pid {pid}" in f["summary"] and str(pid) in f["remedy"]
    assert doc["fingerprint"]["python"] and doc["host"]["port_free"] is False


def test_own_address_not_on_this_machine():
    port = free_ports(1)[0]
    cfg = tf_config({"worker": ["127.0.0.1:1", f"192.0.2.10:{port}"]}, "worker:1")  # TEST-NET-1, never routed
    p = subprocess.run([PY, "-m", "distdoctor", "check", "--json", "--tf-config", cfg], capture_output=True,
                       text=True, cwd=ROOT, timeout=60, env=clean_env())
    doc = json.loads(p.stdout)
    f = next(f for f in doc["findings"] if f["code"] == "DD410")
    assert f["culprit"] == "worker:1" and "192.0.2.10" in f["summary"]


def test_check_without_static_runs_host_and_environment():
    port = free_ports(1)[0]
    cfg = tf_config({"worker": [f"127.0.0.1:{port}"]}, "worker:0")
    p = subprocess.run([PY, "-m", "distdoctor", "check", "--tf-config", cfg], capture_output=True, text=True,
                       cwd=ROOT, timeout=60, env=clean_env())
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Python" in p.stdout and "DD317" in p.stdout
