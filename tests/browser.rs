//! End to end in a real browser: headless Chromium, driven through chromedriver (WebDriver),
//! opens the page of an in-process server, plays a few moves by clicking squares, takes one back,
//! types an illegal move, and after each step checks the board drawn in the page against the
//! server's game.
//!
//! What it needs: `chromium` and `chromedriver` (Debian's `chromium` and `chromium-driver`). When
//! they are missing it installs them with apt-get (as root, or through passwordless sudo), within
//! a time limit. When they cannot be had the test passes after printing `SKIPPED` and the reason;
//! when they are there but the browser does not start, it fails.
//! `EPAMINONDAS_SKIP_BROWSER=1` skips it; `EPAMINONDAS_SCREENSHOT=docs/serve.png` also saves a
//! picture of the page mid-game (the README's screenshot is made that way).

#[path = "support/apt.rs"]
mod apt;
#[path = "support/http_client.rs"]
mod http_client;

use apt::find_program;
use epaminondas::game::Rules;
use epaminondas::nn::DeviceChoice;
use epaminondas::players::{Limit, PlayerSpec};
use epaminondas::serve::api::GameState;
use epaminondas::serve::{Api, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// All the installing may take; the whole test stays near two minutes.
const INSTALL_BUDGET: Duration = Duration::from_secs(100);
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Printed straight to stderr, past the test harness's capture, so a skip is always seen.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn browser_programs() -> Option<(PathBuf, PathBuf)> {
    Some((
        find_program(&["chromium", "chromium-browser", "google-chrome"])?,
        find_program(&["chromedriver"])?,
    ))
}

/// Chromium and chromedriver, installed with apt-get if need be.
fn ensure_browser() -> Result<(PathBuf, PathBuf), String> {
    apt::ensure(&["chromium", "chromium-driver"], INSTALL_BUDGET, browser_programs)
}

/// A chromedriver process and one browser session in it; both end when this is dropped.
struct Browser {
    driver: Child,
    address: SocketAddr,
    session: String,
}

impl Browser {
    fn start(chromium: &Path, chromedriver: &Path) -> Result<Browser, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", chromedriver.display()))?;
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut browser = Browser { driver, address, session: String::new() };
        let ready = Instant::now() + Duration::from_secs(20);
        while !http_client::request(address, "GET", "/status", None)
            .is_ok_and(|r| r.status == 200 && r.json()["value"]["ready"] == true)
        {
            if Instant::now() > ready {
                return Err("chromedriver did not become ready within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900", "--hide-scrollbars"],
            },
        }}});
        let reply = browser
            .send("POST", "/session", Some(capabilities))
            .map_err(|e| format!("chromium would not start: {e}"))?;
        browser.session = reply["sessionId"].as_str().ok_or("no session id")?.to_string();
        Ok(browser)
    }

    /// One WebDriver command; its `value`, or the driver's error message.
    fn send(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let body = body.map(|b| b.to_string());
        let reply = http_client::request(self.address, method, path, body.as_deref())
            .map_err(|e| e.to_string())?;
        let value = serde_json::from_str::<Value>(&reply.body)
            .map_err(|e| format!("{e}: {}", reply.body))?["value"]
            .clone();
        if reply.status != 200 {
            return Err(format!("{method} {path}: {} {}", value["error"], value["message"]));
        }
        Ok(value)
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.send(method, &format!("/session/{}{path}", self.session), body)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn script(&self, script: &str) -> Value {
        self.command("POST", "/execute/sync", Some(json!({"script": script, "args": []})))
    }

    /// Clicks an element the way a person does (the driver moves the pointer to it and clicks).
    fn click(&self, css: &str) {
        let found =
            self.command("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        let id = found[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {found}"));
        self.command("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    fn wait_for(&self, what: &str, condition: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.script(&format!("return Boolean({condition});")) != json!(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what} ({condition})");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn screenshot(&self) -> Vec<u8> {
        decode_base64(self.command("GET", "/screenshot", None).as_str().expect("base64 text"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.send("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> =
        text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let bits = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, d)| acc | (*d as u32) << (18 - 6 * i));
            bits.to_be_bytes()[1..chunk.len()].to_vec()
        })
        .collect()
}

