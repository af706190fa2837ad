//! Generators: what writes the answer from the context block.
//!
//! [`Generator`] is the seam between the symbolic layer and a language model. Two
//! ship: [`ExtractiveGenerator`], deterministic and offline (the default, and what the
//! tests use), which writes each proved conclusion and its premises as cited sentences
//! in the pack's own words; and, with the `openai` cargo feature, [`OpenAiClient`], a
//! client for OpenAI-compatible chat-completion servers (llama.cpp's server, vLLM,
//! Ollama). Every answer goes through the firewall afterwards, whoever wrote it.

use std::fmt::Write as _;

use crate::diag::Result;
use crate::proof::{ProofNode, ProofTree};

use super::whynot::{Blocker, WhyNot};

/// How the model is told to cite (the system prompt).
pub const SYSTEM_PROMPT: &str = "You answer questions using only the facts in the context block. \
Every sentence that states a fact must end with the bracketed tags of the context lines it rests on, \
for example [STEP-1] or [HEDGE-42][STEP-2]. Use only tags that appear in the context block; never \
invent a tag or a fact. State each fact in the words of its context line. If the context does not \
establish something, do not claim it: you may say what is missing in a sentence marked [UNVERIFIED] \
before its full stop.";

/// What a generator is given for one request.
#[derive(Debug, Clone, Copy)]
pub struct Prompt<'a> {
    /// How to cite (the system message).
    pub system: &'a str,
    /// The question and the context block (the user message).
    pub user: &'a str,
    /// The question alone.
    pub question: &'a str,
    /// The context block alone.
    pub context: &'a str,
    /// The proofs of the proved goals, tags already unique in the request.
    pub proofs: &'a [ProofTree],
    /// Why each unproved goal is not proved, with the proof of the blocking fact when
    /// a fact blocks it.
    pub why_not: &'a [(WhyNot, Option<ProofTree>)],
}

/// The user message for a question and its context block.
pub fn user_message(question: &str, context: &str) -> String {
    format!(
        "Context block:\n{context}\nQuestion: {question}\nAnswer in a few sentences, citing tags."
    )
}

/// Writes an answer. Implementations must be callable from many threads at once.
pub trait Generator: Send + Sync {
    /// A short name for reports (`extractive`, `openai:<model>`).
    fn name(&self) -> String;

