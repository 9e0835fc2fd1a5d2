"""distdoctor: make multi-worker TensorFlow training fail loudly, early and with its real cause named."""

__version__ = "0.1.0"

__all__ = ["__version__", "step"]


def step(n: int | None = None, **metrics: float) -> None:
    """Report one training step to a supervising ``distdoctor run`` (no-op otherwise).

    One line in a custom training loop gives exact step counts::

        for batch in dataset:
            strategy.run(train_step, args=(batch,))
            distdoctor.step(loss=float(loss))
    """
    import sys
    agent = sys.modules.get("_distdoctor_agent")
    if agent is not None:
        try:
            agent.report_step(n, metrics)
        except Exception:  # never break training
            pass
