"""The end-of-run text report, rendered into a fixed-width console."""
from __future__ import annotations

from io import StringIO

import pytest
from rich.console import Console

from bundles import bundle_records
from distdoctor.model import Diagnosis
from distdoctor.report.terminal import MAX_TASK_ROWS, render_diagnosis


def render(diag: dict, width: int = 100) -> str:
    """``diag``: a diagnosis.json document, read back into the model as every command hands it over."""
    console = Console(file=StringIO(), width=width, color_system=None, legacy_windows=False)
    render_diagnosis(Diagnosis.from_json(diag), console)
    return console.file.getvalue()


@pytest.mark.parametrize("scenario, verdict, culprit, remedy", [
    ("stall", "HUNG", "worker:1", "Look at slow_input_fn"),
    ("oom", "FAILED", "worker:1", "Reduce the per-worker batch size"),
])
def test_verdict_culprit_evidence_remedy(scenario, verdict, culprit, remedy):
    diag = bundle_records(4, scenario)["diagnosis"]
    out = render(diag)
    lines = out.splitlines()
    assert verdict in lines[1]                      # the verdict is the first thing in the panel
    assert f"culprit {culprit}" in out
    assert remedy in out and "What to do" in out
    assert "(consequence)" in out and "Evidence" in out
    assert out.index("Root cause") < out.index("Evidence") < out.index("What to do") < out.index("task ")
    for i in range(4):
        assert f"worker:{i}" in out


def test_other_findings_listed_after_the_root_cause():
    out = render(bundle_records(3, "oom")["diagnosis"])
    assert "Other findings" in out and "DD101" in out
    assert out.index("Root cause") < out.index("Other findings")
    assert out.count("DD103") == 1


def test_healthy():
    out = render(bundle_records(3, "healthy")["diagnosis"])
    assert "SUCCEEDED" in out and "All 3 tasks finished normally." in out
    assert "Root cause" not in out and "exit 0" in out


def test_markup_in_logs_is_printed_verbatim():
    diag = bundle_records(2, "oom")["diagnosis"]
    diag["root_cause"]["summary"] = "Tensor [red]x[/red] <b> & [bold]"
    assert "Tensor [red]x[/red] <b> & [bold]" in render(diag, width=160)


def test_many_tasks_are_summarised():
    out = render(bundle_records(64, "oom")["diagnosis"])
    assert f"… {64 - MAX_TASK_ROWS} more" in out and "exit 1" in out
    assert out.splitlines()[-2].lstrip().startswith("…") or "… " in out
    first_row = next(line for line in out.splitlines() if line.startswith("worker:"))
    assert first_row.startswith("worker:1 ") and "culprit" in first_row


def test_servers_stopped_at_a_finished_jobs_end_are_not_killed():
    """A ParameterServerStrategy success: the chief ran to its end, distdoctor stopped the servers (the normal end
    of ``server.join()``): the headline and the table say so, never "killed by SIGTERM"."""
    import io

    from rich.console import Console

    from distdoctor.model import Diagnosis
    from distdoctor.report.terminal import render_diagnosis as render

    d = Diagnosis.from_json({"schema_version": 1, "command": "run", "status": "succeeded", "root_cause": None,
                             "findings": [], "detected_at": 1.0,
                             "tasks": {"chief:0": {"exit_code": 0, "signal": None, "state": "exited",
                                                   "last_progress_at": None, "stack": ""},
                                       "ps:0": {"exit_code": -15, "signal": "SIGTERM", "state": "exited",
                                                "last_progress_at": None, "stack": "", "stopped_at_end": True}}})
    buf = io.StringIO()
    render(d, Console(file=buf, width=100, force_terminal=False))
    out = buf.getvalue()
    assert "killed by" not in out and "stopped at the job's end" in out, out
    assert "chief:0 ran to the end; ps:0 was stopped at the job's end" in " ".join(out.split()), out


def test_evidence_without_time_or_place_still_names_its_task():
    """A step count or a process fact has no clock and no file: its line still says whose it is."""
    diag = bundle_records(2, "oom")["diagnosis"]
    diag["root_cause"]["evidence"] = ["[worker:0 --:--:--.---] ran 200 steps", "[worker:1 --:--:--.---] ran 213 steps"]
    out = render(diag)
    assert "[worker:0] ran 200 steps" in out and "[worker:1] ran 213 steps" in out
