//! The crate's one error type. Model-facing failures become the in-band `Error: …`
//! reply; API misuse by a host becomes a Lua error that keeps this value as its source.

use thiserror::Error;

/// Why a call or a state was refused. `Display` gives the short lowercase message that
/// follows `Error: ` in the reply (for example `id: expected an integer, got 2.5`).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// An argument the model wrote does not fit the schema.
    #[error("{field}: expected {expected}, got {got}")]
    Input {
        /// The argument, as the schema names it (`id`, `blockedBy[2]`, ...).
        field: String,
        /// What the schema wants there (`an integer`, ...).
        expected: &'static str,
        /// What arrived instead, described briefly (`a string`, `2.5`, ...).
        got: String,
    },
    /// The arguments were a string that is not JSON.
    #[error("arguments: expected a JSON object, got text that does not parse ({0})")]
    Json(String),
    /// A state handed over by the host does not look like a todo snapshot.
    #[error("state: {0}")]
    State(String),
    /// A call reached a list that is in the middle of another call (from a finalizer or a
    /// metamethod that ran during it); the list is left as it is.
    #[error("list busy: another call on this list is under way; call again after it returns")]
    Busy,
}

impl Error {
    /// An [`Error::Input`] for `field`: `expected` is what the schema wants, `got` what came.
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

/// A result whose error is the crate's [`enum@Error`].
pub type Result<T> = std::result::Result<T, Error>;
