//! Plain UCT with playouts: `mcts-rollout`. UCB1 picks the child in the tree; a short playout
//! (mostly the most forcing move, else a random one), scored by the rules or, when it runs out
//! of plies, by the evaluation, values each new leaf; and proven results (a child that wins or
//! loses by the rules) are propagated so the tree stops spending playouts on decided lines.
//! Its own small arena tree: [`crate::mcts`] is PUCT for networks, with priors this player
//! does not have.

use super::heuristic::{self, evaluate};
use super::{Decision, Limit, Player};
use crate::game::{forcing_moves, move_facts, must_answer, Move, MoveFacts, Position};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::time::Instant;

pub const DEFAULT_LIMIT: Limit = Limit { nodes: Some(1000), depth: None, time: None };

/// UCB1's exploration constant for results scaled to [0, 1] (0.5 to 1.4 played alike).
pub const DEFAULT_EXPLORATION: f32 = 1.0;
/// Plies a playout runs before the evaluation scores it. Short, because random moves are so
/// much worse than the evaluation's judgement: against the greedy player (1000 playouts,
/// 20 games each), 4-ply playouts won about half, 10-ply ones 8 and 30-ply ones 4.
pub const DEFAULT_PLAYOUT_PLIES: u32 = 4;
/// Playout plies that play the most forcing move (when there is one) rather than a random one.
const FORCING_PROBABILITY: f64 = 0.8;
/// Random playout moves are drawn up to this many times until one goes forward.
const PLAYOUT_SAMPLES: usize = 2;
/// The tree stops growing at this many nodes (about 20 bytes each); playouts go on.
const MAX_NODES: usize = 8_000_000;

struct Node {
    mv: Move,
    first_child: u32,
    children: u16,
    expanded: bool,
    /// Decided result for the player who moved into this node: 1 won, -1 lost, 0 unknown.
    proven: i8,
    visits: u32,
    /// Sum of results for the player who moved into this node, each in [-1, 1].
    total: f32,
}

impl Node {
    fn new(mv: Move) -> Node {
        Node { mv, first_child: 0, children: 0, expanded: false, proven: 0, visits: 0, total: 0.0 }
    }

    fn child_range(&self) -> std::ops::Range<usize> {
        self.first_child as usize..self.first_child as usize + self.children as usize
    }
}

pub struct RolloutPlayer {
    limit: Limit,
    exploration: f32,
    playout_plies: u32,
    rng: StdRng,
    nodes: Vec<Node>,
    moves: Vec<Move>,
    forcing: Vec<(Move, MoveFacts)>,
    path: Vec<usize>,
}

impl RolloutPlayer {
    pub fn new(limit: Limit, c_puct: Option<f32>, seed: u64) -> RolloutPlayer {
        RolloutPlayer {
            limit,
            exploration: c_puct.unwrap_or(DEFAULT_EXPLORATION),
            playout_plies: DEFAULT_PLAYOUT_PLIES,
            rng: StdRng::seed_from_u64(seed),
            nodes: Vec::new(),
            moves: Vec::with_capacity(256),
            forcing: Vec::with_capacity(64),
            path: Vec::with_capacity(64),
        }
    }

    /// The same player with playouts cut off after `plies` plies (0: the evaluation alone scores
    /// each new leaf).
    pub fn with_playout_plies(self, plies: u32) -> RolloutPlayer {
        RolloutPlayer { playout_plies: plies, ..self }
    }

    /// One selection, expansion, playout and backup from `root`.
    fn iterate(&mut self, root: &Position) {
        let mut position = *root;
        let mut node = 0;
        self.path.clear();
        self.path.push(0);
        // The result for the player who moved into the last node of the path.
        let result = loop {
            if self.nodes[node].proven != 0 {
                break self.nodes[node].proven as f32;
            }
            if !self.nodes[node].expanded {
                if position.side_to_move_has_won() {
                    self.nodes[node].proven = -1;
                    break -1.0;
                }
                if position.ply_cap_reached() {
                    break 0.0;
                }
                if node != 0 && self.nodes[node].visits == 0 || self.nodes.len() >= MAX_NODES {
                    break -self.playout(&position);
                }
                if !self.expand(node, &position) {
                    self.nodes[node].proven = 1; // the side to move has no legal move
                    break 1.0;
                }
            }
            node = self.select(node);
            position = position.play_unchecked(self.nodes[node].mv);
            self.path.push(node);
        };
        self.backup(result);
    }

