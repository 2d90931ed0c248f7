//! Alpha-beta player: negamax with principal variation search, iterative deepening, aspiration
//! windows, a transposition table, late move reductions, and quiescence on captures and far-row
//! entries, over the hand-made evaluation of [`super::heuristic`]. The table and the move
//! ordering statistics (killers, history) live as long as the game.
//!
//! Exact results come from the rules, never the evaluation: a side to move that has won at the
//! start of its turn scores a win, a side with no legal move a loss, the ply cap a draw, each
//! with its distance in plies (see [`heuristic::WIN`]). Far-row entries are the game's checks:
//! the side that is threatened (more enemy pieces on its home row than its own on the far row)
//! must capture or answer at once, so such nodes get no stand-pat in quiescence and a ply of
//! extension in the main search.

use super::heuristic::{self, evaluate_with, is_decisive, loss_in, win_in, Weights, WIN};
use super::{Decision, Limit, Player};
use crate::game::{
    forcing_moves, move_facts as facts, must_answer, Dir, Move, MoveFacts, Position, Rules, Square,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

pub const DEFAULT_LIMIT: Limit = Limit { nodes: None, depth: Some(4), time: None };

/// The deepest iteration (player specs allow depth 1..=64).
const MAX_DEPTH: u32 = 64;
/// Plies from the root the search may reach, quiescence and extensions included.
const MAX_PLY: usize = 128;
/// Nodes between looks at the clock: often enough to stop within a millisecond or so, rarely
/// enough that reading the clock costs nothing measurable.
const CLOCK_INTERVAL: u64 = 2048;
/// Plies of captures and entries searched past the nominal depth.
const QUIESCENCE_PLIES: u32 = 4;
/// Delta pruning's safety margin: a capture is skipped when even this much more than the pieces
/// it takes cannot reach alpha.
const DELTA_MARGIN: i32 = 200;
/// Null-move pruning needs pieces to spare: with few, zugzwang-like positions (every move
/// weakens) are common.
const NULL_MOVE_MIN_PIECES: u32 = 6;
/// Above every score.
const INFINITY: i32 = WIN + 1;
/// 2^20 entries of 16 bytes: 16 MiB per player.
const TABLE_BITS: u32 = 20;

/// Search features that can be switched off to measure what they bring. The numbers are
/// matches of the default against the default with one feature switched, equal node budgets
/// (10,000 or 50,000 per move), colours alternated: wins of the default first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Quiescence on captures and far-row entries at the horizon (else the bare evaluation,
    /// except that a threatened side still has to answer). 27-3.
    pub quiescence: bool,
    /// One more ply after a move that enters the far row: the reply is forced and the entry's
    /// outcome usually shows two plies later. 28-22.
    pub entry_extension: bool,
    /// Late quiet moves searched one ply shallower first (late move reductions). 13-15 at
    /// 10,000 nodes, 13-7 at 50,000: it pays as searches deepen.
    pub reductions: bool,
    /// Aspiration windows around the previous iteration's score. 21-28 over two budgets,
    /// within the noise of so few games.
    pub aspiration: bool,
    /// The transposition table (off: every node is searched as if new).
    pub table: bool,
    /// Null-move pruning: where passing still leaves the side to move at or above beta after a
    /// reduced search, a real move will too. Off by default: switched on it won 23 and lost
    /// 26 (passing is never legal, and blocked phalanxes make positions where any move
    /// weakens common).
    pub null_move: bool,
}

impl Options {
    pub const DEFAULT: Options = Options {
        quiescence: true,
        entry_extension: true,
        reductions: true,
        aspiration: true,
        table: true,
        null_move: false,
    };
}

impl Default for Options {
    fn default() -> Options {
        Options::DEFAULT
    }
}

pub struct AlphaBetaPlayer {
    limit: Limit,
    rng: StdRng,
    search: Search,
}

