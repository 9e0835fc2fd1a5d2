"""``--tensorboard DIR``: the supervisor's figures as a TensorBoard run, next to the training's own.

Written with TensorBoard's own event writer and protos (the ``tensorboard``
package), never TensorFlow: the supervisor stays light. Events go to
``DIR/distdoctor/``, which TensorBoard shows as a run named ``distdoctor``
beside ``DIR/train`` and ``DIR/validation``. Per task: step time, RSS and CPU
(cores) as scalars against the task's training step; at the end the verdict
and the findings as text.
"""
from __future__ import annotations

import os
import sys
import types

from .events import NotifyError

__all__ = ["TensorBoardWriter", "RUN_NAME"]

RUN_NAME = "distdoctor"


def _without_tensorflow() -> None:
    """Make TensorBoard use its own TF stub even where TensorFlow is installed.

    ``tensorboard.compat.tf`` imports TensorFlow when it can (seconds of start-up and hundreds of MB
    in the supervisor) unless the module ``tensorboard.compat.notf`` exists -- the switch TensorBoard's
    own ``no_tensorflow`` build target flips. Registering that marker module is all it checks.
    """
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))


class TensorBoardWriter:
    def __init__(self, logdir: str) -> None:
        _without_tensorflow()
        try:
            from tensorboard.compat.proto.event_pb2 import Event
            from tensorboard.compat.proto.summary_pb2 import Summary
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except ImportError:
            raise NotifyError("--tensorboard needs the tensorboard package (not TensorFlow): pip install tensorboard") from None
        self._Event, self._Summary = Event, Summary
        self.path = os.path.join(logdir, RUN_NAME)
        try:
            os.makedirs(self.path, exist_ok=True)
            self._writer = EventFileWriter(self.path, flush_secs=5)
        except OSError as exc:
            raise NotifyError(f"cannot write TensorBoard events to {self.path}: {exc.strerror or exc}") from None
        self._steps: dict[str, int] = {}

    def _step(self, task: str, step: int | None) -> int:
        # Never backwards: TensorBoard's reader drops a run's later events when a step goes back
        # (it takes that for a restart from a checkpoint). Before the first step is known: 0.
        last = self._steps.get(task, 0)
        now = max(last, int(step)) if step is not None else last
        self._steps[task] = now
        return now

    def scalars(self, task: str, wall_time: float, step: int | None, values: dict[str, float | None]) -> None:
        vals = [self._Summary.Value(tag=f"{task}/{name}", simple_value=float(v))
                for name, v in values.items() if v is not None]
        if vals:
            ev = self._Event(wall_time=wall_time, step=self._step(task, step), summary=self._Summary(value=vals))
            self._writer.add_event(ev)

    def text(self, tag: str, text: str, wall_time: float, step: int = 0) -> None:
        # what tensorboard.plugins.text.summary.pb builds, without its TensorFlow import
        from tensorboard.plugins.text import metadata
        from tensorboard.util import tensor_util
        value = self._Summary.Value(tag=f"{tag}/text_summary",
                                    metadata=metadata.create_summary_metadata(display_name=tag, description=""),
                                    tensor=tensor_util.make_tensor_proto(text.encode()))
        self._writer.add_event(self._Event(wall_time=wall_time, step=step, summary=self._Summary(value=[value])))

    def close(self) -> None:
        self._writer.flush()
        self._writer.close()
