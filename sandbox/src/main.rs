//! `perps-sandbox`: the sandbox venue as a process, for rehearsals and for tests written in
//! other languages.
//!
//! Prints one JSON line with the URLs, then serves until SIGTERM/SIGINT (or stdin EOF with
//! `--exit-on-stdin-eof`, so a test harness that dies takes the venue with it).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use perps_sandbox::{AckStyle, CancelOrdersAnswer, Sandbox, SandboxConfig, SeqScope, SymbolSpec};

const USAGE: &str = "\
usage: perps-sandbox [options]

Serves the sandbox perpetual-futures venue (paper trading) and prints one JSON line:
  {\"base_url\":\"…/auth\",\"perps_url\":\"…/perps\",\"admin_url\":\"…/_sandbox\",\"url\":\"http://127.0.0.1:PORT\"}
(plus \"ca_file\" with --tls). Every endpoint is served at the root URL as well.
Documentation: sandbox/README.md.

options:
  --host ADDR                 listen address (default 127.0.0.1)
  --port N                    TCP port (default 0: pick a free one)
  --tls                       HTTPS with a certificate generated at start-up; the CA file
                              is named in the JSON line (\"ca_file\") for ca_bundle_path
  --tls-dir DIR               where the CA file is written (default: the temp directory)
  --symbols FILE              instruments (JSON array; default BTC-USD, ETH-USD, XAG-USD)
  --seed N                    seed of the synthetic markets (default 1)
  --walk-ms N                 ms between two steps of the marks' walk (default 3000;
                              0 = marks move only through POST /_sandbox/mark)
  --balance DECIMAL           starting balance of every account in DUSD (default 100000)
  --cancel-orders-answer A    envelope (default) or array: which documented answer
  --rate-limit                enforce per-account credits and 50 requests/s per IP (HTTP 429)
  --account-limits            enforce max_open_orders, max_position_size and margin
  --strict                    refuse what the live venue accepts but its docs forbid
  --api-key TOKEN:BASE58_KEY  accept a web-site API credential (repeatable)
  --timestamp-window-ms N     accepted x-request-timestamp skew, ± ms (default 30000)
  --clock-offset-ms N         venue clock = system clock + N ms (default 0)
  --workers N                 threads answering requests (default 4)
  --ws-ping-interval-ms N     WebSocket server ping every N ms (default 10000; 0 = none)
  --ws-pong-timeout-ms N      close a connection after N ms without a Pong (default
                              300000; 0 = never), with the venue's 408 close frame
  --ws-max-lifetime-ms N      close a connection N ms after it opened (default 86400000)
  --ws-depth-book-interval-ms N  depth_book push cadence (default 250; 0 = snapshot only)
  --ws-price-interval-ms N    price push cadence (default 3000; 0 = snapshot only)
  --ws-max-connections-per-ip N  open WebSocket connections per IP (default 10; 0 = no limit)
  --ws-max-new-connections-per-minute N  new ones per IP in 60 s (default 30; 0 = no limit)
  --ws-auth-code C            data.code of a successful ws-stream auth: 200 (default) or 0
  --ws-ack-style S            ws-api ack: status (default), message or alternate
  --ws-event-before-ack       ws-api: the account events are written before the ack
  --ws-seq-scope S            ws-stream seq counts per channel (default) or connection
  --log                       print one line per request on standard error
  --exit-on-stdin-eof         also stop when standard input reaches end of file
  --version                   print the version
  --help                      show this text
";

/// The binary's mark walk: the venue pushes a new mark about every 3 s (venue-api.md §2.2).
const DEFAULT_WALK_MS: u64 = 3000;

/// Set by the signal handler; polled by `main`.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

enum Command {
    Serve(Box<SandboxConfig>, bool),
    Help,
    Version,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut config = SandboxConfig { market_walk_ms: DEFAULT_WALK_MS, ..SandboxConfig::default() };
    let mut exit_on_stdin_eof = false;
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--version" | "-V" => return Ok(Command::Version),
            "--host" => config.host = value()?,
            "--port" => config.port = number(&value()?, &arg)?,
            "--tls" => config.tls = true,
            "--tls-dir" => config.tls_dir = Some(value()?.into()),
            "--symbols" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("--symbols {path}: {e}"))?;
                config.symbols = SymbolSpec::list_from_json(&text).map_err(|e| format!("--symbols {path}: {e}"))?;
            }
            "--seed" => config.seed = number(&value()?, &arg)?,
            "--walk-ms" => config.market_walk_ms = number(&value()?, &arg)?,
            "--balance" => config.starting_balance = value()?,
            "--cancel-orders-answer" => {
                config.cancel_orders_answer = match value()?.as_str() {
                    "envelope" => CancelOrdersAnswer::Envelope,
                    "array" => CancelOrdersAnswer::EmptyArray,
                    other => return Err(format!("--cancel-orders-answer: {other:?} is not envelope or array")),
                }
            }
            "--rate-limit" => config.rate_limit = true,
            "--account-limits" => config.account_limits = true,
            "--strict" => config.strict = true,
            "--timestamp-window-ms" => config.timestamp_window_ms = number(&value()?, &arg)?,
            "--clock-offset-ms" => config.clock_offset_ms = number(&value()?, &arg)?,
            "--workers" => config.worker_threads = number(&value()?, &arg)?,
            "--log" => config.log = true,
            "--ws-ping-interval-ms" => config.ws_timers.ping_interval_ms = number(&value()?, &arg)?,
            "--ws-pong-timeout-ms" => config.ws_timers.pong_timeout_ms = number(&value()?, &arg)?,
            "--ws-max-lifetime-ms" => config.ws_timers.max_lifetime_ms = number(&value()?, &arg)?,
            "--ws-depth-book-interval-ms" => config.ws_timers.depth_book_interval_ms = number(&value()?, &arg)?,
            "--ws-price-interval-ms" => config.ws_timers.price_interval_ms = number(&value()?, &arg)?,
            "--ws-max-connections-per-ip" => config.ws_max_connections_per_ip = number(&value()?, &arg)?,
            "--ws-max-new-connections-per-minute" => {
                config.ws_max_new_connections_per_minute = number(&value()?, &arg)?;
            }
            "--ws-auth-code" => config.ws_auth_code = number(&value()?, &arg)?,
            "--ws-ack-style" => {
                config.ws_ack_style = match value()?.as_str() {
                    "status" => AckStyle::Status,
                    "message" => AckStyle::Message,
                    "alternate" => AckStyle::Alternate,
                    other => return Err(format!("--ws-ack-style: {other:?} is not status, message or alternate")),
                }
            }
            "--ws-event-before-ack" => config.ws_event_before_ack = true,
            "--ws-seq-scope" => {
                config.ws_seq_scope = match value()?.as_str() {
                    "channel" => SeqScope::Channel,
                    "connection" => SeqScope::Connection,
                    other => return Err(format!("--ws-seq-scope: {other:?} is not channel or connection")),
                }
            }
            "--exit-on-stdin-eof" => exit_on_stdin_eof = true,
            "--api-key" => {
                let v = value()?;
                let (token, key) = v.split_once(':').ok_or("--api-key needs TOKEN:BASE58_PUBKEY")?;
                config.api_keys.push((token.to_owned(), key.to_owned()));
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Serve(Box::new(config), exit_on_stdin_eof))
}

