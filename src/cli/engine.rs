//! `engine`: the UCI-style protocol of [`crate::engine`] on stdin/stdout.

use super::play::AgentArgs;
use crate::engine::EngineSession;
use std::io::{BufRead, Write};

#[derive(clap::Args, Debug)]
pub struct EngineArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
}

pub fn engine(args: EngineArgs) -> anyhow::Result<()> {
    let (spec, rules) = args.agent.resolve()?;
    let mut session =
        EngineSession::new(spec, args.agent.choice.device, rules).map_err(anyhow::Error::msg)?;
    let stdout = std::io::stdout();
    let mut input = std::io::stdin().lock();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        // A line that is not text gets an error like any other bad command; the GUI may go on.
        let replies = match std::str::from_utf8(&bytes) {
            Ok(line) => session.handle(line.trim_end_matches(['\n', '\r'])),
            Err(_) => vec!["info string error: the line is not UTF-8 text".to_string()],
        };
        let mut out = stdout.lock();
        for reply in replies {
            writeln!(out, "{reply}")?;
        }
        out.flush()?;
        if session.finished {
            break;
        }
    }
    Ok(())
}
