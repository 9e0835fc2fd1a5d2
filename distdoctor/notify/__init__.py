"""Telling people and monitoring systems what the supervisor sees.

* :mod:`.events`: the contract -- :class:`AlertEvent`, the event names, the errors;
* :mod:`.alerts`: pure formatters (webhook JSON, chat text, Alertmanager v2 alerts);
* :mod:`.sender`: delivery on background threads (bounded queues, timeouts, retries with backoff);
* :mod:`.metrics`: the Prometheus endpoint (``--metrics-port``);
* :mod:`.thresholds`: pure threshold judgement and the memory-limit forecast (``--threshold``);
* :mod:`.tensorboard`: TensorBoard scalars and text (``--tensorboard``), without TensorFlow;
* :mod:`.hub`: the :class:`Notifier` the supervisor talks to; :mod:`.options`: the CLI flags;
* :mod:`.rules`: DD210, threshold crossings as warning findings.

Importing this package imports neither TensorFlow nor TensorBoard nor prometheus_client.
"""
from .events import EVENTS, AlertEvent, NotifyError, NotifyUsageError

__all__ = ["EVENTS", "AlertEvent", "NotifyError", "NotifyUsageError"]