impl AlphaBetaPlayer {
    pub fn new(limit: Limit, seed: u64) -> AlphaBetaPlayer {
        AlphaBetaPlayer::with_settings(limit, seed, Weights::DEFAULT, Options::DEFAULT)
    }

    /// A player with other evaluation weights or search options (for experiments).
    pub fn with_settings(
        limit: Limit,
        seed: u64,
        weights: Weights,
        options: Options,
    ) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            limit,
            rng: StdRng::seed_from_u64(seed),
            search: Search::new(weights, options, TABLE_BITS),
        }
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        "alphabeta".into()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
        self.search.clear();
    }

    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        let limit = limit.or(self.limit).or(DEFAULT_LIMIT);
        self.search.run(position, limit, &mut self.rng)
    }
}

// ---------------------------------------------------------------------------------------------
// Transposition table

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bound {
    Exact,
    /// The score is at least this (a beta cutoff).
    Lower,
    /// The score is at most this (no move reached alpha).
    Upper,
}

#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    score: i32,
    /// [`pack`]ed best move, 0 for none.
    mv: u16,
    depth: u8,
    /// Bound in the low 2 bits, the search's generation above them.
    flags: u8,
}

impl Entry {
    /// Bound bits 3 mark a slot never written.
    const EMPTY: Entry = Entry { key: 0, score: 0, mv: 0, depth: 0, flags: 3 };

    fn bound(self) -> Bound {
        match self.flags & 3 {
            0 => Bound::Exact,
            1 => Bound::Lower,
            _ => Bound::Upper,
        }
    }

    fn generation(self) -> u8 {
        self.flags >> 2
    }
}

/// One entry per slot. A new entry replaces one of the same position, one left by an earlier
/// move's search, or one searched no deeper: within a search deep results are kept, and the
/// last move's give way to this one's.
struct Table {
    entries: Vec<Entry>,
    generation: u8,
}

impl Table {
    fn new(bits: u32) -> Table {
        Table { entries: vec![Entry::EMPTY; 1 << bits], generation: 0 }
    }

    fn clear(&mut self) {
        self.entries.fill(Entry::EMPTY);
        self.generation = 0;
    }

    fn next_generation(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.entries.len() - 1)
    }

    #[inline]
    fn probe(&self, key: u64) -> Option<Entry> {
        let entry = self.entries[self.slot(key)];
        (entry.key == key && entry.flags & 3 != 3).then_some(entry)
    }

    #[inline]
    fn store(&mut self, key: u64, depth: i32, score: i32, bound: Bound, mv: Option<Move>) {
        let slot = self.slot(key);
        let old = self.entries[slot];
        let depth = depth.clamp(0, 255) as u8;
        if old.key == key
            || old.generation() != self.generation
            || depth >= old.depth
            || old.flags & 3 == 3
        {
            // Keep the old move when this search found none (an all-node) for the same position.
            let mv = match mv {
                Some(mv) => pack(mv),
                None if old.key == key => old.mv,
                None => 0,
            };
            let bound = match bound {
                Bound::Exact => 0,
                Bound::Lower => 1,
                Bound::Upper => 2,
            };
            self.entries[slot] =
                Entry { key, score, mv, depth, flags: bound | (self.generation << 2) };
        }
    }
}

/// A move in 16 bits: tail square (8), direction (3), distance (4: 0 for a stone placement,
/// else at most 8), and a set top bit.
#[inline]
fn pack(mv: Move) -> u16 {
    0x8000
        | (mv.from.index() as u16) << 7
        | (mv.dir.index() as u16) << 4
        | (mv.distance as u16 & 15)
}

#[inline]
fn unpack(bits: u16) -> Option<Move> {
    (bits != 0).then(|| {
        Move::new(
            Square::from_index((bits >> 7) as u8),
            Dir::from_index((bits >> 4 & 7) as usize),
            (bits & 15) as u8,
        )
    })
}

