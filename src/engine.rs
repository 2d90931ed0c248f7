//! A UCI-style line protocol, so GUIs, scripts and referees can play any of our players.
//! The session is pure (lines in, lines out) and the command-line front end only feeds it
//! stdin; tests drive it directly.
//!
//! ```text
//! uci                          -> id name ..., id author ..., option ..., uciok
//! isready                      -> readyok
//! ucinewgame                   (forgets trees and tables; the position returns to the start)
//! setoption name N value V     Player (a player spec), Nodes, MoveTime (ms), Depth, PlyCap, Symmetry,
//!                               Board (standard, crossings-board or WxH; starts a new game),
//!                               Stones (on or off: the stones variant; starts a new game)
//! position startpos [moves m1 m2 ...]
//! position fen <position text> [moves m1 m2 ...]
//! go [nodes N] [movetime MS] [depth D] [wtime MS btime MS winc MS binc MS movestogo N] [infinite]
//!                              -> info ... , bestmove <move>   (bestmove none when the game is over)
//! stop                         (searches are synchronous and bounded, so there is never one to stop)
//! quit
//! ```
//! Moves are in Abbott's notation (`a1-a3`, `h12xh9`, or `f1,g2-h3`; stone placements `@f6`).
//! Anything malformed or illegal is answered with `info string error: ...`. A refused `position`
//! leaves no position behind: until the next valid `position` (or `ucinewgame`, or a `Board` or
//! `Stones` option, which start a new game), `go` answers
//! an error and no move, since a move for the previous position would be a move for a game the
//! GUI is not playing. There is no ply cap unless `PlyCap` sets one (the game has no draw
//! rule), so `bestmove none` comes only where the game is over.

use crate::game::{Color, Position, Rules, Status, SymmetryRule};
use crate::nn::DeviceChoice;
use crate::players::{winning_chance, Limit, Player, PlayerSpec};
use std::time::Duration;

/// The largest limits the protocol accepts (advertised by `uci`); a larger one is refused rather
/// than cut, so a GUI learns that its number was not used.
const MAX_NODES: u64 = 100_000_000;
const MAX_MOVE_TIME_MS: u64 = 3_600_000;
const MAX_DEPTH: u32 = 64;

/// `value`, or an error naming `what` where it exceeds `most`.
fn at_most(value: u64, most: u64, what: &str) -> Result<u64, String> {
    if value > most {
        return Err(format!("{what} must be at most {most}, not {value}"));
    }
    Ok(value)
}

/// One protocol session: the player, the rules, the current position and default limits.
pub struct EngineSession {
    spec: PlayerSpec,
    player: Box<dyn Player>,
    device: DeviceChoice,
    rules: Rules,
    /// The position `go` searches; None after a refused `position` command.
    position: Option<Position>,
    /// Why there is no position: the refused command's error.
    refused: String,
    /// Limits set by `setoption`, used when `go` names none.
    limit: Limit,
    games: u64,
    pub finished: bool,
}

/// Splits off the first word.
fn first_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

impl EngineSession {
    pub fn new(
        spec: PlayerSpec,
        device: DeviceChoice,
        rules: Rules,
    ) -> Result<EngineSession, String> {
        crate::players::check_rules(&spec, &rules).map_err(|e| e.to_string())?;
        let player = spec.build(device, 1).map_err(|e| e.to_string())?;
        let position = Position::start(rules).map_err(|e| e.to_string())?;
        Ok(EngineSession {
            spec,
            player,
            device,
            rules,
            position: Some(position),
            refused: String::new(),
            limit: Limit::default(),
            games: 0,
            finished: false,
        })
    }

    /// The position `go` would search; None after a refused `position` command.
    pub fn position(&self) -> Option<&Position> {
        self.position.as_ref()
    }

