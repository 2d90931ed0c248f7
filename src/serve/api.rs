//! The JSON API behind the browser page: the games the server holds and the agent that plays
//! them. Requests come in as (method, path, body) and leave as (status, JSON text), so the
//! whole API is tested without a socket; [`super::http`] only moves bytes.
//!
//! ```text
//! POST /api/games                  {"colour": "white"|"black"|"random", "sims": N | "time": S}
//! GET  /api/games/{id}
//! POST /api/games/{id}/move        {"move": "f1-e2"}  (either notation)
//! POST /api/games/{id}/agent-move  the agent plays; the reply adds its move, win probability, nodes
//! POST /api/games/{id}/undo        takes back your last move and the agent's reply
//! POST /api/games/{id}/resign
//! ```
//! Every success answers the game's state ([`GameState`]). Every failure answers
//! `{"error": "...", "code": "..."}` with a 4xx status and changes nothing.

use crate::game::{Bitboard, Color, Move, MoveError, Position, Rules, Square, Status, WinReason};
use crate::players::{winning_chance, Limit, Player};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Games kept at once; past this the one left alone longest is dropped, so abandoned tabs
/// cannot grow the server without bound.
pub const MAX_GAMES: usize = 256;
/// The largest strength a request may ask for: an agent move holds the agent for that long, and
/// every other tab waits behind it.
pub const MAX_SIMS: u64 = 100_000;
pub const MAX_SECONDS: f64 = 60.0;

/// Why a request was refused. Each names the problem in words a person can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    #[error(
        "there is no game {0} (the server may have restarted): start one with POST /api/games"
    )]
    UnknownGame(String),
    #[error("nothing is at {method} {path}; the API is POST /api/games, GET /api/games/ID, POST /api/games/ID/move, /agent-move, /undo, /resign")]
    NoRoute { method: String, path: String },
    #[error("{path} does not take {method}; use {allowed}")]
    MethodNotAllowed { method: String, path: String, allowed: &'static str },
    #[error("the request body is not what {endpoint} expects: {problem}")]
    BadBody { endpoint: &'static str, problem: String },
    #[error("{0}")]
    BadStrength(String),
    #[error(transparent)]
    BadMove(#[from] MoveError),
    #[error("it is the agent's turn: ask for its move with POST /api/games/{0}/agent-move")]
    AgentsTurn(String),
    #[error("it is your turn, not the agent's: send your move with POST /api/games/{0}/move")]
    HumansTurn(String),
    #[error("the game is over ({0}): undo, or start a new game")]
    GameOver(String),
    #[error("there is nothing to undo: you have not moved yet")]
    NothingToUndo,
    #[error("the game changed while the agent was thinking (an undo or another tab); its move was dropped")]
    Changed,
    #[error("the agent chose {mv}, which is illegal here ({reason}); this is a bug in the agent")]
    AgentFailed { mv: String, reason: String },
}

impl ApiError {
    /// The HTTP status: 404 for what does not exist, 405 for a wrong method, 409 for a race
    /// the client lost, 500 for our own fault, 400 for everything the request got wrong.
    pub fn status(&self) -> u16 {
        match self {
            ApiError::UnknownGame(_) | ApiError::NoRoute { .. } => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::Changed => 409,
            ApiError::AgentFailed { .. } => 500,
            _ => 400,
        }
    }

    /// A stable name for the problem, for programs (the message is for people).
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::UnknownGame(_) => "unknown-game",
            ApiError::NoRoute { .. } => "no-route",
            ApiError::MethodNotAllowed { .. } => "method-not-allowed",
            ApiError::BadBody { .. } => "bad-body",
            ApiError::BadStrength(_) => "bad-strength",
            ApiError::BadMove(MoveError::Syntax { .. }) => "malformed-move",
            ApiError::BadMove(_) => "illegal-move",
            ApiError::AgentsTurn(_) => "agents-turn",
            ApiError::HumansTurn(_) => "your-turn",
            ApiError::GameOver(_) => "game-over",
            ApiError::NothingToUndo => "nothing-to-undo",
            ApiError::Changed => "changed",
            ApiError::AgentFailed { .. } => "agent-failed",
        }
    }
}

