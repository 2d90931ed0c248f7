//! The hand-written players (greedy, alpha-beta, rollout UCT) against positions whose answer
//! the rules decide, checked by brute force where the claim is a forced win; plus legality on
//! random positions, limits, and games against a random mover.

mod common;

use epaminondas::game::move_facts;
use epaminondas::game::{Color, Position, Rules, Status};
use epaminondas::nn::DeviceChoice;
use epaminondas::players::alphabeta::{AlphaBetaPlayer, Options, Quiescence};
use epaminondas::players::greedy::GreedyPlayer;
use epaminondas::players::heuristic::{evaluate, Weights};
use epaminondas::players::rollout::RolloutPlayer;
use epaminondas::players::{alphabeta, Decision, Limit, Player, PlayerSpec, RandomPlayer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::{Duration, Instant};

use common::{forces_win, hands_over_win};

/// White a11 steps onto row 12 (a12 or b12); Black's lone piece can neither capture it (a single
/// piece captures nothing) nor reach row 1 in one move.
const WIN_IN_ONE: &str = "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w";
/// The pair a2-b2 takes Black's last piece, leaving Black without a move.
const LAST_PIECE: &str = "14/14/14/14/14/14/14/14/14/14/wwb11/14 w";
/// Black h2 waits for a gap in g1-h1-i1; most moves of that phalanx open one.
const HANDS_OVER: &str = "14/14/14/14/14/14/w13/14/14/14/7b6/6www5 w";
/// Entering at once (h11 to g12, h12 or i12) is answered: Black's c4-c3 pair runs onto row 1
/// and evens the count. Taking c3 first (e3xd3) leaves Black's c4 three moves from row 1 and
/// nothing near row 12, so the entry next move wins.
const CAPTURE_THEN_WIN: &str = "bb12/7w6/14/14/14/14/14/14/2b11/2bww9/14/14 w";

/// White's pair a2-b2 can take Black's lone c2; Black's pair on its home row is far from
/// everything, so the capture is the only thing going on.
const CAPTURE_PENDING: &str = "bb12/14/14/14/14/14/14/14/14/14/wwb11/14 w";

/// Thirty plies of random play: full of captures on both sides, decided by nothing near.
const MIDGAME: &str = "bb2bbbb1b2bb/b1b1bbb1b4b/1bb2b2b1b1b1/5b1b6/14/11b2/11b2/6w4b2/3w1w5b2/1w1ww4w2ww/1w2wwww1www1w/ww2ww1ww1ww1w w 30";

fn pos(text: &str) -> Position {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The same position with the board turned upside down and the colours swapped: the game seen
/// from the other side, so a sign error for one colour shows.
fn flipped(text: &str) -> String {
    let (board, rest) = text.split_once(' ').expect("a side to move");
    let rows: Vec<String> = board
        .split('/')
        .rev()
        .map(|row| {
            row.chars()
                .map(|c| match c {
                    'w' => 'b',
                    'b' => 'w',
                    other => other,
                })
                .collect()
        })
        .collect();
    let rest = match rest.split_once(' ') {
        Some((side, ply)) => format!("{} {ply}", if side == "w" { "b" } else { "w" }),
        None => (if rest == "w" { "b" } else { "w" }).to_string(),
    };
    format!("{} {rest}", rows.join("/"))
}

fn both_colours(text: &str) -> [Position; 2] {
    [pos(text), pos(&flipped(text))]
}

fn depth(d: u32) -> Limit {
    Limit { depth: Some(d), ..Limit::default() }
}

/// The decision's line is playable from `position` and starts with its move.
fn assert_sound(position: &Position, decision: &Decision) {
    assert!(position.is_legal(decision.mv), "{position}: {} is illegal", decision.mv);
    assert_eq!(decision.principal_variation.first(), Some(&decision.mv), "{position}");
    let mut line = *position;
    for &mv in &decision.principal_variation {
        assert!(
            line.is_legal(mv),
            "{position}: the line {:?} breaks at {mv}",
            decision.principal_variation
        );
        line = line.play_unchecked(mv);
    }
    if let Some(value) = decision.value {
        assert!((-1.0..=1.0).contains(&value), "{position}: value {value}");
    }
}

#[test]
fn greedy_and_alphabeta_take_a_win_in_one() {
    for text in [WIN_IN_ONE, LAST_PIECE] {
        for p in both_colours(text) {
            let moves = p.legal_moves();
            let winning = moves.iter().filter(|mv| forces_win(&p, **mv, 1)).count();
            assert!(
                winning > 0 && winning < moves.len(),
                "{p}: the position must offer both kinds of move"
            );
            for seed in 0..3 {
                let greedy = GreedyPlayer::new(seed).choose(&p, Limit::default());
                assert!(forces_win(&p, greedy.mv, 1), "{p}: greedy chose {}", greedy.mv);
                assert_sound(&p, &greedy);
                let mut alphabeta = AlphaBetaPlayer::new(alphabeta::DEFAULT_LIMIT, seed);
                let decision = alphabeta.choose(&p, Limit::default());
                assert!(forces_win(&p, decision.mv, 1), "{p}: alpha-beta chose {}", decision.mv);
                assert_eq!(decision.value, Some(1.0), "{p}: a win in one is proven");
                assert_sound(&p, &decision);
            }
        }
    }
}

#[test]
fn alphabeta_avoids_handing_over_a_win() {
    for p in both_colours(HANDS_OVER) {
        let moves = p.legal_moves();
        let losing = moves.iter().filter(|mv| hands_over_win(&p, **mv)).count();
        assert!(
            losing > 0 && losing < moves.len(),
            "{p}: the position must offer both kinds of move"
        );
        for d in 2..=4 {
            let decision = AlphaBetaPlayer::new(depth(d), 1).choose(&p, Limit::default());
            assert!(
                !hands_over_win(&p, decision.mv),
                "{p}: depth {d} chose {}, which lets the opponent win",
                decision.mv
            );
            assert!(decision.value.unwrap() > -1.0, "{p}: depth {d} thinks it is lost");
        }
    }
}

#[test]
fn alphabeta_sees_a_capture_then_win_that_greedy_misses() {
    for p in both_colours(CAPTURE_THEN_WIN) {
        let moves = p.legal_moves();
        assert!(moves.iter().all(|mv| !forces_win(&p, *mv, 1)), "{p}: no move may win at once");
        let greedy = GreedyPlayer::new(1).choose(&p, Limit::default());
        assert!(!forces_win(&p, greedy.mv, 2), "{p}: greedy's {} should not win", greedy.mv);
        for d in 2..=4 {
            let decision = AlphaBetaPlayer::new(depth(d), 1).choose(&p, Limit::default());
            assert!(
                move_facts(&p, decision.mv).captured > 0,
                "{p}: depth {d} chose {}",
                decision.mv
            );
            assert!(forces_win(&p, decision.mv, 2), "{p}: depth {d}: {} does not win", decision.mv);
            assert_eq!(decision.value, Some(1.0), "{p}: depth {d}");
            assert_sound(&p, &decision);
        }
    }
}

#[test]
fn alphabeta_scores_the_ply_cap_as_a_draw() {
    // The combination needs White's second move; with one ply left before the cap it cannot come.
    let capped = Rules::default().with_ply_cap(Some(41));
    for (ply, expect_win) in [(10, true), (40, false)] {
        let text = format!("{} {ply}", CAPTURE_THEN_WIN);
        let p = Position::parse(&text, capped).unwrap();
        let decision = AlphaBetaPlayer::new(depth(4), 1).choose(&p, Limit::default());
        // One ply before the cap every reply ends the game drawn: exactly 0, not a loss or a
        // static evaluation.
        let expected = if expect_win { 1.0 } else { 0.0 };
        assert_eq!(decision.value, Some(expected), "{p} ply {ply}");
    }
}

/// The same search with no table, a fresh one, and one already full of the same and other
/// positions' results gives the same root score. Late-move reductions, null moves and aspiration
/// windows make the score depend on move order and bounds (which the table changes), so they
/// are off here; what is left is plain alpha-beta, whose value at a fixed depth is the minimax
/// value of the searched tree.
#[test]
fn transposition_table_does_not_change_scores() {
    let plain =
        Options { reductions: false, aspiration: false, null_move: false, ..Options::DEFAULT };
    let mut positions = vec![Position::standard(), pos(CAPTURE_THEN_WIN), pos(HANDS_OVER)];
    positions.extend(
        common::random_game(Position::standard(), 3, 40)
            .into_iter()
            .skip(10)
            .step_by(10)
            .filter(|p| p.status() == Status::Ongoing),
    );
    let mut reused = AlphaBetaPlayer::with_settings(depth(3), 1, Weights::DEFAULT, plain);
    for p in &positions {
        let without = AlphaBetaPlayer::with_settings(
            depth(3),
            1,
            Weights::DEFAULT,
            Options { table: false, ..plain },
        )
        .choose(p, Limit::default());
        let fresh = AlphaBetaPlayer::with_settings(depth(3), 1, Weights::DEFAULT, plain)
            .choose(p, Limit::default());
        let first = reused.choose(p, Limit::default());
        let again = reused.choose(p, Limit::default());
        assert_eq!(without.value, fresh.value, "{p}: no table vs a fresh one");
        assert_eq!(fresh.value, first.value, "{p}: fresh vs one holding other positions");
        assert_eq!(first.value, again.value, "{p}: searched again with its own results");
    }
}

#[test]
fn rollout_takes_a_win_in_one() {
    for text in [WIN_IN_ONE, LAST_PIECE] {
        for p in both_colours(text) {
            let mut rollout =
                RolloutPlayer::new(Limit { nodes: Some(1000), ..Limit::default() }, None, 3);
            let decision = rollout.choose(&p, Limit::default());
            assert!(forces_win(&p, decision.mv, 1), "{p}: rollout chose {}", decision.mv);
            assert_eq!(decision.value, Some(1.0), "{p}: the win is proven");
            assert_sound(&p, &decision);
        }
    }
}

#[test]
fn rollout_avoids_handing_over_a_win() {
    for p in both_colours(HANDS_OVER) {
        let decision = RolloutPlayer::new(Limit { nodes: Some(3000), ..Limit::default() }, None, 5)
            .choose(&p, Limit::default());
        assert!(
            !hands_over_win(&p, decision.mv),
            "{p}: rollout chose {}, which lets the opponent win",
            decision.mv
        );
    }
}

#[test]
fn every_player_plays_legal_moves() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut positions = Vec::new();
    for (width, height) in [(14, 12), (5, 5), (8, 6), (16, 16)] {
        let rules = Rules { width, height, ..Rules::default() };
        positions.extend((0..12).map(|_| common::random_position(&mut rng, rules)));
        positions.extend(common::random_game(Position::start(rules).unwrap(), width as u64, 60));
    }
    // The stones variant: its placements (Black first) and play among the stones.
    for (width, height) in [(14, 12), (8, 8)] {
        let rules = Rules { width, height, stones: true, ..Rules::default() };
        positions.extend((0..6).map(|_| common::random_position(&mut rng, rules)));
        positions.extend(common::random_game(
            Position::start(rules).unwrap(),
            70 + width as u64,
            40,
        ));
    }
    positions.retain(|p| p.status() == Status::Ongoing);
    assert!(positions.len() > 100);
    let small = Limit { nodes: Some(20_000), depth: Some(3), time: None };
    let mut players: Vec<Box<dyn Player>> = vec![
        Box::new(RandomPlayer::new(1)),
        Box::new(GreedyPlayer::new(1)),
        Box::new(AlphaBetaPlayer::new(small, 1)),
        Box::new(RolloutPlayer::new(Limit { nodes: Some(100), ..Limit::default() }, None, 1)),
    ];
    for player in &mut players {
        for p in &positions {
            let decision = player.choose(p, Limit::default());
            assert_sound(p, &decision);
        }
    }
}

#[test]
fn limits_are_respected() {
    let midgame = pos(MIDGAME);
    let timed = Limit { time: Some(Duration::from_millis(200)), ..Limit::default() };
    let searchers: [Box<dyn Player>; 2] = [
        Box::new(AlphaBetaPlayer::new(depth(64), 1)),
        Box::new(RolloutPlayer::new(timed, None, 1)),
    ];
    for mut player in searchers {
        let started = Instant::now();
        let decision = player.choose(&midgame, timed);
        // Neither search has another limit, so only the clock can stop it: the bound guards
        // against a search that never reads it (a hang), and is no measure of speed.
        let spent = started.elapsed();
        assert!(spent < Duration::from_secs(5), "{}: 0.2 s took {spent:?}", player.name());
        assert_sound(&midgame, &decision);
    }
    // What the clock stops, counted: on a clock already run out, alphabeta finishes its first
    // iteration and no more, and rollout its first playout.
    let spent = Limit { time: Some(Duration::from_nanos(1)), ..Limit::default() };
    let decision = AlphaBetaPlayer::new(depth(64), 1).choose(&midgame, spent);
    assert_eq!(decision.depth, Some(1));
    let decision = RolloutPlayer::new(spent, None, 1).choose(&midgame, spent);
    assert_eq!(decision.nodes, 1);
    // A net player reads the clock before each network call after the root's: on a clock
    // already run out it expands the root, so that it has priors to play from, and no more.
    let agent =
        concat!(env!("CARGO_MANIFEST_DIR"), "/models/anchored-values-6x64-step1600.safetensors");
    let mut net = format!("net:{agent}:precision=f32")
        .parse::<PlayerSpec>()
        .unwrap()
        .build(DeviceChoice::Cpu, 1)
        .unwrap();
    let decision = net.choose(&midgame, spent);
    assert_eq!(decision.nodes, 1);
    assert_sound(&midgame, &decision);
    // A node limit stops alpha-beta after the first iteration and rollout exactly.
    let decision = AlphaBetaPlayer::new(depth(64), 1)
        .choose(&Position::standard(), Limit { nodes: Some(5_000), ..Limit::default() });
    assert!(
        decision.nodes <= 5_000 && decision.depth >= Some(2),
        "{} nodes, depth {:?}",
        decision.nodes,
        decision.depth
    );
    let decision = RolloutPlayer::new(timed, None, 1)
        .choose(&midgame, Limit { nodes: Some(300), ..Limit::default() });
    assert_eq!(decision.nodes, 300);
    // A depth limit is reached exactly.
    let decision = AlphaBetaPlayer::new(depth(3), 1).choose(&midgame, Limit::default());
    assert_eq!(decision.depth, Some(3));
}

/// Plays one game to its end under `rules`; returns the winner, if any.
fn play_game(white: &mut dyn Player, black: &mut dyn Player, rules: Rules) -> Option<Color> {
    let mut p = Position::start(rules).unwrap();
    loop {
        match p.status() {
            Status::Ongoing => {}
            Status::Won { winner, .. } => return Some(winner),
            Status::Draw => return None,
        }
        let mover: &mut dyn Player = if p.side_to_move() == Color::White { white } else { black };
        let decision = mover.choose(&p, Limit::default());
        p = p
            .play(decision.mv)
            .unwrap_or_else(|e| panic!("{p}: {} chose {}: {e}", mover.name(), decision.mv));
    }
}

#[test]
fn alphabeta_beats_random_and_greedy() {
    let rules = Rules::default().with_ply_cap(Some(200));
    for game in 0..4u64 {
        // Greedy shares the evaluation: it takes a few plies of search to beat it.
        let (mut opponent, limit): (Box<dyn Player>, Limit) = if game < 2 {
            (Box::new(RandomPlayer::new(game)), depth(2))
        } else {
            (Box::new(GreedyPlayer::new(game)), depth(3))
        };
        let mut alphabeta = AlphaBetaPlayer::new(limit, game);
        opponent.new_game(game + 100);
        let (winner, ours) = if game % 2 == 0 {
            (play_game(&mut alphabeta, &mut *opponent, rules), Color::White)
        } else {
            (play_game(&mut *opponent, &mut alphabeta, rules), Color::Black)
        };
        assert_eq!(winner, Some(ours), "game {game} against {}", opponent.name());
    }
}

/// Quiescence scores a pending capture that the static evaluation cannot see, by about the piece
/// it takes, and leaves a quiet position's score as the evaluation has it, in one node; at 0
/// plies it is the evaluation itself.
#[test]
fn quiescence_settles_a_pending_capture() {
    let pending = pos(CAPTURE_PENDING);
    let stand = evaluate(&pending);
    assert_eq!(Quiescence::new(0).score(&pending).0, stand);
    let (taken, nodes) = Quiescence::new(2).score(&pending);
    assert!(taken >= stand + 80, "after the capture {taken}, standing {stand}");
    assert!(nodes > 1, "the capture was searched: {nodes} nodes");
    // Nothing to capture or enter at the start: quiescence stands on the evaluation.
    let start = Position::start(Rules::default()).unwrap();
    assert_eq!(Quiescence::new(2).score(&start), (evaluate(&start), 1));
}
