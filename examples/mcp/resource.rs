//! The list as an MCP resource: `resources/list` names it, `resources/read` gives it as a
//! Markdown checklist (`text/markdown`, the checklist of `:Todos edit`), and a client that
//! subscribed (`resources/subscribe`) is sent `notifications/resources/updated` when
//! another program changes the list file. The same Markdown is what `rpiv-todo-mcp export`
//! prints.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Resource, ResourceUpdatedNotificationParam};
use rmcp::service::Peer;
use rmcp::RoleServer;
use rpiv_todo::store::{self, FailureKind};

/// How often a subscribed server looks at the list file.
const POLL: Duration = Duration::from_millis(250);

/// The resource: the list of one session, in its file.
pub struct ListResource {
    pub uri: String,
    pub session: String,
    path: PathBuf,
    /// The generation of the list file this server last wrote (the list thread's).
    own: Arc<AtomicU64>,
    watching: AtomicBool,
}

impl ListResource {
    pub fn new(path: PathBuf, session: &str, own: Arc<AtomicU64>) -> ListResource {
        ListResource {
            uri: format!("todo://list/{}", uri_part(session)),
            session: session.to_string(),
            path,
            own,
            watching: AtomicBool::new(false),
        }
    }

    /// What `resources/list` shows of it.
    pub fn describe(&self) -> Resource {
        Resource::new(self.uri.clone(), "todos")
            .with_title(format!("The todo list (session {})", self.session))
            .with_description(
                "The shared list as a Markdown checklist: [ ] pending, [/] in progress, [x] completed",
            )
            .with_mime_type("text/markdown")
    }

    /// The list as a Markdown checklist, or why it cannot be read.
    pub fn markdown(&self) -> Result<String, String> {
        markdown_of(&self.path)
    }

    /// Tell `peer` when another program changes the file, from now until it goes away.
    /// One watch per server, however many subscriptions.
    pub fn watch(self: &Arc<Self>, peer: Peer<RoleServer>) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let mut last = stamp(&me.path);
            loop {
                tokio::time::sleep(POLL).await;
                let now = stamp(&me.path);
                if now == last {
                    continue;
                }
                last = now;
                // This server's own write is no news to its client: the reply said it.
                if now.is_some_and(|(generation, ..)| generation == me.own.load(Ordering::SeqCst)) {
                    continue;
                }
                let note = ResourceUpdatedNotificationParam::new(me.uri.clone());
                if peer.notify_resource_updated(note).await.is_err() {
                    break; // the client is gone
                }
            }
        });
    }
}

/// The list file at `path` as a Markdown checklist: empty for a missing file.
pub fn markdown_of(path: &Path) -> Result<String, String> {
    match store::load(path) {
        Ok(state) => Ok(rpiv_todo::markdown::render(&state)),
        Err(e) if e.kind() == FailureKind::Missing => Ok(String::new()),
        Err(e) => Err(e.to_string()),
    }
}

/// What identifies one version of the file: its generation, size, inode and mtime.
fn stamp(path: &Path) -> Option<(u64, u64, u64, Option<std::time::SystemTime>)> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)
        .ok()?
        .take(64)
        .read_to_end(&mut head)
        .ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let ino = 0;
    Some((
        rpiv_todo::shared::generation_of(&head),
        meta.len(),
        ino,
        meta.modified().ok(),
    ))
}

/// A session id as a URI path segment: unreserved characters as they are, others %XX.
fn uri_part(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uri_names_the_session_and_a_missing_file_is_an_empty_checklist() {
        let r = ListResource::new(
            PathBuf::from("/nonexistent/x.json"),
            "chat 1/é",
            Arc::default(),
        );
        assert_eq!(r.uri, "todo://list/chat%201%2F%C3%A9");
        assert_eq!(r.markdown().unwrap(), "");
        let dir = std::env::temp_dir().join(format!("rpiv-res-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "not json").unwrap();
        assert!(markdown_of(&bad).unwrap_err().contains("invalid JSON"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
