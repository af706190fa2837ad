//! Errors as the service answers them: an HTTP status and the project's diagnostic
//! JSON, `{"error": {"code", "message", "help"?, …}}`, with the same stable codes as
//! the command line ([`ErrorCode`]).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use prooflog::{Diagnostic, ErrorCode};

/// A failed request: the status to answer with and what went wrong.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status: 4xx for the client's input, 5xx for the service's fault.
    pub status: StatusCode,
    /// The primary diagnostic (boxed: errors travel in `Result`s on hot paths).
    pub diagnostic: Box<Diagnostic>,
    /// Further diagnostics of the same failure (a load reports every problem).
    pub more: Vec<Diagnostic>,
}

impl ApiError {
    /// An error with this status and diagnostic.
    pub fn new(status: StatusCode, diagnostic: Diagnostic) -> ApiError {
        ApiError {
            status,
            diagnostic: Box::new(diagnostic),
            more: Vec::new(),
        }
    }

    /// A `bad_input` error (400).
    pub fn bad_input(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            Diagnostic::new(ErrorCode::BadInput, message),
        )
    }

    /// A broken invariant of the service (500): never the client's input.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Diagnostic::new(ErrorCode::Internal, message),
        )
    }

    /// The same error with a hint.
    pub fn with_help(mut self, help: impl Into<String>) -> ApiError {
        self.diagnostic.help = Some(help.into());
        self
    }

    /// The stable code, e.g. `bad_input`.
    pub fn code(&self) -> &'static str {
        self.diagnostic.code.as_str()
    }

    /// The JSON body.
    pub fn to_json(&self) -> serde_json::Value {
        let mut body = self.diagnostic.to_json();
        if !self.more.is_empty() {
            body["error"]["more"] = self.more.iter().map(Diagnostic::to_json_body).collect();
        }
        body
    }
}

/// The status a library error code is answered with.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::BudgetExceeded => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Io | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Generation => StatusCode::BAD_GATEWAY,
        _ => StatusCode::BAD_REQUEST,
    }
}

impl From<prooflog::Error> for ApiError {
    fn from(e: prooflog::Error) -> ApiError {
        let mut all = e.diagnostics.into_iter();
        let diagnostic = all
            .next()
            .unwrap_or_else(|| Diagnostic::new(ErrorCode::Internal, "an error with no diagnostic"));
        ApiError {
            status: status_of(diagnostic.code),
            diagnostic: Box::new(diagnostic),
            more: all.collect(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.diagnostic.message, self.status)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.to_json())).into_response()
    }
}
