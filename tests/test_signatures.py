"""Every signature of the knowledge base is one unit with a fixture: its real log line must match it, name the
task it names, and reach the category the signature claims when it is the only line read."""
from __future__ import annotations

import pytest

from distdoctor.rulebook import all_rules
from distdoctor.diagnose.logs.kb import SIGNATURES
from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.diagnose.logs.signature import COMPONENTS, Role, by_component
from distdoctor.diagnose.logs.priors import SIGKILL
from distdoctor.model import Category, Status

IDS = [s.code for s in SIGNATURES]


def test_codes_are_unique_in_range_and_catalogued():
    assert len(IDS) == len(set(IDS))
    codes = {r.code for r in all_rules()}
    for s in SIGNATURES:
        assert (600 <= int(s.code[2:]) <= 999 or 1000 <= int(s.code[2:]) <= 1999) and s.code in codes
        assert s.literals and s.fixture and s.source and s.remedy and s.title


@pytest.mark.parametrize("sig", SIGNATURES, ids=IDS)
def test_every_signature_names_its_provenance(sig):
    """Which component prints the message, in which versions, and where its text comes from."""
    assert sig.component in COMPONENTS, sig.component
    assert sig.versions.strip() and sig.source.strip()
    rule = next(r for r in all_rules() if r.code == sig.code)
    assert sig.component in rule.why and sig.versions in rule.why


def test_signatures_by_component_cover_every_signature_once():
    groups = by_component()
    assert sorted(s.code for sigs in groups.values() for s in sigs) == sorted(IDS)
    assert all(s.component == comp for comp, sigs in groups.items() for s in sigs)


def test_a_signature_without_provenance_is_refused():
    from distdoctor.diagnose.logs.signature import add
    from distdoctor.model import Category
    with pytest.raises(ValueError):
        add("DD1999", "no-provenance", Category.OTHER, Role.CONTEXT, ("x",), "t", remedy="r", fixture="x",
            source="s", component="somewhere", versions="all")
    with pytest.raises(ValueError):
        add("DD1999", "no-versions", Category.OTHER, Role.CONTEXT, ("x",), "t", remedy="r", fixture="x",
            source="s", component="nccl", versions=" ")


@pytest.mark.parametrize("sig", SIGNATURES, ids=IDS)
def test_fixture_is_found_by_the_scanner(sig):
    hits, _ = scan_bytes("fixture.log", (sig.fixture + "\n").encode())
    mine = [h for h in hits if h.sig.code == sig.code]
    assert mine, f"{sig.code}: its own fixture is not found by the prefilter + pattern"
    if sig.expect:
        assert any(h.named == sig.expect for h in mine), [h.named for h in mine]


@pytest.mark.parametrize("sig", [s for s in SIGNATURES if s.role == Role.CAUSE and s.rank >= 45], ids=lambda s: s.code)
def test_a_specific_cause_alone_is_the_verdict(sig):
    hits, facts = scan_bytes("fixture.log", (sig.fixture + "\n").encode())
    v = reason(hits, [facts])
    assert v.status == Status.FAILED
    # a SIGKILL that no line sent reads as the OOM killer, its most common sender (priors)
    want = Category.OOM_HOST if sig.category == Category.PEER_CRASHED and SIGKILL.search(sig.fixture) else sig.category
    assert v.category == want, (v.code, v.summary)


@pytest.mark.parametrize("sig", [s for s in SIGNATURES if s.role == Role.BENIGN], ids=lambda s: s.code)
def test_a_benign_line_is_no_failure(sig):
    hits, facts = scan_bytes("fixture.log", (sig.fixture + "\n").encode())
    assert reason(hits, [facts]).status in (Status.UNKNOWN, Status.SUCCEEDED)


def test_every_prefilter_engine_finds_the_same_hits():
    """Hyperscan (x86-64), RE2 and Python's re must agree on every real-world case and every fixture."""
    from pathlib import Path
    from distdoctor.diagnose.logs.scan import Prefilter
    engines = [Prefilter(prefer=p) for p in (("hyperscan",), ("re2",), ("re",))]
    corpus = Path(__file__).resolve().parent / "realworld" / "realworld-dev"
    texts = [p.read_bytes() for p in sorted(corpus.glob("*/*.log"))] + [(s.fixture + "\n").encode() for s in SIGNATURES]
    for data in texts:
        seen = [sorted((h.sig.code, h.line_no, h.named) for h in scan_bytes("x.log", data, prefilter=pf)[0]) for pf in engines]
        assert seen[0] == seen[1] == seen[2], data[:200]


@pytest.mark.parametrize("line, tfos", [
    ("2019-06-12 21:13:13,801 ERROR (MainThread-25428) 0: Failed to allocate GPU, trying again...", True),
    ("Exception: Failed to allocate GPU", True),      # TensorFlowOnSpark's own strings (TFSparkNode.py)
    ('Failed to allocate GPU memory with message: "out of memory" (536870912 bytes requested, 459145216 bytes '
     'available, 17071734784 bytes total)', False),    # a framework's GPU out-of-memory, not TFoS finding no GPU
])
def test_tensorflowonsparks_no_free_gpu_is_its_own_words_only(line, tfos):
    hits, _ = scan_bytes("worker-0.log", (line + "\n").encode())
    assert ("DD895" in {h.sig.code for h in hits}) == tfos


