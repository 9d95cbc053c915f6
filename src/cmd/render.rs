//! A command's result as a value, shown each way ([`Rendered`]), and results combined
//! from values ([`Sections`]: one per selector or currency) rather than from printed output.

use ragstats_core::document::Inputs;
pub use ragstats_core::document::{document_of as document, Figure, Finished, Rendered, Sections};

use super::common::{print_json, write_table_csv, Format};

/// A setting a view's text names, as the command line spells it: its flag, and the value
/// the text gives it (`--format json`).
pub fn flag_of(setting: &str, value: Option<&str>) -> String {
    let flag = crate::settings::flag(setting);
    match value {
        Some(v) => format!("{flag} {v}"),
        None => flag,
    }
}

/// Writes `r`, the result of `command` run on `inputs`, to stdout in `format`.
///
/// # Errors
/// The write error (a closed pipe, a full disk).
pub fn emit(r: &dyn Rendered, format: Format, command: &str, inputs: Inputs) -> anyhow::Result<u8> {
    match format {
        Format::Table => super::out::write_bytes(r.text_with(&flag_of).as_bytes())?,
        Format::Csv => write_table_csv(&r.csv())?,
        Format::Json => print_json(&document(r, command, inputs))?,
    }
    Ok(r.exit_code())
}

/// What `stats` does with a finished result: writes its figure to `--plot`, prints it in
/// `--format`, then its notes on stderr.
pub trait Emit {
    /// The figure to `plot` when asked, then the output in `format` ([`Emit::emit`]); the
    /// exit code.
    ///
    /// # Errors
    /// A write error, or `plot` naming an input.
    fn print(&self, plot: Option<&std::path::Path>, format: Format) -> anyhow::Result<u8>;

    /// Writes the result in `format` to stdout, then its notes to stderr; the exit code.
    ///
    /// # Errors
    /// The write error (a closed pipe, a full disk).
    fn emit(&self, format: Format) -> anyhow::Result<u8>;

    /// Writes the figure to `plot` (`--plot FILE`), when both are there; the file must not
    /// be one of the figure's inputs.
    ///
    /// # Errors
    /// A write error, or `plot` naming an input.
    fn write_figure(&self, plot: Option<&std::path::Path>) -> anyhow::Result<()>;
}

impl Emit for Finished {
    fn print(&self, plot: Option<&std::path::Path>, format: Format) -> anyhow::Result<u8> {
        self.write_figure(plot)?;
        self.emit(format)
    }

    fn emit(&self, format: Format) -> anyhow::Result<u8> {
        let code = match format {
            Format::Json => {
                print_json(&self.document())?;
                self.result.exit_code()
            }
            _ => emit(&*self.result, format, self.command, self.inputs.clone())?,
        };
        for n in &self.notes_after {
            eprintln!("{n}");
        }
        if format == Format::Csv {
            for n in &self.csv_notes {
                eprintln!("{n}");
            }
        }
        Ok(code)
    }

    fn write_figure(&self, plot: Option<&std::path::Path>) -> anyhow::Result<()> {
        if let (Some(p), Some(f)) = (plot, &self.figure) {
            let inputs: Vec<&std::path::Path> = f.inputs.iter().map(|i| i.as_path()).collect();
            super::figure::write_svg(p, &f.svg, &inputs)?;
        }
        Ok(())
    }
}
