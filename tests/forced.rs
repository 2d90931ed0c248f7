//! Results certain one move ahead (`Position::forced`) and two moves ahead
//! (`Position::forced_in_two`), against hand-built positions, positions from a lost game, and
//! brute-force searches over positions from random games.

use epaminondas::game::*;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;

fn pos(text: &str) -> Position {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn pos_with(text: &str, rules: Rules) -> Position {
    Position::parse(text, rules).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// From a game of the arena (greedy against a network): Black's five-piece column on j has an
/// open file to j1, but a piece there can be taken by White's pairs on row 1.
const BLACK_RUNS: &str = "1bbbbb4b1bb/b1bbb1bb2bb2/2b1b3bb4/3b4bbb3/3ww4b4/4w4b4/4w4b4/14/3w10/14/www3www2www/www4ww1wwww b 17";

#[test]
fn a_run_that_can_be_taken_is_not_decided() {
    let p = pos(BLACK_RUNS);
    assert_eq!(p.forced(), None);
    let after = p.play(p.parse_move("j10-j5").unwrap()).unwrap();
    assert_eq!(after.forced(), None);
    let repairs: Vec<String> = after
        .legal_moves()
        .into_iter()
        .filter(|&mv| !after.play_unchecked(mv).side_to_move_has_won())
        .map(|mv| after.notation(mv))
        .collect();
    assert_eq!(repairs, ["h1xi1", "l1xk1", "m1xl1", "n1xm1"]);
}

#[test]
fn a_lead_that_can_be_captured_is_not_decided() {
    // Black's h1 is on White's home row. White's f1-g1 pair captures it; a lone g1 cannot.
    let capturable = pos("b13/14/14/14/14/14/14/14/14/14/14/5wwb6 w");
    assert_eq!(capturable.forced(), None);
    let lost = pos("b13/14/14/14/14/14/14/14/14/14/14/6wb6 w");
    assert_eq!(lost.forced(), Some(Forced::Loss));
}

#[test]
fn a_lead_that_can_be_matched_is_not_decided() {
    // Black leads with h1, but White's six-piece column on a runs to a12 and evens the count.
    let p = pos("1b12/14/14/14/14/w13/w13/w13/w13/w13/w13/7b6 w");
    assert_eq!(p.forced(), None);
}

#[test]
fn entering_the_far_row_out_of_reach_wins() {
    // White's a2..a7 column lands its head on a12; Black's lone n12 can do nothing about it.
    let text = "13b/14/14/14/14/w13/w13/w13/w13/w13/w13/14 w 10";
    // The six-piece column from a2 and the five-piece one from a3 both land on a12.
    let runs = [pos(text).parse_move("a2-a7").unwrap(), pos(text).parse_move("a3-a8").unwrap()];
    let wins = |rules: Rules| matches!(pos_with(text, rules).forced(), Some(Forced::Win(mv)) if runs.contains(&mv));
    for symmetry in SymmetryRule::ALL {
        assert!(wins(Rules { symmetry, ..Rules::default() }), "{symmetry}");
    }
    // A lead only counts at the start of White's next turn (ply 12): under a cap of 11 the game
    // is a draw before that.
    assert!(wins(Rules { ply_cap: Some(12), ..Rules::default() }));
    assert_eq!(pos_with(text, Rules { ply_cap: Some(11), ..Rules::default() }).forced(), None);
}

#[test]
fn quiet_positions_are_not_decided() {
    assert_eq!(Position::standard().forced(), None);
    // White to move, one ply before Black's run: White can still block the j file.
    let p = pos("1bbbbb4b1bb/b1bbb1bb2bb2/2b1b3bb4/3b4bbb3/3w5b4/9b4/4w4b4/4w9/3ww9/14/www3www2www/www4ww1wwww w 16");
    assert_eq!(p.forced(), None);
    assert!(
        p.legal_moves().iter().any(|&mv| p.play_unchecked(mv).forced().is_none()),
        "some move stops the run"
    );
}

/// By brute force over every move and every reply: the moves that take the far-row lead such
/// that every reply leaves a position `decided` for the side then to move (us again), and
/// whether the side to move, under a lead, has only moves that leave one decided for the
/// opponent.
fn brute_force_with(p: &Position, decided: impl Fn(Position) -> bool) -> (Vec<Move>, bool) {
    let us = p.side_to_move();
    let moves = p.legal_moves();
    let wins = moves
        .iter()
        .copied()
        .filter(|&mv| {
            let next = p.play_unchecked(mv);
            let lead = next.far_row_count(us) > next.far_row_count(us.opponent());
            lead && next.status() != Status::Draw
                && next.legal_moves().iter().all(|&reply| decided(next.play_unchecked(reply)))
        })
        .collect();
    let under_lead = p.far_row_count(us.opponent()) > p.far_row_count(us);
    let lost =
        under_lead && !moves.is_empty() && moves.iter().all(|&mv| decided(p.play_unchecked(mv)));
    (wins, lost)
}

/// What `forced` claims: the moves that take the far-row lead for good (a win by leaving the
/// opponent no move counts only with the lead, as `forced` promises no more), and whether every
/// move hands the opponent the win.
fn brute_force(p: &Position) -> (Vec<Move>, bool) {
    brute_force_with(p, |after| after.side_to_move_has_won())
}

/// Checks a claimed result against brute force's answer (the winning moves, and whether every
/// move loses) and counts the wins and losses claimed.
fn check_claim(
    p: &Position,
    claim: Option<Forced>,
    winning_moves: &[Move],
    lost: bool,
    (wins, losses): (&mut u32, &mut u32),
) {
    match claim {
        Some(Forced::Win(mv)) => {
            assert!(winning_moves.contains(&mv), "{p}: {mv} is claimed to win");
            *wins += 1;
        }
        Some(Forced::Loss) => {
            assert!(lost && winning_moves.is_empty(), "{p}: claimed lost");
            *losses += 1;
        }
        None => assert!(
            winning_moves.is_empty() && !lost,
            "{p}: missed {winning_moves:?} / lost {lost}"
        ),
    }
}

#[test]
fn agrees_with_brute_force_on_random_games() {
    let mut rng = StdRng::seed_from_u64(7);
    let (mut wins, mut losses, mut positions) = (0u32, 0u32, 0);
    for game in 0..300 {
        let rules =
            Rules { ply_cap: Some(400), symmetry: SymmetryRule::ALL[game % 4], ..Rules::default() };
        let mut p = Position::start(rules).unwrap();
        while p.status() == Status::Ongoing {
            let (winning_moves, all_lose) = brute_force(&p);
            assert_eq!(p.forced_with_moves(&p.legal_moves()), p.forced(), "{p}");
            check_claim(&p, p.forced(), &winning_moves, all_lose, (&mut wins, &mut losses));
            positions += 1;
            p = p.play_unchecked(*p.legal_moves().choose(&mut rng).unwrap());
        }
    }
    // Random games do end in runs: the check must have met both kinds many times.
    assert!(wins > 50 && losses > 20, "{positions} positions: {wins} wins, {losses} losses");
}

/// From a game the 8x96 agent lost to greedy (match seed 11, round 8): White's diagonal phalanx
/// b11-c10-d9-e8 has reached Black's corner. Black, to move at ply 13, has just captured the
/// invader on a12 with d12xc12; the positions before and after follow.
const CORNER_INVADED: &str = "wbbb1bbbbbbbbb/bwb1bbbbbb2b1/2w1b8b/3wb9/14/4b9/14/14/9ww3/7ww3w1/wwwwww3w2ww/wwwww3www1ww b 13";
const CORNER_RETAKEN: &str = "bbb2bbbbbbbbb/bwb1bbbbbb2b1/2w1b8b/3wb9/14/4b9/14/14/9ww3/7ww3w1/wwwwww3w2ww/wwwww3www1ww w 14";

#[test]
fn a_fight_for_a_corner_is_decided_two_moves_ahead() {
    // White retakes a12 with the three-piece phalanx (d9xc10); Black's c12-b12 pair takes it
    // again, and White's remaining c10-b11 pair takes it for good. Every step can be answered, so
    // one move ahead nothing is decided.
    let p = pos(CORNER_RETAKEN);
    assert_eq!(p.forced(), None);
    let retake = p.parse_move("d9xc10").unwrap();
    assert_eq!(p.forced_in_two(&p.legal_moves()), Some(Forced::Win(retake)));
    // After it Black's only answer is c12xb12, which allows the win.
    let after = p.play(retake).unwrap();
    assert_eq!(after.forced(), None);
    let mut answers = after.legal_moves();
    after.keep_repairs(&mut answers);
    let answers: Vec<String> = answers.iter().map(|&mv| after.notation(mv)).collect();
    assert_eq!(answers, ["c12xb12"]);
    assert_eq!(after.forced_in_two(&after.legal_moves()), Some(Forced::Loss));
    // Retaking with the pair first (the move the network preferred) leaves Black the last word.
    let pair = p.play(p.parse_move("c10xb11").unwrap()).unwrap();
    assert_eq!(pair.forced_in_two(&pair.legal_moves()), None);
    // A ply earlier, before Black's capture, the corner is lost three moves ahead: beyond this
    // check, which leaves it to the search (tests/search.rs).
    let invaded = pos(CORNER_INVADED);
    assert_eq!(invaded.forced_in_two(&invaded.legal_moves()), None);
    assert_eq!(invaded.play(invaded.parse_move("d12xc12").unwrap()).unwrap(), p);
}

#[test]
fn a_position_under_attack_keeps_only_its_answers() {
    let p = pos(BLACK_RUNS);
    let after = p.play(p.parse_move("j10-j5").unwrap()).unwrap();
    let mut moves = after.legal_moves();
    let all = moves.len();
    after.keep_repairs(&mut moves);
    let kept: Vec<String> = moves.iter().map(|&mv| after.notation(mv)).collect();
    assert_eq!(kept, ["h1xi1", "l1xk1", "m1xl1", "n1xm1"], "of {all} legal moves");
    // Without a lead to answer, every move stays; with no answer at all, too (the game goes on).
    let mut quiet = Position::standard().legal_moves();
    let count = quiet.len();
    Position::standard().keep_repairs(&mut quiet);
    assert_eq!(quiet.len(), count);
    let lost = pos("b13/14/14/14/14/14/14/14/14/14/14/6wb6 w");
    let mut moves = lost.legal_moves();
    let count = moves.len();
    lost.keep_repairs(&mut moves);
    assert_eq!(moves.len(), count);
}

/// What `forced_in_two` claims, by brute force over two moves of each side (with
/// [`brute_force`] for the last two plies): the moves that take the lead such that every reply
/// keeps it or allows a win one move ahead, and whether the side to move, under a lead, has
/// only moves that keep it or allow such a win.
fn brute_force_two(p: &Position) -> (Vec<Move>, bool) {
    brute_force_with(p, |after| after.side_to_move_has_won() || !brute_force(&after).0.is_empty())
}

#[test]
fn forced_in_two_agrees_with_brute_force_on_random_games() {
    let mut rng = StdRng::seed_from_u64(11);
    let (mut wins, mut losses, mut deeper, mut positions) = (0u32, 0u32, 0, 0);
    for game in 0..60 {
        let rules =
            Rules { ply_cap: Some(400), symmetry: SymmetryRule::ALL[game % 4], ..Rules::default() };
        let mut p = Position::start(rules).unwrap();
        while p.status() == Status::Ongoing {
            let moves = p.legal_moves();
            let claim = p.forced_in_two(&moves);
            let (winning_moves, lost) = brute_force_two(&p);
            if p.forced().is_some() {
                assert_eq!(claim, p.forced(), "{p}: one move ahead comes first");
            } else if claim.is_some() {
                deeper += 1;
            }
            check_claim(&p, claim, &winning_moves, lost, (&mut wins, &mut losses));
            positions += 1;
            p = p.play_unchecked(*moves.choose(&mut rng).unwrap());
        }
    }
    assert!(
        wins > 20 && losses > 10 && deeper > 10,
        "{positions} positions: {wins} wins, {losses} losses, {deeper} beyond one move"
    );
}
