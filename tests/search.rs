//! Search against positions whose answer the rules decide, with a uniform evaluator (so only the
//! search's own logic and terminal values can find it), and with a real network for invariants.

mod common;

use common::{forces_win, hands_over_win};
use epaminondas::evaluator::{EvalRequest, Evaluation, Evaluator, UniformEvaluator, Wdl};
use epaminondas::game::{Color, Move, Position};
use epaminondas::mcts::{GumbelRoot, RootNoise, Search, SearchConfig};
use epaminondas::nn::{model::NetConfig, DeviceChoice, Network, Precision};
use epaminondas::players::{Limit, PlayerSpec};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn pos(text: &str) -> Position {
    text.parse().unwrap()
}

fn search(position: Position, visits: u32, batch: usize) -> Search {
    let mut rng = StdRng::seed_from_u64(7);
    let mut search = Search::new(position, SearchConfig::default());
    search.run(&mut UniformEvaluator, visits, batch, &mut rng);
    search
}

#[test]
fn finds_a_win_in_one() {
    // White a11 can step onto row 12; Black's lone piece can neither capture it nor reach row 1.
    let p = pos("14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w");
    let winning: Vec<Move> =
        p.legal_moves().into_iter().filter(|m| forces_win(&p, *m, 1)).collect();
    assert!(!winning.is_empty() && winning.len() < p.legal_moves().len());
    for batch in [1, 8] {
        let s = search(p, 600, batch);
        let chosen = s.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
        assert!(
            winning.contains(&chosen),
            "batch {batch}: chose {chosen}, winning moves {winning:?}"
        );
        assert!(s.summary().value > 0.5, "the root value must see the win: {}", s.summary().value);
        assert_eq!(s.root_wdl(), Some(Wdl::certain(1.0)), "batch {batch}: a proven win is certain");
    }
}

#[test]
fn avoids_handing_over_a_win_in_one() {
    // Black h2 waits for a gap in g1-h1-i1; most moves of that phalanx open one. White a6 can
    // wander safely.
    let p = pos("14/14/14/14/14/14/w13/14/14/14/7b6/6www5 w");
    let moves = p.legal_moves();
    let losing = moves.iter().filter(|m| hands_over_win(&p, **m)).count();
    assert!(losing > 0 && losing < moves.len(), "the position must offer both kinds of move");
    for batch in [1, 8] {
        let s = search(p, 3000, batch);
        let chosen = s.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
        assert!(!hands_over_win(&p, chosen), "batch {batch}: {chosen} lets Black win");
    }
}

#[test]
fn black_to_move_finds_its_win_too() {
    // The same idea with colours swapped: a sign error for one side only would show here.
    let p = pos("3b10/14/14/14/7w6/14/14/14/14/14/b13/14 b");
    let s = search(p, 600, 4);
    let chosen = s.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
    assert!(forces_win(&p, chosen, 1), "chose {chosen}");
    assert_eq!(p.side_to_move(), Color::Black);
}

/// An evaluator sure of one move: it gets `weight` of the prior wherever it is legal.
struct Infatuated {
    favourite: Move,
    weight: f32,
}

impl Evaluator for Infatuated {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|request| {
                let n = request.moves.len() as f32;
                let favoured = request.moves.contains(&self.favourite);
                let rest =
                    if favoured { (1.0 - self.weight) / (n - 1.0).max(1.0) } else { 1.0 / n };
                let priors = request
                    .moves
                    .iter()
                    .map(|&mv| if mv == self.favourite { self.weight } else { rest })
                    .collect();
                Evaluation { priors, value: 0.0, draw: 0.0 }
            })
            .collect()
    }
}

