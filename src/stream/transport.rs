//! One WebSocket connection: DNS (bounded, and cut short by `close`: `resolve.rs`), TCP
//! (one deadline across the host's addresses, cut short by `close`: `connect.rs`;
//! TCP_NODELAY), TLS (the client's rustls configuration), the WebSocket handshake, then a
//! non-blocking socket that the I/O thread polls and that a caller may write an order frame
//! to (under the connection's lock).
//!
//! The handshake (`handshake.rs`) runs on a blocking socket under one deadline (the reply
//! timeout, for TLS and the WebSocket handshake together, kept on every `recv` and `send` of
//! the TCP socket below TLS: `deadline_tcp.rs`): a venue that trickles its answer byte by
//! byte, or never answers, cannot hold a reconnect forever. Afterwards the socket is
//! non-blocking so that reading never holds the connection's lock while waiting, and a write
//! that meets a full send buffer waits with `poll`, bounded by the reply timeout and cut
//! short by the stream's `close`.

use super::deadline_tcp::DeadlineTcp;
use super::fragments::FrameWatch;
use super::resolve::Resolver;
use super::settings::StreamSettings;
use super::venue_close::MAX_CLOSE_FRAME;
use crate::error::{Code, Error, Result};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};
use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

/// Frames are gathered up to this many bytes before a write (tungstenite's default).
const WRITE_BUFFER_BYTES: usize = 128 * 1024;
/// Frames written but not yet taken by the socket, at most (orders, pongs, the client's
/// pings): what a venue that does not read can make the client hold.
pub(crate) const MAX_UNSENT_BYTES: usize = 4 << 20;

/// The byte stream under the WebSocket: plain TCP (loopback `ws://`) or TLS, over a TCP
/// socket that keeps the set-up's deadline and never raises SIGPIPE (`deadline_tcp.rs`).
enum Layer {
    Plain(DeadlineTcp),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, DeadlineTcp>>),
}

/// The byte stream.
pub struct Socket {
    layer: Layer,
    /// The last bytes read (after TLS): a Close frame whose status code tungstenite found
    /// invalid is read again from them (`venue_close.rs`).
    tail: Tail,
    /// Since when bytes of ours wait for the venue to take them: set when a write finds the
    /// socket full, cleared when one makes progress (`Connection::unsent_since`).
    unsent_since: Option<Instant>,
    /// How many bytes the layer below has taken: unchanged over a frame write cut short by
    /// `close`, no byte of that frame can have left (`WriteFailure::nothing_written`).
    taken: u64,
    /// Whether a fragmented message is in progress (`fragments.rs`).
    frames: FrameWatch,
}

/// The last `MAX_CLOSE_FRAME` bytes read.
struct Tail {
    bytes: [u8; MAX_CLOSE_FRAME],
    len: usize,
}

impl Tail {
    fn new() -> Tail {
        Tail { bytes: [0; MAX_CLOSE_FRAME], len: 0 }
    }

    fn keep(&mut self, read: &[u8]) {
        if read.len() >= MAX_CLOSE_FRAME {
            self.bytes.copy_from_slice(&read[read.len() - MAX_CLOSE_FRAME..]);
            self.len = MAX_CLOSE_FRAME;
            return;
        }
        let old = (MAX_CLOSE_FRAME - read.len()).min(self.len);
        self.bytes.copy_within(self.len - old..self.len, 0);
        self.bytes[old..old + read.len()].copy_from_slice(read);
        self.len = old + read.len();
    }
}

impl Socket {
    /// When the message the venue is sending began, while it is incomplete (`fragments.rs`).
    pub fn message_open_since(&self) -> Option<Instant> {
        self.frames.open_since()
    }

    /// The last bytes read (at most a Close frame's worth).
    pub fn tail(&self) -> &[u8] {
        &self.tail.bytes[..self.tail.len]
    }

    pub fn tcp(&self) -> &TcpStream {
        match &self.layer {
            Layer::Plain(tcp) => tcp.tcp(),
            Layer::Tls(tls) => tls.sock.tcp(),
        }
    }

