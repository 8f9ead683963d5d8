//! The crate's one error type. Model-facing failures become the in-band `Error: …`
//! reply; API misuse by a host becomes a Lua error that keeps this value as its source.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// An argument the model wrote does not fit the schema.
    #[error("{field}: expected {expected}, got {got}")]
    Input {
        field: String,
        expected: &'static str,
        got: String,
    },
    /// The arguments were a string that is not JSON.
    #[error("arguments: expected a JSON object, got text that does not parse ({0})")]
    Json(String),
    /// A state handed over by the host does not look like a todo snapshot.
    #[error("state: {0}")]
    State(String),
}

impl Error {
    pub fn input(
        field: impl Into<String>,
        expected: &'static str,
        got: impl Into<String>,
    ) -> Error {
        Error::Input {
            field: field.into(),
            expected,
            got: got.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