/// Decided scores are stored relative to the node (plies from it), not the root, so an entry
/// reached by another path at another depth still says how far the result is.
#[inline]
fn to_table(score: i32, ply: usize) -> i32 {
    if score >= WIN - heuristic::MAX_MATE_PLY {
        score + ply as i32
    } else if score <= -(WIN - heuristic::MAX_MATE_PLY) {
        score - ply as i32
    } else {
        score
    }
}

#[inline]
fn from_table(score: i32, ply: usize) -> i32 {
    if score >= WIN - heuristic::MAX_MATE_PLY {
        score - ply as i32
    } else if score <= -(WIN - heuristic::MAX_MATE_PLY) {
        score + ply as i32
    } else {
        score
    }
}

// Ordering keys: the table's move, then captures (biggest first) and entries, then killers,
// then quiet moves by history.
const KEY_TABLE_MOVE: i32 = 1 << 30;
const KEY_CAPTURE: i32 = 1 << 24;
const KEY_ENTRY: i32 = 1 << 23;
const KEY_KILLER: i32 = 1 << 22;
const HISTORY_MAX: i32 = 1 << 20;

#[derive(Clone, Copy)]
struct Scored {
    mv: Move,
    key: i32,
    quiet: bool,
}

/// Moves the next best to `index` (selection sort, one step at a time: after a cutoff the rest
/// is never sorted).
#[inline]
fn pick(moves: &mut [Scored], index: usize) -> Scored {
    let mut best = index;
    for i in index + 1..moves.len() {
        if moves[i].key > moves[best].key {
            best = i;
        }
    }
    moves.swap(index, best);
    moves[index]
}

// ---------------------------------------------------------------------------------------------
// The search

struct Search {
    weights: Weights,
    options: Options,
    table: Table,
    rules: Option<Rules>,
    /// Quiet moves that caused cutoffs, by side, tail square, direction and distance.
    history: Vec<i32>,
    killers: [[Option<Move>; 2]; MAX_PLY],
    /// Triangular principal-variation table: `pv[ply]` is the line from that ply.
    pv: Vec<[Move; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    /// Move lists per ply, kept to avoid allocating per node.
    lists: Vec<Vec<Move>>,
    /// Quiescence's captures and entries, turned into `scored` at once.
    forcing: Vec<(Move, MoveFacts)>,
    scored: Vec<Vec<Scored>>,
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    /// Whether the limits may stop the current iteration (not the first: it must complete).
    may_stop: bool,
    stopped: bool,
    /// Whether the table keys include the ply (only under a ply cap, where it changes results).
    key_ply: bool,
}

/// Alpha-beta's quiescence search on its own: the hand-made evaluation of a position once its
/// captures and far-row entries have played out (at most `plies` deep), from the side to
/// move's view. A static evaluation misjudges any position with a capture pending, which a
/// tree search's leaves often are; this settles them, in about 12 nodes at two plies and 130
/// at four on the positions of real games.
pub struct Quiescence {
    search: Search,
    plies: u32,
}

impl Quiescence {
    /// Captures and entries searched at most `plies` deep (alpha-beta's own horizon,
    /// `QUIESCENCE_PLIES`, at most); 0 is the static evaluation, except that a side that must
    /// answer an entry is scored by its best answer.
    pub fn new(plies: u32) -> Quiescence {
        // Quiescence never reads the table: the smallest one will do.
        Quiescence {
            search: Search::new(Weights::DEFAULT, Options::DEFAULT, 1),
            plies: plies.min(QUIESCENCE_PLIES),
        }
    }