fn number<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{name}: {text:?} is not a valid number"))
}

fn main() -> ExitCode {
    let (config, exit_on_stdin_eof) = match parse(std::env::args().skip(1)) {
        Ok(Command::Serve(config, eof)) => (*config, eof),
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("perps-sandbox {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("perps-sandbox: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: installing a handler that only stores to an atomic.
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
    }
    let sandbox = match Sandbox::start(config) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("perps-sandbox: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("perps-sandbox: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Keys in this order, so a reader can rely on the line's shape.
    let text = |s: String| serde_json::Value::from(s).to_string();
    let mut line = format!(
        "{{\"base_url\":{},\"perps_url\":{},\"admin_url\":{},\"url\":{}",
        text(sandbox.base_url()),
        text(sandbox.perps_url()),
        text(sandbox.admin_url()),
        text(sandbox.url()),
    );
    if let Some(ca) = sandbox.ca_file() {
        line.push_str(&format!(",\"ca_file\":{}", text(ca.to_string_lossy().into_owned())));
    }
    line.push('}');
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{line}").and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    if exit_on_stdin_eof {
        std::thread::spawn(|| {
            let mut sink = [0u8; 4096];
            let mut stdin = std::io::stdin().lock();
            loop {
                match stdin.read(&mut sink) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            STOP.store(true, Ordering::SeqCst);
        });
    }
    while !STOP.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(sandbox);
    ExitCode::SUCCESS
}