    /// The deadline every `recv` and `send` of the TCP socket keeps (`None`: none).
    fn set_deadline(&mut self, deadline: Option<Instant>) {
        match &mut self.layer {
            Layer::Plain(tcp) => tcp.set_deadline(deadline),
            Layer::Tls(tls) => tls.sock.set_deadline(deadline),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match &mut self.layer {
            Layer::Plain(s) => s.read(buf),
            Layer::Tls(s) => s.read(buf),
        }?;
        self.tail.keep(&buf[..n]);
        self.frames.feed(&buf[..n]);
        Ok(n)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = match &mut self.layer {
            Layer::Plain(s) => s.write(buf),
            Layer::Tls(s) => s.write(buf),
        };
        match &written {
            Ok(n) if *n > 0 => {
                self.unsent_since = None;
                self.taken += *n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.unsent_since.get_or_insert_with(Instant::now);
            }
            _ => {}
        }
        written
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.layer {
            Layer::Plain(s) => s.flush(),
            Layer::Tls(s) => s.flush(),
        }
    }
}

/// An open connection.
pub struct Connection {
    pub ws: WebSocket<Socket>,
    /// How long a write may wait for room in the send buffer.
    write_timeout: Duration,
    /// Readable once the stream is closing (`Shared::closed_signal`): ends a wait for room.
    closed_signal: Option<RawFd>,
}

impl Connection {
    pub fn fd(&self) -> RawFd {
        self.ws.get_ref().tcp().as_raw_fd()
    }

    /// Write one text frame and push it out. A full send buffer is waited out (bounded);
    /// after an error the connection is unusable and the caller drops it.
    pub fn send_text(&mut self, text: String) -> Result<()> {
        self.try_send_text(text).map_err(|failure| *failure.error)
    }

    /// `send_text`, telling a failure that wrote nothing of the frame from one after which
    /// some of it may have left (what an order's `may_have_reached_venue` must say).
    pub fn try_send_text(&mut self, text: String) -> std::result::Result<(), WriteFailure> {
        self.try_send(Message::text(text))
    }

    /// `send_text` of a message made by the caller (a frame in memory wiped on drop:
    /// `wiped_frame`).
    pub fn send_message(&mut self, message: Message) -> Result<()> {
        self.try_send(message).map_err(|failure| *failure.error)
    }

    fn try_send(&mut self, message: Message) -> std::result::Result<(), WriteFailure> {
        let taken_before = self.ws.get_ref().taken;
        match self.ws.write(message) {
            Ok(()) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            // Refused before the frame was buffered: the connection is closing (a Close frame
            // came or went) or closed, or the buffer is full.
            Err(
                e @ (tungstenite::Error::AlreadyClosed
                | tungstenite::Error::Protocol(tungstenite::error::ProtocolError::SendAfterClosing)
                | tungstenite::Error::WriteBufferFull(_)),
            ) => return Err(WriteFailure { error: Box::new(ws_error(e, "writing a frame")), nothing_written: true }),
            Err(e) => {
                return Err(WriteFailure { error: Box::new(ws_error(e, "writing a frame")), nothing_written: false });
            }
        }
        // Cut short by `close`: the frame is in tungstenite's buffer, behind any bytes still
        // unsent; if the socket took none since, none of it has left, and the socket is shut
        // down here so that none ever will (a later flush would send it). Any other failure
        // may have sent part of it, as before.
        self.flush().map_err(|error| {
            let nothing_written = error.code() == Code::StreamClosed && self.ws.get_ref().taken == taken_before;
            if nothing_written {
                let _ = self.ws.get_ref().tcp().shutdown(std::net::Shutdown::Both);
            }
            WriteFailure { nothing_written, error: Box::new(error) }
        })
    }

