//! (placeholder: being written)

/// Flags of this command.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the command.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
