"""Ctrl-C and SIGTERM: a run stops at a point where it can, cleaning up on the way out, and
knows which signal stopped it (the exit status is 128 + its number: 130, 143)."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Mapping

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """Ctrl-C and SIGTERM during a run. While ``listening`` (on the main thread), each is
    noted in ``received`` and raised as KeyboardInterrupt: at once, or once the ``held``
    blocks around it are done (a file's outputs and its row belong together).

    Native code can lose a KeyboardInterrupt raised while it runs: PyAV's resampler
    swallows it, numpy's ``tofile`` turns it into a TypeError. So ``check`` raises it again
    wherever the batch can stop (each row written, each file the flow takes, the end), and
    an error that follows a stop signal is taken for the stop."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._holds = 0  # held blocks open (they nest: a file's row is written inside its block)

    @contextlib.contextmanager
    def listening(self):
        with _signal_handlers({s: self._on_signal for s in STOP_SIGNALS}):
            try:
                yield self
            except Exception as exc:
                if not self.received:
                    raise
                raise KeyboardInterrupt from exc

    @contextlib.contextmanager
    def held(self):
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
        self.check()

    def check(self) -> None:
        """KeyboardInterrupt if a stop signal has come, unless a ``held`` block is open."""
        if self.received and not self._holds:
            raise KeyboardInterrupt

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        self.check()


@contextlib.contextmanager
def _signal_handlers(handlers: Mapping[int, Callable[[int, Any], None]]):
    """``handlers`` (signal -> handler) while the block runs, the previous ones restored
    after. Only the main thread receives signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s, handler in handlers.items()}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