    /// Write one text frame as far as the socket takes it now, never waiting: an answer the
    /// venue asked for (a JSON pong), not worth a stall. What the socket cannot take stays
    /// buffered (bounded: `MAX_UNSENT_BYTES`), or is dropped when the buffer is full.
    pub fn send_text_now(&mut self, text: String) {
        // `write` buffers the frame (or refuses it, buffer full); `flush` sends what it can.
        let _ = self.ws.write(Message::text(text));
        let _ = self.ws.flush();
    }

    /// The client's own liveness ping, as far as the socket takes it now (as `send_text_now`):
    /// a full socket must not hold the I/O thread, which `close` wakes only from its `poll`.
    pub fn send_ping_now(&mut self) {
        let _ = self.ws.write(Message::Ping(Default::default()));
        let _ = self.ws.flush();
    }

    /// Since when the venue has taken none of the bytes we wrote while some wait (in
    /// tungstenite's buffer or the socket's); `None` when nothing waits. A venue that reads
    /// nothing for long is gone or stuck (half-open), whatever it still sends.
    pub fn unsent_since(&self) -> Option<Instant> {
        self.ws.get_ref().unsent_since
    }

    /// Try once, never waiting, to push out bytes that found the socket full (nothing else
    /// may write again for a while: the venue's pushes keep the client's ping from being due).
    pub fn retry_unsent(&mut self) {
        if self.unsent_since().is_some() {
            let _ = self.ws.flush();
        }
    }

    /// Push out whatever tungstenite holds (frames, pong replies), waiting for room until
    /// the write timeout passes or the stream is closed (`StreamClosed`): `close` from
    /// another thread must not wait behind a venue that does not read.
    pub fn flush(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.write_timeout;
        loop {
            match self.ws.flush() {
                Ok(()) => return Ok(()),
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Error::new(
                            Code::Timeout,
                            "the venue is not reading: a frame could not be written",
                        ));
                    }
                    if wait_writable(self.fd(), self.closed_signal, left) == Woken::Closed {
                        return Err(Error::new(
                            Code::StreamClosed,
                            "the stream was closed while a frame waited for the venue to read it",
                        ));
                    }
                }
                Err(e) => return Err(ws_error(e, "writing a frame")),
            }
        }
    }
}

/// A failed frame write (the error boxed: the failure path keeps `Result` small).
#[derive(Debug)]
pub struct WriteFailure {
    pub error: Box<Error>,
    /// No byte of the frame was written: tungstenite refused it before buffering it, or
    /// `close` cut the wait for room short before the socket took any byte.
    pub nothing_written: bool,
}

