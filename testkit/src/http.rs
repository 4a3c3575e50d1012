//! A small HTTP/1.1 object server for remote-read tests: `GET`/`HEAD` with `Range`, `ETag` and
//! `If-Match`, serving objects from memory or from files (sparse files make large objects
//! cheap), on a loopback port of its own, with faults to inject and a log of every request.
//! It stops when dropped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The bytes of one object.
#[derive(Clone, Debug)]
pub enum Body {
    /// Held in memory.
    Memory(Arc<Vec<u8>>),
    /// Read from a file at each request.
    File(PathBuf),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Memory(b) => b.len() as u64,
            Body::File(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
        }
    }

    fn read(&self, r: Range<u64>) -> Vec<u8> {
        match self {
            Body::Memory(b) => b[r.start as usize..r.end as usize].to_vec(),
            Body::File(p) => {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0u8; (r.end - r.start) as usize];
                if let Ok(f) = File::open(p) {
                    let _ = f.read_exact_at(&mut buf, r.start);
                }
                buf
            }
        }
    }
}

/// Faults the server injects, all off by default.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// The next this many requests are answered `500 Internal Server Error`.
    pub fail_next: usize,
    /// Answer ranged requests with `200` and the whole object, as servers without range
    /// support do.
    pub ignore_range: bool,
    /// Send the headers of a full answer but only half of its body, then close the connection.
    pub short_body: bool,
    /// Answer ranged requests with fewer bytes than asked, announced in `Content-Range`.
    pub short_range: bool,
    /// Wait this long before answering each request.
    pub stall: Option<Duration>,
    /// After this many more requests, every object gets a new ETag (as if replaced).
    pub change_etag_after: Option<usize>,
}

/// One request the server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The request path.
    pub path: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
    /// The status sent.
    pub status: u16,
    /// Body bytes sent.
    pub bytes: u64,
}

#[derive(Default)]
struct State {
    objects: HashMap<String, Body>,
    faults: Faults,
    generation: u64,
    log: Vec<Logged>,
}

/// The server: objects by path (`/bucket/file.asdf`), faults and a request log.
pub struct RangeServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A listener on a free loopback port, and its address.
fn loopback_listener() -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    Ok((listener, addr))
}

impl RangeServer {
    /// Starts a server on a free loopback port; an error when none can be bound.
    pub fn start() -> std::io::Result<RangeServer> {
        let (listener, addr) = loopback_listener()?;
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(conn) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || serve(conn, &s));
                }
            }
        });
        Ok(RangeServer {
            addr,
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Serves `body` at `path` (starting with `/`).
    pub fn put(&self, path: &str, body: Body) {
        self.lock().objects.insert(path.to_string(), body);
    }

    /// Replaces the faults.
    pub fn set_faults(&self, faults: Faults) {
        self.lock().faults = faults;
    }

    /// The requests answered so far, and clears the log.
    pub fn take_log(&self) -> Vec<Logged> {
        std::mem::take(&mut self.lock().log)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for RangeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Request {
    method: String,
    path: String,
    headers: HashMap<String, String>,
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let body_len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; body_len];
    r.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
    })
}

/// The byte range a `Range` header asks of an object of `size` bytes; `Err` when unsatisfiable.
fn parse_range(h: &str, size: u64) -> Option<Result<Range<u64>, ()>> {
    let spec = h.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    let r = if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        size.saturating_sub(n)..size
    } else {
        let start: u64 = a.parse().ok()?;
        let end = if b.is_empty() {
            size
        } else {
            b.parse::<u64>().ok()?.saturating_add(1).min(size)
        };
        start..end
    };
    Some(if r.start >= size || r.start >= r.end {
        Err(())
    } else {
        Ok(r)
    })
}

fn serve(conn: TcpStream, state: &Mutex<State>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader) {
        if !answer(&req, &mut writer, state) {
            return;
        }
    }
}

