//! The HTTP layer: routes, body parsing, the bearer token, metrics, and running each
//! evaluation on the blocking pool with a timeout. It holds no logic of its own: every
//! endpoint is a [`Service`] method.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use prooflog::diag::Location;
use prooflog::{Diagnostic, ErrorCode};
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq;
use utoipa::OpenApi;

use crate::api::{
    AskRequest, CheckRequest, CitedFactRecord, ErrorBody, ErrorDetail, Evidence, EvidenceRequest,
    EvidenceResponse, FactRecordSchema, GateRequest, GroundRequest, Health, PacksResponse,
    ProveRequest, ProveResponse,
};
use crate::error::ApiError;
use crate::metrics::endpoint_index;
use crate::service::Service;

/// The OpenAPI 3 document of the service, generated from the handlers and the body
/// types (`GET /openapi.json`).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "prooflog",
        description = "Datalog proofs for RAG pipelines: per-request evidence over a shared base, proofs with citation tags, answer checkers. Every endpoint but /healthz requires `Authorization: Bearer <token>` when the service has a token."
    ),
    paths(ask, prove, check, gate, ground, evidence, packs, health, metrics),
    components(schemas(
        AskRequest,
        ProveRequest,
        ProveResponse,
        CheckRequest,
        GateRequest,
        GroundRequest,
        CitedFactRecord,
        EvidenceRequest,
        EvidenceResponse,
        FactRecordSchema,
        PacksResponse,
        Health,
        ErrorBody,
        ErrorDetail
    ))
)]
pub struct ApiDoc;

/// The service's routes, with its limits, bearer token and metrics.
pub fn router(service: Arc<Service>) -> Router {
    let limit = service.config().limits.max_body_bytes;
    Router::new()
        .route("/v1/ask", post(ask))
        .route("/v1/prove", post(prove))
        .route("/v1/check", post(check))
        .route("/v1/gate", post(gate))
        .route("/v1/ground", post(ground))
        .route("/v1/evidence", post(evidence))
        .route("/v1/packs", get(packs))
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&service), guard))
        .with_state(service)
}

/// Every request: the bearer token (except `/healthz`), then the handler, then the
/// metrics.
async fn guard(State(service): State<Arc<Service>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let endpoint = endpoint_index(request.uri().path());
    let response = if request.uri().path() != "/healthz" && !authorised(&service, &request) {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            Diagnostic::new(
                ErrorCode::Unauthorized,
                "this service requires a bearer token",
            ),
        )
        .with_help(
            "send `Authorization: Bearer <token>` with the token the service was started with",
        )
        .into_response()
    } else {
        // The whole request, body included: a client that sends its body slowly (or
        // never) does not hold a connection and a task for ever.
        let limit = request_limit(service.config().limits.timeout);
        match tokio::time::timeout(limit, next.run(request)).await {
            Ok(response) => response,
            Err(_) => ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                Diagnostic::new(
                    ErrorCode::BudgetExceeded,
                    format!(
                        "the request was not received and answered within {} ms",
                        limit.as_millis()
                    ),
                ),
            )
            .with_help("send the whole body at once")
            .into_response(),
        }
    };
    service
        .metrics()
        .request(endpoint, response.status().as_u16(), started.elapsed());
    response
}

/// How long one request may take from its headers to its answer: twice the
/// evaluation timeout and a second, so that a request that reached evaluation always
/// ends by its own deadline first.
fn request_limit(timeout: Duration) -> Duration {
    timeout * 2 + Duration::from_secs(1)
}

/// Whether the request carries the service's token (compared in constant time), or
/// the service has none.
fn authorised(service: &Service, request: &Request) -> bool {
    let Some(token) = &service.config().token else {
        return true;
    };
    let Some(given) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    bool::from(given.trim().as_bytes().ct_eq(token.as_bytes()))
}

/// A JSON body, or a `bad_input` error saying where it is malformed (413 when it is
/// larger than the limit).
fn parse<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = body.map_err(|r| {
        let status = r.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than the service accepts".to_string()
        } else {
            format!("cannot read the request body: {}", r.body_text())
        };
        ApiError::new(status, Diagnostic::new(ErrorCode::BadInput, message))
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            Diagnostic::new(ErrorCode::BadInput, format!("invalid request body: {e}"))
                .at(Location::at("request", e.line(), e.column())),
        )
    })
}

/// Run `work` on the blocking pool, at most `max_evaluations` at once, and give up
/// after the timeout (the evaluation itself stops at its deadline).
async fn run<T: Send + 'static>(
    service: &Arc<Service>,
    work: impl FnOnce(&Service) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let timeout = service.config().limits.timeout;
    let busy = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            Diagnostic::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "the request did not finish within the service's timeout ({} ms)",
                    timeout.as_millis()
                ),
            ),
        )
        .with_help("send less evidence, or start the service with a longer --timeout-ms")
    };
    let deadline = tokio::time::Instant::now() + timeout + Duration::from_secs(1);
    let permit =
        tokio::time::timeout_at(deadline, Arc::clone(&service.evaluations).acquire_owned())
            .await
            .map_err(|_| busy())?
            .map_err(|_| ApiError::internal("the service is shutting down"))?;
    let worker = Arc::clone(service);
    let task = tokio::task::spawn_blocking(move || {
        let out = work(&worker);
        drop(permit);
        out
    });
    match tokio::time::timeout_at(deadline, task).await {
        Err(_) => Err(busy()),
        Ok(Err(e)) => Err(ApiError::internal(format!(
            "the request's evaluation failed: {e}"
        ))),
        Ok(Ok(out)) => out,
    }
}

