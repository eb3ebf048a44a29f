"""Shared by the interop drivers: read the run's settings, record each step, print one JSON document.

A driver runs a fixed list of steps against a catalog URI and never asserts: it records what the
engine did (rows read back, schemas, and for a failing step the exception's class and the exact text
the engine shows its user). The tap suite that started it asserts on that record.
"""
import json
import sys
import time
import traceback


def settings():
    """The run's settings: one JSON object on argv[1]."""
    return json.loads(sys.argv[1])


class Recorder:
    def __init__(self):
        self.steps = []

    def step(self, name, fn):
        """Run fn(); record its result, or the error the engine raised, under name."""
        started = time.monotonic()
        entry = {"name": name}
        try:
            entry["ok"] = True
            entry["result"] = fn()
        except Exception as err:  # noqa: BLE001 - the point is to record whatever the engine raised
            entry["ok"] = False
            entry["error"] = describe(err)
        entry["seconds"] = round(time.monotonic() - started, 3)
        self.steps.append(entry)
        return entry

    def emit(self, **extra):
        out = {"steps": self.steps, **extra}
        sys.stdout.write("\n" + "@@RESULT@@" + json.dumps(out, default=str) + "\n")
        sys.stdout.flush()


def describe(err):
    """What the user sees: the exception's class, its str(), and the Java class behind it if any."""
    out = {"class": type(err).__module__ + "." + type(err).__qualname__, "text": str(err)}
    # Py4JJavaError carries java_exception; PySpark's captured exceptions keep the Java one as _origin.
    java = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    if java is not None:
        try:
            out["javaClass"] = java.getClass().getName()
            out["javaMessage"] = java.getMessage()
            cause = java.getCause()
            chain = []
            while cause is not None and len(chain) < 5:
                chain.append({"class": cause.getClass().getName(), "message": cause.getMessage()})
                cause = cause.getCause()
            out["causes"] = chain
        except Exception:  # noqa: BLE001
            pass
    out["trace"] = traceback.format_exception_only(type(err), err)[-1].strip()[:4000]
    return out