/// Answers one request; false when the connection must close.
fn answer(req: &Request, w: &mut TcpStream, state: &Mutex<State>) -> bool {
    let (body, faults, etag) = {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = s.faults.change_etag_after {
            if n == 0 {
                s.generation += 1;
                s.faults.change_etag_after = None;
            } else {
                s.faults.change_etag_after = Some(n - 1);
            }
        }
        let faults = s.faults.clone();
        if s.faults.fail_next > 0 {
            s.faults.fail_next -= 1;
        }
        let etag = format!("\"v{}\"", s.generation);
        (s.objects.get(&req.path).cloned(), faults, etag)
    };
    if let Some(d) = faults.stall {
        std::thread::sleep(d);
    }
    let log = |status: u16, bytes: u64| {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s.log.push(Logged {
            method: req.method.clone(),
            path: req.path.clone(),
            range: req.headers.get("range").cloned(),
            status,
            bytes,
        });
    };
    if faults.fail_next > 0 {
        log(500, 0);
        return respond(w, 500, "Internal Server Error", &[], &[], true);
    }
    let Some(body) = body else {
        log(404, 0);
        return respond(w, 404, "Not Found", &[], &[], true);
    };
    if req
        .headers
        .get("if-match")
        .is_some_and(|m| m != &etag && m != "*")
    {
        log(412, 0);
        return respond(w, 412, "Precondition Failed", &[], &[], true);
    }
    send_object(req, w, &body, &faults, &etag, &log)
}

fn send_object(
    req: &Request,
    w: &mut TcpStream,
    body: &Body,
    faults: &Faults,
    etag: &str,
    log: &dyn Fn(u16, u64),
) -> bool {
    let size = body.len();
    let mut headers = vec![
        ("ETag".to_string(), etag.to_string()),
        ("Accept-Ranges".into(), "bytes".into()),
        (
            "Last-Modified".into(),
            "Thu, 01 Jan 2026 00:00:00 GMT".into(),
        ),
    ];
    let range = match req.headers.get("range") {
        Some(h) if !faults.ignore_range => match parse_range(h, size) {
            Some(Ok(r)) => Some(r),
            Some(Err(())) => {
                log(416, 0);
                headers.push(("Content-Range".into(), format!("bytes */{size}")));
                return respond(w, 416, "Range Not Satisfiable", &headers, &[], true);
            }
            None => None,
        },
        _ => None,
    };
    let (status, reason, mut r) = match range {
        Some(r) => (206, "Partial Content", r),
        None => (200, "OK", 0..size),
    };
    if status == 206 && faults.short_range && r.end - r.start > 1 {
        r.end = r.start + (r.end - r.start) / 2;
    }
    if status == 206 {
        headers.push((
            "Content-Range".into(),
            format!("bytes {}-{}/{size}", r.start, r.end - 1),
        ));
    }
    let data = if req.method == "HEAD" {
        Vec::new()
    } else {
        body.read(r.clone())
    };
    headers.push(("Content-Length".into(), (r.end - r.start).to_string()));
    let sent = if faults.short_body {
        &data[..data.len() / 2]
    } else {
        &data[..]
    };
    log(status, sent.len() as u64);
    respond(w, status, reason, &headers, sent, faults.short_body) && !faults.short_body
}

fn respond(
    w: &mut TcpStream,
    status: u16,
    reason: &str,
    headers: &[(String, String)],
    body: &[u8],
    close: bool,
) -> bool {
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers.iter().any(|(k, _)| k == "Content-Length") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let ok = w.write_all(head.as_bytes()).is_ok() && w.write_all(body).is_ok();
    let _ = w.flush();
    ok && !close
}

/// Sends `PUT path` with `headers` and `body` to the HTTP server at `addr` (`127.0.0.1:port`),
/// unsigned, and returns the status code (for S3 test servers such as moto, which accept
/// unsigned requests; `x-amz-acl: public-read` makes an object readable anonymously).
pub fn put(addr: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> std::io::Result<u16> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer)?;
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no HTTP status in {answer:?}")))
}

/// An error unless the server answered `200 OK`.
fn expect_ok(status: u16, what: &str) -> std::io::Result<()> {
    match status {
        200 => Ok(()),
        other => Err(std::io::Error::other(format!("{what}: HTTP {other}"))),
    }
}

/// `moto_server` on a free loopback port, stopped (killed) when dropped.
pub struct MotoServer {
    child: std::process::Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
}

