//! A scripted HTTP/1.1 server on 127.0.0.1 for testing the LLM client against real sockets.
//!
//! One OS thread per connection; every response closes its connection. The script is a
//! function of the request and of how many times the same prompt (the last message's
//! content) was seen before, so "503 twice then success" is `if n < 2 { 503 } else { ok }`.
//! The server logs every request it read and measures the maximum number of requests it
//! was handling at once.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A request the server read.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: Value,
    /// The last message's content, or a search request's `query` (the script's key).
    pub prompt: String,
    pub at: Instant,
}

/// What the script answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, extra headers and body, sent after `delay`.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
        delay: Duration,
    },
    /// Close the connection without answering.
    Drop,
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Http {
            status,
            headers: vec![],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Http { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }
    pub fn delayed(mut self, d: Duration) -> Reply {
        if let Reply::Http { delay, .. } = &mut self {
            *delay = d;
        }
        self
    }
}

/// A well-formed chat completion answering `text`, with usage prompt 10, completion 3.
pub fn ok_reply(text: &str) -> Reply {
    let body = serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    });
    Reply::status(200, &body.to_string())
}

/// A chat completion answering `text` that stopped at the token cap (finish_reason
/// `length`), with usage prompt 10, completion 64.
pub fn cut_reply(text: &str) -> Reply {
    let body = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 64, "total_tokens": 74}
    });
    Reply::status(200, &body.to_string())
}

/// The answer text the default script gives to a prompt.
pub fn answer_for(prompt: &str) -> String {
    format!("answer to {prompt}")
}

type Script = dyn Fn(&Seen, usize) -> Reply + Send + Sync;

/// A running server (lives until the test process exits).
#[derive(Clone)]
pub struct Server {
    /// Base URL with `/v1`.
    pub base: String,
    log: Arc<Mutex<Vec<Seen>>>,
    counts: Arc<Mutex<HashMap<String, usize>>>,
    active: Arc<AtomicUsize>,
    max_active: Arc<AtomicUsize>,
}

impl Server {
    /// Starts a server answering with `script(request, times this prompt was seen before)`.
    pub fn start(script: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let server = Server {
            base: format!("http://{addr}/v1"),
            log: Arc::default(),
            counts: Arc::default(),
            active: Arc::default(),
            max_active: Arc::default(),
        };
        let script: Arc<Script> = Arc::new(script);
        let s = server.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (s, script) = (s.clone(), script.clone());
                thread::spawn(move || s.handle(stream, &*script));
            }
        });
        server
    }

    /// Answers every prompt with `ok_reply(answer_for(prompt))` after `delay`.
    pub fn echo(delay: Duration) -> Server {
        Server::start(move |r, _| ok_reply(&answer_for(&r.prompt)).delayed(delay))
    }

    fn handle(&self, mut stream: TcpStream, script: &Script) {
        let Some(seen) = read_request(&mut stream) else {
            return;
        };
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_active.fetch_max(now, Ordering::SeqCst);
        let n = {
            let mut c = self.counts.lock().unwrap();
            let e = c.entry(seen.prompt.clone()).or_insert(0);
            *e += 1;
            *e - 1
        };
        self.log.lock().unwrap().push(seen.clone());
        let reply = script(&seen, n);
        // A request stops counting as active just before its answer goes out: once the
        // client has the answer it may send the next request, which another thread can
        // read before this one would otherwise have got round to counting this one done
        // (seen as 6 active under a limit of 5 on a loaded 2-core machine).
        let done = || self.active.fetch_sub(1, Ordering::SeqCst);
        match reply {
            Reply::Drop => {
                done();
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
            Reply::Http {
                status,
                headers,
                body,
                delay,
            } => {
                thread::sleep(delay);
                let mut head = format!(
                    "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    reason(status),
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                done();
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
                let _ = stream.flush();
            }
        }
    }

    /// Every request read so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// Number of requests read so far.
    pub fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// The most requests handled at the same time.
    pub fn max_concurrent(&self) -> usize {
        self.max_active.load(Ordering::SeqCst)
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Value =
        serde_json::from_slice(&buf[header_end..header_end + len]).unwrap_or(Value::Null);
    // A search request (`{"query": ..., "k": ...}`) is keyed by its query.
    let prompt = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .or_else(|| body.get("query"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Some(Seen {
        method,
        path,
        headers,
        body,
        prompt,
        at: Instant::now(),
    })
}
