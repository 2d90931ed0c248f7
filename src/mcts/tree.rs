//! PUCT search over an index arena, split into `gather` (walk to a leaf, hand back what to
//! evaluate) and `apply` (expand the leaf, back the value up), so one driver can batch leaves
//! from many games into one network pass, or several leaves from one game (virtual loss keeps
//! them apart).
//!
//! Point of view: an edge's `value_sum` is from the view of the side that chooses it (the side
//! to move at its parent), so selection maximises Q directly; the value of a leaf, which is for
//! the side to move there, changes sign at every step of the backup. With a `draw_value`, what
//! is backed up is a utility, (win - loss) + draw_value * P(draw): the first part changes sign,
//! the second does not, as a draw is the same result for both sides.

use super::config::{Fpu, GumbelRoot, SearchConfig};
use crate::evaluator::{EvalRequest, Evaluation, Evaluator, Wdl};
use crate::game::{move_facts, Forced, Move, Position};
use rand::Rng;
use std::borrow::Cow;

const NO_NODE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Edge {
    mv: Move,
    /// The network's prior: a Gumbel root's sample and policy target build on it.
    prior: f32,
    /// The prior PUCT selection reads: the network's, with `SearchConfig::capture_prior` of
    /// its mass spread over the captures. A Gumbel root keeps the network's own, so the share
    /// steers the search below it and never enters the policy target.
    search_prior: f32,
    child: u32,
    visits: u32,
    /// Sum of backed-up utilities, from the view of the side choosing this edge.
    value_sum: f32,
    /// Sum of backed-up draw probabilities (the same for both sides), which with `value_sum`
    /// gives the searched chances of a win, a draw and a loss.
    draw_sum: f32,
    /// Leaves in flight below this edge; each counts as a visit that lost.
    virtual_visits: u32,
}

impl Edge {
    /// The mean backed-up utility, from the view of the side choosing this edge; 0 unvisited.
    fn mean_value(&self) -> f32 {
        if self.visits > 0 {
            self.value_sum / self.visits as f32
        } else {
            0.0
        }
    }
}

#[derive(Clone, Debug)]
enum NodeState {
    /// Legal moves known, waiting to be evaluated.
    Unexpanded(Vec<Move>),
    /// Sent for evaluation, not back yet.
    Pending,
    /// Children are `edges[first..first + count]`.
    Expanded { first: u32, count: u32 },
    /// The game is over here; value for the side to move.
    Terminal(f32),
}

#[derive(Clone, Debug)]
struct Node {
    position: Position,
    state: NodeState,
    /// The network's utility for this node (side to move), once evaluated.
    value: f32,
    /// The network's draw probability here, once evaluated.
    draw: f32,
}

/// A result the search knows exactly, from the view of the side choosing a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    Won,
    Lost,
}

/// What one gather step produced.
#[derive(Debug)]
pub enum Gathered {
    /// A leaf to evaluate; pass the evaluation to [`Search::apply`] with this token.
    Leaf { token: LeafToken, request: EvalRequest },
    /// The walk ended in a finished game; its exact value was backed up at once.
    Terminal,
    /// The walk reached a leaf already waiting for evaluation; nothing changed. Evaluate what is
    /// pending before gathering more from this tree.
    Collision,
}

/// Identifies a pending leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafToken(usize);

struct PendingLeaf {
    node: u32,
    path: Vec<u32>,
}

/// The result of a search at the root.
#[derive(Clone, Debug)]
pub struct RootSummary {
    /// (move, visits, prior, mean value for the mover) for every move searched, in generation
    /// order: every legal move, except that under a far-row lead only the answers to it (with
    /// `forced_results`).
    pub moves: Vec<(Move, u32, f32, f32)>,
    /// The root's value for the side to move (network value blended with search).
    pub value: f32,
    pub visits: u32,
}

/// A Gumbel root's state for one search (see [`GumbelRoot`]): the considered moves, and how
/// far sequential halving has gone.
#[derive(Clone, Debug)]
struct Halving {
    gumbel: GumbelRoot,
    /// Per root move: its Gumbel sample plus the log of its prior.
    noisy_logits: Vec<f32>,
    /// Root moves (offsets among the root's edges) still in the running.
    remaining: Vec<usize>,
    /// Per root move: its visits when this search began (from a reused subtree).
    base: Vec<u32>,
    /// The simulations this search has: its visit target less the root's visits at its start.
    budget: u32,
    /// Halvings from `considered` moves down to two: the budget is shared among this many
    /// phases (log2 of `considered`, rounded up).
    phases: u32,
    /// New visits each remaining move has by the end of the current phase.
    phase_target: u32,
}

