"""What the library hands over as a call returns (a string, an error, a new session or
client) is freed whatever interrupts the binding's code around it: an exception a signal
handler raises (Ctrl-C) at any point where CPython runs handlers, including the end of the
call itself, before the binding has the result in hand. Before, that result was a plain
address until the binding took it, and one dropped there was never freed (a token in a
string never wiped, a session's key neither).

The points are tried one per run, as in test_interrupts.py (whose injector this uses); a
ledger follows every pointer the library made and how it was freed: by the binding, or by the
finaliser of an ``Owned`` dropped untaken (``perps._native.Owned``)."""

from __future__ import annotations

import ctypes
import gc
import sys
import time
from typing import Callable, Dict, List, Tuple

import perps
import pytest

if sys.version_info < (3, 11):
    pytest.skip("the points where CPython runs signal handlers are modelled on 3.11's bytecode", allow_module_level=True)

from test_interrupts import _PACKAGE, Injected, _Injector, _no_calls_noted  # noqa: E402
from test_flow import sandbox  # noqa: E402,F401  (the fixture signed_in needs)
from test_stream import signed_in  # noqa: E402,F401  (the fixture)

# An exception raised in a finaliser is printed and dropped ("unraisable"): here it fails the
# test (an injected interrupt swallowed so, or a finaliser that cannot free).
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


class _Ledger:
    """What the library handed over in one run (strings and errors; handles too when their
    kinds are followed), and how the binding freed each: explicitly (the binding called the
    kind's free export), or by the finaliser of one an interrupt dropped untaken (the
    ``_free`` of its ``Owned`` class)."""

    _STRINGS_AND_ERRORS = {"perps_string_free": "OwnedString", "perps_error_free": "OwnedError"}

    def __init__(self, monkeypatch, producers: List[str], kinds: Dict[str, str] = _STRINGS_AND_ERRORS) -> None:
        """``kinds``: the free export of each kind of pointer followed, and its ``Owned`` class."""
        self.made: List[int] = []
        self.freed: List[int] = []
        self.finalised: List[int] = []
        lib = perps._native._lib
        for name in producers:
            monkeypatch.setattr(lib, name, self._producing(getattr(lib, name)))
        for free, owned_name in kinds.items():
            owned = getattr(perps._native, owned_name)
            assert owned._free is getattr(lib, free), f"{owned_name} is freed by another kind's export"
            monkeypatch.setattr(lib, free, self._freeing(getattr(lib, free), self.freed))
            monkeypatch.setattr(owned, "_free", staticmethod(self._freeing(owned._free, self.finalised)))

    def _producing(self, export):
        def producing(*args):
            result = export(*args)
            made = [result.value, args[-1]._obj.value]  # the string, the error (through byref)
            self.made.extend(address for address in made if address)
            return result

        return producing

    @staticmethod
    def _freeing(free, into: List[int]):
        def freeing(pointer) -> None:
            into.append(pointer.value)
            free(pointer)

        return freeing

    def settle(self, n: int) -> None:
        """After a run, its exception and traceback dropped: every string and error made was
        freed exactly once."""
        gc.collect()
        assert sorted(self.made) == sorted(self.freed + self.finalised), (
            f"point {n}: made {self.made}, freed {self.freed}, freed when collected {self.finalised}"
        )
        self.made.clear()
        self.freed.clear()
        self.finalised.clear()