    /// Creates `node`'s children, forcing moves first and the rest in random order (unvisited
    /// children are tried in that order). False when there is no legal move.
    fn expand(&mut self, node: usize, position: &Position) -> bool {
        position.legal_moves_into(&mut self.moves);
        if self.moves.is_empty() {
            return false;
        }
        self.moves.shuffle(&mut self.rng);
        self.moves.sort_by_key(|mv| {
            let facts = move_facts(position, *mv);
            std::cmp::Reverse(facts.captured as u32 * 2 + facts.enters as u32 * 3)
        });
        let first = self.nodes.len();
        self.nodes.extend(self.moves.iter().map(|mv| Node::new(*mv)));
        let parent = &mut self.nodes[node];
        parent.first_child = first as u32;
        parent.children = self.moves.len() as u16;
        parent.expanded = true;
        true
    }

    /// UCB1 over the children not proven lost for the side to move; a proven win is taken at
    /// once and unvisited children go first.
    fn select(&self, node: usize) -> usize {
        let parent = &self.nodes[node];
        let log_visits = (parent.visits.max(1) as f32).ln();
        let mut best = None;
        let mut best_ucb = f32::NEG_INFINITY;
        for index in parent.child_range() {
            let child = &self.nodes[index];
            match child.proven {
                1 => return index,
                -1 => continue,
                _ => {}
            }
            if child.visits == 0 {
                return index;
            }
            let mean = (child.total / child.visits as f32 + 1.0) / 2.0;
            let ucb = mean + self.exploration * (log_visits / child.visits as f32).sqrt();
            if ucb > best_ucb {
                best_ucb = ucb;
                best = Some(index);
            }
        }
        // Every child proven lost would have proven the parent won, and a proven node is not
        // descended through.
        best.expect("a node with unproven children")
    }

    /// Adds `result` (for the player who moved into the path's last node) along the path,
    /// flipping it at each step, and propagates proven results upward.
    fn backup(&mut self, mut result: f32) {
        let mut proven_below =
            self.nodes[*self.path.last().expect("the path starts at the root")].proven;
        for depth in (0..self.path.len()).rev() {
            let index = self.path[depth];
            let node = &mut self.nodes[index];
            node.visits += 1;
            node.total += result;
            result = -result;
            if depth + 1 < self.path.len() && proven_below != 0 && node.proven == 0 {
                // The child just proven is the side to move's result here: a won child wins this
                // node (for its side to move, so its mover lost); a lost child only decides it
                // when every sibling is lost too.
                if proven_below == 1 {
                    node.proven = -1;
                } else if self.nodes[self.nodes[index].child_range()].iter().all(|c| c.proven == -1)
                {
                    self.nodes[index].proven = 1;
                }
            }
            proven_below = self.nodes[index].proven;
        }
    }

    /// A lightly biased random game from `start`, scored for its side to move: the rules' result
    /// if it ends within the playout's plies, else the evaluation's view as a value in [-1, 1].
    fn playout(&mut self, start: &Position) -> f32 {
        let mut position = *start;
        let me = start.side_to_move();
        let for_me = |position: &Position, value: f32| {
            if position.side_to_move() == me {
                value
            } else {
                -value
            }
        };
        for _ in 0..self.playout_plies {
            if position.side_to_move_has_won() {
                return for_me(&position, 1.0);
            }
            if position.ply_cap_reached() {
                return 0.0;
            }
            position.legal_moves_into(&mut self.moves);
            if self.moves.is_empty() {
                return for_me(&position, -1.0);
            }
            let mv = if must_answer(&position) {
                // Only a capture or an entry that evens the far rows saves the game; any of them.
                forcing_moves(&position, &mut self.forcing);
                self.forcing.shuffle(&mut self.rng);
                let answer = self
                    .forcing
                    .iter()
                    .map(|(mv, _)| *mv)
                    .find(|mv| !position.play_unchecked(*mv).side_to_move_has_won());
                match answer {
                    Some(mv) => mv,
                    None => return for_me(&position, -1.0),
                }
            } else {
                self.sample(&position)
            };
            position = position.play_unchecked(mv);
        }
        if position.side_to_move_has_won() {
            return for_me(&position, 1.0);
        }
        for_me(&position, heuristic::to_value(evaluate(&position)))
    }

