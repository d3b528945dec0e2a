"""An exception a signal handler raises (Ctrl-C's KeyboardInterrupt, a SIGTERM handler's) can
land between any two steps of the binding's own Python code around a call. Wherever it lands,
the call must not stay counted as in flight: close() must still return and free the handle; and
no secret argument may stay in the binding's buffer (perps._secrets).
(Before, one landing just after a call was counted in left the count raised: close() then
waited for ever, and the handle was never freed.)

CPython runs signal handlers only at certain points of the bytecode: a function's entry, a
backward jump, and the end of a call. This test raises an exception at each such point of the
binding's frames in turn, one per run, through a trace function, and after each run checks
that close() returns at once and frees the handle. Each scenario asserts a floor on the runs
it interrupted (about two thirds of the points counted when written), so that a trace that
stopped reaching the binding's code fails rather than passes on nothing."""

from __future__ import annotations

import concurrent.futures
import dis
import gc
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List, Tuple

import perps
import pytest
from test_flow import WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)
from test_stream import signed_in  # noqa: F401  (the fixture)

if sys.version_info < (3, 11):
    pytest.skip("the points where CPython runs signal handlers are modelled on 3.11's bytecode", allow_module_level=True)

_PACKAGE = os.path.dirname(os.path.abspath(perps.__file__))
_ORDER = '{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}'


class Injected(BaseException):
    """What the trace function raises, as a signal handler would raise KeyboardInterrupt."""


class _Code:
    """A code object's instructions by offset, and the handler (exception table target) that
    covers each offset."""

    def __init__(self, code) -> None:
        self.names = {i.offset: i.opname for i in dis.get_instructions(code)}
        self.entries = [(e.start, e.end, e.target) for e in dis.Bytecode(code).exception_entries]

    def handler(self, offset: int):
        for start, end, target in self.entries:
            if start <= offset < end:
                return target
        return None


