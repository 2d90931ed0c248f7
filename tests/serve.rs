//! The browser API (`epaminondas serve`): new games, moves in either notation, agent moves,
//! undo, several games at once, and bad input that is refused with a JSON error and changes
//! nothing. Most tests call the API directly; the last ones go through a real socket and the
//! binary.

#[path = "support/http_client.rs"]
mod http_client;

use epaminondas::game::{Position, Rules};
use epaminondas::players::{greedy::GreedyPlayer, Decision, Limit, Player, PlayerSpec};
use epaminondas::serve::api::{AgentReply, GameState};
use epaminondas::serve::{Api, Server};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::sync::Arc;

fn greedy_api() -> Api {
    Api::new(Box::new(GreedyPlayer::new(1)), "greedy".into(), Rules::default(), Limit::default())
}

/// Sends a request and reads the JSON answer, checking its status.
fn call(api: &Api, method: &str, path: &str, body: &str, status: u16) -> Value {
    let response = api.handle(method, path, body.as_bytes());
    assert_eq!(response.status, status, "{method} {path} {body} answered {}", response.body);
    serde_json::from_str(&response.body)
        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {}", response.body))
}

fn state(value: Value) -> GameState {
    serde_json::from_value(value).expect("a game state")
}

fn new_game(api: &Api, body: &str) -> GameState {
    state(call(api, "POST", "/api/games", body, 200))
}

fn total_moves(state: &GameState) -> usize {
    state.legal_moves.values().map(Vec::len).sum()
}