class _EnteringInjector(_Injector):
    """The injector, also noting the binding's functions entered."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.entered: List[str] = []

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE):
            self.entered.append(frame.f_code.co_name)
        return super().__call__(frame, event, arg)


def _interrupt_everywhere_ledgered(ledger: _Ledger, make: Callable[[], Tuple[list, Callable[[], object]]]) -> Tuple[int, int]:
    """As :func:`_interrupt_everywhere`: for n = 0, 1, …, make the owners and the call, and run
    the call with an exception injected at point n; the ledger is settled after each run, the
    exception and its traceback dropped, and the owners closed. Returns the runs interrupted,
    and the frees the finalisers made; the run the call survives must need none (on the
    normal path the binding frees everything itself: a finaliser running Python code there
    could drop a Ctrl-C)."""
    interrupted = finalised = 0
    for n in range(10000):
        owners, call = make()
        injector = _EnteringInjector(n)
        sys.settrace(injector)
        injected = False
        try:
            call()
        except Injected:
            injected = True
        except perps.PerpsError:
            pass
        finally:
            sys.settrace(None)
        finalised += len(ledger.finalised)
        # An injected exception that did not reach the caller was swallowed (in a finaliser).
        assert injected == injector.fired, f"point {n}: the exception injected did not reach the caller"
        if not injector.fired:
            assert "__del__" not in injector.entered, "the normal path ran a finaliser"
        for owner in owners:
            owner.close()
        ledger.settle(n)
        if not injector.fired:
            return interrupted, finalised
        interrupted += 1
    raise AssertionError("more than 10,000 points")


def test_an_interrupt_as_a_call_returns_still_frees_its_string(monkeypatch):
    # Before: the string a call returned was a plain address until the binding's code took
    # it, and an exception at the end of the call (or at the entry of the code that copies
    # and frees it) dropped it unfreed, a token in it never wiped.
    ledger = _Ledger(monkeypatch, ["perps_session_info"])

    def make():
        session = perps.Session()
        return [session], session.info

    interrupted, finalised = _interrupt_everywhere_ledgered(ledger, make)
    assert interrupted >= 35 and finalised >= 2


def test_an_interrupt_as_a_call_fails_still_frees_its_error(monkeypatch):
    ledger = _Ledger(monkeypatch, ["perps_order_serialize"])
    interrupted, finalised = _interrupt_everywhere_ledgered(ledger, lambda: ([], lambda: perps.order_serialize("{}")))
    assert interrupted >= 35 and finalised >= 2


_HANDLES = {"perps_session_free": "OwnedSession", "perps_client_free": "OwnedClient"}


def test_an_interrupt_as_a_session_or_a_client_is_made_still_frees_it(monkeypatch):
    # Before: a handle was a plain address until the Session or Client held it, and an
    # exception at the end of the call that made it dropped it unfreed (a session's key
    # never wiped). The owners each run made are closed after it.
    kinds = {**_Ledger._STRINGS_AND_ERRORS, **_HANDLES}
    for producer, make_one, floor in (
        ("perps_session_new", perps.Session, 10),
        ("perps_client_new", lambda: perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9"), 25),
        # refused (an unknown option): no handle, an error
        ("perps_client_new", lambda: perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9", {"nope": 1}), 60),
    ):
        ledger = _Ledger(monkeypatch, [producer], kinds)

        def make():
            made: list = []
            return made, lambda: made.append(make_one())

        interrupted, finalised = _interrupt_everywhere_ledgered(ledger, make)
        assert interrupted >= floor and finalised >= 1, producer
        monkeypatch.undo()  # the next ledger wraps the library's own exports


def test_an_interrupt_as_the_stream_hands_over_an_event_still_frees_it(monkeypatch, signed_in):  # noqa: F811
    _, client, session = signed_in
    with client.open_order_stream(session) as orders:
        for _ in range(100):  # their replies (at least one each): events to hand over, one a run
            orders.cancel_order({"cl_ord_id": "never-placed"})
        time.sleep(0.5)
        ledger = _Ledger(monkeypatch, ["perps_stream_next"])

        def make():
            _no_calls_noted(orders)
            return [], lambda: orders.next_text(0)

        interrupted, finalised = _interrupt_everywhere_ledgered(ledger, make)
        assert interrupted >= 35 and finalised >= 2


def test_a_session_or_a_client_never_closed_is_freed_when_collected(monkeypatch):
    ledger = _Ledger(monkeypatch, ["perps_session_new", "perps_client_new"], _HANDLES)
    perps.Session()
    perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9")
    session = perps.Session()
    session.sign_body("{}")
    del session
    gc.collect()
    assert len(ledger.made) == 3 and sorted(ledger.made) == sorted(ledger.freed + ledger.finalised)


def _binding_code_run_collecting(owners: list) -> List[str]:
    """The binding's functions entered while the last references to ``owners`` go and the
    collector runs (``owners`` is emptied: the caller must hold no other reference)."""
    ran: List[str] = []

    def profile(frame, event, arg) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE):
            ran.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        owners.clear()
        gc.collect()
    finally:
        sys.setprofile(None)
    return ran


def test_collecting_a_closed_session_or_client_runs_no_python_code():
    # Python code run by a finaliser can run a signal handler, whose exception is printed and
    # dropped (a Ctrl-C lost): a closed Session or Client is collected without any.
    owners = [perps.Session(), perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9")]
    owners[0].sign_body("{}")
    for owner in owners:
        owner.close()
    assert _binding_code_run_collecting(owners) == []


def test_collecting_a_closed_stream_runs_no_python_code(signed_in):  # noqa: F811
    _, client, session = signed_in
    owners = [client.open_order_stream(session)]
    owners[0].close()
    assert _binding_code_run_collecting(owners) == []


def test_an_untaken_string_is_freed_through_the_real_finaliser():
    # The finaliser's own path, unpatched: an exception there (a free bound as a method, say)
    # would be unraisable, an error in this module.
    session = perps.Session()
    err = perps._native.OwnedError()
    result = perps._native._lib.perps_session_info(session._handle._ptr, ctypes.byref(err))
    assert isinstance(result, perps._native.OwnedString) and result.value and err.value is None
    del result, err
    gc.collect()
    session.close()
