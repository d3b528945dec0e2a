//! Generated `cl_ord_id`s never repeat: 10^5 from each of two processes running at once,
//! read through the C ABI (`perps_error_cl_ord_id` of orders that failed), all distinct and
//! of the documented shape (the client's prefix + 26 characters of Crockford base32).
//!
//! Each child process is this test binary again, run with `PERPS_CL_ORD_ID_CHILD` naming
//! the file it writes its ids to. Its orders go to a closed loopback port with pacing set to
//! "refuse", so after the first burst each order is refused locally — after its id was
//! made, before anything is signed or sent — which keeps 10^5 orders quick.

mod common;

use common::abi::{Client, Session, new_order};
use perps::ffi::error::perps_code::*;
use std::collections::HashSet;

const PER_PROCESS: usize = 100_000;
const PREFIX: &str = "uq-";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn child(out: &str) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let options = format!(r#"{{"rate_limit":"refuse","cl_ord_id_prefix":"{PREFIX}"}}"#);
    let client = Client::new(&url, &url, Some(&options)).unwrap();
    let session = Session::from_api_key("uniq-token", &bs58::encode([9u8; 32]).into_string()).unwrap();
    let mut ids = String::with_capacity(PER_PROCESS * 32);
    for _ in 0..PER_PROCESS {
        let f = new_order(&client, &session, ORDER).expect_err("nothing listens");
        assert!(matches!(f.code, PERPS_RATE_LIMITED | PERPS_TRANSPORT), "{f:?}");
        ids.push_str(&f.cl_ord_id.expect("every failed order names its cl_ord_id"));
        ids.push('\n');
    }
    std::fs::write(out, ids).unwrap();
}

#[test]
fn ids_from_two_processes_never_collide() {
    if let Ok(out) = std::env::var("PERPS_CL_ORD_ID_CHILD") {
        return child(&out);
    }
    let dir = std::env::temp_dir();
    let files: Vec<std::path::PathBuf> =
        (0..2).map(|i| dir.join(format!("perps-cl-ord-ids-{}-{i}.txt", std::process::id()))).collect();
    let children: Vec<std::process::Child> = files
        .iter()
        .map(|file| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "ids_from_two_processes_never_collide", "--test-threads=1"])
                .env("PERPS_CL_ORD_ID_CHILD", file)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a child process failed");
    }
    let mut all = HashSet::with_capacity(2 * PER_PROCESS);
    let mut process_parts = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::remove_file(file).unwrap();
        let ids: Vec<&str> = text.lines().collect();
        assert_eq!(ids.len(), PER_PROCESS);
        for id in &ids {
            let generated = id.strip_prefix(PREFIX).unwrap_or_else(|| panic!("{id}: no prefix"));
            assert_eq!(generated.len(), 26, "{id}");
            assert!(generated.chars().all(|c| CROCKFORD.contains(c)), "{id}");
            assert!(all.insert(id.to_string()), "{id} generated twice");
        }
        // Characters 10..18 of the generated part: the process's random number.
        process_parts.push(ids[0][PREFIX.len() + 10..PREFIX.len() + 18].to_owned());
        // Ids sort by creation within a process.
        assert!(ids.windows(2).all(|w| w[0][..PREFIX.len() + 10] <= w[1][..PREFIX.len() + 10]));
    }
    assert_eq!(all.len(), 2 * PER_PROCESS);
    assert_ne!(process_parts[0], process_parts[1], "each process draws its own number");
}