fn server_state(address: SocketAddr, id: &str) -> GameState {
    let reply = http_client::request(address, "GET", &format!("/api/games/{id}"), None)
        .expect("the server answers");
    assert_eq!(reply.status, 200, "{}", reply.body);
    serde_json::from_str(&reply.body).expect("a game state")
}

/// The pieces the page draws, as board rows like the server's (`w`, `b`, `.`; top row first).
fn drawn_board(browser: &Browser, state: &GameState) -> Vec<String> {
    let pieces = browser.script("return [...document.querySelectorAll('circle.piece[data-square]')].map(p => [p.dataset.square, p.dataset.color]);");
    let mut rows = vec![vec!['.'; state.width as usize]; state.height as usize];
    for piece in pieces.as_array().expect("a list") {
        let square = piece[0].as_str().expect("a square");
        let column = (square.as_bytes()[0] - b'a') as usize;
        let row: usize = square[1..].parse().expect("a row");
        let cell = &mut rows[state.height as usize - row][column];
        assert_eq!(*cell, '.', "two pieces drawn on {square}");
        *cell = if piece[1] == "white" { 'w' } else { 'b' };
    }
    rows.into_iter().map(|row| row.into_iter().collect()).collect()
}

/// The page shows exactly the server's game: pieces, move list, last move.
fn check_page(browser: &Browser, server: SocketAddr, id: &str) -> GameState {
    let state = server_state(server, id);
    assert_eq!(
        drawn_board(browser, &state),
        state.board,
        "the drawn board differs from the server's"
    );
    let listed = browser
        .script("return [...document.querySelectorAll('#moves span')].map(s => s.textContent);");
    assert_eq!(listed, json!(state.moves), "the move list differs");
    if let Some(last) = &state.last_move {
        let marked = browser.script(
            "return [...document.querySelectorAll('.last-move')].map(m => m.dataset.square);",
        );
        for [_, to] in &last.path {
            assert!(
                marked.as_array().expect("a list").contains(&json!(to)),
                "{to} of the last move {} is not marked",
                last.text
            );
        }
    }
    state
}

