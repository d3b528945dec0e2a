//! `perps-sandbox`: the sandbox venue as a process, for tests written in other languages.
//!
//! Prints one JSON line with the URLs, then serves until SIGTERM/SIGINT (or stdin EOF with
//! `--exit-on-stdin-eof`, so a test harness that dies takes the venue with it).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use perps_sandbox::{Sandbox, SandboxConfig};

const USAGE: &str = "\
usage: perps-sandbox [options]

Serves the sandbox perpetual-futures venue on 127.0.0.1 and prints one JSON line:
  {\"base_url\":\"…\",\"perps_url\":\"…\",\"admin_url\":\"http://127.0.0.1:PORT/_sandbox\"}

options:
  --port N                    TCP port (default 0: pick a free one)
  --api-key TOKEN:BASE58_KEY  accept a web-site API credential (repeatable)
  --timestamp-window-ms N     accepted x-request-timestamp skew, ± ms (default 30000)
  --clock-offset-ms N         sandbox clock = system clock + N ms (default 0)
  --rate-limit                enforce per-account credits (HTTP 429)
  --exit-on-stdin-eof         also stop when standard input reaches end of file
  --help                      show this text
";

/// Set by the signal handler; polled by `main`.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

struct Args {
    config: SandboxConfig,
    exit_on_stdin_eof: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut out = Args { config: SandboxConfig::default(), exit_on_stdin_eof: false };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--help" | "-h" => return Ok(None),
            "--port" => out.config.port = number(&value("--port")?, "--port")?,
            "--timestamp-window-ms" => {
                out.config.timestamp_window_ms = number(&value(&arg)?, &arg)?;
            }
            "--clock-offset-ms" => out.config.clock_offset_ms = number(&value(&arg)?, &arg)?,
            "--rate-limit" => out.config.rate_limit = true,
            "--exit-on-stdin-eof" => out.exit_on_stdin_eof = true,
            "--api-key" => {
                let v = value("--api-key")?;
                let (token, key) = v.split_once(':').ok_or("--api-key needs TOKEN:BASE58_PUBKEY")?;
                out.config.api_keys.push((token.to_owned(), key.to_owned()));
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(out))
}

fn number<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{name}: {text:?} is not a valid number"))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
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
    let sandbox = match Sandbox::start(args.config) {
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
    let line = format!(
        "{{\"base_url\":{},\"perps_url\":{},\"admin_url\":{}}}",
        serde_json::Value::from(sandbox.base_url()),
        serde_json::Value::from(sandbox.perps_url()),
        serde_json::Value::from(format!("http://127.0.0.1:{}/_sandbox", sandbox.port())),
    );
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{line}").and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    if args.exit_on_stdin_eof {
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