    /// Handles one input line and returns the lines to print.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let (command, rest) = first_word(line);
        let result = match command {
            "" => Ok(Vec::new()),
            "uci" => Ok(self.identify()),
            "isready" => Ok(vec!["readyok".into()]),
            "ucinewgame" => {
                self.games += 1;
                self.player.new_game(self.games);
                self.position = Some(Position::start(self.rules).expect("rules were validated"));
                Ok(Vec::new())
            }
            "setoption" => self.set_option(rest).map(|_| Vec::new()),
            "position" => self.set_position(rest).map(|_| Vec::new()).inspect_err(|error| {
                self.position = None;
                self.refused = error.clone();
            }),
            "go" => self.go(rest),
            "stop" => Ok(Vec::new()),
            "quit" => {
                self.finished = true;
                Ok(Vec::new())
            }
            other => Err(format!("unknown command {other:?} (uci, isready, ucinewgame, setoption, position, go, stop, quit)")),
        };
        result.unwrap_or_else(|error| vec![format!("info string error: {error}")])
    }

    fn identify(&self) -> Vec<String> {
        vec![
            format!("id name epaminondas {} ({})", env!("CARGO_PKG_VERSION"), self.player.name()),
            "id author the epaminondas developers".into(),
            format!("option name Player type string default {}", self.spec),
            format!("option name Nodes type spin default 0 min 0 max {MAX_NODES}"),
            format!("option name MoveTime type spin default 0 min 0 max {MAX_MOVE_TIME_MS}"),
            format!("option name Depth type spin default 0 min 0 max {MAX_DEPTH}"),
            format!("option name PlyCap type spin default {} min 0 max 65535", self.rules.ply_cap.unwrap_or(0)),
            format!("option name Symmetry type combo default {} var mirror var rotation var both var off", self.rules.symmetry),
            format!("option name Board type string default {}x{}", self.rules.width, self.rules.height),
            format!("option name Stones type check default {}", self.rules.stones),
            format!("info string board {}x{}", self.rules.width, self.rules.height),
            "uciok".into(),
        ]
    }

    fn set_option(&mut self, text: &str) -> Result<(), String> {
        let text = text
            .strip_prefix("name")
            .ok_or("setoption needs `name <option> value <value>`")?
            .trim();
        let (name, value) = match text.split_once(" value ") {
            Some((name, value)) => (name.trim(), value.trim()),
            None => (text, ""),
        };
        let number = |v: &str| {
            v.parse::<u64>().map_err(|_| format!("option {name} needs a whole number, not {v:?}"))
        };
        match name.to_ascii_lowercase().as_str() {
            "player" => {
                let spec: PlayerSpec = value.parse().map_err(|e: crate::players::SpecError| e.to_string())?;
                crate::players::check_rules(&spec, &self.rules).map_err(|e| e.to_string())?;
                self.player = spec.build(self.device, self.games).map_err(|e| e.to_string())?;
                self.spec = spec;
            }
            "nodes" => self.limit.nodes = Some(at_most(number(value)?, MAX_NODES, "Nodes")?).filter(|&n| n > 0),
            "movetime" => self.limit.time = Some(at_most(number(value)?, MAX_MOVE_TIME_MS, "MoveTime")?).filter(|&t| t > 0).map(Duration::from_millis),
            "depth" => self.limit.depth = Some(at_most(number(value)?, MAX_DEPTH.into(), "Depth")? as u32).filter(|&d| d > 0),
            "plycap" => {
                let cap = number(value)?;
                let cap = u16::try_from(cap).map_err(|_| format!("PlyCap must be at most 65535, not {cap}"))?;
                self.set_rules(Rules { ply_cap: (cap > 0).then_some(cap), ..self.rules })?;
            }
            "symmetry" => {
                let symmetry = SymmetryRule::from_name(value).ok_or_else(|| format!("Symmetry must be mirror, rotation, both or off, not {value:?}"))?;
                self.set_rules(Rules { symmetry, ..self.rules })?;
            }
            "board" => {
                // A new board means a new game: the position starts over on it.
                let (width, height) = crate::game::parse_board(value).map_err(|e| e.to_string())?;
                let rules = Rules { width, height, ..self.rules };
                self.position = Some(Position::start(rules).map_err(|e| e.to_string())?);
                self.rules = rules;
            }
            "stones" => {
                // Stones change the whole game (placements first): a new game, as for Board.
                let stones = match value.to_ascii_lowercase().as_str() {
                    "on" | "true" => true,
                    "off" | "false" => false,
                    _ => return Err(format!("Stones must be on or off, not {value:?}")),
                };
                let rules = Rules { stones, ..self.rules };
                crate::players::check_rules(&self.spec, &rules).map_err(|e| e.to_string())?;
                self.position = Some(Position::start(rules).map_err(|e| e.to_string())?);
                self.rules = rules;
            }
            _ => return Err(format!("unknown option {name:?} (Player, Nodes, MoveTime, Depth, PlyCap, Symmetry, Board, Stones)")),
        }
        Ok(())
    }

    /// New rule options for the session and the position on its own board (which a `position
    /// fen` may have made another than the Board option's).
    fn set_rules(&mut self, rules: Rules) -> Result<(), String> {
        let on_its_board = |p: Position| {
            p.with_rules(Rules { width: p.rules().width, height: p.rules().height, ..rules })
        };
        let position = self.position.map(on_its_board).transpose().map_err(|e| e.to_string())?;
        self.rules = rules;
        self.position = position;
        Ok(())
    }

    /// `startpos [moves ...]` or `fen <text> [moves ...]`. Only a fully valid command sets a
    /// position (the caller drops it on an error).
    fn set_position(&mut self, text: &str) -> Result<(), String> {
        let (setup, moves) = match text.split_once(" moves") {
            Some((setup, moves)) => (setup.trim(), Some(moves)),
            None if text.trim_end().ends_with("moves") => {
                (text.trim_end().trim_end_matches("moves").trim(), Some(""))
            }
            None => (text.trim(), None),
        };
        let (kind, rest) = first_word(setup);
        let mut position = match kind {
            "startpos" if rest.is_empty() => {
                Position::start(self.rules).map_err(|e| e.to_string())?
            }
            // The text sets the position's board; the session's Board option stays.
            "fen" => Position::parse(rest, self.rules).map_err(|e| format!("position fen: {e}"))?,
            _ => return Err(
                "position needs `startpos` or `fen <position text>`, then optionally `moves ...`"
                    .into(),
            ),
        };
        for (i, text) in moves.unwrap_or("").split_whitespace().enumerate() {
            if position.status() != Status::Ongoing {
                return Err(format!("move {} ({text}): the game is already over", i + 1));
            }
            let mv =
                position.parse_move(text).map_err(|e| format!("move {} ({text}): {e}", i + 1))?;
            position = position.play_unchecked(mv);
        }
        self.position = Some(position);
        Ok(())
    }

    /// The limit for a `go` command: what it names, else the session's options, else the
    /// player's own. A clock (`wtime`/`btime`) gives a share of the remaining time.
    fn go_limit(&self, position: &Position, text: &str) -> Result<Limit, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut limit = Limit::default();
        let mut clock = [None::<u64>; 2];
        let mut increment = [0u64; 2];
        let mut moves_to_go = None;
        let mut i = 0;
        while i < words.len() {
            let key = words[i];
            if key == "infinite" || key == "ponder" {
                i += 1;
                continue;
            }
            let value = words.get(i + 1).ok_or_else(|| format!("go: {key} needs a value"))?;
            let number = value
                .parse::<u64>()
                .map_err(|_| format!("go: {key} needs a whole number, not {value:?}"))?;
            match key {
                "nodes" => limit.nodes = Some(at_most(number, MAX_NODES, "go: nodes")?.max(1)),
                // A time past any clock is no deadline, as `wtime` is: nothing is allocated for it.
                "movetime" => limit.time = Some(Duration::from_millis(number.max(1))),
                "depth" => {
                    limit.depth =
                        Some(at_most(number, MAX_DEPTH.into(), "go: depth")?.max(1) as u32)
                }
                "wtime" => clock[0] = Some(number),
                "btime" => clock[1] = Some(number),
                "winc" => increment[0] = number,
                "binc" => increment[1] = number,
                "movestogo" => moves_to_go = Some(number.max(1)),
                _ => return Err(format!("go: unknown parameter {key:?}")),
            }
            i += 2;
        }
        let side = if position.side_to_move() == Color::White { 0 } else { 1 };
        if let (Some(remaining), None) = (clock[side], limit.time) {
            // A fixed share of what is left (a game runs about 60 of our moves), never more than
            // half of it, plus most of the increment.
            let share = (remaining / moves_to_go.unwrap_or(30))
                .saturating_add(increment[side].saturating_mul(3) / 4);
            limit.time = Some(Duration::from_millis(share.min(remaining / 2).max(1)));
        }
        Ok(limit.or(self.limit))
    }

    fn go(&mut self, text: &str) -> Result<Vec<String>, String> {
        let Some(position) = self.position else {
            return Err(format!(
                "no position to search: the last position command was refused ({})",
                self.refused
            ));
        };
        let limit = self.go_limit(&position, text)?;
        if position.status() != Status::Ongoing {
            return Ok(vec!["info string the game is over".into(), "bestmove none".into()]);
        }
        let decision = self.player.choose(&position, limit);
        let mut info = vec!["info".to_string()];
        if let Some(depth) = decision.depth {
            info.push(format!("depth {depth}"));
        }
        info.push(format!("nodes {}", decision.nodes));
        if let Some(value) = decision.value {
            // Centi-units of the [-1, 1] value, so GUIs that only read `score cp` show something.
            info.push(format!(
                "score cp {} winprob {:.3}",
                (value * 100.0).round() as i32,
                winning_chance(value)
            ));
        }
        let mut line = position;
        let mut pv = Vec::new();
        for mv in &decision.principal_variation {
            if line.status() != Status::Ongoing || line.check(*mv).is_err() {
                break;
            }
            pv.push(line.notation(*mv));
            line = line.play_unchecked(*mv);
        }
        if !pv.is_empty() {
            info.push(format!("pv {}", pv.join(" ")));
        }
        Ok(vec![info.join(" "), format!("bestmove {}", position.notation(decision.mv))])
    }
}
