"""Real Prometheus and Alertmanager (Debian's packages) on loopback, on free ports, in temp dirs; stopped by pid."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

from notify_helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "deploy" / "monitoring" / "distdoctor.rules.yml"
HAVE_PROMETHEUS = shutil.which("prometheus") is not None
HAVE_ALERTMANAGER = shutil.which("prometheus-alertmanager") is not None


def _get(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read() or b"null")


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {timeout} s: {log.read_text()[-2000:]}")


class Service:
    def __init__(self, argv: list[str], ready_path: str, port: int, workdir: Path) -> None:
        self.port = port
        self.log = workdir / "service.log"
        self._fh = open(self.log, "w")
        self.proc = subprocess.Popen(argv, stdout=self._fh, stderr=subprocess.STDOUT, cwd=workdir)
        _wait_ready(f"http://127.0.0.1:{port}{ready_path}", self.proc, self.log)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._fh.close()


class Alertmanager(Service):
    def __init__(self, workdir: Path, webhook_url: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        cfg = workdir / "alertmanager.yml"
        cfg.write_text(
            "route:\n  receiver: hook\n  group_by: [alertname, job, culprit]\n  group_wait: 1s\n"
            "  group_interval: 5s\n  repeat_interval: 1h\n"
            f"receivers:\n  - name: hook\n    webhook_configs:\n      - url: {webhook_url}\n        send_resolved: true\n")
        port = free_port()
        super().__init__(["prometheus-alertmanager", f"--config.file={cfg}", f"--storage.path={workdir / 'data'}",
                          f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
                         "/-/ready", port, workdir)

    def alerts(self, **labels) -> list[dict]:
        flt = "&".join("filter=" + urllib.parse.quote(f'{k}="{v}"') for k, v in labels.items())
        return _get(f"{self.base}/api/v2/alerts?{flt}")


class Prometheus(Service):
    def __init__(self, workdir: Path, targets: list[str], alertmanager: str | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        cfg = workdir / "prometheus.yml"
        am = (f"alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['{alertmanager}']\n"
              if alertmanager else "")
        cfg.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"rule_files: ['{RULES}']\n{am}"
            "scrape_configs:\n  - job_name: distdoctor\n    honor_labels: true\n    scrape_timeout: 1s\n"
            f"    static_configs:\n      - targets: {json.dumps(targets)}\n")
        port = free_port()
        super().__init__(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={workdir / 'data'}",
                          f"--web.listen-address=127.0.0.1:{port}"], "/-/ready", port, workdir)

    def query(self, promql: str) -> list[dict]:
        out = _get(f"{self.base}/api/v1/query?query=" + urllib.parse.quote(promql))
        assert out["status"] == "success", out
        return out["data"]["result"]
