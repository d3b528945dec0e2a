"""A user's program against the installed perps package (tests/packages/run.sh runs it in a
fresh virtual environment, and checks it with mypy --strict). Signs in with a published test
key (Hardhat account #0) and places an order whose quantity and price are Decimals.

    python signin_order.py BASE_URL PERPS_URL

Its code after this docstring is the "Quick start" of bindings/python/README.md, the wheel's long
description (check_wheel_metadata.py compares them): a program a reader can run as shown.
"""

import json
import sys
from decimal import Decimal

import perps

WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"


def main(base_url: str, perps_url: str) -> int:
    print(f"perps {perps.version()} loaded from {perps.library}")
    with perps.Client(base_url, perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        order = {
            "symbol": "BTC-USD",
            "side": "buy",
            "order_type": "limit",
            "qty": Decimal("0.01"),
            "price": Decimal("6.5E+4"),  # sent as "65000"
            "time_in_force": "gtc",
            "reduce_only": False,
        }
        answer = client.new_order(session, order)
        print(f"order placed: {answer}")
        return 0 if json.loads(answer).get("code") == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
