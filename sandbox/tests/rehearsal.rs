//! What a user rehearsing uses: the request log, per-endpoint and one-shot faults, the
//! clock and mark controls over HTTP, the event journal, TLS mode, and the binary's flags.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

use common::{Trader, exchange, limit, sandbox};
use perps_sandbox::{Faults, Sandbox, SandboxConfig};
use serde_json::{Value, json};

fn admin(sb: &Sandbox, method: &str, path: &str, body: &str) -> (u16, Value) {
    exchange(&common::agent(), method, &format!("{}/{path}", sb.admin_url()), &[], body)
}

#[test]
fn the_request_log_masks_secrets_and_gives_the_verdict() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "65001", "gtc", "logged"));
    let (status, _) = t.post("/api/new_order", &limit("BTC-USD", "buy", "0.01", "1.001", "gtc", "x").to_string());
    assert_eq!(status, 400);
    t.get("/api/query_open_orders?symbol=BTC-USD&limit=5");
    let (status, log) = admin(&sb, "GET", "requests?last=3", "");
    assert_eq!(status, 200);
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 3);
    let placed = &log[0];
    assert_eq!(
        (&placed["method"], &placed["path"], &placed["status"]),
        (&json!("POST"), &json!("/api/new_order"), &json!(200))
    );
    let verdict = placed["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("accepted: order ") && verdict.ends_with("filled (1 fill(s))"), "{verdict}");
    assert!(placed["body"].as_str().unwrap().contains("\"cl_ord_id\":\"logged\""));
    assert_eq!(placed["headers"]["authorization"], "Bearer <masked>");
    assert_eq!(placed["headers"]["x-request-signature"], "<masked>");
    assert!(placed["headers"]["x-request-id"].as_str().unwrap().len() == 36);
    assert!(!Value::Array(log.clone()).to_string().contains(&t.token), "the token never appears");
    assert!(log[1]["verdict"].as_str().unwrap().contains("refused: price 1.001 does not follow price tick"));
    assert_eq!((&log[2]["query"], &log[2]["verdict"]), (&json!("symbol=BTC-USD&limit=5"), &json!("ok")));
    assert_eq!(sb.requests(1), vec![log[2].clone()]);
    assert_eq!(admin(&sb, "GET", "requests?last=x", "").0, 400);
}

