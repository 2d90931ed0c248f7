//! Game records: a PGN-like text of tag pairs, then the moves in Abbott's notation and the
//! result. Reading a record replays every move, so a record that parses is a legal game.
//!
//! ```text
//! [White "net:runs/a/checkpoints/gen-0003.safetensors"]
//! [Black "alphabeta:depth=3"]
//! [Width "14"]
//! [Height "12"]
//! [Symmetry "mirror"]
//! [PlyCap "300"]
//! [Stones "on"]      (only in the stones variant; its moves begin with the placements, @f6)
//! [Result "1-0"]
//! [Termination "back-row"]
//!
//! 1. f1-g2 e12-f11 2. h1-h4 h12xh9 ... 1-0
//! ```
//! `Start` (a position text) appears when the game did not begin from the start position; other
//! tags (`Event`, `Seed`, ...) are kept as they are. Files may hold many records in a row.

use super::notation::{MoveError, ParsePositionError};
use super::position::{Color, Move, Position, SetupError, Status, WinReason};
use super::rules::{Rules, SymmetryRule};
use std::fmt;

/// The result field of a record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RecordResult {
    WhiteWins,
    BlackWins,
    Draw,
    Unfinished,
}

impl RecordResult {
    pub fn token(self) -> &'static str {
        match self {
            RecordResult::WhiteWins => "1-0",
            RecordResult::BlackWins => "0-1",
            RecordResult::Draw => "1/2-1/2",
            RecordResult::Unfinished => "*",
        }
    }

    fn from_token(token: &str) -> Option<RecordResult> {
        [
            RecordResult::WhiteWins,
            RecordResult::BlackWins,
            RecordResult::Draw,
            RecordResult::Unfinished,
        ]
        .into_iter()
        .find(|r| r.token() == token)
    }

    pub fn win_for(color: Color) -> RecordResult {
        match color {
            Color::White => RecordResult::WhiteWins,
            Color::Black => RecordResult::BlackWins,
        }
    }
}

/// How a recorded game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Termination {
    BackRow,
    NoMoves,
    PlyCap,
    Resignation,
    /// Stopped from outside (a time limit, an adjudication, an interrupted session).
    Unfinished,
}

impl Termination {
    pub fn name(self) -> &'static str {
        match self {
            Termination::BackRow => "back-row",
            Termination::NoMoves => "no-moves",
            Termination::PlyCap => "ply-cap",
            Termination::Resignation => "resignation",
            Termination::Unfinished => "unfinished",
        }
    }

    fn from_name(name: &str) -> Option<Termination> {
        [
            Termination::BackRow,
            Termination::NoMoves,
            Termination::PlyCap,
            Termination::Resignation,
            Termination::Unfinished,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

/// One game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    /// The position the game began from (its rules are the game's rules).
    pub start: Position,
    pub moves: Vec<Move>,
    pub result: RecordResult,
    pub termination: Termination,
    /// Other tags, in order.
    pub extra: Vec<(String, String)>,
}

/// Why a record could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("line {line}: {problem}")]
    Syntax { line: usize, problem: String },
    #[error("tag {tag}: {problem}")]
    Tag { tag: &'static str, problem: String },
    #[error("Start tag: {0}")]
    Start(ParsePositionError),
    #[error("move {number} ({text}): {error}")]
    Move { number: usize, text: String, error: MoveError },
    #[error("the record says {recorded} but the moves end in {actual}")]
    ResultMismatch { recorded: String, actual: String },
    #[error("the record has no result token (1-0, 0-1, 1/2-1/2 or *) after its moves")]
    NoResult,
    #[error(transparent)]
    Setup(#[from] SetupError),
}

impl GameRecord {
    /// A record of a game that ended in `status` (or not at all) after `moves` from `start`.
    pub fn new(white: &str, black: &str, start: Position, moves: Vec<Move>) -> GameRecord {
        let mut record = GameRecord {
            white: white.to_string(),
            black: black.to_string(),
            start,
            moves,
            result: RecordResult::Unfinished,
            termination: Termination::Unfinished,
            extra: Vec::new(),
        };
        let (result, termination) = outcome(&record.final_position());
        record.result = result;
        record.termination = termination;
        record
    }

    /// Marks the game as resigned by `loser`.
    pub fn resigned(mut self, loser: Color) -> GameRecord {
        self.result = RecordResult::win_for(loser.opponent());
        self.termination = Termination::Resignation;
        self
    }

    /// Sets the tag `name`, replacing any it had: a record passed on (a worker's game in the
    /// learner's journal) carries the tags of whoever set them last, never two of one name.
    pub fn with_tag(mut self, name: &str, value: impl fmt::Display) -> GameRecord {
        self.extra.retain(|(key, _)| key != name);
        self.extra.push((name.to_string(), value.to_string()));
        self
    }

    /// The value of the first tag called `name` among the other tags, if there is one.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.extra.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn rules(&self) -> &Rules {
        self.start.rules()
    }

    /// Every position of the game, the start first.
    pub fn positions(&self) -> Vec<Position> {
        let mut positions = vec![self.start];
        for mv in &self.moves {
            let next = positions.last().expect("non-empty").play_unchecked(*mv);
            positions.push(next);
        }
        positions
    }

    pub fn final_position(&self) -> Position {
        self.moves.iter().fold(self.start, |p, mv| p.play_unchecked(*mv))
    }

    /// Reads every record in `text`.
    pub fn parse_all(text: &str) -> Result<Vec<GameRecord>, RecordError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut records = Vec::new();
        let mut at = 0;
        while at < lines.len() {
            if lines[at].trim().is_empty() {
                at += 1;
                continue;
            }
            let (record, next) = parse_one(&lines, at)?;
            records.push(record);
            at = next;
        }
        Ok(records)
    }

    /// Reads exactly one record.
    pub fn parse(text: &str) -> Result<GameRecord, RecordError> {
        let mut all = GameRecord::parse_all(text)?;
        match all.len() {
            1 => Ok(all.remove(0)),
            n => Err(RecordError::Syntax {
                line: 1,
                problem: format!("expected one record, found {n}"),
            }),
        }
    }
}