impl Halving {
    /// New visits a move gets in a phase that `remaining` moves share: an equal part of the
    /// budget for every phase, at least one.
    fn phase_visits(&self) -> u32 {
        (self.budget / (self.phases * self.remaining.len() as u32)).max(1)
    }
}

/// One game's search tree.
pub struct Search {
    config: SearchConfig,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    root: u32,
    pending: Vec<Option<PendingLeaf>>,
    pub noise_enabled: bool,
    /// The root visits the current search aims at (set by [`Search::prepare`]).
    visit_target: u32,
    /// A Gumbel root's halving, once the root is expanded, for a search with noise.
    halving: Option<Halving>,
}

/// Whether a search with this config has anything to add at a root with noise.
fn explores(config: &SearchConfig) -> bool {
    config.root_noise.gumbel().is_some()
}

/// A node below the root. With `forced_results`, a result certain two moves ahead counts as the
/// end of the game: the search then sees a run it cannot stop one ply after the move that
/// allows it, instead of three, and a fight for a corner of the far row (invade, be captured,
/// invade again) as soon as it begins. A position under attack keeps only the moves that answer
/// it (see [`new_root`]).
fn new_node(position: Position, forced_results: bool) -> Node {
    let mut node = new_root(position, forced_results);
    if let (true, NodeState::Unexpanded(moves)) = (forced_results, &node.state) {
        match position.forced_in_two(moves) {
            Some(Forced::Win(_)) => node.state = NodeState::Terminal(1.0),
            Some(Forced::Loss) => node.state = NodeState::Terminal(-1.0),
            None => {}
        }
    }
    node
}

/// The network's priors with `share` of their mass spread evenly over the position's captures
/// (see `SearchConfig::capture_prior`); the priors as they are when the share is 0 or no move
/// captures.
fn with_capture_share<'a>(request: &EvalRequest, priors: &'a [f32], share: f32) -> Cow<'a, [f32]> {
    if share == 0.0 {
        return Cow::Borrowed(priors);
    }
    let position = &request.position;
    let captures: Vec<bool> =
        request.moves.iter().map(|&mv| move_facts(position, mv).captured > 0).collect();
    let count = captures.iter().filter(|&&c| c).count();
    if count == 0 {
        return Cow::Borrowed(priors);
    }
    let each = share / count as f32;
    let shared = priors.iter().zip(&captures);
    Cow::Owned(shared.map(|(&p, &capture)| (1.0 - share) * p + f32::from(capture) * each).collect())
}

/// A node for the root, which is terminal only when the game is over: the game goes on from a
/// forced result, so the root needs its moves. With `forced_results`, a side whose opponent
/// leads on the far rows gets only the moves that take the lead away: the others lose at once,
/// so they would only cost visits, and the network's prior is shared among the answers. That is
/// what lets the solver see a race two moves deep (an invasion whose every answer allows a
/// forced win) with a visit or two per answer instead of one for every legal move.
fn new_root(position: Position, forced_results: bool) -> Node {
    let state = if position.side_to_move_has_won() {
        NodeState::Terminal(1.0)
    } else if position.ply_cap_reached() {
        NodeState::Terminal(0.0)
    } else {
        let mut moves = position.legal_moves();
        if moves.is_empty() {
            NodeState::Terminal(-1.0)
        } else {
            if forced_results {
                position.keep_repairs(&mut moves);
            }
            NodeState::Unexpanded(moves)
        }
    };
    Node { position, state, value: 0.0, draw: 0.0 }
}

impl Search {
    pub fn new(root: Position, config: SearchConfig) -> Search {
        let noise_enabled = explores(&config);
        let nodes = vec![new_root(root, config.forced_results)];
        Search {
            config,
            nodes,
            edges: Vec::new(),
            root: 0,
            pending: Vec::new(),
            noise_enabled,
            visit_target: 0,
            halving: None,
        }
    }

    pub fn root_position(&self) -> &Position {
        &self.nodes[self.root as usize].position
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Visits backed up at the root (reused ones included).
    pub fn root_visits(&self) -> u32 {
        match self.nodes[self.root as usize].state {
            NodeState::Expanded { first, count } => {
                self.edges[first as usize..(first + count) as usize]
                    .iter()
                    .map(|e| e.visits)
                    .sum::<u32>()
                    + 1
            }
            NodeState::Terminal(_) => u32::MAX,
            _ => 0,
        }
    }

    /// Whether the root is a finished game (nothing to search).
    pub fn root_is_terminal(&self) -> bool {
        matches!(self.nodes[self.root as usize].state, NodeState::Terminal(_))
    }

    /// Leaves sent out and not yet applied.
    pub fn pending_count(&self) -> usize {
        self.pending.iter().filter(|p| p.is_some()).count()
    }

    /// Nodes in the arena (for memory accounting and tests).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    fn children(&self, node: u32) -> std::ops::Range<usize> {
        match self.nodes[node as usize].state {
            NodeState::Expanded { first, count } => first as usize..(first + count) as usize,
            _ => 0..0,
        }
    }