#[test]
fn a_lost_move_does_not_win_the_vote_however_strong_its_prior() {
    // Black's j column has run to j1 (the arena game this comes from): White must take it with
    // one of four captures, and the network behind the real game preferred d4-d5 instead.
    let before = pos("1bbbbb4b1bb/b1bbb1bb2bb2/2b1b3bb4/3b4bbb3/3ww4b4/4w4b4/4w4b4/14/3w10/14/www3www2www/www4ww1wwww b 17");
    let p = before.play(before.parse_move("j10-j5").unwrap()).unwrap();
    let blunder = p.parse_move("d4-d5").unwrap();
    for forced_results in [true, false] {
        let config = SearchConfig { forced_results, ..SearchConfig::default() };
        let mut search = Search::new(p, config);
        search.run(
            &mut Infatuated { favourite: blunder, weight: 0.9 },
            200,
            8,
            &mut StdRng::seed_from_u64(3),
        );
        let chosen = search.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
        let captures = ["h1xi1", "l1xk1", "m1xl1", "n1xm1"];
        assert!(
            captures.contains(&p.notation(chosen).as_str()),
            "forced_results {forced_results}: chose {}",
            p.notation(chosen)
        );
        assert!(
            search
                .root_choices()
                .iter()
                .all(|&(mv, n)| n == 0 || captures.contains(&p.notation(mv).as_str())),
            "lost moves get no weight"
        );
    }
}

#[test]
fn a_forced_win_below_the_root_is_seen_at_once() {
    // White's column on a lands on a12 out of Black's reach: decided after one move, which the
    // search knows from the rules, without visiting Black's replies.
    let p = pos("13b/14/14/14/14/w13/w13/w13/w13/w13/w13/14 w 10");
    let s = search(p, 300, 8);
    // Either the run now or a shorter column that keeps a run for the next move (the solver
    // proves both).
    let chosen = s.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
    assert_eq!(s.summary().value, 1.0, "chose {chosen}");
    let mut s = s;
    s.advance(chosen);
    // The game goes on from a decided position: the root must still offer Black its moves.
    assert!(!s.root_is_terminal());
    s.run(&mut UniformEvaluator, 50, 4, &mut StdRng::seed_from_u64(2));
    assert!(s.choose_move(0.0, &mut StdRng::seed_from_u64(1)).is_some());
    assert_eq!(s.summary().value, -1.0, "every Black move is lost");
}

/// From a game the 8x96 agent lost to greedy (see tests/forced.rs): Black has just taken
/// White's invader on a12, and White, to move, wins the corner by retaking it with d9xc10.
const CORNER_RETAKEN: &str = "bbb2bbbbbbbbb/bwb1bbbbbb2b1/2w1b8b/3wb9/14/4b9/14/14/9ww3/7ww3w1/wwwwww3w2ww/wwwww3www1ww w 14";
/// The ply before: Black to move with White on a12; every capture of it loses the corner.
const CORNER_INVADED: &str = "wbbb1bbbbbbbbb/bwb1bbbbbb2b1/2w1b8b/3wb9/14/4b9/14/14/9ww3/7ww3w1/wwwwww3w2ww/wwwww3www1ww b 13";

fn search_with(position: Position, forced_results: bool, visits: u32) -> Search {
    let mut search =
        Search::new(position, SearchConfig { forced_results, ..SearchConfig::default() });
    search.run(&mut UniformEvaluator, visits, 1, &mut StdRng::seed_from_u64(5));
    search
}

#[test]
fn a_win_two_moves_ahead_is_taken_from_the_root_at_once() {
    let p = pos(CORNER_RETAKEN);
    let retake = p.parse_move("d9xc10").unwrap();
    let s = search_with(p, true, 2);
    assert_eq!(s.choose_move(0.0, &mut StdRng::seed_from_u64(1)), Some(retake));
    assert_eq!(s.summary().value, 1.0);
    // Without the check, one move among a hundred with a uniform prior is not even visited.
    let s = search_with(p, false, 2);
    assert_ne!(s.choose_move(0.0, &mut StdRng::seed_from_u64(1)), Some(retake));
    assert!(s.summary().value < 1.0);
}