/// A response ready to send: the status and the JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiResponse {
    pub status: u16,
    pub body: String,
}

impl ApiResponse {
    fn ok(value: &impl Serialize) -> ApiResponse {
        let body =
            serde_json::to_string(value).expect("API values are plain data that always serialise");
        ApiResponse { status: 200, body }
    }

    pub fn error(error: &ApiError) -> ApiResponse {
        let body =
            serde_json::json!({ "error": error.to_string(), "code": error.code() }).to_string();
        ApiResponse { status: error.status(), body }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NewGameRequest {
    #[serde(alias = "color")]
    colour: Option<ColourChoice>,
    sims: Option<u64>,
    time: Option<f64>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum ColourChoice {
    White,
    Black,
    Random,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(rename = "move")]
    text: String,
}

/// A move of the game, kept with what the page shows about it.
struct PlayedMove {
    mv: Move,
    text: String,
    by: Color,
    /// The agent's own winning chance when it played this move (none for the person's moves).
    win_probability: Option<f32>,
}

/// One game: its positions (for undo and for drawing), moves, who plays what, and how hard
/// the agent thinks.
struct Game {
    /// `positions[0]` is the start, `positions[i + 1]` the position after `moves[i]`.
    positions: Vec<Position>,
    moves: Vec<PlayedMove>,
    human: Color,
    limit: Limit,
    resigned: Option<Color>,
    /// Bumped by every change, so an agent move computed for an older game is not applied.
    version: u64,
    touched: Instant,
}

impl Game {
    fn position(&self) -> &Position {
        self.positions.last().expect("a game always holds its start position")
    }

    fn is_over(&self) -> bool {
        self.resigned.is_some() || self.position().status() != Status::Ongoing
    }

    fn push(&mut self, mv: Move, win_probability: Option<f32>) {
        let before = *self.position();
        self.moves.push(PlayedMove {
            mv,
            text: before.notation(mv),
            by: before.side_to_move(),
            win_probability,
        });
        self.positions.push(before.play_unchecked(mv));
        self.version += 1;
    }

    fn pop(&mut self) -> Option<PlayedMove> {
        let played = self.moves.pop()?;
        self.positions.pop();
        self.version += 1;
        Some(played)
    }
}

/// The page's view of a game. Squares are named in notation (`f1`), colours `white`/`black`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct GameState {
    pub id: String,
    /// The agent's name (its player spec).
    pub agent: String,
    pub rules: String,
    pub width: u8,
    pub height: u8,
    /// One text per row from the top (row `height`) down: `w`, `b`, `s` (a stone) or `.` per
    /// column from `a`.
    pub board: Vec<String>,
    /// The position in the text format of `epaminondas show --position`.
    pub position: String,
    pub human: String,
    pub side_to_move: String,
    pub ply: u16,
    /// `human` or `agent` while the game goes on, else none.
    pub turn: Option<String>,
    /// `*` while the game goes on, else `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    pub winner: Option<String>,
    /// `back-row`, `no-moves`, `ply-cap` or `resigned` once the game is over.
    pub reason: Option<String>,
    /// What a person reads: whose move it is, or how the game ended.
    pub message: String,
    /// The person's legal moves, by tail square (empty unless it is their turn).
    pub legal_moves: BTreeMap<String, Vec<LegalMove>>,
    pub last_move: Option<MoveView>,
    /// The moves so far in Abbott's notation.
    pub moves: Vec<String>,
    /// The agent's latest estimate of its own winning chance, 0..1.
    pub win_probability: Option<f32>,
    pub strength: Strength,
    pub pieces: Counts,
    pub far_row: Counts,
    pub can_undo: bool,
    pub version: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct LegalMove {
    pub to: String,
    /// The move in notation, ready to send back.
    #[serde(rename = "move")]
    pub text: String,
    /// The phalanx that would move (tail first).
    pub moving: Vec<String>,
    /// The enemy pieces it would capture.
    pub captures: Vec<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct MoveView {
    #[serde(rename = "move")]
    pub text: String,
    pub by: String,
    pub from: String,
    pub to: String,
    /// Each moving piece as [from, to], tail first, for the page to animate.
    pub path: Vec<[String; 2]>,
    pub captured: Vec<String>,
}

/// The agent's thinking limit for a game; neither set means the agent's own default.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Default)]
pub struct Strength {
    pub sims: Option<u64>,
    pub time: Option<f64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Counts {
    pub white: u32,
    pub black: u32,
}

/// The answer to an agent move: what it played and thought, and the state after it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct AgentReply {
    #[serde(rename = "move")]
    pub text: String,
    pub captured: Vec<String>,
    pub win_probability: Option<f32>,
    /// Positions or simulations it searched.
    pub nodes: u64,
    pub seconds: f64,
    pub state: GameState,
}

fn names(bits: Bitboard) -> Vec<String> {
    bits.squares().map(|sq| sq.to_string()).collect()
}

/// The squares of the phalanx `mv` moves, tail first, each with where it lands.
fn phalanx_path(position: &Position, mv: Move) -> Vec<(Square, Square)> {
    let rules = position.rules();
    let pieces = position.line_length(mv.from, mv.dir, position.side_to_move());
    (0..pieces as i32)
        .filter_map(|i| {
            let from = mv.from.offset(mv.dir, i, rules.width, rules.height)?;
            let to = from.offset(mv.dir, mv.distance as i32, rules.width, rules.height)?;
            Some((from, to))
        })
        .collect()
}

fn captured_by(position: &Position, mv: Move) -> Bitboard {
    let victim = position.side_to_move().opponent();
    position.pieces(victim) & !position.play_unchecked(mv).pieces(victim)
}

/// The games and the one agent that plays them all. Shared between the server's threads: the
/// games map and the agent have separate locks, so while the agent thinks for one tab the
/// others can still load, move and undo.
pub struct Api {
    games: Mutex<HashMap<String, Game>>,
    agent: Mutex<Box<dyn Player>>,
    agent_name: String,
    rules: Rules,
    /// The strength of a game that asks for none (from `serve --sims/--time`).
    default_limit: Limit,
}

/// A lock whose holder panicked still guards consistent data here (every change is a push or
/// a pop done after all checks), so serving goes on.
fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Api {
    pub fn new(
        agent: Box<dyn Player>,
        agent_name: String,
        rules: Rules,
        default_limit: Limit,
    ) -> Api {
        Api {
            games: Mutex::new(HashMap::new()),
            agent: Mutex::new(agent),
            agent_name,
            rules,
            default_limit,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Answers one request. The path may carry a query string, which is ignored.
    pub fn handle(&self, method: &str, path: &str, body: &[u8]) -> ApiResponse {
        match self.route(method, path, body) {
            Ok(response) => response,
            Err(error) => ApiResponse::error(&error),
        }
    }

    fn route(&self, method: &str, path: &str, body: &[u8]) -> Result<ApiResponse, ApiError> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let wrong_method = |allowed| ApiError::MethodNotAllowed {
            method: method.into(),
            path: path.into(),
            allowed,
        };
        match (method, segments.as_slice()) {
            ("POST", ["api", "games"]) => Ok(ApiResponse::ok(&self.new_game(body)?)),
            (_, ["api", "games"]) => Err(wrong_method("POST")),
            ("GET", ["api", "games", id]) => Ok(ApiResponse::ok(&self.state(id)?)),
            (_, ["api", "games", _]) => Err(wrong_method("GET")),
            ("POST", ["api", "games", id, "move"]) => {
                Ok(ApiResponse::ok(&self.human_move(id, body)?))
            }
            ("POST", ["api", "games", id, "agent-move"]) => {
                Ok(ApiResponse::ok(&self.agent_move(id)?))
            }
            ("POST", ["api", "games", id, "undo"]) => Ok(ApiResponse::ok(&self.undo(id)?)),
            ("POST", ["api", "games", id, "resign"]) => Ok(ApiResponse::ok(&self.resign(id)?)),
            (_, ["api", "games", _, "move" | "agent-move" | "undo" | "resign"]) => {
                Err(wrong_method("POST"))
            }
            _ => Err(ApiError::NoRoute { method: method.into(), path: path.into() }),
        }
    }

    /// Reads a JSON body; none when the body is empty.
    fn body<T: serde::de::DeserializeOwned>(
        endpoint: &'static str,
        body: &[u8],
    ) -> Result<Option<T>, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        serde_json::from_slice(body)
            .map(Some)
            .map_err(|e| ApiError::BadBody { endpoint, problem: e.to_string() })
    }

    fn limit_from(&self, sims: Option<u64>, time: Option<f64>) -> Result<Limit, ApiError> {
        match (sims, time) {
            (Some(_), Some(_)) => Err(ApiError::BadStrength(
                "give the agent's strength as sims or as time, not both".into(),
            )),
            (Some(n), None) if (1..=MAX_SIMS).contains(&n) => {
                Ok(Limit { nodes: Some(n), ..Limit::default() })
            }
            (Some(n), None) => {
                Err(ApiError::BadStrength(format!("sims must be 1..={MAX_SIMS}, not {n}")))
            }
            (None, Some(s)) if s > 0.0 && s <= MAX_SECONDS => {
                Ok(Limit { time: Some(Duration::from_secs_f64(s)), ..Limit::default() })
            }
            (None, Some(s)) => Err(ApiError::BadStrength(format!(
                "time must be more than 0 and at most {MAX_SECONDS} seconds, not {s}"
            ))),
            (None, None) => Ok(self.default_limit),
        }
    }

    pub fn new_game(&self, body: &[u8]) -> Result<GameState, ApiError> {
        let request: NewGameRequest = Self::body("POST /api/games", body)?.unwrap_or_default();
        let limit = self.limit_from(request.sims, request.time)?;
        let human = match request.colour.unwrap_or(ColourChoice::White) {
            ColourChoice::White => Color::White,
            ColourChoice::Black => Color::Black,
            ColourChoice::Random => {
                if rand::random::<bool>() {
                    Color::White
                } else {
                    Color::Black
                }
            }
        };
        let start =
            Position::start(self.rules).expect("the rules were validated when the server started");
        let game = Game {
            positions: vec![start],
            moves: Vec::new(),
            human,
            limit,
            resigned: None,
            version: 0,
            touched: Instant::now(),
        };
        let mut games = lock(&self.games);
        if games.len() >= MAX_GAMES {
            let stalest = games.iter().min_by_key(|(_, g)| g.touched).map(|(id, _)| id.clone());
            if let Some(id) = stalest {
                games.remove(&id);
            }
        }
        // Random ids, so one tab cannot stumble into another's game by counting.
        let id = loop {
            let id = format!("{:016x}", rand::random::<u64>());
            if !games.contains_key(&id) {
                break id;
            }
        };
        let state = self.view(&id, &game);
        games.insert(id, game);
        Ok(state)
    }

    pub fn state(&self, id: &str) -> Result<GameState, ApiError> {
        let mut games = lock(&self.games);
        let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
        game.touched = Instant::now();
        Ok(self.view(id, game))
    }

    pub fn human_move(&self, id: &str, body: &[u8]) -> Result<GameState, ApiError> {
        const ENDPOINT: &str = "POST /api/games/ID/move";
        let request: MoveRequest = Self::body(ENDPOINT, body)?.ok_or(ApiError::BadBody {
            endpoint: ENDPOINT,
            problem: "it is empty; send {\"move\": \"f1-f3\"}".into(),
        })?;
        let mut games = lock(&self.games);
        let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
        game.touched = Instant::now();
        if game.is_over() {
            return Err(ApiError::GameOver(self.outcome(game).1));
        }
        if game.position().side_to_move() != game.human {
            return Err(ApiError::AgentsTurn(id.into()));
        }
        let mv = game.position().parse_move(&request.text)?;
        game.push(mv, None);
        Ok(self.view(id, game))
    }

    /// The agent plays its move in game `id`. The games stay unlocked while it thinks; its move
    /// is applied only if the game is still as it was.
    pub fn agent_move(&self, id: &str) -> Result<AgentReply, ApiError> {
        let (position, limit, version) = {
            let mut games = lock(&self.games);
            let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
            game.touched = Instant::now();
            if game.is_over() {
                return Err(ApiError::GameOver(self.outcome(game).1));
            }
            if game.position().side_to_move() == game.human {
                return Err(ApiError::HumansTurn(id.into()));
            }
            (*game.position(), game.limit, game.version)
        };
        let started = Instant::now();
        let decision = lock(&self.agent).choose(&position, limit);
        let seconds = started.elapsed().as_secs_f64();
        if let Err(reason) = position.check(decision.mv) {
            return Err(ApiError::AgentFailed {
                mv: decision.mv.to_string(),
                reason: reason.to_string(),
            });
        }
        let win_probability = decision.value.map(winning_chance);
        let mut games = lock(&self.games);
        let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
        if game.version != version {
            return Err(ApiError::Changed);
        }
        let captured = names(captured_by(&position, decision.mv));
        game.push(decision.mv, win_probability);
        let state = self.view(id, game);
        Ok(AgentReply {
            text: position.notation(decision.mv),
            captured,
            win_probability,
            nodes: decision.nodes,
            seconds,
            state,
        })
    }

    /// Takes back the person's last move and the agent's reply to it (or only the person's move
    /// when the agent has not answered yet); after a resignation, takes back the resignation.
    pub fn undo(&self, id: &str) -> Result<GameState, ApiError> {
        let mut games = lock(&self.games);
        let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
        game.touched = Instant::now();
        if game.resigned.take().is_some() {
            game.version += 1;
            return Ok(self.view(id, game));
        }
        let human = game.human;
        if !game.moves.iter().any(|m| m.by == human) {
            return Err(ApiError::NothingToUndo);
        }
        while let Some(played) = game.pop() {
            if played.by == human {
                break;
            }
        }
        Ok(self.view(id, game))
    }

    pub fn resign(&self, id: &str) -> Result<GameState, ApiError> {
        let mut games = lock(&self.games);
        let game = games.get_mut(id).ok_or_else(|| ApiError::UnknownGame(id.into()))?;
        game.touched = Instant::now();
        if game.is_over() {
            return Err(ApiError::GameOver(self.outcome(game).1));
        }
        game.resigned = Some(game.human);
        game.version += 1;
        Ok(self.view(id, game))
    }

    /// The result token and a sentence: how the game ended, or whose turn it is.
    fn outcome(&self, game: &Game) -> (Option<(Option<Color>, &'static str)>, String) {
        let you_or = |color: Color| if color == game.human { "you" } else { "the agent" };
        if let Some(loser) = game.resigned {
            return (
                Some((Some(loser.opponent()), "resigned")),
                format!("{} resigned: {} wins", you_or(loser), loser.opponent()),
            );
        }
        match game.position().status() {
            Status::Ongoing => {
                let side = game.position().side_to_move();
                let whose = if side == game.human { "your move" } else { "the agent's move" };
                (None, format!("{side} to move: {whose}"))
            }
            Status::Draw => {
                (Some((None, "ply-cap")), "a draw: the game reached the ply cap".into())
            }
            Status::Won { winner, reason } => {
                let who = if winner == game.human { "you win" } else { "the agent wins" };
                let (token, why) = match reason {
                    WinReason::BackRow => (
                        "back-row",
                        format!("{winner} starts its turn with more pieces on its far row"),
                    ),
                    WinReason::NoMoves => {
                        ("no-moves", format!("{} has no legal move", winner.opponent()))
                    }
                };
                (Some((Some(winner), token)), format!("{who}: {why}"))
            }
        }
    }

    fn view(&self, id: &str, game: &Game) -> GameState {
        let position = game.position();
        let (width, height) = (self.rules.width, self.rules.height);
        let board = (0..height)
            .rev()
            .map(|row| {
                (0..width)
                    .map(|column| match position.piece_at(Square::new(column, row)) {
                        Some(Color::White) => 'w',
                        Some(Color::Black) => 'b',
                        None if position.stones().contains(Square::new(column, row)) => 's',
                        None => '.',
                    })
                    .collect()
            })
            .collect();
        let (ended, message) = self.outcome(game);
        let turn = match ended {
            Some(_) => None,
            None if position.side_to_move() == game.human => Some("human".to_string()),
            None => Some("agent".to_string()),
        };
        let mut legal_moves: BTreeMap<String, Vec<LegalMove>> = BTreeMap::new();
        if turn.as_deref() == Some("human") {
            for mv in position.legal_moves() {
                let moving = phalanx_path(position, mv)
                    .into_iter()
                    .map(|(from, _)| from.to_string())
                    .collect();
                let entry = LegalMove {
                    to: mv.to().to_string(),
                    text: position.notation(mv),
                    moving,
                    captures: names(captured_by(position, mv)),
                };
                legal_moves.entry(mv.from.to_string()).or_default().push(entry);
            }
        }
        let last_move = game.moves.last().map(|played| {
            let before = &game.positions[game.positions.len() - 2];
            MoveView {
                text: played.text.clone(),
                by: played.by.name().into(),
                from: played.mv.from.to_string(),
                to: played.mv.to().to_string(),
                path: phalanx_path(before, played.mv)
                    .into_iter()
                    .map(|(from, to)| [from.to_string(), to.to_string()])
                    .collect(),
                captured: names(captured_by(before, played.mv)),
            }
        });
        let result = match ended {
            None => "*",
            Some((Some(Color::White), _)) => "1-0",
            Some((Some(Color::Black), _)) => "0-1",
            Some((None, _)) => "1/2-1/2",
        };
        GameState {
            id: id.into(),
            agent: self.agent_name.clone(),
            rules: self.rules.to_string(),
            width,
            height,
            board,
            position: position.to_string(),
            human: game.human.name().into(),
            side_to_move: position.side_to_move().name().into(),
            ply: position.ply(),
            turn,
            result: result.into(),
            winner: ended.and_then(|(winner, _)| winner).map(|c| c.name().into()),
            reason: ended.map(|(_, reason)| reason.into()),
            message,
            legal_moves,
            last_move,
            moves: game.moves.iter().map(|m| m.text.clone()).collect(),
            win_probability: game.moves.iter().rev().find_map(|m| m.win_probability),
            strength: Strength {
                sims: game.limit.nodes,
                time: game.limit.time.map(|t| t.as_secs_f64()),
            },
            pieces: Counts {
                white: position.pieces(Color::White).count(),
                black: position.pieces(Color::Black).count(),
            },
            far_row: Counts {
                white: position.far_row_count(Color::White),
                black: position.far_row_count(Color::Black),
            },
            can_undo: game.resigned.is_some() || game.moves.iter().any(|m| m.by == game.human),
            version: game.version,
        }
    }
}