/// Open a connection to `url`. `shutdown_handle` receives a clone of the TCP socket as soon
/// as it exists, so that `close` from another thread can cut a handshake short.
/// `closed_signal`: readable once the stream is closing (`Shared::closed_signal`), open for
/// as long as the connection; it also ends the wait for the host's addresses (`resolver`: the
/// stream's, which never runs two lookups at once) and for the TCP connect.
pub fn connect(
    url: &str,
    settings: &StreamSettings,
    closed_signal: RawFd,
    resolver: &mut Resolver,
    on_socket: &mut dyn FnMut(&TcpStream),
) -> Result<Connection> {
    let mut request = url
        .into_client_request()
        .map_err(|e| Error::invalid_argument(format!("stream URL \"{}\": {e}", crate::error::excerpt(url))))?;
    let uri = request.uri().clone();
    let host = uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']').to_owned();
    let tls = uri.scheme_str() == Some("wss");
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    if let Ok(agent) = settings.user_agent.parse() {
        request.headers_mut().insert(tungstenite::http::header::USER_AGENT, agent);
    }

    let addrs = resolver.resolve(&host, port, settings.connect_timeout, closed_signal)?;
    let tcp = super::connect::connect_tcp(&addrs, settings.connect_timeout, closed_signal)?;
    on_socket(&tcp);
    tcp.set_nodelay(true).map_err(|e| io_error(e, "setting TCP_NODELAY"))?;
    let deadline = Some(Instant::now() + settings.reply_timeout);
    let layer = if tls {
        let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|_| {
            Error::invalid_argument(format!("stream URL host \"{}\" is not a valid name", crate::error::excerpt(&host)))
        })?;
        let tls_connection = rustls::ClientConnection::new(settings.tls()?, name)
            .map_err(|e| Error::new(Code::Transport, format!("TLS set-up failed: {e}")))?;
        Layer::Tls(Box::new(rustls::StreamOwned::new(tls_connection, DeadlineTcp::new(tcp, deadline))))
    } else {
        Layer::Plain(DeadlineTcp::new(tcp, deadline))
    };
    let mut socket = Socket { layer, tail: Tail::new(), unsent_since: None, taken: 0, frames: FrameWatch::off() };
    // Our own handshake (`handshake.rs`): RFC 6455 §4.1 as written, the venue's refusals
    // read as REST reads them.
    let leftover = super::handshake::client(&mut socket, request)?;
    socket.frames.start(&leftover);
    socket.set_deadline(None);
    let max = settings.options.max_frame_bytes;
    // The write buffer is bounded too (tungstenite's default is unbounded): a venue that
    // floods pings and never reads would otherwise grow it by one pong per ping, without end.
    // Past the bound tungstenite keeps only the latest pong, and an order frame is refused
    // before a byte of it is buffered (`WriteBufferFull`: nothing sent).
    let config = WebSocketConfig::default()
        .max_frame_size(Some(max))
        .max_message_size(Some(max))
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_write_buffer_size(MAX_UNSENT_BYTES);
    let ws = WebSocket::from_partially_read(socket, leftover, Role::Client, Some(config));
    ws.get_ref().tcp().set_nonblocking(true).map_err(|e| io_error(e, "making the socket non-blocking"))?;
    Ok(Connection { ws, write_timeout: settings.reply_timeout, closed_signal: Some(closed_signal) })
}

/// What ended a wait for room in the socket.
#[derive(PartialEq, Eq)]
enum Woken {
    /// Room, an error on the socket, or the timeout: `flush` tries again and sees which.
    Socket,
    /// The stream is closing.
    Closed,
}

/// Wait until the socket can take more bytes, `closed_signal` is readable, or `timeout`
/// passes.
fn wait_writable(fd: RawFd, closed_signal: Option<RawFd>, timeout: Duration) -> Woken {
    let mut fds = [
        libc::pollfd { fd, events: libc::POLLOUT, revents: 0 },
        libc::pollfd { fd: closed_signal.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
    ];
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: two valid pollfd entries for the duration of the call (a negative fd is ignored).
    unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    if fds[1].revents & libc::POLLIN != 0 { Woken::Closed } else { Woken::Socket }
}

pub fn io_error(e: io::Error, what: &str) -> Error {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Error::new(Code::Timeout, format!("{what}: timed out")),
        _ => Error::new(Code::Transport, format!("{what}: {e}")),
    }
}