class _Injector:
    """Raises Injected at the n-th point (0-based) of the binding's frames where CPython
    (3.11 on) may run a signal handler:
    - a function's entry (its RESUME);
    - a backward jump;
    - the end of a call: CPython checks for signals inside the call instruction, after the
      callee returns, so the exception belongs to the call instruction and to the try or
      with that covers it. Raised from the next instruction when the same handler covers
      both; at the return of the callee when the callee is the binding's own Python (more
      often than CPython would: it checks on entry, not on return).
    Counts the points it passed."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0
        self.fired = False
        self.last: Dict[int, Tuple[str, int]] = {}  # frame id -> (opname, offset) executed last
        self.codes: Dict[object, _Code] = {}

    def point(self) -> None:
        if not self.fired and self.seen == self.n:
            self.fired = True
            raise Injected(f"injected at point {self.n}")
        self.seen += 1

    def __call__(self, frame, event, arg):  # the global trace function: 'call' events
        if event != "call" or not frame.f_code.co_filename.startswith(_PACKAGE):
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        self.point()  # a function's entry (RESUME)
        return self._local

    def _local(self, frame, event, arg):
        if event == "opcode":
            code = self.codes.get(frame.f_code)
            if code is None:
                code = self.codes[frame.f_code] = _Code(frame.f_code)
            before = self.last.get(id(frame))
            self.last[id(frame)] = (code.names.get(frame.f_lasti, ""), frame.f_lasti)
            if before is not None:
                name, at = before
                if name.startswith("JUMP_BACKWARD"):
                    self.point()
                elif name.startswith("CALL") and code.handler(at) == code.handler(frame.f_lasti):
                    self.point()
        elif event == "return":
            self.last.pop(id(frame), None)
            self.point()  # the end of the caller's call instruction
        return self._local


def _closes_at_once(owner) -> bool:
    """Whether owner.close() returns within 5 s, on a thread of its own."""
    done = threading.Event()

    def close() -> None:
        owner.close()
        done.set()

    threading.Thread(target=close, daemon=True).start()
    return done.wait(5)


def _closed_and_freed(owners: list, n: int, seen: int) -> None:
    """Every owner closes at once (from another thread) and its handle is freed."""
    for owner in owners:
        assert _closes_at_once(owner), f"close() did not return after an exception at point {n} of {seen}"
        handle = owner._handle
        assert handle._ptr is None and not getattr(handle, "_closing", None), f"the handle was not freed (point {n})"


def _interrupt_everywhere(
    make: Callable[[], Tuple[list, Callable[[], object]]],
    check: Callable[[list, int, int], None] = _closed_and_freed,
) -> int:
    """For n = 0, 1, …: make the owners and the call, run the call with an exception injected
    at point n, then check the owners (by default: every owner closes at once and its handle
    is freed). Stops at the first run the call survives (no point left); returns how many
    runs were interrupted."""
    interrupted = 0
    for n in range(10000):
        owners, call = make()
        injector = _Injector(n)
        kept = None
        sys.settrace(injector)
        try:
            call()
        except Injected as e:
            kept = e  # kept with its traceback (and the frames it holds), as a log or a REPL would
        except perps.PerpsError:
            pass  # the call's own refusal (a call chosen to be refused before sending)
        finally:
            sys.settrace(None)
        check(owners, n, injector.seen)
        del kept
        if not injector.fired:
            assert n == injector.seen
            return interrupted
        interrupted += 1
    raise AssertionError("more than 10,000 points")


def test_an_interrupted_session_call_never_leaves_close_waiting():
    def make():
        session = perps.Session()
        return [session], lambda: session.sign_body("{}")

    assert _interrupt_everywhere(make) >= 30


def test_an_interrupted_call_on_a_client_and_a_session_never_leaves_close_waiting():
    # An order the library refuses before sending (a negative qty; a float would be refused
    # by the binding itself): it goes through both handles and the library, offline.
    def make():
        client = perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9")
        session = perps.Session()
        return [client, session], lambda: client.new_order(session, _ORDER.replace('"0.01"', '"-1"'))

    assert _interrupt_everywhere(make) >= 60


def test_an_interrupted_close_leaves_the_free_to_the_next_close():
    def make():
        client = perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9")
        return [client], client.close

    assert _interrupt_everywhere(make) >= 6


def test_a_close_interrupted_while_it_waits_for_a_call_leaves_the_free_to_the_next_close():
    # A call in flight on another thread: a public read from a venue that accepts the
    # connection and never answers, for 300 ms. close() waits for it; interrupted anywhere,
    # the next close() still waits for the call, then frees.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    callers: List[threading.Thread] = []

    def make():
        client = perps.Client(url, url, {"total_timeout_ms": 300})

        def read() -> None:
            with pytest.raises(perps.PerpsError):
                client.query_symbol_price(None, {"symbol": "BTC-USD"})

        caller = threading.Thread(target=read)
        caller.start()
        callers.append(caller)
        deadline = time.monotonic() + 5
        while not list(client._handle._calls):
            assert time.monotonic() < deadline, "the read never started"
            time.sleep(0.001)
        return [client], client.close

    try:
        assert _interrupt_everywhere(make) >= 8
    finally:
        for caller in callers:
            caller.join()
        silent.close()


def _no_call_in_flight(owners: list, n: int, seen: int) -> None:
    """No call stays counted in flight on the owners' handles: another thread can take every
    call's mark at once (the stream stays open: the venue limits new connections a minute)."""
    for owner in owners:
        calls = [call for call in (ref() for ref in owner._handle._calls) if call is not None]
        free: List[bool] = []

        def take_each() -> None:
            for call in calls:
                taken = call.mark.acquire(timeout=5)
                if taken:
                    call.mark.release()
                free.append(taken)

        worker = threading.Thread(target=take_each)
        worker.start()
        worker.join()
        assert all(free), f"a call stayed in flight after an exception at point {n} of {seen}"


def _no_calls_noted(stream) -> None:
    """Forget the stream's collected calls, as its handle does every _PRUNE_AT calls: a run
    that pruned would pass more points before the library call than the others, and the
    n-th point of each run would no longer fall one step further along the same path."""
    handle = stream._handle
    handle._calls = {ref for ref in handle._calls if ref() is not None}


def _no_read_left_claimed(owners: list, n: int, seen: int) -> None:
    """As _no_call_in_flight, and the stream's read slot (perps._reads) is not left claimed by
    a read that no longer runs: a read still in it ends (a kept one runs out its slice), so
    later reads are not held behind it for ever."""
    _no_call_in_flight(owners, n, seen)
    for owner in owners:
        read = owner._reads._read
        assert read is None or concurrent.futures.wait([read], 5).not_done == set(), (
            f"the stream's read slot stayed claimed after an exception at point {n} of {seen}"
        )


def _quiet(stream) -> None:
    """Wait for a read left running, then read every event queued: each run starts alike."""
    read = stream._reads._read
    if read is not None:
        concurrent.futures.wait([read], 5)
    while stream.next_text(0) is not None:
        pass


