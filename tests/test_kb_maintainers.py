"""The maintainers' troubleshooting knowledge (kb/maintainers.py): a message a guide explains gets the guide's cause.

Each line below is quoted from the guide named in the test id; `distdoctor diagnose` on a log holding it must give the
category the guide states (its fixture checks in test_signatures.py cover the scanner and the lone-line verdict; these
go through the command a user runs, with the line among ordinary output)."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, ROOT
from distdoctor.diagnose.logs.kb import SIGNATURES

MINE = [s for s in SIGNATURES if 1200 <= int(s.code[2:]) <= 1239]

CASES = [
    # Horovod docs/troubleshooting.rst: Horovod linked to another NCCL than the one loaded
    ("horovod-nccl-data-type", "UnknownError (see above for traceback): ncclAllReduce failed: invalid data type",
     "version_mismatch"),
    # Horovod docs/troubleshooting.rst: the hwloc symbols TensorFlow exports clash with Open MPI's
    ("horovod-hwloc-segv", "[host:1234] Signal: Segmentation fault (11)\n[host:1234] Signal code: Address not mapped (1)\n"
     "[ 1] /usr/lib/x86_64-linux-gnu/libopen-pal.so.20(opal_hwloc_base_free_topology+0x76)[0x7f3042871ca6]",
     "version_mismatch"),
    # Open MPI docs/launching-apps/troubleshooting.rst: the compiler runtime is missing in non-interactive shells
    ("ompi-prted-libimf", "prted: error while loading shared libraries: libimf.so: cannot open shared object file: No "
     "such file or directory\n------\nA daemon (pid 11893) died unexpectedly with status 127 while\nattempting to launch "
     "so we are aborting.", "version_mismatch"),
    # Slurm faq.shtml: srun's accept() hit a per-user limit
    ("slurm-accept-eagain", "srun: error: Unable to accept connection: Resources temporarily unavailable",
     "resource_exhaustion"),
    # Slurm faq.shtml: a node rebooted under the job
    ("slurm-node-rebooted", "slurmctld: update_node: node gpu-07 reason set to: Node unexpectedly rebooted",
     "peer_crashed"),
]


@pytest.mark.parametrize("name,text,category", CASES, ids=[c[0] for c in CASES])
def test_diagnose_names_the_category_the_guide_states(tmp_path, name, text, category):
    log = tmp_path / "worker-0.log"
    log.write_text("starting job\nEpoch 1/3\n" + text + "\n")
    out = subprocess.run([PY, "-m", "distdoctor", "diagnose", "--json", str(log)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode in (0, 1, 3), out.stderr
    verdict = json.loads(out.stdout)
    rc = verdict["root_cause"]
    assert rc["category"] == category, (rc["code"], rc["summary"])


def test_every_maintainers_signature_cites_its_guide():
    assert len(MINE) >= 15
    guides = ("docs/troubleshooting.rst", "open-mpi/ompi-www faq",
              "docs/launching-apps/troubleshooting.rst", "doc/html/faq.shtml", "doc/html/troubleshoot.shtml")
    for s in MINE:
        assert any(g in s.source for g in guides), (s.code, s.source)
        assert "(" in s.source and s.source.rstrip().endswith(")"), (s.code, "no section named")
        assert s.remedy and s.fixture


def test_a_more_specific_guide_entry_outranks_the_generic_signature():
    """Where a guide gives a line another signature already reads, the guide's entry must be the stronger one."""
    from distdoctor.diagnose.logs.scan import scan_bytes
    for code in ("DD1213", "DD1209", "DD1227", "DD1216"):
        sig = next(s for s in MINE if s.code == code)
        hits, _ = scan_bytes("x.log", (sig.fixture + "\n").encode())
        others = [h.sig for h in hits if h.sig.code != code and h.sig.role.value == "cause"]
        assert all(o.rank < sig.rank for o in others), [(o.code, o.rank) for o in others]
