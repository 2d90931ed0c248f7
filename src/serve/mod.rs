//! Play in the browser: `epaminondas serve` answers a small JSON API and serves a static page
//! (HTML, JS and CSS compiled into the binary, so users need no build step).
//!
//! - [`api`]: the games and the agent behind the API, requests in and responses out, no sockets
//!   (the tests drive it directly).
//! - [`http`]: the thin HTTP layer over `tiny_http`: routes, the static assets, body limits.

pub mod api;
pub mod http;

pub use api::{Api, ApiError, ApiResponse};
pub use http::{Server, ServerError};