/// Answer goals through the whole pipeline: the request's evidence as an overlay on
/// the shared base, proofs or why-nots, the context block, an answer (the one given,
/// or the extractive generator's) and the firewall's verdicts.
#[utoipa::path(post, path = "/v1/ask", request_body = AskRequest,
    responses(
        (status = 200, description = "The pipeline's result (docs/pipeline.md, \"The result\")", body = serde_json::Value),
        (status = 400, description = "Bad input", body = ErrorBody),
        (status = 422, description = "The evaluation budget was exceeded", body = ErrorBody),
    ))]
async fn ask(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<prooflog::pipeline::Answer>, ApiError> {
    let req: AskRequest = parse(body)?;
    run(&service, move |s| s.ask(req)).await.map(Json)
}

/// Prove a goal over the shared base and the request's evidence.
#[utoipa::path(post, path = "/v1/prove", request_body = ProveRequest,
    responses(
        (status = 200, description = "The goal's proofs", body = ProveResponse),
        (status = 400, description = "Bad input", body = ErrorBody),
        (status = 422, description = "The evaluation budget was exceeded", body = ErrorBody),
    ))]
async fn prove(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ProveResponse>, ApiError> {
    let req: ProveRequest = parse(body)?;
    run(&service, move |s| s.prove(req)).await.map(Json)
}

/// Check an answer's citations against the tags of proofs (the hallucination
/// firewall), optionally verifying each sentence against the facts it cites.
#[utoipa::path(post, path = "/v1/check", request_body = CheckRequest,
    responses(
        (status = 200, description = "The firewall's result: outcome, coverage, kept answer", body = serde_json::Value),
        (status = 400, description = "Bad input", body = ErrorBody),
    ))]
async fn check(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let req: CheckRequest = parse(body)?;
    run(&service, move |s| s.check(req)).await.map(Json)
}

/// Check that an answer's claims follow from passages (the faithfulness gate).
#[utoipa::path(post, path = "/v1/gate", request_body = GateRequest,
    responses(
        (status = 200, description = "The gate's result with per-claim verdicts", body = serde_json::Value),
        (status = 400, description = "Bad input", body = ErrorBody),
    ))]
async fn gate(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let req: GateRequest = parse(body)?;
    run(&service, move |s| s.gate(req)).await.map(Json)
}

/// Grade how well cited facts ground a claim.
#[utoipa::path(post, path = "/v1/ground", request_body = GroundRequest,
    responses(
        (status = 200, description = "The grounding report", body = serde_json::Value),
        (status = 400, description = "Bad input", body = ErrorBody),
    ))]
async fn ground(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let req: GroundRequest = parse(body)?;
    run(&service, move |s| s.ground(req)).await.map(Json)
}

/// Add evidence to the shared base. With a data directory it is committed to the
/// evidence store before the answer, and replayed on every start.
#[utoipa::path(post, path = "/v1/evidence", request_body = EvidenceRequest,
    responses(
        (status = 200, description = "The evidence is in the base (and stored)", body = EvidenceResponse),
        (status = 400, description = "Bad input", body = ErrorBody),
    ))]
async fn evidence(
    State(service): State<Arc<Service>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<EvidenceResponse>, ApiError> {
    let req: EvidenceRequest = parse(body)?;
    let evidence = Evidence {
        evidence: req.evidence,
        facts: req.facts,
    };
    run(&service, move |s| s.add_evidence(evidence))
        .await
        .map(Json)
}

/// The loaded packs and the size of the base.
#[utoipa::path(get, path = "/v1/packs",
    responses((status = 200, description = "The packs", body = PacksResponse)))]
async fn packs(State(service): State<Arc<Service>>) -> Result<Json<PacksResponse>, ApiError> {
    run(&service, |s| Ok(s.packs())).await.map(Json)
}

/// Liveness: answers without a token.
#[utoipa::path(get, path = "/healthz",
    responses((status = 200, description = "The service is up", body = Health)))]
async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Prometheus metrics: requests, latencies, evaluation sizes.
#[utoipa::path(get, path = "/metrics",
    responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain")))]
async fn metrics(State(service): State<Arc<Service>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        service.metrics().render(),
    )
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

async fn not_found(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        Diagnostic::new(
            ErrorCode::Usage,
            format!("no endpoint {}", request.uri().path()),
        ),
    )
    .with_help("see /openapi.json for the endpoints")
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        Diagnostic::new(
            ErrorCode::Usage,
            format!(
                "{} does not answer {}",
                request.uri().path(),
                request.method()
            ),
        ),
    )
    .with_help("see /openapi.json for each endpoint's method")
}