    /// A playout move: usually the most forcing move there is (the biggest capture, or an
    /// entry), else a random one, forward moves sampled a little more often. Uniformly random
    /// play almost never captures (a handful of ~150 moves do), so its games say little about
    /// who is ahead.
    fn sample(&mut self, position: &Position) -> Move {
        if self.rng.random_bool(FORCING_PROBABILITY) {
            forcing_moves(position, &mut self.forcing);
            let mut best = None;
            let mut best_key = 0;
            let mut ties = 0;
            for &(mv, facts) in &self.forcing {
                let key = facts.captured as u32 * 2 + facts.enters as u32 * 3;
                if key > best_key {
                    (best_key, best, ties) = (key, Some(mv), 1);
                } else if key == best_key && key > 0 {
                    // Reservoir sampling: each of the equals is kept with the same chance.
                    ties += 1;
                    if self.rng.random_range(0..ties) == 0 {
                        best = Some(mv);
                    }
                }
            }
            if let Some(mv) = best {
                return mv;
            }
        }
        let forward = position.side_to_move().forward().delta().1;
        let mut pick = self.moves[self.rng.random_range(0..self.moves.len())];
        for _ in 1..PLAYOUT_SAMPLES {
            if pick.dir.delta().1 == forward {
                break;
            }
            pick = self.moves[self.rng.random_range(0..self.moves.len())];
        }
        pick
    }

    /// The root child to play: a proven win, else the most visited child not proven lost.
    fn best_child(&self, node: usize) -> Option<usize> {
        let range = self.nodes[node].child_range();
        if let Some(win) = range.clone().find(|&i| self.nodes[i].proven == 1) {
            return Some(win);
        }
        let key = |&i: &usize| {
            let child = &self.nodes[i];
            (
                child.proven != -1,
                child.visits,
                (child.total / child.visits.max(1) as f32 * 1e6) as i64,
            )
        };
        range.max_by_key(key)
    }
}

impl Player for RolloutPlayer {
    fn name(&self) -> String {
        "mcts-rollout".into()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
        self.nodes.clear();
    }

    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        let mut limit = limit.or(self.limit);
        if limit.nodes.is_none() && limit.time.is_none() {
            limit.nodes = DEFAULT_LIMIT.nodes; // a depth means nothing to UCT
        }
        let started = Instant::now();
        self.nodes.clear();
        self.nodes.push(Node::new(Move::new(
            crate::game::Square::from_index(0),
            crate::game::Dir::North,
            0,
        )));
        assert!(self.expand(0, position), "choose is only asked in positions with a legal move");
        let mut playouts = 0u64;
        while self.nodes[0].proven == 0
            && limit.nodes.is_none_or(|n| playouts < n)
            && limit.time.is_none_or(|t| playouts == 0 || started.elapsed() < t)
        {
            self.iterate(position);
            playouts += 1;
        }
        let root = &self.nodes[0];
        let value = match root.proven {
            // Proven for the player who moved into the root: the opposite for its side to move.
            0 => -root.total / root.visits.max(1) as f32,
            proven => -proven as f32,
        };
        let mut principal_variation = Vec::new();
        let mut node = 0;
        while self.nodes[node].expanded && principal_variation.len() < 16 {
            match self.best_child(node) {
                Some(child) if self.nodes[child].visits > 0 || node == 0 => {
                    principal_variation.push(self.nodes[child].mv);
                    node = child;
                }
                _ => break,
            }
        }
        Decision {
            mv: principal_variation[0],
            value: Some(value),
            nodes: playouts,
            depth: None,
            principal_variation,
        }
    }
}
