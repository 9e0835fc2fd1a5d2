"""The deployment examples stay valid and use the commands this project ships."""
from __future__ import annotations

import shlex
import subprocess

import yaml

from conftest import ROOT
from distdoctor.cli import build_parser


def _parses(cmdline: str) -> None:
    argv = shlex.split(cmdline)
    assert argv[0] == "distdoctor"
    args = build_parser().parse_args(argv[1:])
    assert args.node and args.command[1:] and args.command[0] == "--"


def test_tfjob_runs_every_replica_under_run_node():
    doc = yaml.safe_load((ROOT / "deploy" / "tfjob.yaml").read_text())
    assert doc["kind"] == "TFJob"
    for name, replica in doc["spec"]["tfReplicaSpecs"].items():
        c = replica["template"]["spec"]["containers"][0]
        assert c["name"] == "tensorflow"
        env = {e["name"]: e for e in c["env"]}
        assert "secretKeyRef" in env["DISTDOCTOR_TOKEN"]["valueFrom"]
        script = c["args"][0]
        assert script.startswith("exec distdoctor run --node")
        _parses(script.replace('"/ckpt/distdoctor/$HOSTNAME"', "/ckpt/x")[len("exec "):])


def test_sbatch_script_is_valid_bash_and_runs_run_node():
    path = ROOT / "deploy" / "sbatch.sh"
    subprocess.run(["bash", "-n", str(path)], check=True)
    text = path.read_text()
    assert "export DISTDOCTOR_TOKEN" in text and "export CKPT" in text
    inner = text.split("srun bash -c '", 1)[1].split("'", 1)[0].replace("\\\n", " ")
    _parses(inner[len("exec "):].replace('"$CKPT/distdoctor/$SLURM_PROCID"', "/tmp/x")
            .replace(" $DISTDOCTOR_ARGS", " --failure-grace 5").replace('"$@"', "python train.py"))
    # the real job: tests/test_slurm.py submits this very file to a local Slurm


def test_mpirun_script_is_valid_bash_and_runs_run_node():
    path = ROOT / "deploy" / "mpirun.sh"
    subprocess.run(["bash", "-n", str(path)], check=True)
    text = path.read_text()
    assert "export DISTDOCTOR_TOKEN" in text and "-x DISTDOCTOR_TOKEN" in text and "DISTDOCTOR_MPI_HOSTS=$HOSTS" in text
    inner = text.split("bash -c '", 1)[1].split("'", 1)[0].replace("\\\n", " ")
    _parses(inner[len("exec "):].replace('"$CKPT/distdoctor/$OMPI_COMM_WORLD_RANK"', "/tmp/x")
            .replace(" $DISTDOCTOR_ARGS", " --port-base 9000").replace('"$@"', "python train.py"))
    # the real job: tests/test_openmpi.py runs this very file under mpirun