    /// The score of `position` for its side to move, on the scale of [`heuristic::evaluate`]
    /// (decided results as [`heuristic::win_in`] and [`heuristic::loss_in`]), and the nodes
    /// searched.
    pub fn score(&mut self, position: &Position) -> (i32, u64) {
        let search = &mut self.search;
        search.nodes = 0;
        search.node_limit = u64::MAX;
        search.deadline = None;
        search.may_stop = false;
        search.stopped = false;
        // `quiesce` counts its plies up to the horizon: start as many short of it as asked.
        let score = search.quiesce(position, -INFINITY, INFINITY, 0, QUIESCENCE_PLIES - self.plies);
        (score, search.nodes)
    }
}

const NO_MOVE: Move = Move::new(Square::from_index(0), Dir::North, 0);
const HISTORY_SIZE: usize = 2 * 256 * 8 * 16;

impl Search {
    fn new(weights: Weights, options: Options, table_bits: u32) -> Search {
        Search {
            weights,
            options,
            table: Table::new(table_bits),
            rules: None,
            history: vec![0; HISTORY_SIZE],
            killers: [[None; 2]; MAX_PLY],
            pv: vec![[NO_MOVE; MAX_PLY]; MAX_PLY],
            pv_len: [0; MAX_PLY],
            lists: (0..MAX_PLY).map(|_| Vec::with_capacity(256)).collect(),
            scored: (0..MAX_PLY).map(|_| Vec::with_capacity(256)).collect(),
            forcing: Vec::with_capacity(64),
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            may_stop: false,
            stopped: false,
            key_ply: false,
        }
    }

    fn clear(&mut self) {
        self.table.clear();
        self.history.fill(0);
        self.killers = [[None; 2]; MAX_PLY];
        self.rules = None;
    }

    fn run(&mut self, position: &Position, limit: Limit, rng: &mut StdRng) -> Decision {
        let (score, principal_variation, depth) = self.iterate(position, limit, rng);
        Decision {
            mv: principal_variation[0],
            value: Some(heuristic::to_value(score)),
            nodes: self.nodes,
            depth: Some(depth),
            principal_variation,
        }
    }

    /// Iterative deepening within `limit`: the score, line and depth of the last completed
    /// iteration.
    fn iterate(
        &mut self,
        position: &Position,
        limit: Limit,
        rng: &mut StdRng,
    ) -> (i32, Vec<Move>, u32) {
        let started = Instant::now();
        if self.rules != Some(*position.rules()) {
            self.clear();
            self.rules = Some(*position.rules());
        }
        self.key_ply = position.rules().ply_cap.is_some();
        self.table.next_generation();
        // Old statistics still order well, but the new position's cutoffs should dominate.
        self.history.iter_mut().for_each(|h| *h /= 4);
        self.killers = [[None; 2]; MAX_PLY];
        self.nodes = 0;
        self.node_limit = limit.nodes.unwrap_or(u64::MAX);
        // A time past what the clock can hold (a `movetime` of years) is no deadline.
        self.deadline = limit.time.and_then(|t| started.checked_add(t));
        self.stopped = false;
        let max_depth = limit.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);

        let mut root_moves = position.legal_moves();
        assert!(!root_moves.is_empty(), "choose is only asked in positions with a legal move");
        // The order within equal ordering keys decides between equally good moves: shuffled,
        // so games against a fixed opponent differ.
        root_moves.shuffle(rng);

        let mut best: Option<(i32, Vec<Move>, u32)> = None;
        for depth in 1..=max_depth {
            self.may_stop = depth > 1;
            let previous = best.as_ref().map(|(score, _, _)| *score);
            let score = self.aspiration(position, &root_moves, depth as i32, previous);
            if self.stopped {
                break;
            }
            let pv = self.pv[0][..self.pv_len[0]].to_vec();
            best = Some((score, pv, depth));
            let out_of_time = limit.time.is_some_and(|t| started.elapsed() * 2 > t);
            if is_decisive(score)
                || self.nodes >= self.node_limit
                || out_of_time
                || root_moves.len() == 1
            {
                break;
            }
        }
        best.expect("the first iteration always completes")
    }