    /// The answer's text, citations included.
    fn generate(&self, prompt: &Prompt<'_>) -> Result<String>;
}

/// A deterministic, offline generator: for each proved goal, its conclusion and the
/// facts it rests on, one sentence each, in the pack's verbalisations, each citing its
/// own tag; for each unproved goal, a sentence marked `[UNVERIFIED]` saying so and,
/// when a fact blocks it, that fact with its tag.
#[derive(Debug, Clone, Copy)]
pub struct ExtractiveGenerator {
    /// At most this many sentences per proof (root first, then premises in node
    /// order).
    pub sentences_per_proof: usize,
}

impl Default for ExtractiveGenerator {
    fn default() -> Self {
        ExtractiveGenerator {
            sentences_per_proof: 6,
        }
    }
}

/// `text` with its first letter in upper case.
pub(crate) fn sentence_case(text: &str) -> String {
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

impl ExtractiveGenerator {
    fn proof_sentences(&self, out: &mut Vec<String>, tree: &ProofTree) {
        let mut n = 0;
        for node in &tree.nodes {
            if n >= self.sentences_per_proof {
                break;
            }
            let Some(tag) = node.tag() else { continue };
            if matches!(node, ProofNode::Absence(_)) {
                continue;
            }
            let s = format!("{} [{tag}].", sentence_case(&tree.node_text(node)));
            if !out.contains(&s) {
                out.push(s);
                n += 1;
            }
        }
    }
}

impl Generator for ExtractiveGenerator {
    fn name(&self) -> String {
        "extractive".into()
    }

    fn generate(&self, prompt: &Prompt<'_>) -> Result<String> {
        let mut sentences = Vec::new();
        for tree in prompt.proofs {
            self.proof_sentences(&mut sentences, tree);
        }
        for (w, blocker_proof) in prompt.why_not {
            let cause = w.root_cause();
            // The marker sits inside the sentence: a bracket right after a full stop
            // would belong to the sentence before.
            let mut s = format!("No proof was found that {}", w.text);
            match &cause.blocker {
                Blocker::Missing { text, .. } => {
                    let _ = write!(s, ": it would need that {text}");
                }
                Blocker::Present { text, .. } => {
                    let _ = write!(s, "; what blocks it is that {text}");
                }
                Blocker::Condition { text } => {
                    let _ = write!(s, ": {text}");
                }
                Blocker::NoRule => {}
            }
            s.push_str(" [UNVERIFIED].");
            sentences.push(s);
            if let Some(tree) = blocker_proof
                && let Some(root) = tree.root()
                && let Some(tag) = root.tag()
            {
                sentences.push(format!("{} [{tag}].", sentence_case(&tree.node_text(root))));
            }
        }
        if sentences.is_empty() {
            sentences.push("The facts at hand do not answer this question [UNVERIFIED].".into());
        }
        Ok(sentences.join(" "))
    }
}

/// A generator that returns a fixed text: for tests and demonstrations.
#[derive(Debug, Clone)]
pub struct FixedGenerator(pub String);

impl Generator for FixedGenerator {
    fn name(&self) -> String {
        "fixed".into()
    }

    fn generate(&self, _: &Prompt<'_>) -> Result<String> {
        Ok(self.0.clone())
    }
}

/// Another generator's answer with a sentence appended: how `prooflog demo` shows
/// what the firewall does with a claim the proofs do not support.
pub struct WithExtraSentence<G> {
    /// The generator whose answer is extended.
    pub inner: G,
    /// The sentence appended (an unsupported claim).
    pub sentence: String,
}

impl<G: Generator> Generator for WithExtraSentence<G> {
    fn name(&self) -> String {
        format!("{}+extra", self.inner.name())
    }

    fn generate(&self, prompt: &Prompt<'_>) -> Result<String> {
        let mut text = self.inner.generate(prompt)?;
        text.push(' ');
        text.push_str(&self.sentence);
        Ok(text)
    }
}

#[cfg(feature = "openai")]
pub use openai::OpenAiClient;

#[cfg(feature = "openai")]
mod openai {
    use std::time::Duration;

    use super::{Generator, Prompt};
    use crate::diag::{Diagnostic, ErrorCode, Result};

    /// A client for an OpenAI-compatible chat-completion server (llama.cpp's
    /// `llama-server`, vLLM, Ollama, …): one `POST {base_url}/chat/completions` per
    /// request with the system and user messages, temperature 0, and the reply's
    /// first choice as the answer. `base_url` is the API root, e.g.
    /// `http://127.0.0.1:8080/v1` (llama.cpp) or `http://127.0.0.1:11434/v1` (Ollama).
    #[derive(Debug, Clone)]
    pub struct OpenAiClient {
        base_url: String,
        model: String,
        api_key: Option<String>,
        timeout: Duration,
        max_tokens: Option<u32>,
    }

    fn failed(message: String) -> crate::diag::Error {
        Diagnostic::new(ErrorCode::Generation, message)
            .with_help(
                "check that the chat-completion server is running and the model name is right",
            )
            .into()
    }

    impl OpenAiClient {
        /// A client for `model` at `base_url`, with a 60-second timeout.
        pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiClient {
            OpenAiClient {
                base_url: base_url.into().trim_end_matches('/').to_string(),
                model: model.into(),
                api_key: None,
                timeout: Duration::from_secs(60),
                max_tokens: None,
            }
        }

        /// Send `Authorization: Bearer <key>`.
        pub fn with_api_key(mut self, key: impl Into<String>) -> OpenAiClient {
            self.api_key = Some(key.into());
            self
        }

        /// Give up after this long.
        pub fn with_timeout(mut self, timeout: Duration) -> OpenAiClient {
            self.timeout = timeout;
            self
        }

        /// Ask for at most this many tokens.
        pub fn with_max_tokens(mut self, n: u32) -> OpenAiClient {
            self.max_tokens = Some(n);
            self
        }

        /// The request body for a prompt.
        pub fn body(&self, prompt: &Prompt<'_>) -> serde_json::Value {
            let mut body = serde_json::json!({
                "model": self.model,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ],
            });
            if let Some(n) = self.max_tokens {
                body["max_tokens"] = serde_json::Value::from(n);
            }
            body
        }
    }

    impl Generator for OpenAiClient {
        fn name(&self) -> String {
            format!("openai:{}", self.model)
        }

        fn generate(&self, prompt: &Prompt<'_>) -> Result<String> {
            let config = ureq::Agent::config_builder()
                .timeout_global(Some(self.timeout))
                .http_status_as_error(false)
                .build();
            let agent: ureq::Agent = config.into();
            let url = format!("{}/chat/completions", self.base_url);
            let mut request = agent.post(&url).content_type("application/json");
            if let Some(key) = &self.api_key {
                request = request.header("Authorization", format!("Bearer {key}"));
            }
            let body = self.body(prompt).to_string();
            let mut response = request
                .send(body)
                .map_err(|e| failed(format!("POST {url}: {e}")))?;
            let status = response.status();
            let text = response
                .body_mut()
                .read_to_string()
                .map_err(|e| failed(format!("reading the reply of {url}: {e}")))?;
            if !status.is_success() {
                let short: String = text.chars().take(300).collect();
                return Err(failed(format!("{url} answered {status}: {short}")));
            }
            let reply: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| failed(format!("{url} did not answer JSON: {e}")))?;
            reply["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| failed(format!("{url} answered no choices[0].message.content")))
        }
    }
}
