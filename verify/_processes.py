"""Worker processes that end with their parent, forks that hold a Ctrl-C back, and the command
line's Ctrl-C at every moment of a run, its imports included (standard library only: the package's
``__init__`` imports this first).

Workers call :func:`ignore_sigint_in_worker` and :func:`die_with_parent` first; the parent starts
them inside :func:`forking_with_sigint_blocked` and, interrupted, ends them (:func:`stop_pool`).
A Ctrl-C on the command line is one line ``error: interrupted ...`` and exit status
:data:`EXIT_INTERRUPTED`, never a traceback: outside a command the process ends at once
(:func:`exit_on_sigint`); inside one it is KeyboardInterrupt, so that the command's ``finally``
blocks clean up first (:func:`interrupted`). An ignored SIGINT (a background job) stays ignored.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator

__all__ = ["EXIT_INTERRUPTED", "PARENT_POLL_SECONDS", "die_with_parent", "forking_with_sigint_blocked",
           "ignore_sigint_in_worker", "stop_pool", "command_line", "exit_on_sigint", "call_interruptible",
           "interrupted"]

#: How often a worker without a parent-death signal (not Linux) checks that its parent lives.
PARENT_POLL_SECONDS = 1.0
#: prctl's option number (linux/prctl.h): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1
#: Exit status after SIGINT (128 + the signal's number, as a shell reports it).
EXIT_INTERRUPTED = 130
#: The console script of pyproject.toml's ``[project.scripts]`` (the other way to start the command line).
CONSOLE_SCRIPT = "mha-nw-verify"
#: The package whose ``python -m`` is the command line.
PACKAGE = "verify"


def die_with_parent(parent: int) -> None:
    """Make this process end when ``parent`` does: the parent-death signal on Linux, else (or if
    it cannot be set) a daemon thread that polls; at once if the parent is already gone."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:          # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(PARENT_POLL_SECONDS)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


@contextlib.contextmanager
def forking_with_sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while a pool starts its workers (they inherit the mask): a Ctrl-C
    before a worker ignores SIGINT stays pending there and is discarded, instead of breaking the
    pool; here, it is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):     # no fork where there is no pthread_sigmask
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_sigint_in_worker() -> None:
    """A worker's first step (then :func:`die_with_parent`): ignore SIGINT (the parent handles a
    Ctrl-C and ends the workers) and discard one that arrived since the fork."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):           # blocked since the fork: a pending one is discarded
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def stop_pool(pool: Any) -> None:
    """End a ``ProcessPoolExecutor``'s workers now (stopped: their running tasks are lost, not
    waited for) and shut it down without waiting."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):   # already gone, or closed
            pass
    pool.shutdown(wait=False, cancel_futures=True)


# --------------------------------------------------------------------------- Ctrl-C on the command line


def _module_of(argv: list[str]) -> str | None:
    """The module of ``python [options] -m MODULE ...`` in ``argv`` (``sys.orig_argv``), else None."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg in ("-", "--") or arg.startswith("-c"):
            return None                          # a script, standard input or -c: not -m
        if arg in ("-X", "-W"):                  # options that take the next argument
            i += 2
            continue
        if "m" in arg[1:] and not arg.startswith("--"):
            rest = arg[arg.index("m", 1) + 1:]   # -m MODULE, -mMODULE, -Im MODULE
            return rest or (argv[i + 1] if i + 1 < len(argv) else None)
        i += 1
    return None


def command_line() -> bool:
    """Whether this process is the package's command line: ``python -m verify`` (while Python
    locates it, ``sys.argv[0]`` is ``"-m"``) or the console script :data:`CONSOLE_SCRIPT`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == CONSOLE_SCRIPT:
        return True
    return argv0 == "-m" and _module_of(list(getattr(sys, "orig_argv", []))) == PACKAGE


def _say(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode("utf-8", "backslashreplace"))
    except OSError:      # stderr closed: the exit status still tells
        pass


def _exit_at_once(signum: int, frame: Any) -> None:
    """SIGINT before or after a command (imports, exit): nothing to clean up, one line, exit 130."""
    _say("error: interrupted (SIGINT); nothing was left half-written (every write is atomic)")
    os._exit(EXIT_INTERRUPTED)


def _exit_quietly(signum: int, frame: Any) -> None:
    """SIGINT after the interrupt was reported: its line is out already."""
    os._exit(EXIT_INTERRUPTED)


def _raise_interrupt(signum: int, frame: Any) -> None:
    """SIGINT while a command runs: Python's KeyboardInterrupt (the command's cleanup runs)."""
    raise KeyboardInterrupt


def _ours_or_default(handler: Any) -> bool:
    return handler is signal.default_int_handler or handler in (_raise_interrupt, _exit_at_once)


def exit_on_sigint() -> None:
    """From now on a Ctrl-C ends the process at once with one line (where Python's handler or one of
    these is installed: an ignored SIGINT stays ignored)."""
    if threading.current_thread() is threading.main_thread() and _ours_or_default(signal.getsignal(signal.SIGINT)):
        signal.signal(signal.SIGINT, _exit_at_once)


def call_interruptible(fn: Callable[[], int]) -> int:
    """``fn()`` with Ctrl-C as KeyboardInterrupt (the command cleans up and reports it with
    :func:`interrupted`; one that escapes ``fn`` is reported here), then :func:`exit_on_sigint`."""
    main = threading.current_thread() is threading.main_thread()
    if main and _ours_or_default(signal.getsignal(signal.SIGINT)):
        signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        code = fn()
    except KeyboardInterrupt:      # before the command's own handler (its first lines), or inside it
        code = interrupted("files already written are complete (every write is atomic)")
    if main:
        exit_on_sigint()
    return code


def interrupted(detail: str, *, signal_name: str = "SIGINT") -> int:
    """Report an interrupt on one line (``error: interrupted (SIGINT); DETAIL``) and return
    :data:`EXIT_INTERRUPTED`. Under :func:`call_interruptible` a further Ctrl-C then ends the
    process without another line."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) in (
            _raise_interrupt, _exit_at_once):
        signal.signal(signal.SIGINT, _exit_quietly)
    try:
        print(f"error: interrupted ({signal_name}); {detail}", file=sys.stderr, flush=True)
    except (OSError, ValueError):   # stderr closed
        pass
    return EXIT_INTERRUPTED