#[test]
fn faults_per_endpoint_and_one_shot_over_http() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "f-1"));
    let set = r#"{"per_endpoint":{"cancel_order":{"status":503,"times":1},"query_order":{"slow_ms":300}},"status":500,"times":2}"#;
    let (status, echoed) = admin(&sb, "POST", "faults", set);
    assert_eq!((status, &echoed["per_endpoint"]["cancel_order"]["times"]), (200, &json!(1)));
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"f-1"}"#).0, 503, "the endpoint's own set");
    assert_eq!(t.get("/api/query_balance").0, 500, "the top-level set, use 1 of 2");
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"f-1"}"#).0, 500, "use 2 of 2");
    assert_eq!(t.get("/api/query_balance").0, 200, "the one-shot set is used up");
    let started = std::time::Instant::now();
    assert_eq!(t.get("/api/query_order?cl_ord_id=f-1").0, 200);
    assert!(started.elapsed() >= std::time::Duration::from_millis(300), "per-endpoint slow_ms stays");
    let (_, left) = admin(&sb, "GET", "faults", "");
    assert_eq!(
        left,
        json!({"challenge_bad_signature":false,"challenge_unknown_kid":false,"challenge_expired":false,
        "login_wrong_address":false,"certs_down":false,"status":null,"order_code_nonzero":false,"slow_ms":0,
        "close_after_order":false,"open_orders_lag_ms":0,"ws_outcome_code":null,"ws_not_placed":false,"ws_repeat_outcome":false,"ws_no_outcome":false,"ws_ack_word":null,
        "per_endpoint":{"query_order":{"challenge_bad_signature":false,"challenge_unknown_kid":false,
        "challenge_expired":false,"login_wrong_address":false,"certs_down":false,"status":null,"order_code_nonzero":false,
        "slow_ms":300,"close_after_order":false,"open_orders_lag_ms":0,"ws_outcome_code":null,"ws_not_placed":false,"ws_repeat_outcome":false,"ws_no_outcome":false,"ws_ack_word":null}}})
    );
    // close_after_order under another endpoint closes after reading that request.
    sb.set_faults(Faults {
        per_endpoint: [(
            "query_balance".to_owned(),
            Faults { close_after_order: true, times: Some(1), ..Default::default() },
        )]
        .into(),
        ..Default::default()
    });
    let url = format!("{}/api/query_balance", sb.url());
    let outcome = common::agent().get(&url).header("Authorization", format!("Bearer {}", t.token)).call();
    assert!(outcome.is_err(), "a transport error, not an answer: {outcome:?}");
    assert_eq!(t.get("/api/query_balance").0, 200);
    // order_code_nonzero under cancel_order: HTTP 200 with a non-zero code.
    sb.set_faults(Faults {
        per_endpoint: [("cancel_order".to_owned(), Faults { order_code_nonzero: true, ..Default::default() })].into(),
        ..Default::default()
    });
    let (status, answer) = t.post("/api/cancel_order", r#"{"cl_ord_id":"f-1"}"#);
    assert_eq!((status, &answer["code"]), (200, &json!(400)));
    assert_eq!(t.order_by_cl("f-1")["status"], "open", "nothing executed");
    // A sign-in endpoint can be faulted by name too.
    sb.set_faults(Faults {
        per_endpoint: [("certs".to_owned(), Faults { status: Some(502), ..Default::default() })].into(),
        ..Default::default()
    });
    assert_eq!(exchange(&t.agent, "GET", &format!("{}/v1/offchain/certs", sb.url()), &[], "").0, 502);
    for bad in
        [r#"{"times":0}"#, r#"{"status":42}"#, r#"{"per_endpoint":{"x":{"per_endpoint":{}}}}"#, r#"{"statuss":500}"#]
    {
        let nested_ok = bad.contains("per_endpoint\":{}}");
        assert_eq!(admin(&sb, "POST", "faults", bad).0, if nested_ok { 200 } else { 400 }, "{bad}");
    }
}

#[test]
fn clock_mark_and_events_over_http() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let (status, clock) = admin(&sb, "POST", "clock", r#"{"offset_ms":3600000}"#);
    assert_eq!((status, &clock["offset_ms"]), (200, &json!(3_600_000)));
    let (_, time) = exchange(&t.agent, "GET", &format!("{}/api/kline/time", sb.url()), &[], "");
    let local = (common::now_ms() / 1000) as i64;
    assert!((time.as_i64().unwrap() - local - 3600).abs() <= 2, "{time}");
    assert_eq!(sb.clock_offset_ms(), 3_600_000);
    assert_eq!(admin(&sb, "POST", "clock", r#"{"offset":1}"#).0, 400);
    sb.set_clock_offset_ms(0);

    let (_, before) = admin(&sb, "GET", "events", "");
    let seq = before.as_array().unwrap().last().map_or(0, |e| e["seq"].as_u64().unwrap());
    t.order(limit("ETH-USD", "sell", "0.2", "3000.5", "gtc", "ev"));
    let (status, moved) = admin(&sb, "POST", "mark", r#"{"symbol":"ETH-USD","price":"3000.50"}"#);
    assert_eq!((status, &moved["mark_price"]), (200, &json!("3000.50")));
    let (_, events) = admin(&sb, "GET", &format!("events?since={seq}"), "");
    let channels: Vec<&str> = events.as_array().unwrap().iter().map(|e| e["channel"].as_str().unwrap()).collect();
    assert_eq!(channels, ["order", "balance", "trade", "order", "position", "balance"]);
    let events = events.as_array().unwrap();
    assert_eq!((&events[0]["data"]["status"], &events[3]["data"]["status"]), (&json!("open"), &json!("filled")));
    assert_eq!(events[2]["data"]["price"], "3000.50");
    assert_eq!(events[4]["data"]["qty"], "-0.200");
    assert_eq!(sb.events_since(events[5]["seq"].as_u64().unwrap()).len(), 0);
    assert_eq!(admin(&sb, "POST", "mark", r#"{"symbol":"ETH-USD","price":"3000.505"}"#).0, 400);
    assert_eq!(admin(&sb, "POST", "mark", r#"{"symbol":"ETH-USD"}"#).0, 400);
    assert_eq!(admin(&sb, "GET", "mark", "").0, 405);
    assert_eq!(admin(&sb, "GET", "nothing", "").0, 404);
}

#[test]
fn tls_mode_serves_https_with_a_ca_file() {
    let dir = std::env::temp_dir().join(format!("perps-sandbox-tls-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sb = Sandbox::start(SandboxConfig { tls: true, tls_dir: Some(dir.clone()), ..Default::default() }).unwrap();
    assert!(sb.url().starts_with("https://127.0.0.1:"));
    let ca = sb.ca_file().unwrap().to_owned();
    assert!(ca.starts_with(&dir));
    let pem = std::fs::read(&ca).unwrap();
    let cert = ureq::tls::Certificate::from_pem(&pem).unwrap();
    let tls = ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::new_with_certs(&[cert])).build();
    let agent: ureq::Agent = ureq::Agent::config_builder().tls_config(tls).http_status_as_error(false).build().into();
    let key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
    let token = common::bsc_login(&agent, &sb.url(), &bs58::encode(key.verifying_key().to_bytes()).into_string());
    let t = Trader { agent: agent.clone(), url: sb.url(), token, key };
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "over-tls"));
    assert_eq!(t.get("/api/query_open_orders").1["total"], 1);
    assert_eq!(sb.stats().connections, 1, "one kept-alive TLS connection, relayed on one inner connection");
    // Without the CA the certificate is not trusted.
    assert!(common::agent().get(&format!("{}/api/health", sb.url())).call().is_err());
    // close_after_order closes the TLS connection without an answer.
    sb.set_faults(Faults { close_after_order: true, ..Default::default() });
    let outcome = agent.post(&format!("{}/api/new_order", sb.url())).send("{}");
    assert!(outcome.is_err(), "{outcome:?}");
    drop(sb);
    assert!(!ca.exists(), "the CA file is removed with the sandbox");
    let _ = std::fs::remove_dir(&dir);
}

/// The binary, started as a user would; stopped by closing its stdin.
struct Process {
    child: Child,
    line: Value,
}

impl Process {
    fn start(args: &[&str]) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perps-sandbox"))
            .args(["--port", "0", "--exit-on-stdin-eof"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut first).unwrap();
        let line = serde_json::from_str(&first).unwrap_or_else(|_| panic!("not a JSON line: {first:?}"));
        Process { child, line }
    }

    fn url(&self, key: &str) -> String {
        self.line[key].as_str().unwrap().to_owned()
    }

    /// Stops the process; its standard error.
    fn stop(mut self) -> String {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        err
    }
}

#[test]
fn the_binary_prints_its_urls_logs_and_walks() {
    let p = Process::start(&["--walk-ms", "20", "--log", "--host", "127.0.0.1", "--seed", "7"]);
    let url = p.url("url");
    assert_eq!(p.url("base_url"), format!("{url}/auth"));
    assert_eq!(p.url("perps_url"), format!("{url}/perps"));
    assert_eq!(p.url("admin_url"), format!("{url}/_sandbox"));
    assert!(p.line.get("ca_file").is_none());
    let agent = common::agent();
    let mark = || {
        exchange(&agent, "GET", &format!("{url}/api/query_symbol_price?symbol=BTC-USD"), &[], "").1["mark_price"]
            .clone()
    };
    let first = mark();
    let moved = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        mark() != first
    });
    assert!(moved, "the mark walks");
    let err = p.stop();
    assert!(err.lines().any(|l| l.contains("GET /api/query_symbol_price?symbol=BTC-USD 200 ok")), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_perps-sandbox")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("perps-sandbox {}\n", env!("CARGO_PKG_VERSION")));
    let out = Command::new(env!("CARGO_BIN_EXE_perps-sandbox")).args(["--walk-ms", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_perps-sandbox")).args(["--host", "localhost"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an IP address, not a name");
}

#[test]
fn the_binary_takes_a_symbols_file_strict_mode_and_tls() {
    let dir = std::env::temp_dir().join(format!("perps-sandbox-bin-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("symbols.json");
    let mut specs = serde_json::to_value(perps_sandbox::SymbolSpec::defaults()).unwrap();
    specs[0]["symbol"] = json!("HYPE-USD");
    specs[0]["sandbox"]["mark"] = json!("40");
    specs[0]["sandbox"]["level_step"] = json!("0.01");
    std::fs::write(&file, specs.to_string()).unwrap();
    let p = Process::start(&[
        "--symbols",
        file.to_str().unwrap(),
        "--strict",
        "--walk-ms",
        "0",
        "--tls",
        "--tls-dir",
        dir.to_str().unwrap(),
    ]);
    let ca = p.url("ca_file");
    assert!(p.url("url").starts_with("https://") && std::path::Path::new(&ca).exists());
    let pem = std::fs::read(&ca).unwrap();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::new_with_certs(&[ureq::tls::Certificate::from_pem(&pem).unwrap()]))
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder().tls_config(tls).http_status_as_error(false).build().into();
    let (status, info) = exchange(&agent, "GET", &format!("{}/api/query_symbol_info", p.url("url")), &[], "");
    assert_eq!(status, 200);
    assert_eq!(info[0]["symbol"], "HYPE-USD");
    let body = json!({"address": common::BSC_ADDRESS, "requestId": "not-base58!"}).to_string();
    let (_, answer) = exchange(
        &agent,
        "POST",
        &format!("{}/v1/offchain/prepare-signin?chain=bsc", p.url("url")),
        &[("Content-Type".into(), "application/json".into())],
        &body,
    );
    assert_eq!(answer["success"], false, "strict mode: {answer}");
    p.stop();
    assert!(!std::path::Path::new(&ca).exists());
    std::fs::write(&file, "[{\"symbol\":\"X\"}]").unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_perps-sandbox")).args(["--symbols", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing field"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_orders_lag_lists_ended_orders_as_open_while_query_order_tells_the_truth() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "lag-1"));
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"lag-1"}"#).0, 200);
    let listed = |t: &Trader| t.get("/api/query_open_orders").1["result"].as_array().unwrap().clone();
    assert!(listed(&t).is_empty(), "no lag without the fault");
    admin(&sb, "POST", "faults", r#"{"per_endpoint":{"query_open_orders":{"open_orders_lag_ms":60000}}}"#);
    let lagging = listed(&t);
    assert_eq!((lagging.len(), &lagging[0]["cl_ord_id"], &lagging[0]["status"]), (1, &json!("lag-1"), &json!("open")));
    assert_eq!(t.order_by_cl("lag-1")["status"], "canceled", "query_order is not behind");
    admin(&sb, "POST", "faults", r#"{"per_endpoint":{"query_open_orders":{"open_orders_lag_ms":1}}}"#);
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(listed(&t).is_empty(), "an order that ended longer ago is gone from the list");
}