#[test]
fn a_position_under_attack_searches_only_its_answers() {
    let invaded = pos(CORNER_INVADED);
    let mut answers = invaded.legal_moves();
    invaded.keep_repairs(&mut answers);
    assert!(!answers.is_empty() && answers.len() * 10 < invaded.legal_moves().len());
    // Each answer leads to a win two moves ahead for White, so a visit to each proves the loss.
    let s = search_with(invaded, true, answers.len() as u32 + 1);
    let searched: Vec<Move> = s.summary().moves.iter().map(|m| m.0).collect();
    assert_eq!(searched, answers);
    assert_eq!(s.summary().value, -1.0);
    // Without forced results every legal move is searched, and the same budget proves nothing.
    let s = search_with(invaded, false, answers.len() as u32 + 1);
    assert_eq!(s.summary().moves.len(), invaded.legal_moves().len());
    assert!(s.summary().value > -1.0);
}

#[test]
fn network_search_invariants() {
    // Noisy weights: a fresh network's zeroed output layers give uniform priors and value 0,
    // which would pass the checks of the evaluation below whatever the network did.
    let mut net = common::noisy_tiny_network(3, 0.1);
    let start = Position::standard();
    let moves = start.legal_moves();
    let evaluation =
        net.evaluate(&[EvalRequest { position: start, moves: moves.clone() }]).remove(0);
    assert_eq!(evaluation.priors.len(), moves.len());
    assert!((evaluation.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    let (low, high) =
        evaluation.priors.iter().fold((1.0f32, 0.0f32), |(l, h), &p| (l.min(p), h.max(p)));
    assert!(high > 1.5 * low, "priors not uniform: {low} to {high}");
    assert!(evaluation.value != 0.0 && (-1.0..=1.0).contains(&evaluation.value));
    let mut rng = StdRng::seed_from_u64(5);
    let mut search = Search::new(start, SearchConfig::default());
    search.run(&mut net, 200, 16, &mut rng);
    let summary = search.summary();
    // The root's own evaluation is one visit; the rest went to the children.
    assert_eq!(summary.moves.iter().map(|m| m.1).sum::<u32>() + 1, 200);
    assert_eq!(summary.visits, 200);
    assert!((summary.moves.iter().map(|m| m.2).sum::<f32>() - 1.0).abs() < 1e-4);
    assert!((-1.0..=1.0).contains(&summary.value));
    assert_eq!(search.pending_count(), 0);
}

/// `leaves=N` in a net player's spec is how many leaves its search sends to the network at a
/// time: with 1 it searches exactly as a one-leaf-at-a-time search does, with 8 as one that
/// gathers eight under virtual loss, and the two differ.
#[test]
fn a_net_player_sends_the_leaves_its_spec_asks_for() {
    // A trained agent: a fresh network values every position at 0, which no search order changes.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/anchored-values-6x64-step1600.safetensors");
    let start = Position::standard();
    let searched = |batch: usize| {
        let mut net =
            Network::load(&path, tch::Device::Cpu).unwrap().0.into_inference(Precision::F32);
        let mut search = Search::new(start, SearchConfig::default());
        search.run(&mut net, 40, batch, &mut StdRng::seed_from_u64(1));
        search.summary().value
    };
    let played = |leaves: &str| {
        let spec: PlayerSpec =
            format!("net:{}:sims=40:precision=f32{leaves}", path.display()).parse().unwrap();
        let decision = spec.build(DeviceChoice::Cpu, 1).unwrap().choose(&start, Limit::default());
        assert_eq!(decision.nodes, 40);
        decision.value.unwrap()
    };
    let (one, eight) = (searched(1), searched(8));
    assert!((one - eight).abs() > 1e-3, "one leaf at a time {one}, eight {eight}");
    assert!(
        (played(":leaves=1") - one).abs() < 1e-5,
        "leaves=1: {} against {one}",
        played(":leaves=1")
    );
    assert!((played("") - eight).abs() < 1e-5, "the default: {} against {eight}", played(""));
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let mut search = search(Position::standard(), 300, 8);
    let mv = search.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
    let child_visits = search.summary().moves.iter().find(|m| m.0 == mv).unwrap().1;
    search.advance(mv);
    assert_eq!(search.root_position(), &Position::standard().play_unchecked(mv));
    assert_eq!(search.root_visits(), child_visits, "the reused root keeps the visits below it");
}

#[test]
fn finished_root_is_not_searched() {
    let won = pos("w13/14/14/14/14/14/14/14/14/14/7b6/14 w");
    assert!(won.side_to_move_has_won());
    let s = search(won, 50, 4);
    assert!(s.root_is_terminal());
    assert_eq!(s.choose_move(0.0, &mut StdRng::seed_from_u64(1)), None);
    assert_eq!(s.root_wdl(), Some(Wdl::certain(1.0)));
    // An unsearched root has no searched chances yet.
    assert_eq!(Search::new(Position::standard(), SearchConfig::default()).root_wdl(), None);
}

#[test]
fn checkpoint_round_trip_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.safetensors");
    let config = NetConfig::named("tiny").unwrap();
    // Noisy weights, so that a load that lost any tensor would show (a fresh network's zeroed
    // output layers answer alike whatever its trunk holds).
    let mut net = common::noisy_tiny_network(1, 0.1);
    let mut extra = std::collections::BTreeMap::new();
    extra.insert("generation".to_string(), "3".to_string());
    net.save(&path, &extra).unwrap();
    let (mut loaded, metadata) = Network::load(&path, tch::Device::Cpu).unwrap();
    assert_eq!(loaded.config, config);
    assert_eq!(metadata["generation"], "3");
    let again = dir.path().join("again.safetensors");
    loaded.save(&again, &extra).unwrap();
    assert_eq!(
        common::tensors(&path),
        common::tensors(&again),
        "every tensor survives the round trip"
    );
    let request = vec![EvalRequest {
        position: Position::standard(),
        moves: Position::standard().legal_moves(),
    }];
    assert_eq!(net.evaluate(&request), loaded.evaluate(&request));

    // Truncated: a clear error naming the file, never a panic.
    let bytes = std::fs::read(&path).unwrap();
    let broken = dir.path().join("broken.safetensors");
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();
    let error = Network::load(&broken, tch::Device::Cpu).err().unwrap().to_string();
    assert!(error.contains("broken.safetensors"), "{error}");
    // Not ours at all.
    std::fs::write(&broken, b"hello").unwrap();
    let error = Network::load(&broken, tch::Device::Cpu).err().unwrap().to_string();
    assert!(error.contains("broken.safetensors"), "{error}");
    // A config that does not match the tensors (same length, so the header stays readable):
    // the error names the tensor and both shapes.
    let needle = br#"\"channels\":16"#;
    let at = bytes.windows(needle.len()).position(|w| w == needle).expect("the stored config");
    let mut edited = bytes.clone();
    edited[at + needle.len() - 1] = b'2'; // 16 -> 12
    let lying = dir.path().join("lying.safetensors");
    std::fs::write(&lying, &edited).unwrap();
    let error =
        Network::load(&lying, tch::Device::Cpu).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("has shape") && error.contains("lying.safetensors"), "{error}");
    // A config far larger than the file's weights is refused before a network of its size is
    // made (a damaged one could ask for gigabytes): 9 blocks of 99 channels need 1,587,762.
    let mut edited = bytes.clone();
    edited[at + needle.len() - 2..at + needle.len()].copy_from_slice(b"99");
    let needle = br#"\"blocks\":1"#;
    let at = edited.windows(needle.len()).position(|w| w == needle).expect("the stored config");
    edited[at + needle.len() - 1] = b'9';
    std::fs::write(&lying, &edited).unwrap();
    let error =
        Network::load(&lying, tch::Device::Cpu).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("needs at least 1587762 weights"), "{error}");
    // A shape no network may have is named as the file's, before anything is made.
    edited[at + needle.len() - 1] = b'0';
    std::fs::write(&lying, &edited).unwrap();
    let error =
        Network::load(&lying, tch::Device::Cpu).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("bad net_config: blocks must be") && error.contains("lying"), "{error}");
}

