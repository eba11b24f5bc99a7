//! Loading the config's modules, and loading them again when the config or
//! a module file changes (or on SIGHUP): the new set is swapped in whole,
//! unchanged modules are reused (their instances made anew, as on a first
//! load), a config that does not parse leaves the old set serving, and a
//! changed setting that only a restart applies is named in the log.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolhost::config::{Config, ConfigError, LoadedConfig, LoadedModule};
use toolhost::{Runtime, ToolManager};

use crate::metrics::ReloadResult;
use crate::state::{Served, ToolSet};

/// How long to wait after a change for others that come with it (an
/// editor saving a file in several steps) before reloading.
const SETTLE: Duration = Duration::from_millis(200);

/// What the operator's command line adds to a manager after each load
/// (`--activate`, `--deactivate`).
pub type Overrides = Box<dyn Fn(&ToolManager) -> anyhow::Result<()> + Send + Sync>;

/// Where the served modules come from: the config (a file, or the bundled
/// modules when there is none), the runtime they are loaded with, and the
/// operator's overrides.
pub struct Source {
    config: Option<PathBuf>,
    runtime: Runtime,
    overrides: Overrides,
    store_dir: Option<PathBuf>,
}

/// A load: the tools to serve, why some modules did not load, and the
/// config it came from.
pub(crate) struct Load {
    pub tools: ToolSet,
    pub failures: Vec<ConfigError>,
    pub config: LoadedConfig,
}

impl Source {
    /// Modules from the config at `config` (else `./toolhost.toml`, else the
    /// bundled ones), loaded with `runtime`, then `overrides` applied.
    pub fn new(config: Option<PathBuf>, runtime: Runtime, overrides: Overrides) -> Self {
        Self {
            config,
            runtime,
            overrides,
            store_dir: None,
        }
    }

    /// Keeps components pulled from OCI registries in `dir` (default: the
    /// config's, see [`LoadedConfig::pull_store`]).
    pub fn with_store_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.store_dir = dir;
        self
    }

    /// Loads every module that loads, reusing those of `previous` that did
    /// not change; an error only if the config itself cannot be read.
    pub(crate) fn load(&self, previous: &[LoadedModule]) -> anyhow::Result<Load> {
        let mut config = LoadedConfig::discover(self.config.as_deref())?;
        config.store_dir.clone_from(&self.store_dir);
        let mut report = config.load_report(&self.runtime, previous);
        let manager = config.manager_for_report(&mut report);
        (self.overrides)(&manager)?;
        Ok(Load {
            tools: ToolSet::new(manager, report.modules),
            failures: report.failures,
            config,
        })
    }

    /// The files whose change means a reload: the config, and every
    /// module's component.
    fn watched(&self, config: &LoadedConfig) -> HashSet<PathBuf> {
        let mut files: HashSet<PathBuf> = config.path.iter().map(|p| absolute(p)).collect();
        let base = config.base_dir();
        for entry in config.module_entries() {
            if let Some(path) = &entry.path {
                files.insert(absolute(&base.join(path)));
            }
        }
        files
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Logs each module that did not load: the server goes on without it.
pub(crate) fn log_failures(failures: &[ConfigError]) {
    for failure in failures {
        tracing::warn!(
            "{} (serving the other modules)",
            toolhost::escape_controls(&failure.to_string())
        );
    }
}

/// The watch of a served config: what changes are signalled on, and what
/// a reload compares with.
pub(crate) struct Watching {
    served: Arc<Served>,
    source: Arc<Source>,
    /// The settings read once at start, which a reload does not change.
    running: Config,
    watched: HashSet<PathBuf>,
    /// Kept alive while the watch runs; replaced when the files change.
    watcher: Option<RecommendedWatcher>,
    tx: mpsc::Sender<()>,
    rx: mpsc::Receiver<()>,
}

impl Watching {
    /// Starts watching the files of `first` and listening for SIGHUP: both
    /// are in place when this returns, so a change made once the server
    /// answers is seen. Call it within the runtime, before serving.
    pub(crate) fn start(
        served: Arc<Served>,
        source: Arc<Source>,
        first: LoadedConfig,
        stop: &CancellationToken,
    ) -> Self {
        let (tx, rx) = mpsc::channel::<()>(16);
        let watched = source.watched(&first);
        let watcher = start_watcher(&watched, tx.clone());
        listen_for_sighup(tx.clone(), stop.clone());
        Self {
            served,
            source,
            running: first.config,
            watched,
            watcher,
            tx,
            rx,
        }
    }

    /// Reloads on each change signalled, until `stop` is cancelled.
    pub(crate) async fn run(mut self, stop: CancellationToken) {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                event = self.rx.recv() => if event.is_none() { return },
            }
            tokio::time::sleep(SETTLE).await;
            while self.rx.try_recv().is_ok() {}
            if let Some(config) = reload(&self.served, &self.source).await {
                warn_of_settings_needing_restart(&self.running, &config.config);
                let now = self.source.watched(&config);
                if now != self.watched {
                    self.watcher = start_watcher(&now, self.tx.clone());
                    self.watched = now;
                }
            }
        }
    }
}