#[test]
fn a_new_game_shows_the_start_position_and_every_legal_move() {
    let api = greedy_api();
    let game = new_game(&api, r#"{"colour": "white"}"#);
    assert_eq!((game.width, game.height, game.board.len()), (14, 12, 12));
    assert_eq!(game.board[0], "b".repeat(14), "the top row is row 12, Black's home");
    assert_eq!(game.board[11], "w".repeat(14));
    assert!(game.board[2..10].iter().all(|row| row == &".".repeat(14)));
    assert_eq!(game.position, Position::standard().to_string());
    assert_eq!(
        (game.human.as_str(), game.turn.as_deref(), game.result.as_str()),
        ("white", Some("human"), "*")
    );
    assert_eq!(total_moves(&game), Position::standard().legal_moves().len());
    assert!(game.moves.is_empty() && game.last_move.is_none() && !game.can_undo);
    // The legal moves are keyed by tail square and name their destinations.
    let from_f1 = &game.legal_moves["f1"];
    assert!(from_f1.iter().any(|m| m.to == "f3" && m.text == "f1-f3" && m.moving == ["f1", "f2"]));
    // GET gives the same state back.
    let again = state(call(&api, "GET", &format!("/api/games/{}", game.id), "", 200));
    assert_eq!(again, game);
}

#[test]
fn moves_in_either_notation_are_played_and_shown() {
    let api = greedy_api();
    for text in ["f1-f3", "f1,f2-f4"] {
        let game = new_game(&api, "");
        let after = state(call(
            &api,
            "POST",
            &format!("/api/games/{}/move", game.id),
            &format!(r#"{{"move": "{text}"}}"#),
            200,
        ));
        assert_eq!(after.moves, ["f1-f3"]);
        assert_eq!(after.turn.as_deref(), Some("agent"));
        assert!(after.legal_moves.is_empty(), "no moves are offered while the agent is to move");
        let last = after.last_move.expect("a last move");
        assert_eq!((last.from.as_str(), last.to.as_str(), last.by.as_str()), ("f1", "f3", "white"));
        assert_eq!(
            last.path,
            [["f1".to_string(), "f3".to_string()], ["f2".to_string(), "f4".to_string()]]
        );
        assert!(last.captured.is_empty());
        assert_eq!(&after.board[8][5..6], "w", "f4 is taken");
        assert_eq!(&after.board[11][5..6], ".", "f1 is empty");
        assert!(after.can_undo);
    }
}

#[test]
fn bad_requests_are_refused_with_a_reason_and_change_nothing() {
    let api = greedy_api();
    let game = new_game(&api, "");
    let path = format!("/api/games/{}/move", game.id);
    let cases: &[(&str, &str, &str)] = &[
        (r#"{"move": "f1-f9"}"#, "illegal-move", "at most 2 squares"),
        (r#"{"move": "f3-f4"}"#, "illegal-move", "no white piece on f3"),
        (r#"{"move": "a12-a11"}"#, "illegal-move", "no white piece on a12"),
        (r#"{"move": "f1-g3"}"#, "illegal-move", "not on one line"),
        (r#"{"move": "zz"}"#, "malformed-move", "is not a move"),
        (r#"{"move": "f1-q3"}"#, "malformed-move", "off the board"),
        (r#"{"move": ""}"#, "malformed-move", "empty"),
        ("this is not json", "bad-body", "expected"),
        ("{}", "bad-body", "missing field `move`"),
        (r#"{"move": "f1-f3", "promote": true}"#, "bad-body", "unknown field `promote`"),
        (r#"{"move": 7}"#, "bad-body", "invalid type"),
        ("", "bad-body", "it is empty"),
    ];
    for (body, code, words) in cases {
        let error = call(&api, "POST", &path, body, 400);
        assert_eq!(error["code"], *code, "{body}: {error}");
        let message = error["error"].as_str().expect("an error message");
        assert!(message.contains(words), "{body}: {message:?} should say {words:?}");
    }
    let unchanged = state(call(&api, "GET", &format!("/api/games/{}", game.id), "", 200));
    assert_eq!(unchanged, game, "refused requests changed the game");

    // Strength and colour are checked too.
    for body in
        [r#"{"sims": 0}"#, r#"{"time": -1}"#, r#"{"time": 1000}"#, r#"{"sims": 10, "time": 1}"#]
    {
        assert_eq!(call(&api, "POST", "/api/games", body, 400)["code"], "bad-strength", "{body}");
    }
    assert_eq!(call(&api, "POST", "/api/games", r#"{"colour": "green"}"#, 400)["code"], "bad-body");
    // Unknown games, routes and methods.
    assert_eq!(call(&api, "GET", "/api/games/123", "", 404)["code"], "unknown-game");
    assert_eq!(
        call(&api, "POST", "/api/games/123/move", r#"{"move": "f1-f3"}"#, 404)["code"],
        "unknown-game"
    );
    assert_eq!(call(&api, "GET", "/api/nothing", "", 404)["code"], "no-route");
    assert_eq!(call(&api, "GET", &path, "", 405)["code"], "method-not-allowed");
    assert_eq!(call(&api, "DELETE", "/api/games", "", 405)["code"], "method-not-allowed");
}

#[test]
fn the_agent_answers_on_its_turn_only() {
    let api = greedy_api();
    let game = new_game(&api, r#"{"colour": "black"}"#);
    assert_eq!((game.human.as_str(), game.turn.as_deref()), ("black", Some("agent")));
    let error =
        call(&api, "POST", &format!("/api/games/{}/move", game.id), r#"{"move": "f12-f10"}"#, 400);
    assert_eq!(error["code"], "agents-turn");
    let reply: AgentReply = serde_json::from_value(call(
        &api,
        "POST",
        &format!("/api/games/{}/agent-move", game.id),
        "",
        200,
    ))
    .expect("an agent reply");
    // The agent's move is legal in the start position and is what the state shows.
    let start = Position::standard();
    let mv = start.parse_move(&reply.text).expect("the agent's move is legal");
    assert_eq!(reply.state.moves, [start.notation(mv)]);
    assert_eq!(reply.state.position, start.play(mv).expect("legal").to_string());
    assert_eq!(reply.state.turn.as_deref(), Some("human"));
    assert_eq!(reply.state.last_move.as_ref().map(|m| m.by.as_str()), Some("white"));
    assert!(total_moves(&reply.state) > 0);
    let again = call(&api, "POST", &format!("/api/games/{}/agent-move", game.id), "", 400);
    assert_eq!(again["code"], "your-turn");
}

#[test]
fn undo_takes_back_your_move_and_the_reply() {
    let api = greedy_api();
    let game = new_game(&api, "");
    let id = game.id.clone();
    assert_eq!(
        call(&api, "POST", &format!("/api/games/{id}/undo"), "", 400)["code"],
        "nothing-to-undo"
    );
    call(&api, "POST", &format!("/api/games/{id}/move"), r#"{"move": "a1-a3"}"#, 200);
    call(&api, "POST", &format!("/api/games/{id}/agent-move"), "", 200);
    let second =
        state(call(&api, "POST", &format!("/api/games/{id}/move"), r#"{"move": "n1-n3"}"#, 200));
    assert_eq!(second.moves.len(), 3);
    // Before the agent answers, undo takes back only the person's move...
    let undone = state(call(&api, "POST", &format!("/api/games/{id}/undo"), "", 200));
    assert_eq!(undone.moves.len(), 2);
    assert_eq!(undone.turn.as_deref(), Some("human"));
    // ...after it, both.
    let undone = state(call(&api, "POST", &format!("/api/games/{id}/undo"), "", 200));
    assert!(undone.moves.is_empty());
    assert_eq!(undone.position, Position::standard().to_string());
    assert!(!undone.can_undo);
}

#[test]
fn games_are_separate() {
    let api = greedy_api();
    let first = new_game(&api, "");
    let second = new_game(&api, "");
    assert_ne!(first.id, second.id);
    call(&api, "POST", &format!("/api/games/{}/move", first.id), r#"{"move": "f1-f3"}"#, 200);
    let untouched = state(call(&api, "GET", &format!("/api/games/{}", second.id), "", 200));
    assert_eq!(untouched, second);
}

#[test]
fn a_finished_game_announces_its_result_and_takes_no_more_moves() {
    let api = greedy_api();
    let game = new_game(&api, "");
    let id = game.id.clone();
    let mut current = game;
    // The person plays the last legal move listed; greedy soon wins against that.
    for _ in 0..200 {
        if current.result != "*" {
            break;
        }
        current = match current.turn.as_deref() {
            Some("human") => {
                let last = current
                    .legal_moves
                    .values()
                    .last()
                    .and_then(|moves| moves.last())
                    .expect("a legal move on our turn");
                state(call(
                    &api,
                    "POST",
                    &format!("/api/games/{id}/move"),
                    &format!(r#"{{"move": "{}"}}"#, last.text),
                    200,
                ))
            }
            _ => {
                serde_json::from_value::<AgentReply>(call(
                    &api,
                    "POST",
                    &format!("/api/games/{id}/agent-move"),
                    "",
                    200,
                ))
                .expect("a reply")
                .state
            }
        };
    }
    assert_ne!(current.result, "*", "the game should have ended");
    assert!(current.turn.is_none() && current.legal_moves.is_empty());
    assert!(current.reason.is_some() && current.winner.is_some());
    assert!(current.message.contains("win"), "{}", current.message);
    let error = call(&api, "POST", &format!("/api/games/{id}/move"), r#"{"move": "a1-a2"}"#, 400);
    assert_eq!(error["code"], "game-over");
    assert_eq!(
        call(&api, "POST", &format!("/api/games/{id}/agent-move"), "", 400)["code"],
        "game-over"
    );
}

#[test]
fn the_game_left_alone_longest_makes_room_for_a_new_one() {
    let api = greedy_api();
    let first = new_game(&api, "");
    let second = new_game(&api, "");
    for _ in 2..epaminondas::serve::api::MAX_GAMES {
        new_game(&api, "");
    }
    // Touching the first game makes the second the stalest.
    call(&api, "GET", &format!("/api/games/{}", first.id), "", 200);
    new_game(&api, "");
    call(&api, "GET", &format!("/api/games/{}", first.id), "", 200);
    assert_eq!(
        call(&api, "GET", &format!("/api/games/{}", second.id), "", 404)["code"],
        "unknown-game"
    );
}

#[test]
fn resigning_ends_the_game_and_undo_takes_it_back() {
    let api = greedy_api();
    let game = new_game(&api, "");
    let resigned = state(call(&api, "POST", &format!("/api/games/{}/resign", game.id), "", 200));
    assert_eq!(
        (resigned.result.as_str(), resigned.reason.as_deref(), resigned.winner.as_deref()),
        ("0-1", Some("resigned"), Some("black"))
    );
    assert_eq!(
        call(&api, "POST", &format!("/api/games/{}/resign", game.id), "", 400)["code"],
        "game-over"
    );
    let back = state(call(&api, "POST", &format!("/api/games/{}/undo", game.id), "", 200));
    assert_eq!((back.result.as_str(), back.turn.as_deref()), ("*", Some("human")));
}

/// A player that waits for the test's signal before answering, to hold the agent mid-thought.
struct GatedPlayer {
    inner: GreedyPlayer,
    thinking: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
}

impl Player for GatedPlayer {
    fn name(&self) -> String {
        "gated".into()
    }
    fn new_game(&mut self, seed: u64) {
        self.inner.new_game(seed);
    }
    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        self.thinking.send(()).expect("the test listens");
        self.go.recv().expect("the test signals");
        self.inner.choose(position, limit)
    }
}

#[test]
fn an_agent_move_for_a_game_that_changed_meanwhile_is_dropped() {
    let (thinking_tx, thinking) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let player = GatedPlayer { inner: GreedyPlayer::new(1), thinking: thinking_tx, go: go_rx };
    let api =
        Arc::new(Api::new(Box::new(player), "gated".into(), Rules::default(), Limit::default()));
    let game = new_game(&api, "");
    let id = game.id.clone();
    call(&api, "POST", &format!("/api/games/{id}/move"), r#"{"move": "f1-f3"}"#, 200);
    let worker = {
        let (api, id) = (Arc::clone(&api), id.clone());
        std::thread::spawn(move || api.handle("POST", &format!("/api/games/{id}/agent-move"), b""))
    };
    thinking.recv().expect("the agent starts thinking");
    // While it thinks, the game is still served, and the person takes the move back.
    let undone = state(call(&api, "POST", &format!("/api/games/{id}/undo"), "", 200));
    assert!(undone.moves.is_empty());
    go.send(()).expect("the agent listens");
    let response = worker.join().expect("the request finishes");
    assert_eq!(response.status, 409, "{}", response.body);
    let after = state(call(&api, "GET", &format!("/api/games/{id}"), "", 200));
    assert!(after.moves.is_empty(), "the stale agent move was applied: {:?}", after.moves);
}

#[test]
fn a_network_agent_reports_its_winning_chance() {
    let spec: PlayerSpec =
        "net:models/anchored-values-6x64-step1600.safetensors".parse().expect("a spec");
    let agent = spec.build(epaminondas::nn::DeviceChoice::Cpu, 1).expect("the shipped agent loads");
    let limit = Limit { nodes: Some(16), ..Limit::default() };
    let api = Api::new(agent, spec.text.clone(), Rules::default(), limit);
    let game = new_game(&api, r#"{"colour": "black"}"#);
    assert_eq!(game.strength.sims, Some(16), "the server's default strength applies");
    assert!(game.win_probability.is_none());
    let reply: AgentReply = serde_json::from_value(call(
        &api,
        "POST",
        &format!("/api/games/{}/agent-move", game.id),
        "",
        200,
    ))
    .expect("a reply");
    let p = reply.win_probability.expect("a network has an opinion");
    assert_eq!(reply.state.win_probability, Some(p));
    assert_eq!(reply.nodes, 16);
    // The same agent searching the same position alone: its value, as a chance, is what the
    // server reports (a search at a node limit is deterministic).
    let start = Position::standard();
    let mut twin = spec.build(epaminondas::nn::DeviceChoice::Cpu, 1).unwrap();
    let alone = twin.choose(&start, limit);
    assert_eq!(reply.text, start.notation(alone.mv));
    let value = alone.value.expect("a network has an opinion");
    assert_eq!(p, epaminondas::players::winning_chance(value));
    assert!(p > 0.0 && p < 1.0, "a chance, not a certainty, at the first move: {p}");
}

#[test]
fn the_server_answers_over_http() {
    let server = Server::start(Arc::new(greedy_api()), "127.0.0.1:0", 2).expect("a free port");
    let address = server.address();
    let page = http_client::request(address, "GET", "/", None).expect("the page");
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"<svg id="board""#) && page.body.contains("/app.js"));
    for asset in ["/app.js", "/style.css", "/favicon.svg"] {
        let reply = http_client::request(address, "GET", asset, None).expect("an asset");
        assert!(reply.status == 200 && !reply.body.is_empty(), "{asset}: {}", reply.status);
    }
    assert_eq!(
        http_client::request(address, "GET", "/secret.txt", None).expect("an answer").status,
        404
    );
    let game = http_client::request(address, "POST", "/api/games", Some(r#"{"colour": "white"}"#))
        .expect("a new game");
    assert_eq!(game.status, 200, "{}", game.body);
    let id = game.json()["id"].as_str().expect("an id").to_string();
    let moved = http_client::request(
        address,
        "POST",
        &format!("/api/games/{id}/move"),
        Some(r#"{"move": "f1-f3"}"#),
    )
    .expect("a move");
    assert_eq!((moved.status, moved.json()["moves"][0].as_str()), (200, Some("f1-f3")));
    let illegal = http_client::request(
        address,
        "POST",
        &format!("/api/games/{id}/move"),
        Some(r#"{"move": "f1-f3"}"#),
    )
    .expect("an answer");
    assert_eq!((illegal.status, illegal.json()["code"].as_str()), (400, Some("agents-turn")));
    let huge = format!(r#"{{"move": "{}"}}"#, "a".repeat(20_000));
    let refused =
        http_client::request(address, "POST", &format!("/api/games/{id}/move"), Some(&huge))
            .expect("an answer");
    assert_eq!(refused.status, 400);
    assert!(
        refused.json()["error"].as_str().is_some_and(|e| e.contains("longer than")),
        "{}",
        refused.body
    );
    server.stop();
}

#[test]
fn the_serve_command_prints_its_address_and_serves() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args(["serve", "--player", "greedy", "--port", "0", "--sims", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("a first line");
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"));
    let address =
        url.trim_start_matches("http://").trim_end_matches('/').parse().expect("an address");
    let reply = http_client::request(address, "POST", "/api/games", Some("{}"));
    child.kill().expect("the server stops");
    let _ = child.wait();
    let reply = reply.expect("the server answers");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["strength"]["sims"], 5, "--sims is the default strength");
}

/// The stones variant in the browser API: Black (the human here) places first, placements are
/// legal moves keyed by their square, the board marks stones `s`, and the agent places too.
#[test]
fn stones_games_place_first_and_show_stones() {
    let rules = Rules { stones: true, ply_cap: Some(300), ..Rules::default() };
    let api = Api::new(Box::new(GreedyPlayer::new(1)), "greedy".into(), rules, Limit::default());
    let game = new_game(&api, r#"{"colour": "black"}"#);
    assert_eq!((game.side_to_move.as_str(), game.turn.as_deref()), ("black", Some("human")));
    assert_eq!(total_moves(&game), 84, "every square of rows 4..9");
    assert!(game.legal_moves["f6"]
        .iter()
        .any(|m| m.text == "@f6" && m.to == "f6" && m.moving.is_empty()));
    let placed = state(call(
        &api,
        "POST",
        &format!("/api/games/{}/move", game.id),
        r#"{"move": "@f6"}"#,
        200,
    ));
    assert_eq!(placed.board[12 - 6], ".....s........");
    let reply: AgentReply = serde_json::from_value(call(
        &api,
        "POST",
        &format!("/api/games/{}/agent-move", game.id),
        "",
        200,
    ))
    .unwrap();
    assert!(reply.text.starts_with('@'), "White places the second stone: {}", reply.text);
    assert_eq!(reply.state.board.iter().map(|row| row.matches('s').count()).sum::<usize>(), 2);
    // A piece move before the third stone is refused with the reason.
    let refused =
        call(&api, "POST", &format!("/api/games/{}/move", game.id), r#"{"move": "a11-a10"}"#, 400);
    assert_eq!(refused["code"], "illegal-move");
    assert!(refused["error"].as_str().unwrap().contains("place a stone"), "{refused}");
}