/// An evaluator that calls a position drawn (draw probability 1) when White has a piece on a2,
/// and otherwise slightly better for Black.
struct DrawnOnA2;

impl Evaluator for DrawnOnA2 {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let a2 = epaminondas::game::Square::parse("a2", 14, 12).unwrap();
        batch
            .iter()
            .map(|request| {
                let priors = vec![1.0 / request.moves.len() as f32; request.moves.len()];
                let p = &request.position;
                if p.pieces(Color::White).contains(a2) {
                    Evaluation { priors, value: 0.0, draw: 1.0 }
                } else {
                    let value = if p.side_to_move() == Color::Black { 0.2 } else { -0.2 };
                    Evaluation { priors, value, draw: 0.0 }
                }
            })
            .collect()
    }
}

/// `draw_value` scores a draw the same for both sides: a line the network expects to be drawn
/// is worth the draw value to the mover, whoever moves, so a negative one turns the search away
/// from a draw towards a line it expects to be slightly worse.
#[test]
fn the_draw_value_is_the_same_for_both_sides() {
    use epaminondas::mcts::Fpu;
    // White's lone piece on a1 has three moves: a2 (a draw, says the evaluator), b1 and b2
    // (Black slightly better). Black's piece on n12 is far from everything.
    let p = pos("13b/14/14/14/14/14/14/14/14/14/14/w13 w 0");
    assert_eq!(p.legal_moves().len(), 3);
    for (draw_value, drawn_q) in [(0.0, 0.0), (-0.5, -0.5), (0.3, 0.3)] {
        // Unvisited moves first (first-play urgency 1), so four visits are: the root, each move once.
        let config =
            SearchConfig { draw_value, fpu: Fpu::Const { value: 1.0 }, ..SearchConfig::default() };
        let mut search = Search::new(p, config);
        search.run(&mut DrawnOnA2, 4, 1, &mut StdRng::seed_from_u64(1));
        let q = |text: &str| {
            search
                .summary()
                .moves
                .iter()
                .find(|m| p.notation(m.0) == text)
                .map(|m| (m.1, m.3))
                .unwrap()
        };
        assert_eq!(q("a1-a2"), (1, drawn_q), "draw_value {draw_value}");
        assert_eq!(q("a1-b1"), (1, -0.2), "draw_value {draw_value}");
        assert_eq!(q("a1-b2"), (1, -0.2), "draw_value {draw_value}");
        // The searched chances average the root's own evaluation (-0.2, no draw) with the three
        // visits (a draw, -0.2, -0.2): a draw 1/4, win - loss = -0.6 / 4. The draw value is
        // taken back out, so they do not depend on it.
        let wdl = search.root_wdl().unwrap();
        let expected = [0.3, 0.25, 0.45];
        for (got, want) in [wdl.win, wdl.draw, wdl.loss].into_iter().zip(expected) {
            assert!(
                (got - want).abs() < 1e-6,
                "draw_value {draw_value}: {wdl:?}, expected {expected:?}"
            );
        }
    }
    // When every position is a sure draw, every line is worth the draw value to whoever chooses
    // it, at every depth: the draw term must not change sign on the way up.
    struct AlwaysDrawn;
    impl Evaluator for AlwaysDrawn {
        fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            batch
                .iter()
                .map(|r| Evaluation {
                    priors: vec![1.0 / r.moves.len() as f32; r.moves.len()],
                    value: 0.0,
                    draw: 1.0,
                })
                .collect()
        }
    }
    let config = SearchConfig { draw_value: -0.3, ..SearchConfig::default() };
    let mut search = Search::new(Position::start(Default::default()).unwrap(), config);
    search.run(&mut AlwaysDrawn, 300, 4, &mut StdRng::seed_from_u64(2));
    let summary = search.summary();
    assert!(
        summary.moves.iter().filter(|m| m.1 > 3).count() >= 2,
        "the search went deeper than one ply"
    );
    for &(mv, visits, _, q) in &summary.moves {
        assert!(visits == 0 || (q + 0.3).abs() < 1e-5, "{mv}: {visits} visits, Q {q}");
    }
    assert!((summary.value + 0.3).abs() < 1e-5);
    let wdl = search.root_wdl().unwrap();
    assert!(
        (wdl.draw - 1.0).abs() < 1e-5 && wdl.win.abs() < 1e-5 && wdl.loss.abs() < 1e-5,
        "{wdl:?}"
    );
    let bad = SearchConfig { draw_value: -1.5, ..SearchConfig::default() };
    assert!(bad.validate().unwrap_err().contains("draw_value"));
}

