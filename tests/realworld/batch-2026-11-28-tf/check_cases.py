"""Check this batch: every decisive line occurs verbatim in the case's logs; category is a valid slug."""
import json, pathlib, sys
SLUGS = {"peer_crashed","segfault_core_dump","oom_host","oom_gpu","user_code_error","hang_stalled_worker","hang_collective_mismatch","peer_unresponsive","data_sharding_imbalance","straggler_slow_worker","network_unreachable","firewall_or_port_blocked","port_in_use","config_tf_config","config_mismatch_across_workers","version_mismatch","resource_exhaustion","numerical_divergence","preemption","other"}
bad = 0
for c in sorted(pathlib.Path(__file__).parent.glob("tf_*")):
    d = json.loads((c / "case.json").read_text())
    text = "".join(p.read_text() for p in c.glob("*.log"))
    if d["category"] not in SLUGS: print(c.name, "bad category", d["category"]); bad += 1
    for line in d["decisive"] or []:
        if line not in text.splitlines(): print(c.name, "decisive not verbatim:", line); bad += 1
print("checked", len(list(pathlib.Path(__file__).parent.glob('tf_*'))), "cases,", bad, "problems"); sys.exit(bad > 0)
