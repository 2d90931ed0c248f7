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
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut out = stdout.lock();
        for reply in session.handle(&line) {
            writeln!(out, "{reply}")?;
        }
        out.flush()?;
        if session.finished {
            break;
        }
    }
    Ok(())
}