    /// The PUCT choice among the children of an expanded node.
    fn select(&self, node: u32) -> u32 {
        let range = self.children(node);
        let edges = &self.edges[range.clone()];
        let parent_visits: u32 = edges.iter().map(|e| e.visits + e.virtual_visits).sum();
        let sqrt_parent = (parent_visits.max(1) as f32).sqrt();
        let fpu = match self.config.fpu {
            Fpu::Const { value } => value,
            Fpu::ParentReduction { reduction } => {
                let visited_mass: f32 = edges
                    .iter()
                    .filter(|e| e.visits + e.virtual_visits > 0)
                    .map(|e| e.search_prior)
                    .sum();
                let parent_q = self.node_q(node);
                parent_q - reduction * visited_mass.sqrt()
            }
        };
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for (i, edge) in edges.iter().enumerate() {
            // Proven results decide alone: a won move is taken at once, a lost one only when
            // nothing else is left (its score stays -inf, so it can still be the `best`).
            match self.proven(edge) {
                Some(Proof::Won) => return (range.start + i) as u32,
                Some(Proof::Lost) => continue,
                None => {}
            }
            let n = edge.visits + edge.virtual_visits;
            let q =
                if n == 0 { fpu } else { (edge.value_sum - edge.virtual_visits as f32) / n as f32 };
            let score = q + self.config.c_puct * edge.search_prior * sqrt_parent / (1 + n) as f32;
            if score > best_score {
                best_score = score;
                best = range.start + i;
            }
        }
        best as u32
    }

    /// The mean value of a node for its side to move: its own evaluation and everything
    /// backed up below it.
    fn node_q(&self, node: u32) -> f32 {
        let edges = &self.edges[self.children(node)];
        let visits: u32 = edges.iter().map(|e| e.visits).sum();
        let sum: f32 = edges.iter().map(|e| e.value_sum).sum();
        (self.nodes[node as usize].value + sum) / (1 + visits) as f32
    }

    /// What is proven about the mover's result after `edge`: its child is a finished game (or
    /// a forced result, or a node the solver has proven) for the side to move there.
    fn proven(&self, edge: &Edge) -> Option<Proof> {
        if edge.child == NO_NODE {
            return None;
        }
        match self.nodes[edge.child as usize].state {
            NodeState::Terminal(v) if v <= -1.0 => Some(Proof::Won),
            NodeState::Terminal(v) if v >= 1.0 => Some(Proof::Lost),
            _ => None,
        }
    }

    /// MCTS-solver: after a walk ended in a proven result, marks the nodes above it proven too,
    /// bottom up, while that holds: a node with a won move is won, one whose every move is lost
    /// is lost. The root stays searchable (the game goes on from it).
    fn propagate_proofs(&mut self, path: &[u32]) {
        for k in (1..path.len()).rev() {
            let node = self.edges[path[k - 1] as usize].child;
            let edges = &self.edges[self.children(node)];
            let value = if edges.iter().any(|e| self.proven(e) == Some(Proof::Won)) {
                1.0
            } else if edges.iter().all(|e| self.proven(e) == Some(Proof::Lost)) {
                -1.0
            } else {
                return;
            };
            self.nodes[node as usize].state = NodeState::Terminal(value);
        }
    }

    /// Walks from the root to a leaf by PUCT.
    pub fn gather(&mut self) -> Gathered {
        let mut node = self.root;
        let mut path: Vec<u32> = Vec::new();
        loop {
            match &self.nodes[node as usize].state {
                NodeState::Terminal(value) => {
                    let value = *value;
                    // A finished game's value is exact: 0 is a draw (the ply cap), +-1 is not.
                    let draw = Wdl::certain(value).draw;
                    self.backup(&path, value, draw);
                    self.propagate_proofs(&path);
                    return Gathered::Terminal;
                }
                NodeState::Pending => return Gathered::Collision,
                NodeState::Unexpanded(_) => {
                    let NodeState::Unexpanded(moves) =
                        std::mem::replace(&mut self.nodes[node as usize].state, NodeState::Pending)
                    else {
                        unreachable!()
                    };
                    for &e in &path {
                        self.edges[e as usize].virtual_visits += 1;
                    }
                    let request =
                        EvalRequest { position: self.nodes[node as usize].position, moves };
                    let token = LeafToken(self.pending.len());
                    self.pending.push(Some(PendingLeaf { node, path }));
                    return Gathered::Leaf { token, request };
                }
                NodeState::Expanded { .. } => {
                    let edge = match self.halving.take() {
                        Some(mut halving) if node == self.root => {
                            let edge = self.select_by_halving(&mut halving);
                            self.halving = Some(halving);
                            edge
                        }
                        halving => {
                            self.halving = halving;
                            self.select(node)
                        }
                    };
                    path.push(edge);
                    let child = self.edges[edge as usize].child;
                    node = if child == NO_NODE {
                        let position = self.nodes[node as usize]
                            .position
                            .play_unchecked(self.edges[edge as usize].mv);
                        self.nodes.push(new_node(position, self.config.forced_results));
                        let id = (self.nodes.len() - 1) as u32;
                        self.edges[edge as usize].child = id;
                        id
                    } else {
                        child
                    };
                }
            }
        }
    }