    /// One iteration, first in a window around the previous score, widened on failure.
    fn aspiration(
        &mut self,
        position: &Position,
        root_moves: &[Move],
        depth: i32,
        previous: Option<i32>,
    ) -> i32 {
        let mut delta = 50;
        let (mut alpha, mut beta) = match previous {
            Some(score) if self.options.aspiration && depth >= 3 && !is_decisive(score) => {
                (score - delta, score + delta)
            }
            _ => (-INFINITY, INFINITY),
        };
        loop {
            let score = self.root(position, root_moves, depth, alpha, beta);
            if self.stopped {
                return score;
            }
            if score <= alpha && alpha > -INFINITY {
                alpha = if delta > 400 { -INFINITY } else { (score - delta).max(-INFINITY) };
            } else if score >= beta && beta < INFINITY {
                beta = if delta > 400 { INFINITY } else { (score + delta).min(INFINITY) };
            } else {
                return score;
            }
            delta *= 4;
        }
    }

    #[inline]
    fn key(&self, position: &Position) -> u64 {
        if self.key_ply {
            position.hash() ^ (position.ply() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        } else {
            position.hash()
        }
    }

    /// Whether a limit has been reached (sticky once it has).
    #[inline]
    fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if self.may_stop {
            let out_of_time = || {
                self.nodes.is_multiple_of(CLOCK_INTERVAL)
                    && self.deadline.is_some_and(|d| Instant::now() >= d)
            };
            self.stopped = self.nodes >= self.node_limit || out_of_time();
        }
        self.stopped
    }

    #[inline]
    fn history_index(position: &Position, mv: Move) -> usize {
        // Distance 0 (a stone placement) has a slot of its own.
        ((position.side_to_move().index() * 256 + mv.from.index()) * 8 + mv.dir.index()) * 16
            + (mv.distance as usize).min(15)
    }

    /// Fills `self.scored[ply]` with the moves of `self.lists[ply]`, the table's move first.
    /// Only that move is looked at now: when it causes a cutoff, as it usually does, ordering
    /// the rest would be wasted (see [`Search::score_rest`]). True when the rest are unscored.
    fn score_moves(&mut self, position: &Position, ply: usize, table_move: Option<Move>) -> bool {
        let mut scored = std::mem::take(&mut self.scored[ply]);
        scored.clear();
        scored.extend(self.lists[ply].iter().map(|&mv| Scored { mv, key: 0, quiet: true }));
        let first = table_move.and_then(|tm| scored.iter().position(|s| s.mv == tm));
        let deferred = if let Some(first) = first {
            scored.swap(0, first);
            let facts = facts(position, scored[0].mv);
            scored[0].key = KEY_TABLE_MOVE;
            scored[0].quiet = facts.captured == 0 && !facts.enters;
            true
        } else {
            false
        };
        self.scored[ply] = scored;
        if !deferred {
            self.score_rest(position, ply, 0);
        }
        deferred
    }

    /// Gives the moves of `self.scored[ply]` from `start` on their ordering keys.
    fn score_rest(&mut self, position: &Position, ply: usize, start: usize) {
        let mut scored = std::mem::take(&mut self.scored[ply]);
        let killers = self.killers[ply];
        for entry in &mut scored[start..] {
            let mv = entry.mv;
            let facts = facts(position, mv);
            (entry.key, entry.quiet) = if facts.captured > 0 {
                (
                    KEY_CAPTURE + 1024 * facts.captured as i32 + if facts.enters { 512 } else { 0 },
                    false,
                )
            } else if facts.enters {
                (KEY_ENTRY, false)
            } else if Some(mv) == killers[0] {
                (KEY_KILLER + 1, true)
            } else if Some(mv) == killers[1] {
                (KEY_KILLER, true)
            } else {
                (self.history[Search::history_index(position, mv)], true)
            };
        }
        self.scored[ply] = scored;
    }

