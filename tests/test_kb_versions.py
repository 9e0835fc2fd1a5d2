"""Version, implementation and platform mismatches as the components detect them (kb/versions.py, DD1350-DD1389).

Each log below holds a component's own mismatch message among the lines that surround it in a real job, including
the generic lines other signatures read differently (a Traceback read as the code's error, mpirun's note that a rank
exited read as a crashed peer, a segmentation fault, an image pull failure read as a missing image);
`distdoctor diagnose` must name the mismatch. The fixture checks in test_signatures.py cover each signature alone.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, ROOT
from distdoctor.diagnose.logs.kb import SIGNATURES
from distdoctor.diagnose.logs.signature import Role

MINE = [s for s in SIGNATURES if 1350 <= int(s.code[2:]) <= 1389]

_TB = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import {}\n"
_RANK_EXIT = ("--------------------------------------------------------------------------\nmpirun detected that one or "
              "more processes exited with non-zero status, thus causing\nthe job to be terminated. The first process to "
              "do so was:\n\n  Process name: [[4211,1],1]\n  Exit code:    1\n"
              "--------------------------------------------------------------------------")
CASES = [
    # Ray python/ray/_private/utils.py: the driver raises; the Traceback alone reads as the code's error
    ("ray-driver", _TB.format("ray") + "RuntimeError: Version mismatch: The cluster was started with:\n    Ray: 2.8.0\n"
     "    Python: 3.10.12\nThis process on node 10.1.0.5 was started with:\n    Ray: 2.8.0\n    Python: 3.11.6"),
    # MPICH Hydra utils/args/args.c: Open MPI's options given to MPICH's mpiexec
    ("hydra-ompi-flags", "[mpiexec@n01] match_arg (utils/args/args.c:163): unrecognized argument allow-run-as-root\n"
     "[mpiexec@n01] HYDU_parse_array (utils/args/args.c:178): argument matching returned error\n"
     "[mpiexec@n01] parse_args (ui/mpich/utils.c:1642): error parsing input array\n"
     "[mpiexec@n01] main (ui/mpich/mpiexec.c:127): error parsing parameters"),
    # glibc elf/dl-version.c on one rank; mpirun then reports that rank's exit
    ("glibcxx-on-one-rank", _TB.format("tensorflow") + "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.29' "
     "not found (required by /opt/tf/lib/python3.10/site-packages/tensorflow/libtensorflow_cc.so.2)\n" + _RANK_EXIT),
    # NumPy's _import_array: the NumPy 2 message precedes the crash it warns of
    ("numpy2-then-segv", "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.1 as it may crash. "
     "To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n"
     "AttributeError: _ARRAY_API not found\nFatal Python error: Segmentation fault"),
    # containerd images/image.go: the pull fails because the image has no build for the node's architecture
    ("image-arch", "  Warning  Failed     12s   kubelet  Failed to pull image \"reg.local/tf-trainer:2.15\": rpc error: "
     "code = NotFound desc = failed to pull and unpack image \"reg.local/tf-trainer:2.15\": no match for platform in "
     "manifest: not found\n  Warning  Failed     12s   kubelet  Error: ErrImagePull\n"
     "  Normal   BackOff    1s    kubelet  Back-off pulling image \"reg.local/tf-trainer:2.15\""),
    # protobuf python/google/protobuf/runtime_version.py inside an import Traceback
    ("protobuf-gencode", _TB.format("tensorflow") + "google.protobuf.runtime_version.VersionError: Detected mismatched "
     "Protobuf Gencode/Runtime major versions when loading tsl/protobuf/coordination_config.proto: gencode 5.28.3 "
     "runtime 4.25.5. Same major version is required."),
    # TensorFlow core/tpu/tpu_library_init_fns.inc: a libtpu symbol the framework looks up is missing, then the abort
    ("libtpu-symbol", "I0000 00:00:1715498963.019816 1234 tpu_initializer_helper.cc:269] Libtpu path is: "
     "libtpu.so\nF external/org_tensorflow/tensorflow/core/tpu/tpu_library_init_fns.inc:98] "
     "TpuEmbeddingEngine_ExecutePartitioner not available in this library.\nFatal Python error: Aborted"),
]


def test_every_signature_names_its_source_and_a_fixture():
    assert 25 <= len(MINE) <= 40
    for s in MINE:
        assert s.source and "/" in s.source and s.fixture and s.component and s.versions, s.code
        assert s.match(s.fixture), s.code
        assert s.category.value == "version_mismatch", s.code
        if s.role is Role.CAUSE:
            assert 60 <= s.rank <= 85, s.code


def test_the_warnings_alone_are_context_not_causes():
    ctx = {s.code for s in MINE if s.role is Role.CONTEXT}
    assert {"DD1352", "DD1361", "DD1375", "DD1382", "DD1388"} <= ctx
    assert all(s.rank < 70 for s in MINE if s.role is Role.CONTEXT)


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_diagnose_names_the_mismatch(tmp_path, name, text):
    log = tmp_path / "worker-0.log"
    log.write_text("starting job\n" + text + "\n")
    out = subprocess.run([PY, "-m", "distdoctor", "diagnose", "--json", str(log)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode in (0, 1, 3), out.stderr
    rc = json.loads(out.stdout)["root_cause"]
    assert rc["category"] == "version_mismatch", (rc["code"], rc["summary"])
