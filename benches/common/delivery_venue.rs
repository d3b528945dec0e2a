//! The delivery benchmark's side of things other than the library (`benches/streams.rs`,
//! "event delivery"): the venue thread that pushes `depth_book` frames and notes when, the
//! pinning of the threads to CPUs, and the plain tungstenite read loop the library is
//! compared with.

use super::stream_fixtures::depth_frame;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The venue of the delivery benchmark: one thread, two WebSocket connections (the library's
/// stream, then the plain reader). Told which connection to write to, it makes the next
/// `depth_book` frame of that connection, notes the time (ns since `base`) in `sent_at`, then
/// writes it.
pub struct Pusher {
    tell: mpsc::Sender<usize>,
    sent_at: Arc<AtomicU64>,
    base: Instant,
    /// The venue thread's id (0 until it runs).
    pub tid: Arc<AtomicU64>,
}

pub fn pusher(listener: std::net::TcpListener) -> Pusher {
    let (tell, told) = mpsc::channel::<usize>();
    let sent_at = Arc::new(AtomicU64::new(0));
    let tid = Arc::new(AtomicU64::new(0));
    let base = Instant::now();
    let (stamp, tid_out) = (sent_at.clone(), tid.clone());
    std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tid_out.store(unsafe { libc::gettid() } as u64, Ordering::Release);
        let accept = || {
            let (tcp, _) = listener.accept().unwrap();
            tcp.set_nodelay(true).unwrap();
            tungstenite::accept(tcp).unwrap()
        };
        let mut sockets = [accept(), accept()];
        let mut sent = [0u64; 2];
        while let Ok(which) = told.recv() {
            // Every push with the next seq (no status event in between); made before the time
            // is noted.
            sent[which] += 1;
            let frame = depth_frame(sent[which]);
            stamp.store(base.elapsed().as_nanos() as u64, Ordering::Release);
            if sockets[which].send(tungstenite::Message::text(frame)).is_err() {
                break;
            }
        }
    });
    Pusher { tell, sent_at, base, tid }
}

impl Pusher {
    /// Have frame pushed on connection `which`, wait with `receive`, and return the time from
    /// the venue's write to `receive` returning.
    pub fn latency(&self, which: usize, receive: &mut dyn FnMut()) -> Duration {
        self.tell.send(which).unwrap();
        receive();
        let received = self.base.elapsed().as_nanos() as u64;
        Duration::from_nanos(received.saturating_sub(self.sent_at.load(Ordering::Acquire)))
    }
}

/// Where the threads run (2 CPUs or more; else nothing is pinned).
#[derive(Clone, Copy, Debug)]
pub enum Pinning {
    /// Wherever the scheduler puts them.
    None,
    /// The caller and the library's I/O thread on CPU 0, the venue on CPU 1: the venue's
    /// write wakes one thread across CPUs, as it wakes the plain reader.
    IoWithCaller,
    /// The caller on CPU 0, the library's I/O thread with the venue on CPU 1.
    IoWithVenue,
}

fn set_cpus(tid: libc::pid_t, cpus: &[usize]) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A thread of this process by the start of its name (`/proc/self/task/*/comm`).
pub fn thread_named(prefix: &str) -> Option<libc::pid_t> {
    std::fs::read_dir("/proc/self/task").ok()?.flatten().find_map(|task| {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        comm.starts_with(prefix).then(|| task.file_name().to_str()?.parse().ok())?
    })
}

pub fn pin(pinning: Pinning, caller: libc::pid_t, io: libc::pid_t, venue: libc::pid_t) -> bool {
    // SAFETY: sysconf has no preconditions. (Not available_parallelism: that reads the
    // calling thread's own affinity, which the previous pinning has narrowed.)
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    if cpus < 2 {
        return false;
    }
    let all: Vec<usize> = (0..cpus).collect();
    let (c, i, v): (&[usize], &[usize], &[usize]) = match pinning {
        Pinning::None => (&all, &all, &all),
        Pinning::IoWithCaller => (&[0], &[0], &[1]),
        Pinning::IoWithVenue => (&[0], &[1], &[1]),
    };
    set_cpus(caller, c);
    set_cpus(io, i);
    set_cpus(venue, v);
    true
}

/// The next message of a plain tungstenite socket, blocking or (non-blocking socket) spinning.
pub fn plain_read(ws: &mut tungstenite::WebSocket<TcpStream>) -> tungstenite::Message {
    loop {
        match ws.read() {
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            read => break read.unwrap(),
        }
    }
}
