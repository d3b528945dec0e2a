/*
 * tests/cpp/test_trading.cpp: the trading loop through include/perps.hpp against the sandbox
 * venue (started by tests/cpp/run.sh): every endpoint method called and its answer checked,
 * the public three without a session, the depth book sorted, an order placed, found by its
 * generated cl_ord_id, listed, cancelled, and NOT_FOUND on cancelling it again with the
 * error's x-request-id equal to what the venue received; parameters refused before sending;
 * an order that times out carrying its cl_ord_id and x-request-id and found afterwards;
 * the local rate limiter's PERPS_RATE_LIMITED with retry_after_ms; a real partial write on
 * the order stream (the venue stalled, orders until one no longer fits the socket) whose
 * error names the request by its envelope request_id (perps::Error::stream_request_id), the
 * id the `disconnected` event's `unanswered` list names, and none for an order refused
 * unsent; sync_time measuring the venue's clock (set 2 min ahead: an order refused until
 * then, accepted after).
 *
 *   test_trading BASE_URL PERPS_URL ADMIN_URL
 *
 * The venue's controls (faults, request log) are used over its admin HTTP endpoints.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include "sandbox_harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

static const std::regex UUID_V4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

// ------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------

static std::string g_base_url;
static std::string g_perps_url;

static std::string limit_buy(const std::string &price, const std::string &qty, const std::string &extra = "") {
    return R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":")" + qty + R"(","price":")" + price +
           R"(","time_in_force":"gtc","reduce_only":false)" + extra + "}";
}

/// A bid far below the mark (whole dollars), so the moving mark does not fill it.
static std::string far_bid(const perps::Client &client) {
    Value price = mini_json::parse(client.query_symbol_price(R"({"symbol":"BTC-USD"})"));
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", std::floor(price["mark_price"].num() - 2000.0));
    return text;
}

static bool listed(const Value &answer, long long id) {
    for (const Value &o : mini_json::list(answer)) {
        if (o["id"].int64() == id) {
            return true;
        }
    }
    return false;
}

// ------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------

static void test_public_endpoints_without_session() {
    perps::Client client(g_base_url, g_perps_url);

    Value all = mini_json::parse(client.query_symbol_info());
    std::vector<std::string> symbols;
    for (const Value &s : mini_json::list(all)) {
        symbols.push_back(s["symbol"].text);
    }
    for (const char *want : {"BTC-USD", "ETH-USD", "XAG-USD"}) {
        CHECK_CTX(std::find(symbols.begin(), symbols.end(), want) != symbols.end(), want);
    }
    Value xag = mini_json::parse(client.query_symbol_info(std::string(R"({"symbol":"XAG-USD"})")));
    std::vector<Value> one = mini_json::list(xag);
    CHECK(one.size() == 1 && one[0]["symbol"].text == "XAG-USD");
    CHECK(one.size() == 1 && one[0].has("price_tick_decimals") && one[0].has("min_order_qty"));

    Value price = mini_json::parse(client.query_symbol_price(R"({"symbol":"BTC-USD"})"));
    CHECK(price["symbol"].text == "BTC-USD");
    CHECK(price["mark_price"].num() > 0);

    // XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
    for (const char *symbol : {"XAG-USD", "BTC-USD"}) {
        std::string answer = client.query_depth_book(std::string(R"({"symbol":")") + symbol + R"("})");
        Value book = mini_json::parse(answer);
        const std::vector<Value> &bids = book["bids"].items;
        const std::vector<Value> &asks = book["asks"].items;
        CHECK_CTX(!bids.empty() && !asks.empty(), answer);
        bool sorted = true;
        for (std::size_t i = 1; i < bids.size(); ++i) {
            sorted = sorted && bids[i - 1][0].num() > bids[i][0].num();
        }
        for (std::size_t i = 1; i < asks.size(); ++i) {
            sorted = sorted && asks[i - 1][0].num() < asks[i][0].num();
        }
        CHECK_CTX(sorted, "bids high to low, asks low to high: " + answer);
        CHECK_CTX(bids.empty() || asks.empty() || bids[0][0].num() < asks[0][0].num(), answer);
        CHECK(book["symbol"].text == symbol);
    }

    // The public calls sent no bearer token.
    for (const char *name : {"query_symbol_info", "query_symbol_price", "query_depth_book"}) {
        std::vector<Value> sent = logged(name);
        CHECK_CTX(!sent.empty(), name);
        for (const Value &r : sent) {
            CHECK_CTX(!r["headers"].has("authorization"), name);
        }
    }

    // A session is accepted too (and not needed).
    perps::Session session;
    CHECK(mini_json::parse(client.query_symbol_price(session, R"({"symbol":"ETH-USD"})"))["mark_price"].num() > 0);
}

static void test_order_lifecycle(const perps::Client &client, const perps::Session &session) {
    // A market maker's set-up calls.
    Value mode = mini_json::parse(client.change_margin_mode(session, R"({"symbol":"BTC-USD","margin_mode":"cross"})"));
    CHECK(mode["code"].text == "0");
    Value lev = mini_json::parse(client.change_leverage(session, R"({"symbol":"BTC-USD","leverage":10})"));
    CHECK(lev["code"].text == "0");
    Value config = mini_json::parse(client.query_position_config(session, R"({"symbol":"BTC-USD"})"));
    CHECK(config["leverage"].num() == 10.0);
    CHECK(config["margin_mode"].text == "cross");

    // An order without cl_ord_id: the answer carries the generated one.
    const std::string bid = far_bid(client);
    Value placed = mini_json::parse(client.new_order(session, limit_buy(bid, "0.01")));
    const std::string cl = placed["cl_ord_id"].text;
    CHECK_CTX(placed["code"].text == "0" && cl.size() >= 26, cl);

    Value by_cl = mini_json::parse(client.query_order(session, R"({"cl_ord_id":")" + cl + "\"}"));
    const long long id = by_cl["id"].int64();
    CHECK_CTX(id > (1LL << 32), "venue ids exceed 2^32");
    CHECK(by_cl["status"].text == "open");
    CHECK(by_cl["cl_ord_id"].text == cl);
    Value by_id = mini_json::parse(client.query_order(session, R"({"order_id":)" + std::to_string(id) + "}"));
    CHECK(by_id["cl_ord_id"].text == cl && by_id["id"].int64() == id);

    CHECK(listed(mini_json::parse(client.query_open_orders(session, std::string(R"({"symbol":"BTC-USD"})"))), id));
    CHECK(listed(mini_json::parse(client.query_open_orders(session)), id));

    Value cancelled = mini_json::parse(client.cancel_order(session, R"({"cl_ord_id":")" + cl + "\"}"));
    CHECK(cancelled["code"].text == "0");
    CHECK(mini_json::parse(client.query_order(session, R"({"order_id":)" + std::to_string(id) + "}"))["status"].text ==
          "canceled");
    CHECK(!listed(mini_json::parse(client.query_open_orders(session)), id));
    CHECK(listed(mini_json::parse(
                     client.query_orders(session, std::string(R"({"symbol":"BTC-USD","status":"canceled","limit":50})"))),
                 id));

    // Cancelling it again: gone. PERPS_NOT_FOUND, with the x-request-id the venue received.
    auto gone = ERROR_OF(client.cancel_order(session, R"({"order_id":)" + std::to_string(id) + "}"), PERPS_NOT_FOUND);
    if (gone) {
        CHECK(gone->http_status() == 404);
        CHECK(gone->body() && contains(*gone->body(), "not found"));
        CHECK(!gone->cl_ord_id());
        CHECK(gone->retry_after_ms() == -1);
        CHECK(gone->x_request_id() && std::regex_match(*gone->x_request_id(), UUID_V4));
        std::vector<Value> sent = logged("cancel_order");
        CHECK(!sent.empty() && sent.back()["headers"]["x-request-id"].text == gone->x_request_id().value_or(""));
        CHECK(!sent.empty() && sent.back()["status"].text == "404");
    }
    // A GET sends no body signature: no x-request-id on its error.
    auto unknown = ERROR_OF(client.query_order(session, R"({"order_id":4294967299999})"), PERPS_NOT_FOUND);
    CHECK(unknown && !unknown->x_request_id() && unknown->http_status() == 404);
}

static void test_fills_positions_balance(const perps::Client &client, const perps::Session &session) {
    // A market order (ioc) fills against the book.
    client.new_order(session, R"({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.01","time_in_force":"ioc","reduce_only":false})");
    Value trades = mini_json::parse(client.query_trades(session, std::string(R"({"symbol":"BTC-USD","side":"buy"})")));
    std::vector<Value> rows = mini_json::list(trades);
    CHECK_CTX(!rows.empty(), "a fill in query_trades");
    CHECK(!rows.empty() && rows[0]["symbol"].text == "BTC-USD" && rows[0]["qty"].num() > 0);
    CHECK(!mini_json::list(mini_json::parse(client.query_trades(session))).empty());

    Value positions = mini_json::parse(client.query_positions(session, std::string(R"({"symbol":"BTC-USD"})")));
    bool long_btc = false;
    for (const Value &p : mini_json::list(positions)) {
        long_btc = long_btc || (p["symbol"].text == "BTC-USD" && p["qty"].num() > 0);
    }
    CHECK_CTX(long_btc, "a long BTC-USD position");
    CHECK(!mini_json::list(mini_json::parse(client.query_positions(session))).empty());

    Value balance = mini_json::parse(client.query_balance(session));
    CHECK(balance.has("balance") && balance.has("equity"));
    CHECK(balance["balance"].num() > 0);
}

static void test_cancel_orders(const perps::Client &client, const perps::Session &session) {
    const std::string bid = far_bid(client);
    Value a = mini_json::parse(client.new_order(session, limit_buy(bid, "0.01")));
    // A cl_ord_id of our own (unique per run: the same venue may serve several runs).
    const std::string b_cl =
        "cpp-batch-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000000);
    Value b = mini_json::parse(client.new_order(session, limit_buy(bid, "0.01", R"(,"cl_ord_id":")" + b_cl + "\"")));
    CHECK(b["cl_ord_id"].text == b_cl);
    long long a_id =
        mini_json::parse(client.query_order(session, R"({"cl_ord_id":")" + a["cl_ord_id"].text + "\"}"))["id"].int64();
    std::string answer = client.cancel_orders(
        session, R"({"order_id_list":[)" + std::to_string(a_id) + R"(],"cl_ord_id_list":[")" + b_cl + "\"]}");
    Value parsed = mini_json::parse(answer);  // `[]` or the {code, message, request_id} envelope
    CHECK_CTX(parsed.is_array() || parsed["code"].text == "0", answer);
    for (const std::string &cl : {a["cl_ord_id"].text, b_cl}) {
        CHECK(mini_json::parse(client.query_order(session, R"({"cl_ord_id":")" + cl + "\"}"))["status"].text ==
              "canceled");
    }
}

static void test_cancel_all(const perps::Client &client, const perps::Session &session) {
    const std::string bid = far_bid(client);
    // A prefix of our own (unique per run: the same venue and account serve several runs).
    const std::string prefix =
        "cpp-all-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000000) + "-";
    for (const char *name : {"a", "b"}) {
        client.new_order(session, limit_buy(bid, "0.01", R"(,"cl_ord_id":")" + prefix + name + "\""));
    }
    Value other = mini_json::parse(client.new_order(session, limit_buy(bid, "0.01")));
    const std::string report =
        client.cancel_all(session, R"({"cl_ord_id_prefix":")" + prefix + R"(","confirm_ms":5000})");
    Value r = mini_json::parse(report);
    CHECK_CTX(r["complete"].text == "true" && r["orders"].items.size() == 2, report);
    for (const Value &order : r["orders"].items) {
        CHECK_CTX(order["status"].text == "canceled" && order["confirmed"].text == "true", report);
        CHECK_CTX(order["cl_ord_id"].text.rfind(prefix, 0) == 0, report);
        CHECK(mini_json::parse(client.query_order(session, R"({"order_id":)" + order["order_id"].text + "}"))["status"]
                  .text == "canceled");
    }
    // The order without the prefix stays open; then it goes too.
    const std::string other_query = R"({"cl_ord_id":")" + other["cl_ord_id"].text + "\"}";
    CHECK(mini_json::parse(client.query_order(session, other_query))["status"].text == "open");
    client.cancel_order(session, other_query);
    auto e = ERROR_OF(client.cancel_all(session, std::string(R"({"cl_ord_id_prefix":""})")), PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "cl_ord_id_prefix"));
}

static void test_refused_before_sending(const perps::Client &client, const perps::Session &session) {
    const std::size_t before = api_requests();
    auto e = ERROR_OF(client.cancel_order(session, R"({"order_id":"12"})"), PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "order_id") && !e->x_request_id() && e->http_status() == 0);
    e = ERROR_OF(client.query_positions(session, std::string(R"({"symbol":"BTC-USD","nope":1})")),
                 PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "nope"));
    e = ERROR_OF(client.change_margin_mode(session, R"({"symbol":"BTC-USD","margin_mode":"CROSS"})"),
                 PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "margin_mode"));
    e = ERROR_OF(client.query_symbol_price(std::string("[]")), PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "params_json"));
    e = ERROR_OF(client.query_order(session, std::string("{\"cl_ord_id\":\"a\0b\"}", 19)), PERPS_INVALID_ARGUMENT);
    CHECK(e && contains(e->what(), "params_json contains a NUL byte"));
    // An account endpoint without a session (a moved-from one holds none).
    perps::Session moved;
    perps::Session taker(std::move(moved));
    e = ERROR_OF(client.query_balance(moved), PERPS_INVALID_ARGUMENT);  // NOLINT(bugprone-use-after-move)
    CHECK(e && contains(e->what(), "session"));
    // Not signed in: no token, nothing sent.
    e = ERROR_OF(client.query_balance(taker), PERPS_INVALID_STATE);
    CHECK(api_requests() == before);
}

static void test_timeout_then_found(const perps::Session &session) {
    perps::Client client(g_base_url, g_perps_url,
                         std::string(R"({"read_timeout_ms":300,"total_timeout_ms":500,"cl_ord_id_prefix":"cpp-"})"));
    // The venue is slow for the next order only: it books it after the client gave up.
    admin("POST", "faults", R"({"per_endpoint":{"new_order":{"slow_ms":1200,"times":1}}})");
    const std::size_t orders_before = logged("new_order", 1000).size();
    auto e = ERROR_OF(client.new_order(session, limit_buy(far_bid(client), "0.02")), PERPS_TIMEOUT);
    if (!e) {
        return;
    }
    CHECK(e->may_have_reached_venue());
    CHECK_CTX(e->cl_ord_id() && e->cl_ord_id()->compare(0, 4, "cpp-") == 0, e->cl_ord_id().value_or("(none)"));
    CHECK(e->x_request_id() && std::regex_match(*e->x_request_id(), UUID_V4));
    CHECK(e->retry_after_ms() == -1);
    // Look before resending: not visible until the venue has booked it, then found.
    const std::string query = R"({"cl_ord_id":")" + e->cl_ord_id().value_or("") + "\"}";
    std::optional<Value> found;
    for (int i = 0; i < 100 && !found; ++i) {
        try {
            found = mini_json::parse(client.query_order(session, query));
        } catch (const perps::Error &not_yet) {
            if (!check_at(not_yet.code() == PERPS_NOT_FOUND, "NOT_FOUND while not booked", __LINE__, not_yet.what())) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    CHECK(found && (*found)["status"].text == "open" && (*found)["qty"].num() == 0.02);
    // Sent once, with the x-request-id the error named.
    std::vector<Value> orders = logged("new_order", 1000);
    CHECK(orders.size() == orders_before + 1);
    CHECK(!orders.empty() && orders.back()["headers"]["x-request-id"].text == e->x_request_id().value_or(""));
    if (found) {
        client.cancel_order(session, query);
    }
}

static void test_rate_limited(const perps::Session &session) {
    // The host's per-IP limit (48 in any 1.1 s) is shared by every client of the process and
    // counts the earlier tests' requests to this sandbox: let them leave its window, so that
    // what refuses below is the account's bucket.
    std::this_thread::sleep_for(std::chrono::milliseconds(1150));
    perps::Client client(g_base_url, g_perps_url, std::string(R"({"rate_limit":"refuse"})"));
    std::optional<perps::Error> refused;
    int sent = 0;
    for (int i = 0; i < 400 && !refused; ++i) {  // a burst of 18, then one each 45 ms
        try {
            client.query_balance(session);
            ++sent;
        } catch (const perps::Error &e) {
            refused = e;
        }
    }
    CHECK_CTX(refused && refused->code() == PERPS_RATE_LIMITED,
              refused ? std::string(perps::code_name(refused->code())) + ": " + refused->what() : "never refused");
    CHECK_CTX(sent >= 15, std::to_string(sent) + " calls before the bucket ran dry (a burst of 18)");
    if (refused) {
        CHECK(refused->retry_after_ms() > 0 && refused->retry_after_ms() <= 1000);
        CHECK(refused->http_status() == 0 && !refused->x_request_id() && !refused->may_have_reached_venue());
    }
}

/// The first event for which `accept` holds within `seconds` (earlier ones skipped); null when none.
template <typename F>
static Value next_where(const perps::Stream &stream, F accept, double seconds = 10) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
        std::optional<std::string> event = stream.next(std::chrono::milliseconds(200));
        if (event) {
            Value e = mini_json::parse(*event);
            if (accept(e)) {
                return e;
            }
        }
    }
    return Value();
}

static void test_partly_written_frame(const perps::Session &session) {
    // A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
    // must not end the connection first (stream_idle_timeout_ms).
    perps::Client client(g_base_url, g_perps_url,
                         std::string(R"({"read_timeout_ms":2000,"stream_idle_timeout_ms":120000})"));
    std::string bid = far_bid(client);
    perps::Stream orders = perps::Stream::orders(client, session);
    auto status = [](const char *state) {
        return [state](const Value &e) { return e["channel"].text == "status" && e["state"].text == state; };
    };
    CHECK(!next_where(orders, status("connected")).is_null());

    // Refused unsent: no envelope request_id.
    auto invalid = ERROR_OF(orders.new_order(R"({"symbol":"BTC-USD"})"), PERPS_INVALID_ORDER);
    CHECK(invalid && !invalid->stream_request_id() && !invalid->x_request_id());

    std::string first = mini_json::parse(orders.new_order(limit_buy(bid, "0.01")))["request_id"].text;
    CHECK(!next_where(orders, [&](const Value &e) {
               return e["channel"].text == "order_response" && e["request_id"].text == first && e["final"].text == "true";
           }).is_null());

    // The venue stops reading (its socket stays open): orders until one does not fit.
    CHECK(mini_json::parse(admin("POST", "ws/stall", "{}"))["stalled"].int64() >= 1);
    std::vector<std::string> written;
    std::optional<perps::Error> failure;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (written.size() < 50000 && std::chrono::steady_clock::now() < deadline) {
        try {
            written.push_back(mini_json::parse(orders.new_order(limit_buy(bid, "0.01")))["request_id"].text);
        } catch (const perps::Error &e) {
            failure = e;
            break;
        }
    }
    CHECK_CTX(failure && !written.empty(), std::to_string(written.size()) + " orders written in full");
    if (!failure) {
        return;
    }
    CHECK_CTX((failure->code() == PERPS_TIMEOUT || failure->code() == PERPS_TRANSPORT) &&
                  failure->may_have_reached_venue(),
              failure->what());
    // The envelope request_id of the partly written frame: the one the message names, a new
    // request (none of those written in full), not the x-request-id.
    std::optional<std::string> id = failure->stream_request_id();
    CHECK(id && std::regex_match(*id, UUID_V4));
    if (!id) {
        return;
    }
    CHECK_CTX(contains(failure->what(), "request_id " + *id + " may have been partly sent"), failure->what());
    CHECK(std::find(written.begin(), written.end(), *id) == written.end() && *id != first);
    CHECK(failure->x_request_id() && *failure->x_request_id() != *id && failure->cl_ord_id());

    // The connection is replaced; its `disconnected` event lists that request as awaiting its
    // outcome, by the same id, with the orders written before it.
    Value down = next_where(orders, status("disconnected"), 30);
    auto unanswered = [&](const std::string &want) {
        for (const Value &v : down["unanswered"].items) {
            if (v.text == want) {
                return true;
            }
        }
        return false;
    };
    CHECK_CTX(unanswered(*id) && unanswered(written.back()),
              std::to_string(down["unanswered"].items.size()) + " unanswered");
}

// sync_time against the venue's clock: a small offset on the same machine; with the venue's
// clock set 2 min ahead (beyond its 30 s timestamp window) an order is refused until sync_time
// measures that offset, then accepted; the clock is put back whatever happens.
static void test_sync_time(const perps::Session &session) {
    perps::Client client(g_base_url, g_perps_url);
    std::int64_t offset = client.sync_time();
    CHECK_CTX(std::llabs(offset) <= 1500, std::to_string(offset) + " ms");
    struct ClockBack {
        ~ClockBack() { admin("POST", "clock", R"({"offset_ms":0})"); }
    } clock_back;
    CHECK(mini_json::parse(admin("POST", "clock", R"({"offset_ms":120000})"))["offset_ms"].int64() == 120000);
    std::string order = limit_buy(far_bid(client), "0.01");
    if (auto e = ERROR_OF(client.new_order(session, order), PERPS_HTTP_STATUS)) {
        CHECK_CTX(e->http_status() >= 400 && e->http_status() < 500, e->what());
    }
    offset = client.sync_time();
    CHECK_CTX(std::llabs(offset - 120000) <= 1500, std::to_string(offset) + " ms, the venue is 120000 ms ahead");
    CHECK(mini_json::parse(client.new_order(session, order))["code"].int64() == 0);
}

int main(int argc, char **argv) {
    if (argc != 4 || !parse_admin_url(argv[3])) {
        std::cerr << "usage: " << argv[0] << " BASE_URL PERPS_URL ADMIN_URL\n";
        return 2;
    }
    g_base_url = argv[1];
    g_perps_url = argv[2];
    run("public endpoints", test_public_endpoints_without_session);
    try {
        perps::Client client(g_base_url, g_perps_url);
        perps::Session session;
        client.signin(session, "bsc", BSC_KEY, 3600);
        run("order lifecycle", [&] { test_order_lifecycle(client, session); });
        run("fills", [&] { test_fills_positions_balance(client, session); });
        run("cancel_orders", [&] { test_cancel_orders(client, session); });
        run("cancel_all", [&] { test_cancel_all(client, session); });
        run("refused before sending", [&] { test_refused_before_sending(client, session); });
        run("timeout", [&] { test_timeout_then_found(session); });
        run("rate limited", [&] { test_rate_limited(session); });
        run("partly written frame", [&] { test_partly_written_frame(session); });
        run("sync_time", [&] { test_sync_time(session); });
    } catch (const perps::Error &e) {
        check_at(false, "sign-in", __LINE__, std::string(perps::code_name(e.code())) + ": " + e.what());
    }
    std::cout << passed << " passed, " << failed << " failed\n";
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
