"""Check this batch's labels: valid category slug, every decisive line verbatim in the logs (python3 check_cases.py)."""
import json, pathlib, sys
SLUGS = {"peer_crashed", "segfault_core_dump", "oom_host", "oom_gpu", "user_code_error", "hang_stalled_worker",
         "hang_collective_mismatch", "peer_unresponsive", "data_sharding_imbalance", "straggler_slow_worker",
         "network_unreachable", "firewall_or_port_blocked", "port_in_use", "config_tf_config",
         "config_mismatch_across_workers", "version_mismatch", "resource_exhaustion", "numerical_divergence",
         "preemption", "other"}
here = pathlib.Path(__file__).resolve().parent
problems = 0
cases = sorted(p for p in here.iterdir() if (p / "case.json").exists())
for c in cases:
    lab = json.loads((c / "case.json").read_text())
    text = "\n".join(p.read_text() for p in c.iterdir() if p.name != "case.json")
    if lab["category"] not in SLUGS:
        print(c.name, "bad category", lab["category"]); problems += 1
    for d in lab.get("decisive") or []:
        if d not in text:
            print(c.name, "decisive not verbatim:", d[:60]); problems += 1
print(f"{len(cases)} cases, {problems} problems")
sys.exit(1 if problems else 0)