/// The result and termination a finished position implies.
fn outcome(position: &Position) -> (RecordResult, Termination) {
    match position.status() {
        Status::Ongoing => (RecordResult::Unfinished, Termination::Unfinished),
        Status::Draw => (RecordResult::Draw, Termination::PlyCap),
        Status::Won { winner, reason } => (
            RecordResult::win_for(winner),
            match reason {
                WinReason::BackRow => Termination::BackRow,
                WinReason::NoMoves => Termination::NoMoves,
            },
        ),
    }
}

/// A tag value as written between its quotes, as in PGN: a backslash or a double quote gets a
/// backslash before it, and a line break (which would end the tag) becomes a space.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape`]. Any other backslash is kept as it is, so records written before
/// values were escaped (a Windows path, say) read back unchanged. A carriage return inside a
/// value (lines end only at a line feed) reads as the space `escape` writes for it, so that a
/// record that reads is written back as the same record.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next @ ('\\' | '"'))) => {
                out.push(next);
                chars.next();
            }
            ('\r', _) => out.push(' '),
            (c, _) => out.push(c),
        }
    }
    out
}

fn parse_one(lines: &[&str], mut at: usize) -> Result<(GameRecord, usize), RecordError> {
    let mut tags: Vec<(String, String)> = Vec::new();
    while at < lines.len() {
        let line = lines[at].trim();
        if line.is_empty() {
            at += 1;
            continue;
        }
        if !line.starts_with('[') {
            break;
        }
        let syntax =
            |problem: &str| RecordError::Syntax { line: at + 1, problem: problem.to_string() };
        let inner = line
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .ok_or_else(|| syntax("a tag must be [Name \"value\"]"))?;
        let (name, value) =
            inner.split_once(' ').ok_or_else(|| syntax("a tag must be [Name \"value\"]"))?;
        let value = value
            .trim()
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .ok_or_else(|| syntax("a tag value must be in double quotes"))?;
        tags.push((name.to_string(), unescape(value)));
        at += 1;
    }
    let take = |name: &str| tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let number = |tag: &'static str, default: u8| -> Result<u8, RecordError> {
        take(tag).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| RecordError::Tag { tag, problem: format!("{v:?} is not a number") })
        })
    };
    let defaults = Rules::default();
    let symmetry = match take("Symmetry") {
        None => defaults.symmetry,
        Some(v) => SymmetryRule::from_name(&v).ok_or_else(|| RecordError::Tag {
            tag: "Symmetry",
            problem: format!("{v:?} is not mirror, rotation, both or off"),
        })?,
    };
    let ply_cap = match take("PlyCap").as_deref() {
        None | Some("none") => None,
        Some(v) => Some(v.parse().map_err(|_| RecordError::Tag {
            tag: "PlyCap",
            problem: format!("{v:?} is not a number or none"),
        })?),
    };
    let stones = match take("Stones").as_deref() {
        None | Some("off") => false,
        Some("on") => true,
        Some(v) => {
            return Err(RecordError::Tag {
                tag: "Stones",
                problem: format!("{v:?} is not on or off"),
            })
        }
    };
    let rules = Rules {
        width: number("Width", defaults.width)?,
        height: number("Height", defaults.height)?,
        symmetry,
        ply_cap,
        stones,
    };
    let start = match take("Start") {
        Some(text) => Position::parse(&text, rules).map_err(RecordError::Start)?,
        None => Position::start(rules)?,
    };
    if start.rules() != &rules {
        return Err(RecordError::Tag {
            tag: "Start",
            problem: format!(
                "the position is {}x{}, the tags say {}x{}",
                start.rules().width,
                start.rules().height,
                rules.width,
                rules.height
            ),
        });
    }

    // Movetext: move numbers ("12.") are skipped; the result token ends the record.
    let mut position = start;
    let mut moves = Vec::new();
    let mut result = None;
    'lines: while at < lines.len() {
        let line = lines[at];
        if line.trim_start().starts_with('[') {
            break;
        }
        at += 1;
        for token in line.split_whitespace() {
            if let Some(r) = RecordResult::from_token(token) {
                result = Some(r);
                break 'lines;
            }
            if token.ends_with('.') && token.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                continue;
            }
            let mv = position.parse_move(token).map_err(|error| RecordError::Move {
                number: moves.len() + 1,
                text: token.to_string(),
                error,
            })?;
            position = position.play_unchecked(mv);
            moves.push(mv);
        }
    }
    let result = result.ok_or(RecordError::NoResult)?;
    let termination = match take("Termination") {
        None => outcome(&position).1,
        Some(v) => Termination::from_name(&v).ok_or_else(|| RecordError::Tag {
            tag: "Termination",
            problem: format!("{v:?} is not a known termination"),
        })?,
    };
    if let Some(recorded) = take("Result") {
        if recorded != result.token() {
            return Err(RecordError::ResultMismatch {
                recorded: format!("Result tag {recorded}"),
                actual: format!("movetext result {}", result.token()),
            });
        }
    }
    // The moves decide finished games; only resignations and stopped games may differ.
    let (implied, implied_termination) = outcome(&position);
    let consistent = match termination {
        Termination::Resignation | Termination::Unfinished => implied == RecordResult::Unfinished,
        _ => implied == result && implied_termination == termination,
    };
    if !consistent {
        return Err(RecordError::ResultMismatch {
            recorded: format!("{} by {}", result.token(), termination.name()),
            actual: format!("{} by {}", implied.token(), implied_termination.name()),
        });
    }
    let known = [
        "White",
        "Black",
        "Width",
        "Height",
        "Symmetry",
        "PlyCap",
        "Stones",
        "Start",
        "Result",
        "Termination",
    ];
    let extra = tags.iter().filter(|(n, _)| !known.contains(&n.as_str())).cloned().collect();
    let record = GameRecord {
        white: take("White").unwrap_or_else(|| "?".into()),
        black: take("Black").unwrap_or_else(|| "?".into()),
        start,
        moves,
        result,
        termination,
        extra,
    };
    Ok((record, at))
}