    fn record_cutoff(&mut self, position: &Position, mv: Move, depth: i32, ply: usize) {
        if self.killers[ply][0] != Some(mv) {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = Some(mv);
        }
        let slot = &mut self.history[Search::history_index(position, mv)];
        *slot += depth * depth;
        if *slot >= HISTORY_MAX {
            self.history.iter_mut().for_each(|h| *h /= 2);
        }
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        self.pv[ply][0] = mv;
        let len = if ply + 1 < MAX_PLY { self.pv_len[ply + 1] } else { 0 };
        for i in 0..len.min(MAX_PLY - 1) {
            self.pv[ply][i + 1] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = len.min(MAX_PLY - 1) + 1;
    }

    fn root(
        &mut self,
        position: &Position,
        root_moves: &[Move],
        depth: i32,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        self.lists[0].clear();
        self.lists[0].extend_from_slice(root_moves);
        self.node(position, depth, alpha, beta, 0, true)
    }

    /// Negamax with principal variation search. At ply 0 the move list is `self.lists[0]`, set by
    /// the caller; elsewhere it is generated here.
    fn node(
        &mut self,
        position: &Position,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        null_allowed: bool,
    ) -> i32 {
        self.pv_len[ply] = 0;
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        if ply > 0 {
            if position.side_to_move_has_won() {
                return win_in(ply as i32);
            }
            if position.ply_cap_reached() {
                return 0;
            }
            // Nothing here can beat a win already found nearer the root.
            alpha = alpha.max(loss_in(ply as i32));
            beta = beta.min(win_in(ply as i32 + 1));
            if alpha >= beta {
                return alpha;
            }
        }
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.quiesce(position, alpha, beta, ply, 0);
        }
        let pv_node = beta - alpha > 1;
        let key = self.key(position);
        let mut table_move = None;
        if let Some(entry) = self.table.probe(key).filter(|_| self.options.table) {
            table_move = unpack(entry.mv);
            if !pv_node && ply > 0 && entry.depth as i32 >= depth {
                let score = from_table(entry.score, ply);
                let cut = match entry.bound() {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cut {
                    return score;
                }
            }
        }
        let threatened = must_answer(position);
        let me = position.side_to_move();
        if self.options.null_move
            && null_allowed
            && !pv_node
            && ply > 0
            && depth >= 3
            && !threatened
            && !is_decisive(beta)
            && position.pieces(me).count() >= NULL_MOVE_MIN_PIECES
            && evaluate_with(position, &self.weights) >= beta
        {
            let passed =
                position.with_side_to_move(me.opponent(), position.ply().saturating_add(1));
            let reduction = 2 + (depth >= 6) as i32;
            let score =
                -self.node(&passed, depth - 1 - reduction, -beta, -beta + 1, ply + 1, false);
            if self.stopped {
                return 0;
            }
            if score >= beta && !is_decisive(score) {
                return score;
            }
        }
        if ply > 0 {
            let mut list = std::mem::take(&mut self.lists[ply]);
            position.legal_moves_into(&mut list);
            self.lists[ply] = list;
        }
        if self.lists[ply].is_empty() {
            return loss_in(ply as i32);
        }
        let mut deferred = self.score_moves(position, ply, table_move);
        let alpha_start = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        let count = self.scored[ply].len();
        for index in 0..count {
            if deferred && index == 1 {
                self.score_rest(position, ply, 1);
                deferred = false;
            }
            let Scored { mv, quiet, .. } = pick(&mut self.scored[ply], index);
            let child = position.play_unchecked(mv);
            if child.side_to_move_has_won() {
                // A move that leaves the opponent winning at the start of its turn (every move
                // but an answer, when threatened): decided without a node.
                let score = loss_in(ply as i32 + 1);
                if score > best {
                    best = score;
                    best_move = Some(mv);
                    if score > alpha {
                        alpha = score;
                        self.pv_len[ply + 1] = 0;
                        self.update_pv(ply, mv);
                    }
                }
                continue;
            }
            let gives_entry = self.options.entry_extension && must_answer(&child);
            let extension = if gives_entry && ply < MAX_PLY / 2 { 1 } else { 0 };
            let new_depth = depth - 1 + extension;
            let score = if index == 0 {
                -self.node(&child, new_depth, -beta, -alpha, ply + 1, true)
            } else {
                // Late quiet moves first get a shallower look; only a surprise earns the full
                // depth.
                let reduce = self.options.reductions
                    && quiet
                    && !threatened
                    && !gives_entry
                    && depth >= 3
                    && index >= 4;
                let reduced = if reduce { new_depth - 1 - (index >= 16) as i32 } else { new_depth };
                let mut score = -self.node(&child, reduced, -alpha - 1, -alpha, ply + 1, true);
                if score > alpha && reduced < new_depth {
                    score = -self.node(&child, new_depth, -alpha - 1, -alpha, ply + 1, true);
                }
                if score > alpha && score < beta {
                    score = -self.node(&child, new_depth, -beta, -alpha, ply + 1, true);
                }
                score
            };
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(mv);
                if score > alpha {
                    alpha = score;
                    self.update_pv(ply, mv);
                    if alpha >= beta {
                        if quiet {
                            self.record_cutoff(position, mv, depth, ply);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha_start {
            Bound::Exact
        } else {
            Bound::Upper
        };
        if self.options.table {
            self.table.store(
                key,
                depth,
                to_table(best, ply),
                bound,
                best_move.filter(|_| bound != Bound::Upper),
            );
        }
        best
    }

    /// Captures and far-row entries until the position is quiet, at most `QUIESCENCE_PLIES`
    /// deep (`depth` counts them): in crowded positions nearly every move captures, and an
    /// unbounded capture search explodes. A threatened side has no stand-pat: only an answer (a
    /// capture or entry that evens the far rows) saves it, and with none it has lost.
    fn quiesce(
        &mut self,
        position: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        depth: u32,
    ) -> i32 {
        self.pv_len[ply] = 0;
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        if position.side_to_move_has_won() {
            return win_in(ply as i32);
        }
        if position.ply_cap_reached() {
            return 0;
        }
        let threatened = must_answer(position);
        let horizon =
            depth >= QUIESCENCE_PLIES || ply + 1 >= MAX_PLY - 1 || !self.options.quiescence;
        let stand = if threatened { None } else { Some(evaluate_with(position, &self.weights)) };
        if let Some(stand) = stand {
            if stand >= beta || horizon {
                return stand;
            }
            alpha = alpha.max(stand);
        }
        forcing_moves(position, &mut self.forcing);
        if self.forcing.is_empty() && !position.has_legal_move() {
            return loss_in(ply as i32);
        }
        let mut scored = std::mem::take(&mut self.scored[ply]);
        scored.clear();
        scored.extend(self.forcing.iter().map(|&(mv, facts)| {
            let key = 1024 * facts.captured as i32 + if facts.enters { 512 } else { 0 };
            Scored { mv, key, quiet: facts.captured == 0 }
        }));
        // Every move that does not answer loses at the start of the opponent's turn.
        let mut best = stand.unwrap_or(loss_in(ply as i32 + 1));
        for index in 0..scored.len() {
            let Scored { mv, key, .. } = pick(&mut scored, index);
            // A capture too small to lift the score to alpha is not worth a node (delta
            // pruning); entries are, since they can decide the game.
            if let Some(stand) = stand {
                let captured = key / 1024;
                if key % 1024 == 0 && stand + captured * self.weights.piece + DELTA_MARGIN <= alpha
                {
                    continue;
                }
            }
            let child = position.play_unchecked(mv);
            if child.side_to_move_has_won() {
                continue; // no answer: the score stays at `best`, a loss at worst
            }
            let score = if horizon {
                // Threatened at the horizon: an answer exists, so the game goes on; how well
                // is left to the evaluation.
                -evaluate_with(&child, &self.weights)
            } else {
                -self.quiesce(&child, -beta, -alpha, ply + 1, depth + 1)
            };
            if self.stopped {
                self.scored[ply] = scored;
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    self.update_pv(ply, mv);
                    if alpha >= beta || horizon {
                        break;
                    }
                }
            }
        }
        self.scored[ply] = scored;
        best
    }
}