/// Logs a warning for each setting the config now gives a value that the
/// running server does not use, and will not until it restarts.
fn warn_of_settings_needing_restart(running: &Config, written: &Config) {
    for setting in running.settings_needing_restart(written) {
        tracing::warn!(
            "{} is {} in the config but {} in the running server: it takes effect \
             when toolhost serve restarts",
            setting.key,
            toolhost::escape_controls(&setting.written),
            toolhost::escape_controls(&setting.running),
        );
    }
}

/// Loads the modules again and serves them; the config loaded, or `None`
/// if it could not be read (the old set still serving).
async fn reload(served: &Arc<Served>, source: &Arc<Source>) -> Option<LoadedConfig> {
    let previous = served.tools().modules.clone();
    let loading = Arc::clone(source);
    let loaded = tokio::task::spawn_blocking(move || loading.load(&previous)).await;
    match loaded {
        Ok(Ok(load)) => {
            log_failures(&load.failures);
            let modules = load.tools.modules.len();
            let reused = load.tools.modules.iter().filter(|m| m.reused()).count();
            served.replace(load.tools).await;
            served.metrics.reload(ReloadResult::Applied);
            tracing::info!(
                "reloaded the config: {modules} modules ({reused} unchanged and reused, {} compiled)",
                modules - reused
            );
            Some(load.config)
        }
        Ok(Err(e)) => {
            served.metrics.reload(ReloadResult::Failed);
            tracing::error!(
                "the config did not load, so the tools loaded before are still served: {}",
                toolhost::escape_controls(&format!("{e:#}"))
            );
            None
        }
        Err(e) => {
            served.metrics.reload(ReloadResult::Failed);
            tracing::error!("reloading failed: {e}");
            None
        }
    }
}

/// Watches the directories of `files` (editors often replace a file
/// rather than write it, which a watch of the file itself would miss) and
/// sends a signal when one of `files` changes.
fn start_watcher(files: &HashSet<PathBuf>, tx: mpsc::Sender<()>) -> Option<RecommendedWatcher> {
    let wanted = files.clone();
    let handler = move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !event.kind.is_access()
            && event.paths.iter().any(|p| wanted.contains(&absolute(p)))
        {
            let _ = tx.try_send(());
        }
    };
    let mut watcher = match notify::recommended_watcher(handler) {
        Ok(watcher) => watcher,
        Err(e) => {
            tracing::warn!("cannot watch the config for changes (SIGHUP still reloads): {e}");
            return None;
        }
    };
    let dirs: HashSet<&Path> = files.iter().filter_map(|f| f.parent()).collect();
    for dir in dirs {
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), "cannot watch for changes: {e}");
        }
    }
    Some(watcher)
}

/// Sends a signal on every SIGHUP. The handler is in place when this
/// returns (until then, SIGHUP's default action would end the process).
fn listen_for_sighup(tx: mpsc::Sender<()>, stop: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            tracing::warn!("cannot listen for SIGHUP");
            return;
        };
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    got = hangups.recv() => {
                        if got.is_none() {
                            return;
                        }
                        tracing::info!("SIGHUP: reloading the config");
                        let _ = tx.send(()).await;
                    }
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = (tx, stop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ReloadLabels;

    /// How many reloads of `served` took.
    fn applied(served: &Served) -> u64 {
        served
            .metrics
            .reloads
            .get_or_create(&ReloadLabels {
                result: ReloadResult::Applied,
            })
            .get()
    }

    /// A change written as soon as the watch starts, before its task has
    /// run even once (this runtime has one thread, and the test does not
    /// yield until the file is written), is seen: the watch is in place
    /// when `start` returns, as it must be before the server answers.
    #[tokio::test]
    async fn a_change_written_as_soon_as_the_watch_starts_is_seen() {
        let dir = std::env::temp_dir().join(format!("toolhost-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let config = dir.join("toolhost.toml");
        std::fs::write(&config, "# first\n").expect("written");
        let runtime = Runtime::new().expect("a runtime");
        let source = Source::new(Some(config.clone()), runtime, Box::new(|_| Ok(())));
        let load = source.load(&[]).expect("the config loads");
        let settings = load.config.config.serve.clone();
        let served = Served::new(load.tools, settings).expect("served");
        let stop = CancellationToken::new();
        let watching = Watching::start(Arc::clone(&served), Arc::new(source), load.config, &stop);
        tokio::spawn(watching.run(stop.clone()));
        std::fs::write(&config, "# changed\n").expect("written");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while applied(&served) == 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.cancel();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(applied(&served), 1, "the change was not seen");
    }
}