/// A tungstenite failure as our error (the handshake's are `handshake.rs`'s).
pub fn ws_error(e: tungstenite::Error, what: &str) -> Error {
    match e {
        tungstenite::Error::Io(io) => io_error(io, what),
        tungstenite::Error::Capacity(c) => Error::bad_response(format!("{what}: {c} (max_frame_bytes)")),
        tungstenite::Error::WriteBufferFull(_) => Error::new(
            Code::Transport,
            format!("{what}: the venue is not reading ({} MiB of frames unsent)", MAX_UNSENT_BYTES >> 20),
        ),
        tungstenite::Error::Tls(t) => Error::new(Code::Transport, format!("{what}: TLS failure: {t}")),
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            Error::new(Code::Transport, format!("{what}: the connection is closed"))
        }
        tungstenite::Error::Protocol(tungstenite::error::ProtocolError::SendAfterClosing) => {
            Error::new(Code::Transport, format!("{what}: the connection is closing (a Close frame came or went)"))
        }
        other => Error::new(Code::Transport, format!("{what}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A client connection over loopback TCP (no handshake: both ends made raw), and the
    /// venue's end.
    fn pair() -> (Connection, WebSocket<TcpStream>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let layer = Layer::Plain(DeadlineTcp::new(client, None));
        let socket = Socket { layer, tail: Tail::new(), unsent_since: None, taken: 0, frames: FrameWatch::off() };
        let ws = WebSocket::from_raw_socket(socket, Role::Client, None);
        let conn = Connection { ws, write_timeout: Duration::from_secs(1), closed_signal: None };
        (conn, WebSocket::from_raw_socket(server, Role::Server, None))
    }

    #[test]
    fn the_tail_keeps_the_last_bytes_read_across_reads() {
        let mut tail = Tail::new();
        let all: Vec<u8> = (0..=255u8).collect();
        let mut expected = Vec::new();
        for chunk in [&all[..3], &all[3..100], &all[100..101], &all[101..250], &all[250..]] {
            tail.keep(chunk);
            expected.extend_from_slice(chunk);
            let want = &expected[expected.len().saturating_sub(MAX_CLOSE_FRAME)..];
            assert_eq!(&tail.bytes[..tail.len], want);
        }
    }

    #[test]
    fn a_write_refused_on_a_closing_connection_wrote_nothing() {
        let (mut conn, mut venue) = pair();
        conn.try_send_text("before".into()).unwrap();
        assert_eq!(venue.read().unwrap(), Message::text("before"));
        venue.close(None).unwrap();
        assert!(matches!(conn.ws.read().unwrap(), Message::Close(_)));
        let failure = conn.try_send_text("after the close".into()).unwrap_err();
        assert!(failure.nothing_written, "{}", failure.error);
        assert!(failure.error.message().contains("closing"), "{}", failure.error);
    }

    #[test]
    fn a_wait_for_room_ends_when_the_stream_closes_saying_whether_bytes_left() {
        let (mut conn, venue) = pair();
        conn.ws.get_ref().tcp().set_nonblocking(true).unwrap();
        let (closed_tx, closed_rx) = std::os::unix::net::UnixStream::pair().unwrap();
        conn.closed_signal = Some(closed_rx.as_raw_fd());
        conn.write_timeout = Duration::from_secs(30);
        (&closed_tx).write_all(&[1]).unwrap();
        // More than the socket holds (the venue never reads): part of it leaves, then the
        // wait for room ends at once, the stream closing.
        let started = Instant::now();
        let failure = conn.try_send_text("x".repeat(64 << 20)).unwrap_err();
        assert_eq!(failure.error.code(), Code::StreamClosed, "{}", failure.error);
        assert!(!failure.nothing_written, "part of the frame left");
        // The next frame finds the socket full: none of it leaves.
        let failure = conn.try_send_text("order".into()).unwrap_err();
        assert_eq!(failure.error.code(), Code::StreamClosed, "{}", failure.error);
        assert!(failure.nothing_written, "the socket took nothing of it");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        drop(venue);
    }

    #[test]
    fn a_write_that_fails_on_the_socket_may_have_sent_part_of_the_frame() {
        let (mut conn, venue) = pair();
        conn.ws.get_ref().tcp().shutdown(std::net::Shutdown::Write).unwrap();
        let failure = conn.try_send_text("x".into()).unwrap_err();
        assert!(!failure.nothing_written, "{}", failure.error);
        drop(venue);
    }

    #[test]
    fn a_venue_that_does_not_read_times_the_write_out_and_part_of_the_frame_may_have_left() {
        // What perps_stream_new_order documents: PERPS_TIMEOUT, may have reached the venue.
        let (mut conn, venue) = pair();
        conn.ws.get_ref().tcp().set_nonblocking(true).unwrap();
        conn.write_timeout = Duration::from_millis(300);
        let failure = conn.try_send_text("x".repeat(64 << 20)).unwrap_err();
        assert_eq!(failure.error.code(), Code::Timeout, "{}", failure.error);
        assert!(failure.error.message().contains("not reading"), "{}", failure.error);
        assert!(!failure.nothing_written, "part of the frame left");
        drop(venue);
    }
}
