//! The HTTP layer: a few `tiny_http` worker threads that hand `/api/` requests to [`Api`] and
//! answer the page's static files, which are compiled into the binary.

use super::api::{Api, ApiError, ApiResponse};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The page, its script and its style: plain files, no build step.
const ASSETS: &[(&str, &str, &str)] = &[
    ("/", "text/html; charset=utf-8", include_str!("../../assets/web/index.html")),
    ("/index.html", "text/html; charset=utf-8", include_str!("../../assets/web/index.html")),
    ("/app.js", "text/javascript; charset=utf-8", include_str!("../../assets/web/app.js")),
    ("/style.css", "text/css; charset=utf-8", include_str!("../../assets/web/style.css")),
    ("/favicon.svg", "image/svg+xml", include_str!("../../assets/web/favicon.svg")),
];

/// Request bodies are a move or a few options; anything larger is refused unread.
const MAX_BODY: u64 = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {address}: {reason} (is the port in use? try another with --port)")]
    Bind { address: String, reason: String },
}

/// A running server: its address and its worker threads.
pub struct Server {
    http: Arc<tiny_http::Server>,
    address: SocketAddr,
    workers: Vec<JoinHandle<()>>,
}

impl Server {
    /// Listens on `address` (port 0 picks a free one) and starts `workers` threads. Several
    /// workers let the page and other tabs be answered while the agent thinks for one.
    pub fn start(api: Arc<Api>, address: &str, workers: usize) -> Result<Server, ServerError> {
        let bind_error = |reason: String| ServerError::Bind { address: address.into(), reason };
        let http =
            Arc::new(tiny_http::Server::http(address).map_err(|e| bind_error(e.to_string()))?);
        let address =
            http.server_addr().to_ip().ok_or_else(|| bind_error("not an IP address".into()))?;
        let workers = (0..workers.max(1))
            .map(|_| {
                let (http, api) = (Arc::clone(&http), Arc::clone(&api));
                std::thread::spawn(move || {
                    // `recv` fails only once the server is unblocked for shutdown.
                    while let Ok(request) = http.recv() {
                        answer(&api, request);
                    }
                })
            })
            .collect();
        Ok(Server { http, address, workers })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// Serves until the process ends.
    pub fn wait(self) {
        for worker in self.workers {
            let _ = worker.join();
        }
    }

    /// Stops the workers once their current requests are answered.
    pub fn stop(self) {
        for _ in &self.workers {
            self.http.unblock();
        }
        self.wait();
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .expect("header names and values here are plain ASCII")
}

fn answer(api: &Api, mut request: tiny_http::Request) {
    let method = request.method().as_str().to_ascii_uppercase();
    let url = request.url().to_string();
    let path = url.split(['?', '#']).next().unwrap_or_default().to_string();
    let response = if path.starts_with("/api/") || path == "/api" {
        let mut body = Vec::new();
        let read = request.as_reader().take(MAX_BODY + 1).read_to_end(&mut body);
        let api_response = match read {
            Err(e) => ApiResponse::error(&ApiError::BadBody {
                endpoint: "this endpoint",
                problem: format!("it could not be read: {e}"),
            }),
            Ok(_) if body.len() as u64 > MAX_BODY => ApiResponse::error(&ApiError::BadBody {
                endpoint: "this endpoint",
                problem: format!("it is longer than {MAX_BODY} bytes"),
            }),
            Ok(_) => api.handle(&method, &url, &body),
        };
        tiny_http::Response::from_string(api_response.body)
            .with_status_code(api_response.status)
            .with_header(header("Content-Type", "application/json; charset=utf-8"))
            .with_header(header("Cache-Control", "no-store"))
    } else {
        match ASSETS.iter().find(|(route, _, _)| *route == path) {
            Some((_, content_type, text)) if method == "GET" || method == "HEAD" => {
                tiny_http::Response::from_string(*text)
                    .with_header(header("Content-Type", content_type))
                    .with_header(header("Cache-Control", "no-cache"))
            }
            Some(_) => tiny_http::Response::from_string(format!("{path} only answers GET\n"))
                .with_status_code(405),
            None => tiny_http::Response::from_string(format!(
                "nothing is at {path}; the game is at /\n"
            ))
            .with_status_code(404),
        }
    };
    // A browser that closed its tab is not our error to report.
    let _ = request.respond(response);
}