    /// Expands a gathered leaf with its evaluation and backs the value up.
    pub fn apply(
        &mut self,
        token: LeafToken,
        request: EvalRequest,
        evaluation: Evaluation,
        rng: &mut impl Rng,
    ) {
        let Some(PendingLeaf { node, path }) = self.pending.get_mut(token.0).and_then(Option::take)
        else {
            return;
        };
        if self.pending.iter().all(Option::is_none) {
            self.pending.clear();
        }
        let first = self.edges.len() as u32;
        let shared = with_capture_share(&request, &evaluation.priors, self.config.capture_prior);
        for ((mv, prior), search_prior) in
            request.moves.iter().zip(&evaluation.priors).zip(shared.iter())
        {
            self.edges.push(Edge {
                mv: *mv,
                prior: *prior,
                search_prior: *search_prior,
                child: NO_NODE,
                visits: 0,
                value_sum: 0.0,
                draw_sum: 0.0,
                virtual_visits: 0,
            });
        }
        // The edges pushed, should an evaluation ever bring fewer priors than moves.
        let count = self.edges.len() as u32 - first;
        let value = evaluation.value.clamp(-1.0, 1.0);
        let draw = evaluation.draw.clamp(0.0, 1.0);
        let draw_value = self.config.draw_value;
        let leaf = &mut self.nodes[node as usize];
        leaf.state = NodeState::Expanded { first, count };
        leaf.value = value + draw_value * draw;
        leaf.draw = draw;
        for &e in &path {
            self.edges[e as usize].virtual_visits -= 1;
        }
        if node == self.root {
            if self.noise_enabled {
                self.explore_root(rng);
            }
            self.expand_forced_win_at_root(first as usize, &request);
        }
        self.backup(&path, value, draw);
    }

    /// Nodes below the root find their forced wins when they are made ([`new_node`]); the root
    /// is made searchable instead, so its forced win, if it has one, gets its child at once. The
    /// child is a proven loss for the opponent, so selection and the choice of move both go
    /// there from the first visit, where a search would otherwise have to reach the move by
    /// its prior, and one prior among a hundred moves may not be reached in a short search.
    fn expand_forced_win_at_root(&mut self, first: usize, request: &EvalRequest) {
        if !self.config.forced_results {
            return;
        }
        let Some(Forced::Win(mv)) = request.position.forced_in_two(&request.moves) else { return };
        let Some(offset) = request.moves.iter().position(|&m| m == mv) else { return };
        self.nodes.push(new_node(request.position.play_unchecked(mv), true));
        self.edges[first + offset].child = (self.nodes.len() - 1) as u32;
    }

    /// Adds a leaf's utility to every edge on the path: its value (for the side to move at the
    /// leaf) with the sign of the side choosing each edge, plus `draw_value` times its draw
    /// probability, which is the same for both sides.
    fn backup(&mut self, path: &[u32], leaf_value: f32, leaf_draw: f32) {
        let mut value = leaf_value;
        let draw_term = self.config.draw_value * leaf_draw;
        for &e in path.iter().rev() {
            // The edge into a node is chosen by the other side.
            value = -value;
            let edge = &mut self.edges[e as usize];
            edge.visits += 1;
            edge.value_sum += value + draw_term;
            edge.draw_sum += leaf_draw;
        }
    }

    /// Starts the root's exploration once per search: a Gumbel root's sample and schedule.
    fn explore_root(&mut self, rng: &mut impl Rng) {
        let Some(gumbel) = self.config.root_noise.gumbel() else { return };
        if self.children(self.root).is_empty() || self.halving.is_some() {
            return;
        }
        self.halving = Some(self.start_halving(gumbel, rng));
    }

