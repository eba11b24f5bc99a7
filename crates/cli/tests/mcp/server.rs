//! `toolhost serve --http` as a child process: started on a free loopback
//! port, stopped with SIGTERM when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `toolhost serve --http 127.0.0.1:0`.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// What the server logged, line by line, as it comes.
    pub log: mpsc::Receiver<String>,
}

impl HttpServer {
    /// Starts `command` (a `toolhost ...` command) with `serve --http
    /// 127.0.0.1:0` and `extra` arguments, and waits until it listens.
    pub fn start(mut command: Command, extra: &[&str]) -> HttpServer {
        let mut child = command
            .args(["serve", "--http", "127.0.0.1:0"])
            .env("TOOLHOST_LOG", "info")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolhost serve starts");
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let prefix = "toolhost: serving MCP at ";
        let mut seen = Vec::new();
        let url = loop {
            match log.recv_timeout(Duration::from_secs(120)) {
                Ok(line) => match line.strip_prefix(prefix) {
                    Some(url) => break Some(url.trim().to_string()),
                    None => seen.push(line),
                },
                Err(_) => break None,
            }
        };
        let Some(url) = url else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "toolhost serve --http did not say where it listens:\n{}",
                seen.join("\n")
            );
        };
        HttpServer { child, url, log }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The sum of every sample of `metric` in `GET /metrics`.
    pub fn metric_sum(&self, metric: &str) -> f64 {
        metric_sum(&self.metrics(), metric)
    }

    /// The text of `GET /metrics`.
    pub fn metrics(&self) -> String {
        let response = crate::raw::http_get(&self.authority(), "/metrics");
        assert_eq!(response.status, 200, "GET /metrics: {}", response.body);
        response.body
    }

    /// `127.0.0.1:PORT`.
    pub fn authority(&self) -> String {
        self.url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .expect("an http:// URL")
            .to_string()
    }

    /// Sends SIGTERM and waits up to `timeout` for the server to exit.
    pub fn terminate(&mut self, timeout: Duration) -> Option<ExitStatus> {
        crate::raw::terminate(&mut self.child, timeout)
    }
}

/// The sum of every sample of `metric` in the metrics `text`.
pub fn metric_sum(text: &str, metric: &str) -> f64 {
    let labelled = format!("{metric}{{");
    text.lines()
        .filter(|line| line.starts_with(&labelled) || line.split(' ').next() == Some(metric))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.terminate(Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
