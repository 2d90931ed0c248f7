//! Board diagrams for terminals: coordinates, `W`/`B` (or coloured discs), `S` (or a grey
//! diamond) for the stones of the variant, and marks for the squares of the last move.

use super::bitboard::Bitboard;
use super::position::{Color, Position};
use super::square::Square;

/// How to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// ASCII only: `W`, `B`, `S` (a stone), `.`; last-move squares in brackets.
    Plain,
    /// Unicode discs with ANSI colours; last-move squares on a highlighted background.
    Ansi,
}

/// Draws `position` with row numbers on the left and column letters below, top row first.
pub fn diagram(position: &Position, highlight: Bitboard, style: Style) -> String {
    diagram_with_captures(position, highlight, Bitboard::EMPTY, style)
}

/// [`diagram`], with the squares of just-captured pieces marked `x`.
pub fn diagram_with_captures(
    position: &Position,
    highlight: Bitboard,
    captured: Bitboard,
    style: Style,
) -> String {
    let (width, height) = (position.rules().width, position.rules().height);
    let mut out = String::new();
    for row in (0..height).rev() {
        out += &format!("{:>3} ", row + 1);
        for column in 0..width {
            let square = Square::new(column, row);
            let marked = highlight.contains(square);
            let piece = position.piece_at(square);
            let taken = captured.contains(square) && piece.is_none();
            let stone = position.stones().contains(square);
            match style {
                Style::Plain => {
                    let c = match piece {
                        Some(Color::White) => 'W',
                        Some(Color::Black) => 'B',
                        None if stone => 'S',
                        None if taken => 'x',
                        None => '.',
                    };
                    if marked {
                        out += &format!("[{c}]");
                    } else {
                        out += &format!(" {c} ");
                    }
                }
                Style::Ansi => {
                    let dark = (row + column) % 2 == 0;
                    let background = if marked {
                        "43"
                    } else if taken {
                        "41"
                    } else if dark {
                        "100"
                    } else {
                        "47"
                    };
                    let glyph = match piece {
                        Some(Color::White) => "\x1b[97m●",
                        Some(Color::Black) => "\x1b[30m●",
                        None if stone => "\x1b[90m◆",
                        None if taken => "\x1b[97m×",
                        None => " ",
                    };
                    out += &format!("\x1b[{background}m {glyph} \x1b[0m");
                }
            }
        }
        out.push('\n');
    }
    out += "    ";
    for column in 0..width {
        out += &format!(" {} ", (b'a' + column) as char);
    }
    out.push('\n');
    out
}