def test_too_many_pings_points_at_disagreeing_keepalive_settings_unless_the_job_finished():
    """gRPC's doc/keepalive.md: a server answers pings its policy does not permit with GOAWAY ENHANCE_YOUR_CALM
    "too_many_pings" -- the two ends' keepalive settings disagree. Printed at a finished job's teardown it is no cause."""
    line = 'E1211 09:58:17.301122 2201 chttp2_transport.cc:1081] Received a GOAWAY with error code ENHANCE_YOUR_CALM ' \
           'and debug data equal to "too_many_pings"\n'
    hits, facts = scan_bytes("worker-0.log", ("INFO:tensorflow:Step 10\n" + line).encode())
    assert reason(hits, [facts]).category == Category.CONFIG_MISMATCH_ACROSS_WORKERS
    hits, facts = scan_bytes("worker-0.log", ("INFO:tensorflow:Training finished; exiting.\n" + line).encode())
    assert reason(hits, [facts]).category == Category.OTHER


@pytest.mark.parametrize("line,code", [
    # libnvidia-container prints NVML's error string lower-case after "nvml error:" in the container's start-up hook
    ("docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: "
     "starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error running "
     "hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver/library "
     "version mismatch: unknown.", "DD975"),
    # nvidia-docker 1.x compared the image's CUDA with the driver's itself
    ("nvidia-docker | 2017/11/21 00:48:39 Error: unsupported CUDA version: driver 8.0 < image 9.0.176", "DD836"),
])
def test_the_container_hooks_words_for_a_driver_that_does_not_fit_the_image(line, code):
    hits, facts = scan_bytes("output.log", (line + "\n").encode())
    v = reason(hits, [facts])
    assert v.category == Category.VERSION_MISMATCH and v.root.sig.code == code, (v.category, v.root and v.root.sig.code)


@pytest.mark.parametrize("line,code,category", [
    # SageMaker's and Azure ML's own refusals: the account may not run the instances asked for
    ("botocore.errorfactory.ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) when calling the "
     "CreateTrainingJob operation: The account-level service limit 'ml.p3.16xlarge for training job usage' is 0 "
     "Instances, with current utilization of 0 Instances and a request delta of 1 Instances.", "DD1458",
     Category.RESOURCE_EXHAUSTION),
    ('"code":"ClusterMinNodesExceedCoreQuota","message":"The specified subscription has a Standard DSv2 family vCPU '
     'quota of 6 and cannot accomodate for at least 1 requested managed compute nodes which maps to 8 vCPUs.',
     "DD1458", Category.RESOURCE_EXHAUSTION),
    # PyTorch's TCPStore before 1.13: nothing answered at the store's address -- a symptom of an unreachable store
    ("RuntimeError: connect() timed out. Original timeout was 900000 ms.", "DD1457", Category.NETWORK_UNREACHABLE),
    # a remote scheme TensorFlow has no file system for is the environment (tensorflow-io); '[local]' is the user's path
    ("tensorflow.python.framework.errors_impl.UnimplementedError: File system scheme 'gs' not implemented (file: "
     "'gs://bucket/model')", "DD1459", Category.VERSION_MISMATCH),
    ("tensorflow.python.framework.errors_impl.UnimplementedError: File system scheme '[local]' not implemented (file: "
     "'/content/train.tfrecord')", "DD1448", Category.USER_CODE_ERROR),
    # every TensorFlow since 1.x adds the file; a user's copy that cut it is the same message (session 21's s21-d)
    ("File system scheme '[local]' not implemented ", "DD1448", Category.USER_CODE_ERROR),
    ("UnimplementedError: File system scheme 's3' not implemented", "DD1459", Category.VERSION_MISMATCH),
    # a function the client sent is unknown to the remote binary: TensorFlow names version skew (TPU runtime older)
    ("NotFoundError: '__inference__tpu_init_fn_105' is neither a type of a primitive operation nor a name of a "
     "function registered in binary running on n-050d2992-w-0. Make sure the operation or function is registered in "
     "the binary running in this process.", "DD1460", Category.VERSION_MISMATCH),
])
def test_session_20_lines_read_as_their_component_states(line, code, category):
    hits, facts = scan_bytes("output.log", (line + "\n").encode())
    v = reason(hits, [facts])
    assert v.category == category and v.root.sig.code == code, (v.category, v.root and v.root.sig.code)


def test_an_instance_type_not_offered_in_the_region_is_no_quota():
    """SageMaker answers ResourceLimitExceeded also for an instance type its region does not offer: no quota would
    change that, so the quota signature (DD1458) stays silent (tests/realworld k8_012, labelled before DD1458)."""
    line = ('An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The requested '
            'resource training-job/ml.p2.xlarge is not available in this region')
    hits, facts = scan_bytes("output.log", (line + "\n").encode())
    assert "DD1458" not in {h.sig.code for h in hits}


@pytest.mark.parametrize("line", [
    "java.lang.AbstractMethodError: Method com/linkedin/spark/datasources/tfrecord/TFRecordOutputWriter.path()"
    "Ljava/lang/String; is abstract",
    "Exception in thread \"main\" java.lang.NoSuchMethodError: org.apache.hadoop.conf.Configuration.getPassword"
    "(Ljava/lang/String;)[C",
    "java.lang.UnsupportedClassVersionError: com/linkedin/tony/TonyClient has been compiled by a more recent version "
    "of the Java Runtime (class file version 55.0)",
])
def test_a_jvm_linkage_error_is_a_version_skew(line):
    """Java's own definition: a class changed incompatibly since its caller was compiled (session 21's s21-l)."""
    hits, facts = scan_bytes("output.log", (line + "\n").encode())
    v = reason(hits, [facts])
    assert v.category == Category.VERSION_MISMATCH and v.root.sig.code == "DD1461", (v.category, v.root)
