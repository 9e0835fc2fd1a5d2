"""Label check for this batch: valid category/shape/confidence, decisive lines occur verbatim in the case's logs."""
import json, pathlib, sys
CATS = set("""peer_crashed segfault_core_dump oom_host oom_gpu user_code_error hang_stalled_worker
hang_collective_mismatch peer_unresponsive data_sharding_imbalance straggler_slow_worker network_unreachable
firewall_or_port_blocked port_in_use config_tf_config config_mismatch_across_workers version_mismatch
resource_exhaustion numerical_divergence preemption other""".split())
SHAPES = {"fragment", "traceback", "mpirun", "kubectl", "slurm"}
here = pathlib.Path(__file__).parent
problems, n = [], 0
for d in sorted(p for p in here.iterdir() if p.is_dir()):
    n += 1
    c = json.loads((d / "case.json").read_text())
    if c["category"] not in CATS: problems.append((d.name, "category", c["category"]))
    if c["shape"] not in SHAPES: problems.append((d.name, "shape", c["shape"]))
    if c["confidence"] not in {"high", "medium", "low"}: problems.append((d.name, "confidence"))
    lines = set()
    logs = [f for f in d.iterdir() if f.suffix == ".log"]
    if not logs: problems.append((d.name, "no log"))
    for f in logs: lines |= set(f.read_text().split("\n"))
    for x in c["decisive"] or []:
        if x not in lines: problems.append((d.name, "decisive not in log", x))
print(f"{n} cases, {len(problems)} problems"); [print(p) for p in problems]
sys.exit(1 if problems else 0)
