"""One prefilter: the joint Hyperscan databases (logs/prescan.py) answer each scanner alone with the lines the joint
pass hands it, and the structural scanner's fallback (no Hyperscan) finds the same lines."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from distdoctor.diagnose.logs import prescan, scan, taskfilter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


@pytest.fixture(scope="module")
def bodies():
    import bench_diagnose
    import diagnose_mixes
    out = [diagnose_mixes.mix_task_log(c, 3, 8, 300_000, 5, bench_diagnose._fault_lines).encode()
           for c in ("progress", "info", "errors")]
    corpus = Path(__file__).resolve().parent / "realworld" / "realworld-dev"
    out += [p.read_bytes() for p in sorted(corpus.glob("dev_0[0-4]*/*.log"))]
    return out


def test_each_scanner_alone_gets_the_lines_of_the_joint_pass(bodies):
    joint = prescan.get()
    if joint is None:
        pytest.skip("no Hyperscan here")
    n_lines = 0
    for body in bodies:
        starts, cands, _ = joint.scan(body)
        assert joint.sig_lines(body) == starts
        assert [(a, b, sorted(c), d) for a, b, c, d in joint.task_lines(body)] == [(a, b, sorted(c), d) for a, b, c, d in cands]
        pos = body.find(b"\n", len(body) // 2) + 1   # from a line start on, as the structural scanner asks
        assert [x[:2] for x in joint.task_lines(body, pos)] == [x[:2] for x in cands if x[0] >= pos]
        n_lines += len(cands)
    assert n_lines > 1000
    # the signature scanner's Hyperscan engine is the joint one
    assert scan.Prefilter(prefer=("hyperscan",)).line_starts(bodies[2]) == joint.sig_lines(bodies[2])


def test_the_fallback_finds_the_lines_hyperscan_finds(bodies):
    joint = prescan.get()
    if joint is None:
        pytest.skip("no Hyperscan here")
    for body in bodies:
        hs = {x[:2] for x in joint.task_lines(body)}
        fb = {x[:2] for x in taskfilter.candidate_lines(body, 0)}
        assert hs <= fb, sorted(hs - fb)[:3]   # the translated-bytes regex may find more (false candidates cost time)