impl fmt::Display for GameRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules = self.rules();
        let tag = |f: &mut fmt::Formatter<'_>, name: &str, value: &dyn fmt::Display| {
            writeln!(f, "[{name} \"{}\"]", escape(&value.to_string()))
        };
        tag(f, "White", &self.white)?;
        tag(f, "Black", &self.black)?;
        tag(f, "Width", &rules.width)?;
        tag(f, "Height", &rules.height)?;
        tag(f, "Symmetry", &rules.symmetry)?;
        tag(f, "PlyCap", &rules.ply_cap.map_or("none".to_string(), |c| c.to_string()))?;
        if rules.stones {
            tag(f, "Stones", &"on")?;
        }
        if Position::start(*rules).ok() != Some(self.start) {
            tag(f, "Start", &self.start)?;
        }
        tag(f, "Result", &self.result.token())?;
        tag(f, "Termination", &self.termination.name())?;
        for (name, value) in &self.extra {
            tag(f, name, value)?;
        }
        writeln!(f)?;
        let mut position = self.start;
        let mut line = String::new();
        // A number per White move. With stones Black places first, at ply 0, so White plays the
        // odd plies: "1. ... @f6 2. @g7 @h8 3. f1-g2 ...".
        // In u32: a record may start at any ply a u16 holds.
        let white_parity = rules.stones as u32;
        for (i, mv) in self.moves.iter().enumerate() {
            let mut token = String::new();
            if position.side_to_move() == Color::White || i == 0 {
                token += &format!("{}. ", (u32::from(position.ply()) + white_parity) / 2 + 1);
                if position.side_to_move() == Color::Black {
                    token += "... ";
                }
            }
            token += &position.notation(*mv);
            if !line.is_empty() && line.len() + token.len() + 1 > 80 {
                writeln!(f, "{line}")?;
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line += &token;
            position = position.play_unchecked(*mv);
        }
        if !line.is_empty() && line.len() + self.result.token().len() + 1 > 80 {
            writeln!(f, "{line}")?;
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        writeln!(f, "{line}{}", self.result.token())
    }
}