/// An evaluator that knows the root's best move: every position where the root's mover still
/// has the pieces that move placed, and not those it moved away, is good for it (0.8), every
/// other bad (-0.8). The root's prior favours the move too.
struct OneGoodMove {
    root: Position,
    good: Move,
    prior: f32,
}

impl Evaluator for OneGoodMove {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let mover = self.root.side_to_move();
        let before = self.root.pieces(mover);
        let after = self.root.play(self.good).unwrap().pieces(mover);
        let (placed, left) = (after & !before, before & !after);
        let mut infatuated = Infatuated { favourite: self.good, weight: self.prior };
        let mut evaluations = infatuated.evaluate(batch);
        for (request, evaluation) in batch.iter().zip(&mut evaluations) {
            let pieces = request.position.pieces(mover);
            let good = (pieces & placed) == placed && (pieces & left).is_empty();
            let for_mover = if good { 0.8 } else { -0.8 };
            let to_move = request.position.side_to_move();
            evaluation.value = if to_move == mover { for_mover } else { -for_mover };
        }
        evaluations
    }
}

/// A search with a Gumbel root considering `considered` moves, `visits` root visits in all, one
/// leaf at a time; `noise` as self-play's full searches have it.
fn gumbel_search(
    evaluator: &mut dyn Evaluator,
    root: Position,
    considered: u32,
    visits: u32,
    noise: bool,
) -> Search {
    let root_noise = RootNoise::Gumbel(GumbelRoot { considered, ..GumbelRoot::default() });
    let mut search = Search::new(root, SearchConfig { root_noise, ..SearchConfig::default() });
    let mut rng = StdRng::seed_from_u64(3);
    search.prepare(noise, visits, &mut rng);
    search.run(evaluator, visits, 1, &mut rng);
    search
}

