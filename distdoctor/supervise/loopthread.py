"""An asyncio loop of our own in a daemon thread: the side link's two ends (:mod:`.sidelink`) each run one, and any
thread may hand it work without blocking."""
from __future__ import annotations

import asyncio
import threading

__all__ = ["LoopThread"]


class LoopThread:
    """An asyncio loop of our own in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float | None = None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn, *args) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the link is over
            pass

    def stop(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if not self.loop.is_closed() and self.loop.is_running():
            try:
                self.run(cancel_all(), 3.0)
            except Exception:
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(3.0)
        if not self.thread.is_alive() and not self.loop.is_closed():
            self.loop.close()