impl MotoServer {
    /// Starts `python -m moto.server` (the interop virtualenv has it) and waits until it
    /// accepts connections; an error when it cannot be started or does not answer within a
    /// minute.
    pub fn start(python: &std::path::Path) -> std::io::Result<MotoServer> {
        // A free port for the server to take (ours is closed when the listener drops).
        let port = loopback_listener()?.1.port();
        let child = std::process::Command::new(python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let addr = format!("127.0.0.1:{port}");
        // Killed on drop, also when it does not come up.
        let server = MotoServer { child, addr };
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(&server.addr).is_err() {
            if std::time::Instant::now() >= deadline {
                return Err(std::io::Error::other(format!(
                    "moto_server did not accept connections on {} within 60 s",
                    server.addr
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(server)
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl MotoServer {
    /// `http://127.0.0.1:<port>`: the endpoint to give S3 clients.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Creates `bucket` and stores each `(key, bytes)` in it, readable anonymously; an error
    /// names the request the server refused.
    pub fn fill(&self, bucket: &str, objects: &[(String, Vec<u8>)]) -> std::io::Result<()> {
        let created = put(&self.addr, &format!("/{bucket}"), &[], b"")?;
        expect_ok(created, &format!("creating bucket {bucket}"))?;
        for (key, bytes) in objects {
            let path = format!("/{bucket}/{key}");
            let status = put(&self.addr, &path, &[("x-amz-acl", "public-read")], bytes)?;
            expect_ok(status, &format!("putting {path}"))?;
        }
        Ok(())
    }
}

/// A reverse proxy in front of an HTTP server (a moto S3 server, say) that counts the requests
/// it forwards and the response body bytes it returns: the same count for every client, ours
/// or Python's. Each request is forwarded on a connection of its own (`Connection: close` both
/// ways). It stops when dropped.
pub struct CountingProxy {
    addr: SocketAddr,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl CountingProxy {
    /// Starts a proxy on a free loopback port forwarding to `upstream` (`127.0.0.1:port`).
    pub fn start(upstream: &str) -> std::io::Result<CountingProxy> {
        use std::sync::atomic::AtomicU64;
        let (listener, addr) = loopback_listener()?;
        let counts = Arc::new(Counts {
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (c, st, up) = (Arc::clone(&counts), stop.clone(), upstream.to_string());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(conn) = conn {
                    let (c, up) = (Arc::clone(&c), up.clone());
                    c.in_flight.fetch_add(1, Ordering::SeqCst);
                    std::thread::spawn(move || {
                        let _ = forward(conn, &up, &c);
                        c.in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            }
        });
        Ok(CountingProxy {
            addr,
            counts,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`: the endpoint to give clients.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `(requests, body bytes)` forwarded since the last call, once every connection open now
    /// is done (a client has its answer before the proxy has counted it).
    pub fn take(&self) -> (u64, u64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.counts.in_flight.load(Ordering::SeqCst) > 0
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        (
            self.counts.requests.swap(0, Ordering::SeqCst),
            self.counts.bytes.swap(0, Ordering::SeqCst),
        )
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads an HTTP head (start line and headers) without its final empty line: the lines, and
/// the `Content-Length` if given.
fn read_head(r: &mut impl BufRead) -> std::io::Result<(Vec<String>, Option<u64>)> {
    let mut lines = Vec::new();
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end().to_string();
        if line.is_empty() {
            return Ok((lines, length));
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok();
            }
        }
        lines.push(line);
    }
}

/// `lines` as a head that closes the connection after this message.
fn closing_head(lines: &[String]) -> String {
    let mut head = String::new();
    for l in lines {
        let is_conn = l
            .split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("connection"));
        if !is_conn {
            head.push_str(l);
            head.push_str("\r\n");
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    head
}

/// What a [`CountingProxy`] counted.
struct Counts {
    requests: std::sync::atomic::AtomicU64,
    bytes: std::sync::atomic::AtomicU64,
    in_flight: std::sync::atomic::AtomicU64,
}

fn forward(client: TcpStream, upstream: &str, counts: &Counts) -> std::io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut to_client = client.try_clone()?;
    let mut from_client = BufReader::new(client);
    let (lines, length) = read_head(&mut from_client)?;
    let mut body = vec![0u8; length.unwrap_or(0) as usize];
    from_client.read_exact(&mut body)?;
    let mut up = TcpStream::connect(upstream)?;
    up.set_read_timeout(Some(Duration::from_secs(120)))?;
    up.write_all(closing_head(&lines).as_bytes())?;
    up.write_all(&body)?;
    let mut from_up = BufReader::new(up);
    let (lines, _) = read_head(&mut from_up)?;
    to_client.write_all(closing_head(&lines).as_bytes())?;
    let n = std::io::copy(&mut from_up, &mut to_client)?;
    counts.requests.fetch_add(1, Ordering::SeqCst);
    counts.bytes.fetch_add(n, Ordering::SeqCst);
    to_client.flush()
}
