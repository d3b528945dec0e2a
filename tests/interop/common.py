"""Shared set-up for the interop checks: loads the worktree's libperps through the Python
binding, builds clients and sessions for a Venue, and collects stream events."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
os.environ.setdefault("PERPS_LIB", os.path.join(ROOT, "target", "release", "libperps.so"))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
sys.path.insert(0, HERE)

import perps  # noqa: E402
from venue import SEED_HEX, TOKEN  # noqa: E402

# Many connections to 127.0.0.1 from one process: lift the per-host connect budget so a
# long run of checks does not hit the library's own (correct) 30/min limit.
BASE_OPTS = {"stream_connects_per_minute": 100000, "stream_max_connections": 1000,
             "stream_reconnect_min_ms": 100, "stream_reconnect_max_ms": 1000,
             "total_timeout_ms": 5000, "read_timeout_ms": 3000, "connect_timeout_ms": 3000}


def client(venue, **opts):
    o = dict(BASE_OPTS)
    o.update(opts)
    return perps.Client(venue.base_url, venue.perps_url, o)


def session():
    return perps.Session.from_api_key(TOKEN, SEED_HEX)


def error_of(fn, *args, **kw):
    """The PerpsError fn raises, or None (and the result) when it succeeds."""
    try:
        return None, fn(*args, **kw)
    except perps.PerpsError as e:
        return e, None


def describe(e):
    if e is None:
        return "no error"
    return (f"{e.code.name}({int(e.code)}) http={e.http_status} reached={e.may_have_reached_venue} "
            f"retry_after_ms={getattr(e, 'retry_after_ms', None)} msg={e.message!r}")


def collect(stream, secs, stop=None):
    """Events for up to `secs` seconds, or until stop(event) is true."""
    out = []
    end = time.time() + secs
    while time.time() < end:
        try:
            ev = stream.next(timeout=min(0.2, max(0.01, end - time.time())))
        except perps.PerpsError as e:
            out.append({"_error": describe(e)})
            break
        if ev is None:
            continue
        out.append(ev)
        if stop and stop(ev):
            break
    return out


def brief(ev):
    """A short one-line form of an event for reports."""
    if "_error" in ev:
        return "ERROR " + ev["_error"]
    ch = ev.get("channel")
    if ch == "status":
        keep = {k: v for k, v in ev.items() if k not in ("received_ns", "channel")}
        return f"status {keep}"
    if ch == "order_response":
        return (f"order_response code={ev.get('code')} final={ev.get('final')} "
                f"matched={ev.get('matched')} msg={ev.get('message')}")
    if ch == "unrecognized":
        return f"unrecognized {ev.get('frame')!s:.160}"
    return f"{ch} seq={ev.get('seq')} symbol={ev.get('symbol')} data={str(ev.get('data'))[:140]}"


def registry():
    """A suite's checks by name, and the decorator that registers one under a name."""
    checks = {}

    def check(name):
        def deco(fn):
            checks[name] = fn
            return fn
        return deco
    return checks, check


def run_checks(checks, names):
    """Run the named checks (all when none), print PASS/FAIL a line each; the exit status."""
    fails = 0
    for n in names or list(checks):
        try:
            good, detail = checks[n]()
        except Exception as ex:
            good, detail = False, f"check raised {ex!r}"
        fails += not good
        print(f"{'PASS' if good else 'FAIL'} {n}: {detail}", flush=True)
    return 1 if fails else 0