/// Sequential halving: 8 of the start's 114 moves are considered, and the 63 simulations after
/// the root's own are shared by phases of 63 / 3 each: 2 visits to each of the 8, 5 more to each
/// of the better 4, 10 more to each of the better 2, and what is left (7) to the last two.
#[test]
fn a_gumbel_root_shares_its_visits_by_sequential_halving() {
    let root = Position::start(Default::default()).unwrap();
    let search = gumbel_search(&mut UniformEvaluator, root, 8, 64, true);
    let mut visits: Vec<u32> =
        search.summary().moves.iter().map(|m| m.1).filter(|&n| n > 0).collect();
    visits.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(visits, [21, 20, 7, 7, 2, 2, 2, 2]);
}

/// After a move, the reused subtree's visits count towards the next search's target, and the
/// halving shares out only the visits still to come: 48 among 8 moves, 16 a phase.
#[test]
fn a_gumbel_root_shares_only_the_visits_a_reused_subtree_leaves() {
    let root = Position::start(Default::default()).unwrap();
    let mut search = gumbel_search(&mut UniformEvaluator, root, 8, 200, true);
    let mv = search.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
    search.advance(mv);
    let reused = search.root_visits();
    assert!(reused > 10, "the played move's subtree is kept: {reused} visits");
    let visits =
        |search: &Search| -> Vec<u32> { search.summary().moves.iter().map(|m| m.1).collect() };
    let before = visits(&search);
    let mut rng = StdRng::seed_from_u64(4);
    search.prepare(true, reused + 48, &mut rng);
    search.run(&mut UniformEvaluator, reused + 48, 1, &mut rng);
    let mut gained: Vec<u32> =
        visits(&search).iter().zip(&before).map(|(a, b)| a - b).filter(|&n| n > 0).collect();
    gained.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(gained, [14, 14, 6, 6, 2, 2, 2, 2]);
}