    /// Samples a Gumbel root's considered moves: the top `considered` by Gumbel noise plus log
    /// prior, which draws them without replacement in proportion to the priors.
    fn start_halving(&self, gumbel: GumbelRoot, rng: &mut impl Rng) -> Halving {
        let edges = &self.edges[self.children(self.root)];
        let noisy_logits: Vec<f32> = edges
            .iter()
            .map(|e| {
                let uniform: f32 = rng.random_range(f32::EPSILON..1.0);
                -(-uniform.ln()).ln() + e.prior.max(1e-12).ln()
            })
            .collect();
        let mut order: Vec<usize> = (0..edges.len()).collect();
        order.sort_by(|&a, &b| noisy_logits[b].total_cmp(&noisy_logits[a]));
        order.truncate(gumbel.considered as usize);
        let considered = order.len() as u32;
        let mut halving = Halving {
            gumbel,
            noisy_logits,
            remaining: order,
            base: edges.iter().map(|e| e.visits).collect(),
            budget: self.visit_target.saturating_sub(self.root_visits()),
            phases: considered.next_power_of_two().trailing_zeros().max(1),
            phase_target: 0,
        };
        halving.phase_target = halving.phase_visits();
        halving
    }

    /// The root move a Gumbel search visits next: a proven win at once; else the remaining move
    /// with the fewest new visits, until every one has its phase's share, when the better half
    /// of them (by Gumbel noise, log prior and searched value), at least two, goes on to the
    /// next phase.
    fn select_by_halving(&self, halving: &mut Halving) -> u32 {
        let range = self.children(self.root);
        let edges = &self.edges[range.clone()];
        if let Some(won) = edges.iter().position(|e| self.proven(e) == Some(Proof::Won)) {
            return (range.start + won) as u32;
        }
        if halving.remaining.iter().any(|&i| self.proven(&edges[i]).is_none()) {
            halving.remaining.retain(|&i| self.proven(&edges[i]).is_none());
        }
        loop {
            let new_visits = |i: usize| edges[i].visits + edges[i].virtual_visits - halving.base[i];
            let next = *halving
                .remaining
                .iter()
                .min_by_key(|&&i| new_visits(i))
                .expect("a halving keeps at least one move");
            // A single move is left only when one was considered or the rest were lost.
            if halving.remaining.len() == 1 || new_visits(next) < halving.phase_target {
                return (range.start + next) as u32;
            }
            let scores = self.halving_scores(halving);
            halving.remaining.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            // Down to two, as DeepMind's `mctx` does: the last visits go to the final pair.
            let kept = (halving.remaining.len() / 2).max(2);
            halving.remaining.truncate(kept);
            halving.phase_target += halving.phase_visits();
        }
    }

    /// Per root move: Gumbel noise, log prior and transformed searched value, by which the
    /// halving ranks its moves and picks the one to play.
    fn halving_scores(&self, halving: &Halving) -> Vec<f32> {
        let sigma = self.transformed_values(halving.gumbel);
        halving.noisy_logits.iter().zip(sigma).map(|(logit, value)| logit + value).collect()
    }

    /// Per root move, σ of its completed value (Danihelka et al.): its mean value if visited,
    /// else the root's value mixed with the prior-weighted values of the visited moves;
    /// rescaled to [0, 1] over the root's moves, times `(c_visit + most visits) * c_scale`.
    fn transformed_values(&self, gumbel: GumbelRoot) -> Vec<f32> {
        let edges = &self.edges[self.children(self.root)];
        let visits: u32 = edges.iter().map(|e| e.visits).sum();
        let (mut mass, mut weighted) = (0.0f32, 0.0f32);
        for edge in edges.iter().filter(|e| e.visits > 0) {
            mass += edge.prior;
            weighted += edge.prior * edge.mean_value();
        }
        let own = self.nodes[self.root as usize].value;
        let mixed = if mass > 0.0 {
            (own + visits as f32 * weighted / mass) / (1 + visits) as f32
        } else {
            own
        };
        let completed: Vec<f32> =
            edges.iter().map(|e| if e.visits > 0 { e.mean_value() } else { mixed }).collect();
        let low = completed.iter().copied().fold(f32::INFINITY, f32::min);
        let high = completed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let most = edges.iter().map(|e| e.visits).max().unwrap_or(0);
        let scale = (gumbel.c_visit + most as f32) * gumbel.c_scale;
        completed.iter().map(|q| scale * (q - low) / (high - low).max(1e-6)).collect()
    }

