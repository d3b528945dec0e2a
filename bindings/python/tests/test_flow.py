"""The Python binding against the sandbox venue: sign-in (bsc), login, order, errors, body
signatures (shape, and verified with PyNaCl), and misuse that must raise, never crash.

The sandbox is target/release/perps-sandbox (or $PERPS_SANDBOX), one per test, started by
the `sandbox` fixture and stopped when the test ends.
"""

import base64
import json
import os
import pathlib
import re
import subprocess
import threading
import time
import urllib.request

import nacl.signing
import pytest

import perps

ROOT = pathlib.Path(__file__).resolve().parents[3]
SANDBOX = os.environ.get("PERPS_SANDBOX") or str(ROOT / "target" / "release" / "perps-sandbox")

# Hardhat/Anvil account #0: a published TEST key, never to be used with real funds.
WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
WALLET_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
ORDER = (
    '{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",'
    '"price":"65000","time_in_force":"gtc","reduce_only":false}'
)
UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


class Sandbox:
    def __init__(self, urls):
        self.base_url = urls["base_url"]
        self.perps_url = urls["perps_url"]
        self.admin_url = urls["admin_url"]

    def set_faults(self, faults):
        req = urllib.request.Request(
            self.admin_url + "/faults",
            data=json.dumps(faults).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert resp.status == 200

    def stats(self):
        with urllib.request.urlopen(self.admin_url + "/stats", timeout=5) as resp:
            return json.load(resp)

    def requests(self, endpoint=None):
        """The venue's request log (oldest first), to /api/{endpoint} or to any /api/ path."""
        with urllib.request.urlopen(self.admin_url + "/requests?last=1000", timeout=5) as resp:
            log = json.load(resp)
        if endpoint is None:
            return [r for r in log if "/api/" in r["path"]]
        return [r for r in log if r["path"].endswith("/api/" + endpoint)]


@pytest.fixture
def sandbox():
    if not os.path.exists(SANDBOX):
        pytest.fail(f"{SANDBOX} not found: cargo build --release -p perps-sandbox")
    proc = subprocess.Popen(
        [SANDBOX, "--port", "0", "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line, "the sandbox exited before printing its URLs"
        yield Sandbox(json.loads(line))
    finally:
        proc.stdin.close()  # --exit-on-stdin-eof: it stops by itself
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def signin_and_order(base_url, perps_url):
    # --- the README's "Use from Python" snippet ---
    with perps.Client(base_url, perps_url) as client, perps.Session() as session:
        address = perps.wallet_address("bsc", WALLET_KEY)
        payload = client.prepare_signin(session, "bsc", address)  # challenge verified
        signature = perps.wallet_sign("bsc", WALLET_KEY, payload)  # or your wallet
        client.login(session, signature, 3600)
        try:
            return json.loads(client.new_order(session, ORDER))  # never retried
        except perps.PerpsError as e:  # e.code, e.message, e.http_status, e.body
            if e.may_have_reached_venue:
                print("the order may have reached the venue: query it before resending")
            raise


# ------------------------------------------------------------------------------------------
# The flow
# ------------------------------------------------------------------------------------------


def test_signin_login_order(sandbox):
    answer = signin_and_order(sandbox.base_url, sandbox.perps_url)
    assert answer["code"] == 0 and answer["request_id"]
    assert sandbox.stats()["orders_accepted"] == 1


def test_signin_one_call_request_logout(sandbox):
    with perps.Client(sandbox.base_url, sandbox.perps_url, {"total_timeout_ms": 5000}) as client:
        with perps.Session() as session:
            assert perps.wallet_address("bsc", WALLET_KEY) == WALLET_ADDRESS
            assert isinstance(client.sync_time(), int)
            login = json.loads(client.signin(session, "bsc", WALLET_KEY, 3600))
            assert login
            info = session.info()
            assert info["has_token"] and info["chain"] == "bsc"
            assert info["address"].lower() == WALLET_ADDRESS.lower()
            assert session.token()
            session.set_session_id("ws-1")
            session.set_session_id(None)
            json.loads(client.new_order(session, json.loads(ORDER)))  # a dict is accepted too
            open_orders = client.request(session, "GET", "/api/query_open_orders?symbol=BTC-USD")
            assert "BTC-USD" in open_orders
            session.logout()
            with pytest.raises(perps.PerpsError) as exc:
                client.new_order(session, ORDER)
            assert exc.value.code is perps.Code.INVALID_STATE
    assert sandbox.stats()["orders_received"] == 1


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------


def test_http_status_error(sandbox):
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        sandbox.set_faults({"status": 500})  # trading endpoints only: sign-in still works
        with pytest.raises(perps.PerpsError) as exc:
            signin_and_order(sandbox.base_url, sandbox.perps_url)
        assert exc.value.http_status == 500
        with pytest.raises(perps.PerpsError) as exc:
            client.new_order(session, ORDER)
        e = exc.value
        assert e.code is perps.Code.HTTP_STATUS and e.code == 8
        assert e.http_status == 500 and e.may_have_reached_venue
        assert "sandbox fault" in e.body
        assert "PERPS_HTTP_STATUS (HTTP 500)" in str(e)

        sandbox.set_faults({"order_code_nonzero": True})
        with pytest.raises(perps.PerpsError) as exc:
            client.new_order(session, ORDER)
        assert exc.value.code is perps.Code.API_ERROR
        assert exc.value.body and not exc.value.may_have_reached_venue


def test_invalid_order_is_not_sent(sandbox):
    bad = ORDER.replace('"qty":"0.01"', '"qty":0.01')
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        with pytest.raises(perps.PerpsError) as exc:
            client.new_order(session, bad)
        e = exc.value
        assert e.code is perps.Code.INVALID_ORDER and "qty" in e.message
        assert e.http_status == 0 and e.body is None and not e.may_have_reached_venue
    with pytest.raises(perps.PerpsError):
        perps.order_serialize(bad)
    assert perps.order_serialize(ORDER) == ORDER
    assert sandbox.stats()["orders_received"] == 0


# ------------------------------------------------------------------------------------------
# Body signatures
# ------------------------------------------------------------------------------------------

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58decode(text):
    n = 0
    for ch in text:
        n = n * 58 + B58.index(ch)
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + raw


def check_signature(session, headers, body):
    """Shape of the four headers, then Ed25519 over v1,{id},{ts},{body} with the session's
    public key (base58 requestId), verified by PyNaCl (libsodium)."""
    assert set(headers) == {"x-request-sign-version", "x-request-id", "x-request-timestamp", "x-request-signature"}
    assert headers["x-request-sign-version"] == "v1"
    assert UUID_V4.match(headers["x-request-id"]), headers
    assert headers["x-request-timestamp"].isdigit()
    sig = headers["x-request-signature"]
    assert len(sig) == 88
    raw = base64.b64decode(sig, validate=True)
    assert len(raw) == 64
    public = b58decode(session.request_id)
    assert len(public) == 32
    message = f"v1,{headers['x-request-id']},{headers['x-request-timestamp']},".encode() + body
    nacl.signing.VerifyKey(public).verify(message, raw)  # raises BadSignatureError


def test_sign_body():
    body = '{"symbol":"BTC-USD","order_id":"42"}'
    with perps.Session() as session:
        before = int(time.time() * 1000)
        headers = session.sign_body(body)
        check_signature(session, headers, body.encode())
        assert before - 1000 <= int(headers["x-request-timestamp"]) <= time.time() * 1000 + 1000

        rid = "0f8fad5b-d9cb-469f-a165-70867728950e"
        at = session.sign_body_at(body, rid, 1700000000000)
        check_signature(session, at, body.encode())
        assert at["x-request-id"] == rid and at["x-request-timestamp"] == "1700000000000"
        assert session.sign_body_at(body, rid, 1700000000000) == at  # deterministic

        out = perps.BodySignature()
        assert session.sign_body_into(body.encode(), out) is out
        check_signature(session, out.headers(), body.encode())
        check_signature(session, session.sign_body_into(b"").headers(), b"")
        with pytest.raises(perps.PerpsError) as exc:
            session.sign_body_into(b"\xff\xfe", out)
        assert exc.value.code is perps.Code.INVALID_ARGUMENT


# ------------------------------------------------------------------------------------------
# Misuse: exceptions, never crashes
# ------------------------------------------------------------------------------------------


def test_misuse():
    client = perps.Client("http://127.0.0.1:9/auth", "http://127.0.0.1:9/perps")
    session = perps.Session()
    session.close()
    session.close()  # idempotent
    for call in (
        lambda: session.sign_body("{}"),
        lambda: session.request_id,
        lambda: session.sign_body_into(b"{}"),
        lambda: client.new_order(session, ORDER),
    ):
        with pytest.raises(perps.PerpsError) as exc:
            call()
        assert exc.value.code is perps.Code.INVALID_ARGUMENT and "closed" in exc.value.message
    with pytest.raises(TypeError):
        client.new_order(None, ORDER)
    client.close()
    client.close()
    with pytest.raises(perps.PerpsError):
        client.sync_time()

    with perps.Session() as live, perps.Client("http://127.0.0.1:9/a", "http://127.0.0.1:9/p") as c2:
        cases = [
            (lambda: live.sign_body("{}\0tail"), perps.Code.INVALID_ARGUMENT),  # refused, not cut short
            (lambda: perps.wallet_address("eth", WALLET_KEY), perps.Code.INVALID_ARGUMENT),
            (lambda: perps.wallet_address("bsc", "0x1234"), perps.Code.INVALID_KEY),
            (lambda: perps.Client("http://127.0.0.1:9", "http://127.0.0.1:9", {"nope": 1}), perps.Code.INVALID_ARGUMENT),
            (lambda: perps.Session.from_api_key("token", "not a key"), perps.Code.INVALID_KEY),
            (lambda: c2.login(live, "0x00", 3600), perps.Code.INVALID_STATE),  # no pending challenge
            (lambda: c2.login(live, "0x00", 2**64 + 3600), perps.Code.INVALID_ARGUMENT),  # not wrapped
        ]
        for call, code in cases:
            with pytest.raises(perps.PerpsError) as exc:
                call()
            assert exc.value.code is code, exc.value

    for _ in range(100):  # never closed: freed when collected
        perps.Session()


def test_concurrent_orders(sandbox):
    """One client and one session shared by threads placing valid and invalid orders."""
    bad = ORDER.replace('"side":"buy"', '"side":"up"')
    failures = []
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)

        def place(valid):
            for _ in range(10):
                try:
                    client.new_order(session, ORDER if valid else bad)
                    if not valid:
                        failures.append("an invalid order was accepted")
                except perps.PerpsError as e:
                    if valid or e.code is not perps.Code.INVALID_ORDER or "side" not in e.message:
                        failures.append(repr(e))

        threads = [threading.Thread(target=place, args=(i % 2 == 0,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures
    stats = sandbox.stats()
    assert stats["orders_received"] == stats["orders_accepted"] == 40


def test_close_while_in_use():
    session = perps.Session()
    results = []

    def sign():
        out = perps.BodySignature()
        for _ in range(300):
            try:
                session.sign_body_into(ORDER.encode(), out)
                results.append(True)
            except perps.PerpsError as e:
                assert e.code is perps.Code.INVALID_ARGUMENT
                results.append(False)

    threads = [threading.Thread(target=sign) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.005)
    session.close()
    for t in threads:
        t.join()
    assert len(results) == 1200


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", perps.version())