#[test]
fn a_browser_plays_a_few_moves() {
    if std::env::var_os("EPAMINONDAS_SKIP_BROWSER").is_some() {
        say("SKIPPED browser test: EPAMINONDAS_SKIP_BROWSER is set");
        return;
    }
    let (chromium, chromedriver) = match ensure_browser() {
        Ok(found) => found,
        Err(reason) => {
            say(&format!("SKIPPED browser test: {reason}"));
            return;
        }
    };
    // A browser that is installed but does not start fails the test rather than skipping it
    // quietly: only a machine without one skips.
    let browser = Browser::start(&chromium, &chromedriver)
        .unwrap_or_else(|reason| panic!("the browser was found but did not start: {reason}"));

    // The shipped agent at a few simulations: real, and quick.
    let spec: PlayerSpec =
        "net:models/anchored-values-6x64-step1600.safetensors".parse().expect("a spec");
    let agent = spec.build(DeviceChoice::Cpu, 7).expect("the shipped agent loads");
    let api = Arc::new(Api::new(
        agent,
        spec.text.clone(),
        Rules::default(),
        Limit { nodes: Some(32), ..Limit::default() },
    ));
    let server = Server::start(api, "127.0.0.1:0", 2).expect("a free port");
    let address = server.address();

    browser.command("POST", "/url", Some(json!({"url": server.url()})));
    browser.wait_for(
        "the first game",
        "document.body.dataset.game && document.body.dataset.busy === 'false'",
    );
    let id = browser
        .script("return document.body.dataset.game;")
        .as_str()
        .expect("a game id")
        .to_string();
    let mut state = check_page(&browser, address, &id);
    assert_eq!((state.human.as_str(), state.ply), ("white", 0));

    for turn in 0..3 {
        // A tail square with moves, and its farthest destination, varied from turn to turn.
        let tails: Vec<&String> = state.legal_moves.keys().collect();
        let tail = tails[(turn * 5 + 3) % tails.len()].clone();
        let choices = state.legal_moves[&tail].clone();
        browser.click(&format!("rect.square[data-square='{tail}']"));
        let offered = browser.script("return [...document.querySelectorAll('[data-target]')].map(t => t.dataset.target).sort();");
        let mut expected: Vec<&str> = choices.iter().map(|m| m.to.as_str()).collect();
        expected.sort();
        assert_eq!(offered, json!(expected), "the destinations shown for {tail}");
        let target = choices.last().expect("a move").clone();
        let ply = state.ply;
        browser.click(&format!("rect.square[data-square='{}']", target.to));
        browser.wait_for("the agent's reply", &format!("document.body.dataset.busy === 'false' && (Number(document.body.dataset.ply) === {} || document.body.dataset.turn === 'over')", ply + 2));
        state = check_page(&browser, address, &id);
        assert_eq!(state.moves[ply as usize], target.text, "the clicked move was played");
        if state.result != "*" {
            break;
        }
        let shown = browser.script("return document.getElementById('winprob-text').textContent;");
        assert!(
            shown.as_str().is_some_and(|t| t.ends_with('%')),
            "the agent's winning chance is shown: {shown}"
        );
    }

    // Undo takes back the last move pair, in the page as on the server.
    let before = state.ply;
    browser.click("#undo");
    browser.wait_for(
        "the undo",
        &format!(
            "document.body.dataset.busy === 'false' && Number(document.body.dataset.ply) === {}",
            before - 2
        ),
    );
    state = check_page(&browser, address, &id);
    assert_eq!(state.ply, before - 2);

    // A typed illegal move is refused with the server's reason, and the board stays.
    browser.script("document.getElementById('move-input').value = 'a1-a9';");
    browser.click("#move-form button");
    browser.wait_for(
        "the error",
        "!document.getElementById('error').hidden && document.body.dataset.busy === 'false'",
    );
    let error = browser.script("return document.getElementById('error').textContent;");
    assert!(error.as_str().is_some_and(|e| e.contains("illegal move a1-a9")), "{error}");
    assert_eq!(check_page(&browser, address, &id).ply, state.ply);

    if let Some(path) = std::env::var_os("EPAMINONDAS_SCREENSHOT") {
        // A piece picked, so the picture shows the destinations offered.
        browser.script("document.getElementById('error').hidden = true;");
        let tail = state
            .legal_moves
            .iter()
            .max_by_key(|(_, moves)| moves.len())
            .map(|(tail, _)| tail.clone())
            .expect("moves");
        browser.click(&format!("rect.square[data-square='{tail}']"));
        std::fs::write(&path, browser.screenshot()).expect("the screenshot is written");
        say(&format!("browser test: screenshot saved to {}", PathBuf::from(path).display()));
    }

    // A new game as Black: the agent opens, and the board is turned round (a1 at the top right).
    browser.script("document.getElementById('colour').value = 'black';");
    browser.click("#new-game");
    browser.wait_for("the agent's opening", &format!("document.body.dataset.game !== '{id}' && document.body.dataset.busy === 'false' && document.body.dataset.ply === '1'"));
    let black_id = browser
        .script("return document.body.dataset.game;")
        .as_str()
        .expect("a game id")
        .to_string();
    let black = check_page(&browser, address, &black_id);
    assert_eq!((black.human.as_str(), black.moves.len()), ("black", 1));
    let corner = |square: &str| {
        browser.script(&format!("const r = document.querySelector(\"rect.square[data-square='{square}']\").getBoundingClientRect(); return [r.x, r.y];"))
    };
    let (a1, n12) = (corner("a1"), corner("n12"));
    assert!(
        a1[0].as_f64() > n12[0].as_f64() && a1[1].as_f64() < n12[1].as_f64(),
        "as Black, a1 {a1} should be at the top right, n12 {n12} at the bottom left"
    );
    assert_eq!(server_state(address, &id).moves, state.moves, "the first game is kept");

    drop(browser);
    server.stop();
}
