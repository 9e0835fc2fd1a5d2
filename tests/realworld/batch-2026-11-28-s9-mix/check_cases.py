"""Checks this batch's labels by the corpus rules: every category is a valid slug, every decisive line occurs
verbatim as a line of the case's logs, the case.json fields are the corpus's, and no source is used twice.
Run: python3 check_cases.py (no distdoctor import; the slug list is the corpus README's)."""
import json
import pathlib
import sys

SLUGS = set("""peer_crashed segfault_core_dump oom_host oom_gpu user_code_error hang_stalled_worker
hang_collective_mismatch peer_unresponsive data_sharding_imbalance straggler_slow_worker network_unreachable
firewall_or_port_blocked port_in_use config_tf_config config_mismatch_across_workers version_mismatch
resource_exhaustion numerical_divergence preemption other""".split())
FIELDS = ["source", "title", "category", "culprit", "confidence", "explanation", "shape", "tf_version", "notes",
          "decisive"]
here = pathlib.Path(__file__).resolve().parent
problems, sources = [], {}
cases = sorted(p for p in here.iterdir() if (p / "case.json").exists())
for case in cases:
    lab = json.loads((case / "case.json").read_text())
    if list(lab) != FIELDS:
        problems.append(f"{case.name}: fields {list(lab)}")
    if lab["category"] not in SLUGS:
        problems.append(f"{case.name}: bad category {lab['category']}")
    if lab["confidence"] not in ("high", "medium", "low"):
        problems.append(f"{case.name}: bad confidence")
    if lab["shape"] not in ("fragment", "traceback", "mpirun", "kubectl", "slurm"):
        problems.append(f"{case.name}: bad shape")
    lines = set()
    for p in case.iterdir():
        if p.name != "case.json":
            lines |= set(p.read_text().splitlines())
    for d in lab["decisive"] or []:
        if d not in lines:
            problems.append(f"{case.name}: decisive not a verbatim log line: {d[:60]!r}")
    src = lab["source"].strip().lower()
    if src in sources:
        problems.append(f"{case.name}: source also used by {sources[src]}")
    sources[src] = case.name
print(f"{len(cases)} cases, {len(problems)} problems")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
