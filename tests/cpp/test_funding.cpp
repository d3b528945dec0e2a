/*
 * tests/cpp/test_funding.cpp: perps::Client::query_funding_history against the sandbox venue
 * (started by tests/cpp/run.sh). A fresh API credential opens a long, the venue settles
 * funding at a rate (its admin `funding` control), and the row that comes back must carry
 * the payment this test computes itself — −qty × mark × rate, exactly, from the position the
 * venue reported — and the balance must move by it; then paging with limit and last_id, and
 * parameters refused before anything is sent.
 *
 *   test_funding BASE_URL PERPS_URL ADMIN_URL
 *
 * The sandbox's marks walk (every 3 s by default): a settlement is checked only when the
 * mark read before it and after it are the same, and tried again otherwise.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include "sandbox_harness.hpp"

#include <string>
#include <vector>

static std::string g_base_url;
static std::string g_perps_url;

/// A decimal string as an exact count of 10^-places (at most `places` decimals).
static long long scaled(const std::string &text, int places) {
    bool negative = !text.empty() && text[0] == '-';
    std::string digits = negative ? text.substr(1) : text;
    std::size_t dot = digits.find('.');
    std::string whole = digits.substr(0, dot);
    std::string fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
    if (static_cast<int>(fraction.size()) > places) {
        throw std::runtime_error(text + " has more than " + std::to_string(places) + " decimals");
    }
    fraction.append(static_cast<std::size_t>(places) - fraction.size(), '0');
    long long n = std::stoll(whole + fraction);
    return negative ? -n : n;
}

/// What a position pays (negative) or receives at `rate`, in 10^-9 DUSD: −qty × mark × rate
/// rounded half away from zero (qty with 4 decimals, mark with 2, rate with 4: exact).
static long long payment(const std::string &qty, const std::string &mark, const std::string &rate) {
    long long exact = -scaled(qty, 4) * scaled(mark, 2) * scaled(rate, 4);  // 10^-10
    long long magnitude = (std::llabs(exact) + 5) / 10;
    return exact < 0 ? -magnitude : magnitude;
}

static Value btc_position(const perps::Client &client, const perps::Session &session) {
    Value list = mini_json::parse(client.query_positions(session, std::string(R"({"symbol":"BTC-USD"})")));
    return list[0];
}

static long long balance(const perps::Client &client, const perps::Session &session) {
    return scaled(mini_json::parse(client.query_balance(session))["balance"].text, 9);
}

static void test_settled_funding_row(const perps::Client &client, const perps::Session &session) {
    client.new_order(session, R"({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.0100","time_in_force":"ioc","reduce_only":false})");
    CHECK(mini_json::parse(client.query_funding_history(session)).items.empty());

    bool checked = false;
    for (int attempt = 0; attempt < 5 && !checked; ++attempt) {
        Value before = btc_position(client, session);
        long long balance_before = balance(client, session);
        Value settled = mini_json::parse(admin("POST", "funding", R"({"symbol":"BTC-USD","rate":"0.0001"})"));
        CHECK(settled["rows"].int64() >= 1);
        Value after = btc_position(client, session);
        long long balance_after = balance(client, session);
        Value rows = mini_json::parse(client.query_funding_history(session, std::string(R"({"symbol":"BTC-USD"})")));
        CHECK_CTX(rows.kind == Value::Array && rows.items.size() == static_cast<std::size_t>(attempt + 1), rows.text);
        const Value &row = rows[0];  // newest first
        CHECK(row["txn_type"].text == "funding_fee" && row["asset"].text == "DUSD" && row["symbol"].text == "BTC-USD");
        CHECK(balance_after - balance_before == scaled(row["qty"].text, 9));
        if (before["mark_price"].text != after["mark_price"].text) {
            continue;  // the walk moved the mark during the settlement: try again
        }
        long long expected = payment(before["qty"].text, before["mark_price"].text, "0.0001");
        CHECK_CTX(scaled(row["qty"].text, 9) == expected,
                  row["qty"].text + " for qty " + before["qty"].text + " at " + before["mark_price"].text);
        CHECK(expected < 0);  // a long pays at a positive rate
        checked = true;
    }
    CHECK_CTX(checked, "a settlement without a walk step during it");

    // Paging: the newest row alone, then the rest from its id toward older rows.
    admin("POST", "funding", R"({"rate":"-0.0002"})");
    Value all = mini_json::parse(client.query_funding_history(session));
    CHECK(all.items.size() >= 2);
    Value first = mini_json::parse(client.query_funding_history(session, std::string(R"({"limit":1})")));
    CHECK(first.items.size() == 1 && first[0]["id"].int64() == all[0]["id"].int64());
    CHECK(!first[0]["qty"].text.empty() && first[0]["qty"].text[0] != '-');  // received at a negative rate
    Value rest = mini_json::parse(client.query_funding_history(
        session, std::string(R"({"last_id":)") + all[0]["id"].text + "}"));
    CHECK(rest.items.size() == all.items.size() - 1);
    CHECK(!rest.items.empty() && rest[0]["id"].int64() == all[1]["id"].int64());
}

static void test_refused_before_sending(const perps::Client &client, const perps::Session &session) {
    std::size_t before = api_requests();
    auto big = ERROR_OF(client.query_funding_history(session, std::string(R"({"limit":501})")), PERPS_INVALID_ARGUMENT);
    CHECK(big && contains(big->what(), "expected an integer from 1 to 500") && !big->may_have_reached_venue());
    auto order = ERROR_OF(
        client.query_funding_history(session, std::string(R"({"start":"2026-01-03","end":"2026-01-02"})")),
        PERPS_INVALID_ARGUMENT);
    CHECK(order && contains(order->what(), "is after \"end\""));
    CHECK(api_requests() == before);
}

int main(int argc, char **argv) {
    if (argc != 4 || !parse_admin_url(argv[3])) {
        std::cerr << "usage: " << argv[0] << " BASE_URL PERPS_URL ADMIN_URL\n";
        return 2;
    }
    g_base_url = argv[1];
    g_perps_url = argv[2];
    try {
        // A fresh account for each run (the same venue may serve several runs).
        Value credential = mini_json::parse(admin("POST", "api-key", "{}"));
        perps::Client client(g_base_url, g_perps_url);
        perps::Session session =
            perps::Session::from_api_key(credential["token"].text, credential["private_key"].text);
        run("settled funding", [&] { test_settled_funding_row(client, session); });
        run("refused before sending", [&] { test_refused_before_sending(client, session); });
    } catch (const std::exception &e) {
        check_at(false, "set-up", __LINE__, e.what());
    }
    std::cout << passed << " passed, " << failed << " failed\n";
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
