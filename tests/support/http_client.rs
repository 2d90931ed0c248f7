//! A minimal HTTP/1.1 client for the tests (one request per connection), so the tests need no
//! HTTP client crate. Shared by `tests/serve.rs` and `tests/browser.rs` through `#[path]`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response: the status code and the body as text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends one request and reads the whole response (the server closes after `Connection: close`).
pub fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    // Read by Content-Length (or to the last chunk): some servers (chromedriver) keep the
    // connection open despite `Connection: close`, so reading to the end would hang.
    let mut raw = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    let header_end = loop {
        if let Some(end) = find(&raw, b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            return Err(std::io::Error::other(format!(
                "the connection closed before the headers ended: {:?}",
                String::from_utf8_lossy(&raw)
            )));
        }
        raw.extend_from_slice(&buffer[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..header_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head:?}")))?;
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_ascii_lowercase())
        })
    };
    let length: Option<usize> = header("content-length").and_then(|v| v.parse().ok());
    let chunked = header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    loop {
        let body = &raw[header_end..];
        let complete = match length {
            Some(length) => body.len() >= length,
            None if chunked => body.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if complete {
            break;
        }
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buffer[..n]);
    }
    let rest = String::from_utf8_lossy(&raw[header_end..]).into_owned();
    let body = if chunked { dechunk(&rest) } else { rest };
    Ok(Reply { status, body })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        text = rest[size..].trim_start_matches("\r\n");
    }
    out
}
