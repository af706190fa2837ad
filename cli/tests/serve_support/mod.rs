//! The real `prooflog serve` binary on a free loopback port, driven over real HTTP.
#![allow(dead_code)] // each test crate uses a different part

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `prooflog` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_prooflog");

/// The repository root (fixture paths are relative to it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the cli package is inside the repository")
        .to_path_buf()
}

/// A fresh scratch directory under the target directory.
pub fn scratch(test: &str) -> PathBuf {
    let dir = repo_root()
        .join("target")
        .join("test-scratch")
        .join("serve")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// A running `prooflog serve`.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its scratch directory (the address file, its log).
    pub dir: PathBuf,
    agent: ureq::Agent,
    token: Option<String>,
}

/// An HTTP client that reports every status as a response, not an error.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

impl Server {
    /// Start `prooflog serve --addr 127.0.0.1:0 ARGS…` in `dir` and wait until it
    /// listens.
    pub fn start(dir: &Path, args: &[&str]) -> Server {
        let addr_file = dir.join("addr");
        let _ = std::fs::remove_file(&addr_file);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("serve.log"))
            .expect("open the server log");
        let child = Command::new(BIN)
            .arg("serve")
            .args(["--addr", "127.0.0.1:0", "--addr-file"])
            .arg(&addr_file)
            .args(args)
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn prooflog serve");
        let mut server = Server {
            child: Some(child),
            url: String::new(),
            dir: dir.to_path_buf(),
            agent: agent(),
            token: None,
        };
        let started = Instant::now();
        loop {
            if let Ok(addr) = std::fs::read_to_string(&addr_file) {
                server.url = format!("http://{}", addr.trim());
                return server;
            }
            if let Some(child) = server.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "prooflog serve exited with {status}: {}",
                    std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "prooflog serve did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Send this bearer token with every request.
    pub fn with_token(mut self, token: &str) -> Server {
        self.token = Some(token.to_string());
        self
    }

    /// POST a JSON body; the status and the body parsed as JSON.
    pub fn post(&self, path: &str, body: &str) -> (u16, serde_json::Value) {
        self.post_with(self.token.as_deref(), path, body)
    }

    /// [`Server::post`] with this bearer token.
    pub fn post_with(
        &self,
        token: Option<&str>,
        path: &str,
        body: &str,
    ) -> (u16, serde_json::Value) {
        post(&self.agent, &self.url, token, path, body)
            .unwrap_or_else(|e| panic!("POST {path}: {e}"))
    }

    /// GET; the status and the body as text.
    pub fn get(&self, path: &str) -> (u16, String) {
        let mut req = self.agent.get(format!("{}{path}", self.url));
        if let Some(t) = &self.token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let mut resp = req.call().unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, text)
    }

    /// Kill it with SIGKILL (as `kill -9`), without any chance to clean up.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stop it with SIGTERM and wait for a clean exit; returns whether it exited 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return false;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// POST `body` to `url` + `path` with `agent`.
pub fn post(
    agent: &ureq::Agent,
    url: &str,
    token: Option<&str>,
    path: &str,
    body: &str,
) -> Result<(u16, serde_json::Value), ureq::Error> {
    let mut req = agent
        .post(format!("{url}{path}"))
        .header("content-type", "application/json");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let mut resp = req.send(body)?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string()?;
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!("POST {path} gave {status} with a body that is not JSON ({e}): {text}")
    });
    Ok((status, json))
}