    /// A Gumbel search's policy target: softmax of log prior plus transformed value over every
    /// root move, a proven win taking all of it and proven losses none; moves under a
    /// thousandth are left out (their share goes to the rest when the target is normalised).
    fn improved_policy(&self, gumbel: GumbelRoot) -> Vec<(Move, f32)> {
        let edges = &self.edges[self.children(self.root)];
        let (allowed, _) = self.allowed_root_moves();
        let sigma = self.transformed_values(gumbel);
        let logits: Vec<f32> = edges
            .iter()
            .zip(sigma)
            .zip(allowed)
            .map(
                |((edge, value), allowed)| {
                    if allowed {
                        edge.prior.max(1e-12).ln() + value
                    } else {
                        f32::NEG_INFINITY
                    }
                },
            )
            .collect();
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = logits.iter().map(|l| (l - top).exp()).collect();
        let total: f32 = exps.iter().sum::<f32>().max(f32::MIN_POSITIVE);
        edges
            .iter()
            .zip(exps)
            .map(|(edge, e)| {
                let p = e / total;
                (edge.mv, if p < 1e-3 { 0.0 } else { p })
            })
            .collect()
    }

    /// Visit counts and values at the root.
    pub fn summary(&self) -> RootSummary {
        let moves = self.edges[self.children(self.root)]
            .iter()
            .map(|e| (e.mv, e.visits, e.prior, e.mean_value()))
            .collect();
        let edges = &self.edges[self.children(self.root)];
        let value = match self.nodes[self.root as usize].state {
            NodeState::Terminal(v) => v,
            _ if edges.iter().any(|e| self.proven(e) == Some(Proof::Won)) => 1.0,
            _ if !edges.is_empty() && edges.iter().all(|e| self.proven(e) == Some(Proof::Lost)) => {
                -1.0
            }
            _ => self.node_q(self.root),
        };
        RootSummary { moves, value, visits: self.root_visits() }
    }

    /// The searched chances of a win, a draw and a loss for the side to move at the root: what
    /// is proven when something is, else the average over the root's own evaluation and every
    /// visit below it (the utility `node_q` averages, with the draw share taken back out of it).
    /// None before the root is evaluated.
    pub fn root_wdl(&self) -> Option<Wdl> {
        let root = &self.nodes[self.root as usize];
        let edges = &self.edges[self.children(self.root)];
        match root.state {
            NodeState::Terminal(value) => return Some(Wdl::certain(value)),
            NodeState::Expanded { .. } => {}
            _ => return None,
        }
        if edges.iter().any(|e| self.proven(e) == Some(Proof::Won)) {
            return Some(Wdl::certain(1.0));
        }
        if !edges.is_empty() && edges.iter().all(|e| self.proven(e) == Some(Proof::Lost)) {
            return Some(Wdl::certain(-1.0));
        }
        let visits: u32 = edges.iter().map(|e| e.visits).sum();
        let draw =
            (root.draw + edges.iter().map(|e| e.draw_sum).sum::<f32>()) / (1 + visits) as f32;
        let value = self.node_q(self.root) - self.config.draw_value * draw;
        Some(Wdl::from_value_and_draw(value, draw))
    }

    /// The expected line: from the root, the most visited move at each step, while visited.
    pub fn principal_variation(&self, max_len: usize) -> Vec<Move> {
        let mut line = Vec::new();
        let mut node = self.root;
        while line.len() < max_len {
            let Some(best) = self.edges[self.children(node)]
                .iter()
                .filter(|e| e.visits > 0)
                .max_by_key(|e| e.visits)
            else {
                break;
            };
            line.push(best.mv);
            if best.child == NO_NODE {
                break;
            }
            node = best.child;
        }
        line
    }

    /// The root's visit counts with what is proven applied, in generation order: a proven win
    /// takes all the weight, proven losses none (unless every move is lost). Moves are chosen
    /// from these, and self-play learns them as its policy target.
    pub fn root_choices(&self) -> Vec<(Move, u32)> {
        let edges = &self.edges[self.children(self.root)];
        let (allowed, won) = self.allowed_root_moves();
        edges
            .iter()
            .zip(allowed)
            .map(|(e, allowed)| match (allowed, won) {
                (false, _) => (e.mv, 0),
                (true, Some(_)) => (e.mv, e.visits.max(1)),
                (true, None) => (e.mv, e.visits),
            })
            .collect()
    }

    /// Which root moves the proofs leave to choose from, and the proven win if there is one: a
    /// proven win alone (the first, if several), else every move not proven lost, or every move
    /// when all are lost.
    fn allowed_root_moves(&self) -> (Vec<bool>, Option<usize>) {
        let edges = &self.edges[self.children(self.root)];
        let proofs: Vec<Option<Proof>> = edges.iter().map(|e| self.proven(e)).collect();
        if let Some(won) = proofs.iter().position(|p| *p == Some(Proof::Won)) {
            return ((0..edges.len()).map(|i| i == won).collect(), Some(won));
        }
        let all_lost = proofs.iter().all(|p| *p == Some(Proof::Lost));
        (proofs.iter().map(|p| all_lost || *p != Some(Proof::Lost)).collect(), None)
    }