/// The improved policy after one visit to each of 16 considered moves (their own evaluations,
/// one ply deep, where this evaluator is exact): the move the priors give a fifth of their
/// mass, the one good move, gets most of the target and is played; the 15 searched and found
/// bad lose nearly all of theirs; those not searched keep shares by their priors (their value
/// is the root's mixed value). The target is a distribution, less the moves under a thousandth.
#[test]
fn a_gumbel_root_teaches_and_plays_the_move_its_search_found() {
    let root = Position::start(Default::default()).unwrap();
    let good = root.legal_moves()[5];
    let mut evaluator = OneGoodMove { root, good, prior: 0.2 };
    let search = gumbel_search(&mut evaluator, root, 16, 17, true);
    let target = search.policy_target();
    let total: f32 = target.iter().map(|&(_, p)| p).sum();
    assert!(total > 0.9 && total <= 1.0 + 1e-5, "a distribution, less what was pruned: {total}");
    let taught = |mv: Move| target.iter().find(|&&(m, _)| m == mv).unwrap().1 / total;
    assert!(taught(good) > 0.5, "the good move's share of the target: {}", taught(good));
    let searched: Vec<(Move, u32, f32, f32)> =
        search.summary().moves.into_iter().filter(|m| m.1 > 0).collect();
    assert_eq!(searched.len(), 16);
    assert!(searched.iter().any(|m| m.0 == good), "the good move was considered");
    for &(mv, _, prior, value) in searched.iter().filter(|m| m.0 != good) {
        assert_eq!(value, -0.8, "{mv}");
        assert!(taught(mv) < prior / 10.0, "{mv}: taught {}, prior {prior}", taught(mv));
    }
    let unsearched = search.summary().moves.into_iter().find(|m| m.1 == 0).unwrap();
    assert!(
        taught(unsearched.0) > unsearched.2 / 3.0,
        "an unsearched move keeps a share: {} of a prior {}",
        taught(unsearched.0),
        unsearched.2
    );
    assert_eq!(search.choose_move(0.0, &mut StdRng::seed_from_u64(1)), Some(good));
}

/// A win the rules prove is played and taught alone, whatever the Gumbel sample considered.
#[test]
fn a_gumbel_root_takes_a_proven_win() {
    let p = pos("14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w");
    let search = gumbel_search(&mut UniformEvaluator, p, 4, 100, true);
    let chosen = search.choose_move(0.0, &mut StdRng::seed_from_u64(1)).unwrap();
    assert!(forces_win(&p, chosen, 1), "chose {chosen}");
    for (mv, p) in search.policy_target() {
        assert_eq!(p, if mv == chosen { 1.0 } else { 0.0 }, "{mv}");
    }
}

/// A Gumbel root acts only in searches with noise: a player's search is plain PUCT.
#[test]
fn a_gumbel_root_leaves_a_search_without_noise_alone() {
    let root = Position::start(Default::default()).unwrap();
    let good = root.legal_moves()[5];
    let with = gumbel_search(&mut OneGoodMove { root, good, prior: 0.2 }, root, 16, 160, false);
    let mut plain = Search::new(root, SearchConfig::default());
    plain.run(&mut OneGoodMove { root, good, prior: 0.2 }, 160, 1, &mut StdRng::seed_from_u64(3));
    assert_eq!(with.root_choices(), plain.root_choices());
    assert_eq!(with.policy_target(), plain.policy_target());
    for (considered, c_visit, c_scale, named) in
        [(0, 50.0, 0.1, "considered"), (16, -1.0, 0.1, "c_visit"), (16, 50.0, f32::NAN, "c_scale")]
    {
        let root_noise = RootNoise::Gumbel(GumbelRoot { considered, c_visit, c_scale });
        let error = SearchConfig { root_noise, ..SearchConfig::default() }.validate().unwrap_err();
        assert!(error.contains(named), "{error}");
    }
}

