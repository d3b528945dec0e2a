"""The session's optional headers through the Python binding, as the sandbox venue received
them (its request log): x-impersonate on every account request, GET and body-signed POST alike,
while set; on none once cleared; a value that would break the header refused unsent."""

import json

import pytest

import perps
from test_flow import ORDER, WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)


def test_impersonate_header(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        session.set_impersonate("cv_vault_py")
        assert session.info()["impersonate"] == "cv_vault_py"
        client.query_balance(session)
        placed = json.loads(client.new_order(session, ORDER))
        balance, order = sandbox.requests("query_balance")[-1], sandbox.requests("new_order")[-1]
        assert balance["headers"]["x-impersonate"] == "cv_vault_py"
        assert order["headers"]["x-impersonate"] == "cv_vault_py"
        assert order["headers"]["x-request-id"] == placed["request_id"]  # the logged order is ours

        session.set_impersonate(None)
        assert session.info()["impersonate"] is None
        client.query_balance(session)
        headers = sandbox.requests("query_balance")[-1]["headers"]
        assert "authorization" in headers and "x-impersonate" not in headers

        sent = len(sandbox.requests())
        with pytest.raises(perps.PerpsError) as e:
            session.set_impersonate("cv_1\r\nx-evil: 1")
        assert e.value.code is perps.Code.INVALID_ARGUMENT and "x-impersonate" in e.value.message
        with pytest.raises(perps.PerpsError) as e:
            session.set_impersonate("cv_\x00x")
        assert e.value.code is perps.Code.INVALID_ARGUMENT
        assert len(sandbox.requests()) == sent
