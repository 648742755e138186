//! Diagnostics: every error sdfgc reports carries what went wrong and where
//! (the file, and a JSON pointer or an SDFG element path).

use std::fmt;
use std::path::PathBuf;

/// What kind of problem an [`Error`] describes; decides nothing but wording
/// (every error exits with status 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be read or written.
    Io,
    /// The file is not valid JSON.
    Syntax,
    /// The JSON is valid but does not have the shape of a DaCe SDFG.
    Format,
    /// A construct sdfgc knows but does not support (refused by name).
    Unsupported,
    /// The SDFG is inconsistent (dangling ids, unknown data, scope mismatch, ...).
    Invalid,
    /// Code (tasklet, condition, symbolic expression) that cannot be parsed.
    Code,
    /// A command-line option combination that cannot be honoured for this SDFG.
    Usage,
}

/// One error with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// The class of the problem.
    pub kind: ErrorKind,
    /// The input file, once known.
    pub file: Option<PathBuf>,
    /// A JSON pointer (`/nodes/3/nodes/7/attributes/code`) or an element path
    /// (`state 'init' > tasklet 'add'`); empty if the problem concerns the whole file.
    pub location: String,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

/// The result type used throughout sdfgc.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Creates an error at `location`.
    pub fn new(kind: ErrorKind, location: impl Into<String>, message: impl Into<String>) -> Error {
        Error {
            kind,
            file: None,
            location: location.into(),
            message: message.into(),
        }
    }

    /// A format error at a JSON pointer.
    pub fn format(location: impl Into<String>, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Format, location, message)
    }

    /// An unsupported-construct error.
    pub fn unsupported(location: impl Into<String>, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, location, message)
    }

    /// A validation error.
    pub fn invalid(location: impl Into<String>, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Invalid, location, message)
    }

    /// Attaches the input file name.
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> Error {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Io => "I/O error",
            ErrorKind::Syntax => "invalid JSON",
            ErrorKind::Format => "not a valid SDFG",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Invalid => "invalid SDFG",
            ErrorKind::Code => "invalid code",
            ErrorKind::Usage => "cannot honour the options",
        };
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if !self.location.is_empty() {
            write!(f, "at {}: ", self.location)?;
        }
        write!(f, "{what}: {}", self.message)
    }
}

impl std::error::Error for Error {}