    /// Self-play's policy target: a Gumbel search's improved policy (probabilities over every
    /// move, see [`GumbelRoot`]), else [`Search::root_choices`] as weights.
    pub fn policy_target(&self) -> Vec<(Move, f32)> {
        match &self.halving {
            Some(halving) => self.improved_policy(halving.gumbel),
            None => self.root_choices().into_iter().map(|(mv, n)| (mv, n as f32)).collect(),
        }
    }

    /// The move to play: the most chosen by [`Search::root_choices`] (ties to the higher prior)
    /// at temperature 0, else drawn with probability proportional to choices^(1/temperature).
    /// A Gumbel search plays the best of its remaining moves by noise, prior and value, whatever
    /// the temperature: its noise is its exploration.
    pub fn choose_move(&self, temperature: f32, rng: &mut impl Rng) -> Option<Move> {
        let edges = &self.edges[self.children(self.root)];
        if edges.is_empty() {
            return None;
        }
        if let Some(halving) = &self.halving {
            return Some(self.halving_choice(halving));
        }
        let counts: Vec<u32> = self.root_choices().into_iter().map(|(_, n)| n).collect();
        // With a tiny budget a move may be unvisited yet not lost: it goes before a lost one.
        let by_prior =
            |i: usize| (counts[i], self.proven(&edges[i]) != Some(Proof::Lost), edges[i].prior);
        if temperature <= 1e-3 {
            return (0..edges.len())
                .max_by(|&a, &b| {
                    by_prior(a).partial_cmp(&by_prior(b)).unwrap_or(std::cmp::Ordering::Equal)
                })
                .map(|i| edges[i].mv);
        }
        let weights: Vec<f64> =
            counts.iter().map(|&n| (n as f64).powf(1.0 / temperature as f64)).collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return edges.iter().max_by(|a, b| a.prior.total_cmp(&b.prior)).map(|e| e.mv);
        }
        let mut pick = rng.random::<f64>() * total;
        for (edge, w) in edges.iter().zip(weights) {
            if pick < w {
                return Some(edge.mv);
            }
            pick -= w;
        }
        edges.last().map(|e| e.mv)
    }

    /// A Gumbel search's move: the best by [`Search::halving_scores`] of the remaining moves
    /// the proofs allow ([`Search::allowed_root_moves`]), or of all they allow when they allow
    /// none of those (a proven win elsewhere, every considered move lost).
    fn halving_choice(&self, halving: &Halving) -> Move {
        let edges = &self.edges[self.children(self.root)];
        let (allowed, _) = self.allowed_root_moves();
        let mut pool: Vec<usize> =
            halving.remaining.iter().copied().filter(|&i| allowed[i]).collect();
        if pool.is_empty() {
            pool = (0..edges.len()).filter(|&i| allowed[i]).collect();
        }
        let scores = self.halving_scores(halving);
        let best = pool
            .into_iter()
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .expect("the proofs allow at least one move");
        edges[best].mv
    }

    /// Moves the root to the child reached by `mv`, keeping its subtree when tree reuse is on.
    /// Pending leaves are dropped.
    pub fn advance(&mut self, mv: Move) {
        let next = self.nodes[self.root as usize].position.play_unchecked(mv);
        let child = self.edges[self.children(self.root)]
            .iter()
            .find(|e| e.mv == mv)
            .map(|e| e.child)
            .unwrap_or(NO_NODE);
        if !self.config.reuse_tree || child == NO_NODE || self.pending_count() > 0 {
            *self = Search {
                noise_enabled: self.noise_enabled,
                ..Search::new(next, self.config.clone())
            };
            return;
        }
        self.compact(child);
        self.halving = None;
    }

    /// Sets up the next search: `visits` root visits in all (a reused subtree's count), with
    /// or without the root's noise (playout cap randomisation switches it per move). With noise
    /// on, an already expanded root gets it now: a Gumbel root's sample and schedule for the
    /// visits still to come.
    pub fn prepare(&mut self, noise: bool, visits: u32, rng: &mut impl Rng) {
        self.visit_target = visits;
        self.noise_enabled = noise && explores(&self.config);
        if !self.noise_enabled {
            self.halving = None;
        } else if matches!(self.nodes[self.root as usize].state, NodeState::Expanded { .. }) {
            self.explore_root(rng);
        }
    }

    /// Rebuilds the arena with only the subtree under `kept`, so memory stays bounded by what the
    /// next search can use.
    fn compact(&mut self, kept: u32) {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut stack = vec![(kept, u32::MAX)];
        let old_nodes = std::mem::take(&mut self.nodes);
        let old_edges = std::mem::take(&mut self.edges);
        let mut old_nodes: Vec<Option<Node>> = old_nodes.into_iter().map(Some).collect();
        while let Some((old, parent_edge)) = stack.pop() {
            let mut node = old_nodes[old as usize].take().expect("a tree, not a graph");
            let id = nodes.len() as u32;
            if parent_edge != u32::MAX {
                let edge: &mut Edge = &mut edges[parent_edge as usize];
                edge.child = id;
            }
            if let NodeState::Expanded { first, count } = node.state {
                let new_first = edges.len() as u32;
                for i in 0..count {
                    let mut edge: Edge = old_edges[(first + i) as usize].clone();
                    edge.virtual_visits = 0;
                    let old_child = edge.child;
                    edge.child = NO_NODE;
                    edges.push(edge);
                    if old_child != NO_NODE {
                        stack.push((old_child, new_first + i));
                    }
                }
                node.state = NodeState::Expanded { first: new_first, count };
            } else if matches!(node.state, NodeState::Pending) || id == 0 {
                // A leaf in flight is dropped; a forced result at the new root is not the end
                // of the game, so the root gets its moves back.
                node.state = if id == 0 {
                    new_root(node.position, self.config.forced_results)
                } else {
                    new_node(node.position, self.config.forced_results)
                }
                .state;
            }
            nodes.push(node);
        }
        self.nodes = nodes;
        self.edges = edges;
        self.root = 0;
        self.pending.clear();
    }

    /// Runs simulations until the root has `visits` visits, evaluating up to `batch` leaves of
    /// this tree per network call (virtual loss spreads them). For interactive play and tests;
    /// self-play batches across games instead.
    pub fn run(
        &mut self,
        evaluator: &mut dyn Evaluator,
        visits: u32,
        batch: usize,
        rng: &mut impl Rng,
    ) {
        if self.root_is_terminal() {
            return;
        }
        while self.root_visits() < visits {
            let walks = visits - self.root_visits();
            self.search_round(evaluator, batch, walks, rng);
        }
    }

    /// One network call's worth of search: up to `walks` walks from the root (a finished game
    /// ends one at once), stopping at `batch` leaves or a collision, then the leaves evaluated
    /// together and backed up.
    fn search_round(
        &mut self,
        evaluator: &mut dyn Evaluator,
        batch: usize,
        walks: u32,
        rng: &mut impl Rng,
    ) {
        let mut leaves = Vec::new();
        let mut walks = walks;
        while leaves.len() < batch.max(1) && walks > 0 {
            match self.gather() {
                Gathered::Leaf { token, request } => leaves.push((token, request)),
                Gathered::Terminal => {}
                Gathered::Collision => break,
            }
            walks -= 1;
        }
        if leaves.is_empty() {
            return;
        }
        let requests: Vec<EvalRequest> = leaves.iter().map(|(_, r)| r.clone()).collect();
        let evaluations = evaluator.evaluate(&requests);
        for ((token, request), evaluation) in leaves.into_iter().zip(evaluations) {
            self.apply(token, request, evaluation, rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share is spread evenly over the captures and the rest keeps the network's
    /// proportions; a position without captures, or a share of 0, keeps the priors.
    #[test]
    fn a_capture_share_is_spread_over_the_captures() {
        let request = |fen: &str| {
            let position: Position = fen.parse().unwrap();
            EvalRequest { moves: position.legal_moves(), position }
        };
        // White's a2-a3 phalanx takes Black's a4 (one square); nothing else captures.
        let taking = request("13b/14/14/14/14/14/14/14/b13/w13/w13/13w w");
        let quiet = request("13b/14/14/14/14/14/14/14/14/14/14/13w w");
        let n = taking.moves.len();
        let priors: Vec<f32> = (0..n).map(|i| (i + 1) as f32).collect();
        let total: f32 = priors.iter().sum();
        let priors: Vec<f32> = priors.iter().map(|p| p / total).collect();
        let is_capture = |mv: &Move| move_facts(&taking.position, *mv).captured > 0;
        let captures = taking.moves.iter().filter(|mv| is_capture(mv)).count();
        assert!(captures >= 1 && captures < n);
        let shared = with_capture_share(&taking, &priors, 0.25);
        for ((mv, &prior), &got) in taking.moves.iter().zip(&priors).zip(shared.iter()) {
            let bonus = if is_capture(mv) { 0.25 / captures as f32 } else { 0.0 };
            assert!((got - (0.75 * prior + bonus)).abs() < 1e-6, "{mv}: {got}");
        }
        assert!((shared.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(&*with_capture_share(&taking, &priors, 0.0), &priors[..]);
        let uniform = vec![1.0 / quiet.moves.len() as f32; quiet.moves.len()];
        assert_eq!(&*with_capture_share(&quiet, &uniform, 0.5), &uniform[..]);
    }
}