def test_interrupted_stream_calls_never_stay_in_flight(signed_in):  # noqa: F811
    _, client, session = signed_in
    with client.open_order_stream(session) as orders:

        def make():
            _no_calls_noted(orders)
            return [orders], lambda: orders.cancel_order({"cl_ord_id": "never-placed"})

        assert _interrupt_everywhere(make, _no_call_in_flight) >= 50

        def make_next():
            _no_calls_noted(orders)
            return [orders], lambda: orders.next_text(0)

        assert _interrupt_everywhere(make_next, _no_read_left_claimed) >= 45

        # A wait on the main thread: a direct look, then a kept read on the stream's worker
        # that this thread waits for (and leaves running when interrupted).
        def make_wait():
            _quiet(orders)
            _no_calls_noted(orders)
            return [orders], lambda: orders.next_text(0.05)

        assert _interrupt_everywhere(make_wait, _no_read_left_claimed) >= 90
        assert _closes_at_once(orders)
        assert orders._handle._ptr is None and not orders._handle._closing


def test_a_stream_close_an_interrupt_cut_short_is_finished_by_the_next(signed_in):  # noqa: F811
    # Points one by one until an exception lands after close() took the pointer away and
    # before it freed it; the next close() must free it. (Before, a stream's next close()
    # found it closed and returned: it was freed only when collected, on whatever thread.)
    _, client, session = signed_in
    orders = client.open_order_stream(session)
    handle = orders._handle
    for n in range(1000):
        injector = _Injector(n)
        sys.settrace(injector)
        try:
            orders.close()
        except Injected:
            pass
        finally:
            sys.settrace(None)
        if handle._closing is not None or not injector.fired:
            break
    assert handle._closing is not None, "no run was cut short between taking the pointer and freeing it"
    orders.close()
    assert handle._ptr is None and handle._closing is None and orders._closed


def test_close_from_inside_a_call_on_its_own_thread_frees_later_not_under_the_call():
    # A signal handler that closes the session while this thread is inside a call on it,
    # just before the library is called: close() cannot wait for that call (this thread runs
    # it) and must not free the handle under it. It returns at once, later calls are refused,
    # the call goes on with its handle, and the next close() frees it.
    session = perps.Session()
    seen: List[str] = []

    def close_inside(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE) and frame.f_code.co_name == "_call_str":
            sys.settrace(None)
            session.close()
            seen.append("closed")
        return None

    sys.settrace(close_inside)
    try:
        headers = session.sign_body("{}")
    finally:
        sys.settrace(None)
    assert seen == ["closed"]
    assert set(headers) == {"x-request-sign-version", "x-request-id", "x-request-timestamp", "x-request-signature"}
    assert session._handle._closing, "the handle was freed under the call"
    with pytest.raises(perps.PerpsError) as refused:
        session.sign_body("{}")
    assert refused.value.code == perps.Code.INVALID_ARGUMENT and "closed" in str(refused.value)
    session.close()
    assert session._handle._ptr is None and not session._handle._closing


def _secret_calls():
    """Each call that copies secrets, offline, succeeding or refused by the library after the
    copy (a venue on the discard port refuses a good key's sign-in), with its secrets as a
    str and as a bytearray: (label, call, the secrets it copies). A sign-in makes its own
    client and session: a handle kept from run to run prunes its calls every _PRUNE_AT, and
    the runs would no longer pass the same points."""
    url = "http://127.0.0.1:9"
    payload = '{"message":"sign me please","requestId":"x"}'
    seed = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb"  # RFC 8032 test 1, base58
    for form in (str, lambda text: bytearray(text.encode())):
        for key in (WALLET_KEY, "0x1234"):
            yield "wallet_address", lambda f=form, k=key: perps.wallet_address("bsc", f(k)), [key]
            yield "wallet_sign", lambda f=form, k=key: perps.wallet_sign("bsc", f(k), payload), [key]
            yield "signin", lambda f=form, k=key: perps.Client(url, url).signin(perps.Session(), "bsc", f(k), 60), [key]
        yield "wallet_sign of a bad payload", lambda f=form: perps.wallet_sign("bsc", f(WALLET_KEY), "{"), [WALLET_KEY]
        for key in (seed, "not-a-key"):
            yield "from_api_key", lambda f=form, k=key: perps.Session.from_api_key(f("tok"), f(k)).close(), ["tok", key]