/// An evaluator blind to captures, as the from-scratch networks are: it gives them no prior,
/// and values a position by its piece lead alone.
struct CaptureBlind;

impl Evaluator for CaptureBlind {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|request| {
                let p = &request.position;
                let captures: Vec<bool> = request
                    .moves
                    .iter()
                    .map(|&mv| epaminondas::game::move_facts(p, mv).captured > 0)
                    .collect();
                let quiet = captures.iter().filter(|&&c| !c).count().max(1) as f32;
                let priors = captures.iter().map(|&c| if c { 0.0 } else { 1.0 / quiet }).collect();
                let me = p.side_to_move();
                let lead = p.pieces(me).count() as f32 - p.pieces(me.opponent()).count() as f32;
                Evaluation { priors, value: lead.tanh(), draw: 0.0 }
            })
            .collect()
    }
}

/// With a share of every node's prior on its captures, the search sees the opponent's capture
/// that a blind prior hides: stepping next to a larger phalanx loses the piece.
#[test]
fn a_capture_share_shows_the_search_the_captures_its_prior_hides() {
    // Three pieces a side. White a5 to a6 lets Black's a9-a8 phalanx take it (two squares, a7
    // empty); White's other moves keep it out of reach.
    let p = pos("13b/14/14/b13/b13/14/14/w13/14/14/14/12ww w");
    let hanging = p.parse_move("a5-a6").unwrap();
    let after = p.play(hanging).unwrap();
    let taken = |m: &Move| epaminondas::game::move_facts(&after, *m).captured > 0;
    assert!(after.legal_moves().iter().any(taken), "Black can take the piece");
    let value_of_hanging = |capture_prior: f32| {
        let config = SearchConfig { capture_prior, ..SearchConfig::default() };
        let mut search = Search::new(p, config);
        search.run(&mut CaptureBlind, 2000, 1, &mut StdRng::seed_from_u64(3));
        let summary = search.summary();
        let (_, visits, _, value) =
            summary.moves.into_iter().find(|&(mv, ..)| mv == hanging).expect("a root move");
        (visits, value)
    };
    let (_, blind) = value_of_hanging(0.0);
    let (visits, seen) = value_of_hanging(0.25);
    assert!(blind > -0.1, "a blind search sees nothing lost: {blind}");
    assert!(visits > 0 && seen < -0.4, "the share shows the piece lost: {seen} in {visits} visits");
}

/// A Gumbel root samples and teaches from the network's own priors: the share steers only the
/// search below it. With one visit, nothing below the root is searched and the policy target is
/// the network's priors, captures or not.
#[test]
fn a_capture_share_stays_out_of_a_gumbel_roots_policy_target() {
    // White's a2-a3 phalanx takes Black's a4 (one square); nothing else captures.
    let p = pos("13b/14/14/14/14/14/14/14/b13/w13/w13/13w w");
    let root_noise = RootNoise::Gumbel(GumbelRoot::default());
    let config = SearchConfig { root_noise, capture_prior: 0.5, ..SearchConfig::default() };
    let mut search = Search::new(p, config);
    let mut rng = StdRng::seed_from_u64(3);
    search.prepare(true, 1, &mut rng);
    search.run(&mut UniformEvaluator, 1, 1, &mut rng);
    let target = search.policy_target();
    let n = p.legal_moves().len() as f32;
    assert_eq!(target.len(), p.legal_moves().len());
    for (mv, prob) in target {
        assert!((prob - 1.0 / n).abs() < 1e-5, "{mv}: {prob} against the prior {}", 1.0 / n);
    }
}