# The sign-ins and from_api_key make handles inside the call: one dropped as the exception
# unwinds is freed by its Owned finaliser, where an exception landing is dropped, as CPython
# drops any finaliser's (the point of Owned: nothing else to do there).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_anywhere_in_a_call_with_secrets_leaves_every_buffer_zeros(monkeypatch):
    # Every ctypes buffer perps._secrets makes, seen as it is made, must be zeros once the call
    # ended, wherever the exception landed. (Before, the wipe ran in a with block's __exit__:
    # one landing at its entry left the secret in the buffer.) The hook shows which runs had
    # a secret copied before the exception landed: the ones that matter, and a floor on them.
    made: List = []
    copied: List[bytes] = []
    real = perps._secrets.create_string_buffer
    monkeypatch.setattr(perps._secrets, "create_string_buffer", lambda size: made.append(real(size)) or made[-1])
    monkeypatch.setattr(perps._secrets, "_hook", lambda event, name, arg: copied.append(arg.raw))
    for label, call, secrets in _secret_calls():
        with_a_copy = 0

        def make():
            made.clear()
            copied.clear()
            gc.collect()  # now, not in a run: finalisers (Owned's) add points wherever they run
            return [], call

        def no_secret_left(owners: list, n: int, seen: int) -> None:
            nonlocal with_a_copy
            for buffer in made:
                assert not any(buffer.raw), f"{label}: a secret left in its buffer after an exception at point {n} of {seen}"
            with_a_copy += bool(copied)  # the last run's included: it was not interrupted

        interrupted = _interrupt_everywhere(make, no_secret_left)
        # the run no exception interrupted copied every secret: the runs before it passed its points
        assert copied == [secret.encode() + b"\0" for secret in secrets], label
        assert interrupted >= 35 and with_a_copy >= 12, (label, interrupted, with_a_copy)


_BUSY_LOOP = """
import perps, sys
session, client = perps.Session(), perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9")
refused = sys.argv[1]
print("ready", flush=True)
try:
    while True:
        session.info()
        try:
            client.new_order(session, refused)
        except perps.PerpsError:
            pass
except KeyboardInterrupt:
    pass
session.close()
client.close()
print("closed", flush=True)
"""


def _interrupted_programs(script: str, args: List[str], runs: int, seed: int) -> None:
    """Run ``script`` (printing "ready", then calling in a loop until KeyboardInterrupt, then
    closing and printing "closed") ``runs`` times, each sent SIGINT a seeded random 20-120 ms
    after "ready"; each must end its loop, close, and print "closed" within 10 s."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(_PACKAGE))
    moments = random.Random(seed)
    for run in range(runs):
        child = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert child.stdout.readline() == "ready\n"
            time.sleep(moments.uniform(0.02, 0.12))
            child.send_signal(signal.SIGINT)
            try:
                out, _ = child.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                out = "(still running 10 s after the signal)"
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate()
        assert out == "closed\n", f"run {run}: the program did not end its loop and close (output {out!r})"


def test_a_real_ctrl_c_in_a_busy_loop_of_calls_ends_it_and_close_returns():
    # The same, with real signals: a program calling the library in a loop gets SIGINT at a
    # moment drawn at random (seeded); its KeyboardInterrupt must end the loop, not be lost,
    # and close() must then return. On the code before, about one program in seven never
    # printed "closed" (close() waited for ever, or the interrupt was dropped).
    _interrupted_programs(_BUSY_LOOP, [_ORDER.replace('"0.01"', '"-1"')], runs=40, seed=20261129)


_STREAM_LOOP = """
import perps, sys
base_url, perps_url, wallet_key = sys.argv[1:4]
client, session = perps.Client(base_url, perps_url), perps.Session()
client.signin(session, "bsc", wallet_key, 3600)
orders = client.open_order_stream(session)
print("ready", flush=True)
try:
    while True:
        orders.cancel_order({"cl_ord_id": "never-placed"})
        orders.next(0.01)
except KeyboardInterrupt:
    pass
orders.close()
session.close()
client.close()
print("closed", flush=True)
"""


def test_a_real_ctrl_c_in_a_loop_on_the_order_stream_ends_it_and_close_returns(sandbox):  # noqa: F811
    # Cancels written and replies read on the main thread (whose waits run on the stream's
    # worker): 15 programs, one order-stream connection each (the venue allows 30 new ones a
    # minute).
    _interrupted_programs(_STREAM_LOOP, [sandbox.base_url, sandbox.perps_url, WALLET_KEY], runs=15, seed=1129)
