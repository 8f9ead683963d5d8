//! Files a user can trust: a list saved to disk and read back, atomic writes and
//! careful reads for every file the crate keeps (the list files, rpiv-i18n's locale file).
//!
//! A save never leaves a half-written file. The text goes to a temporary file beside the
//! target (same directory, so the same filesystem), which is flushed and synced, then
//! renamed over the target; then the directory is synced so the rename itself survives a
//! power cut. A process killed at any instant therefore leaves the old file or the new
//! one, whole. A temporary file is only left behind when the process dies between its
//! creation and the rename; it is hidden (`.<name>.<random>.tmp`), never read, and
//! removed by a later save of the same file once it is ten minutes old.
//!
//! A load takes nothing on trust: a missing, unreadable, empty, truncated or malformed
//! file, or a snapshot that breaks the list's rules, is an error that names the path and
//! says what is wrong.
//!
//! # File format (version 1)
//!
//! The snapshot the tool returns in `details`, with a format version in front:
//! `{"version":1,"tasks":[…],"nextId":N}` (UTF-8, one line, a final newline). A file
//! without `version` (a snapshot copied out of a tool result) reads as version 1; a file
//! with a higher version was written by a newer rpiv_todo and is refused, not guessed at.
//! Keys other than these three are ignored, so a later version may add some.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::task::{State, Task};

/// The format version this build writes, and the highest it reads.
pub const FORMAT_VERSION: u64 = 1;

/// A list file larger than this is refused rather than read into memory (a 300-task
/// list is about 30 KiB).
pub const MAX_LIST_BYTES: u64 = 64 * 1024 * 1024;

/// What went wrong with a file. Each message starts with the path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// There is no file at the path (a dangling symbolic link included).
    #[error("{path}: no such file")]
    Missing {
        /// The path, as given.
        path: String,
    },
    /// Something other than a plain file is at the path (a directory, a pipe, a
    /// terminal, a device): it was not opened for reading.
    #[error("{path}: cannot read: {what}")]
    NotFile {
        /// The path, as given.
        path: String,
        /// What is there instead, in words.
        what: String,
    },
    /// The file is larger than the most this kind of file may hold: it was not read.
    #[error("{path}: larger than {limit} bytes, the most this file may hold: not read")]
    TooLarge {
        /// The path, as given.
        path: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file exists but could not be read.
    #[error("{path}: cannot read: {reason}")]
    Read {
        /// The path, as given.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// The file could not be written (nothing at the path changed).
    #[error("{path}: cannot write: {reason}")]
    Write {
        /// The path, as given.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// The file was written by a newer rpiv_todo, in a format this one does not read: it
    /// is left as it is, never moved aside or written over.
    #[error("{path}: {what}")]
    Newer {
        /// The path, as given.
        path: String,
        /// Which format it is, and which this build reads.
        what: String,
    },
    /// The file was read but is not what it should be.
    #[error("{path}: {what}")]
    Invalid {
        /// The path, as given.
        path: String,
        /// What is wrong with the content.
        what: String,
    },
}

/// What kind of failure a [`StoreError`] is, for a caller that acts on it (start empty
/// for a missing file, move aside only an invalid one) without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// No file at the path.
    Missing,
    /// A directory, a pipe, a terminal or a device where a file belongs.
    NotFile,
    /// Larger than the limit; not read.
    TooLarge,
    /// The system refused or failed the read or the write (permissions, too many open
    /// files, an I/O error, a full disk): a later attempt may succeed.
    Io,
    /// Written by a newer rpiv_todo, in a format this build does not read.
    Newer,
    /// The content is not what it should be (not JSON, not a list, breaks its rules).
    Invalid,
}

impl FailureKind {
    /// The name Lua sees as `core.load`'s third result.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Missing => "missing",
            FailureKind::NotFile => "not_file",
            FailureKind::TooLarge => "too_large",
            FailureKind::Io => "io",
            FailureKind::Newer => "newer",
            FailureKind::Invalid => "invalid",
        }
    }
}

impl StoreError {
    /// What kind of failure this is; decided where the failure happened (from the
    /// `io::ErrorKind` or the check that refused), never from the message.
    pub fn kind(&self) -> FailureKind {
        match self {
            StoreError::Missing { .. } => FailureKind::Missing,
            StoreError::NotFile { .. } => FailureKind::NotFile,
            StoreError::TooLarge { .. } => FailureKind::TooLarge,
            StoreError::Read { .. } | StoreError::Write { .. } => FailureKind::Io,
            StoreError::Newer { .. } => FailureKind::Newer,
            StoreError::Invalid { .. } => FailureKind::Invalid,
        }
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// An I/O error in words, without Rust's `(os error N)` suffix where a plain phrase says
/// it, and never with the name of a temporary file (tempfile appends ` at path <name>`):
/// the user never sees that name, and a message that changes with it at every save
/// would be reported again at every save.
pub(crate) fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        #[cfg(unix)]
        _ if e.raw_os_error() == Some(libc::ELOOP) => {
            "a symbolic link that never reaches a file (a loop, or too many links)".into()
        }
        _ => {
            let text = e.to_string();
            match text.find(" at path ") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}

/// Save `state` to `path` atomically (format version 1). The directory must exist.
pub fn save(path: &Path, state: &State) -> Result<(), StoreError> {
    write_atomic(path, &to_text(state))
}

/// Read the list saved at `path`.
pub fn load(path: &Path) -> Result<State, StoreError> {
    let bytes = read_file(path, MAX_LIST_BYTES)?;
    parse_file(path, &bytes)
}

/// A list file's text as a list, or the error that names `path` (`Newer` for a format
/// this build does not read, `Invalid` for anything else that is not a list).
pub(crate) fn parse_file(path: &Path, bytes: &[u8]) -> Result<State, StoreError> {
    parse_file_with_log(path, bytes).map(|(state, _)| state)
}

/// [`parse_file`] with the file's record of changes (`"log"`; an empty one when it has
/// none or one this build cannot read).
pub(crate) fn parse_file_with_log(
    path: &Path,
    bytes: &[u8],
) -> Result<(State, crate::journal::Journal), StoreError> {
    let (state, log) = parse_value(bytes).map_err(|what| {
        if what.starts_with(NEWER) {
            StoreError::Newer {
                path: shown(path),
                what,
            }
        } else {
            StoreError::Invalid {
                path: shown(path),
                what,
            }
        }
    })?;
    Ok((state, crate::journal::from_file_value(log.as_ref())))
}

/// How `parse` starts the message for a file of a newer format.
const NEWER: &str = "written by a newer rpiv_todo";

/// The text of a list file.
pub fn to_text(state: &State) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        version: u64,
        tasks: &'a [Task],
        #[serde(rename = "nextId")]
        next_id: i64,
    }
    let mut out = Vec::with_capacity(64 + state.tasks.len() * 128);
    // Plain data with string keys: serializing to a Vec cannot fail.
    let _ = serde_json::to_writer(
        &mut out,
        &File {
            version: FORMAT_VERSION,
            tasks: &state.tasks,
            next_id: state.next_id,
        },
    );
    out.push(b'\n');
    out
}

/// A list file's text as a list, or what is wrong with it.
pub fn parse(bytes: &[u8]) -> Result<State, String> {
    parse_value(bytes).map(|(state, _)| state)
}

/// [`parse`], with the file's record of changes (`"log"`) as it is in the text.
fn parse_value(bytes: &[u8]) -> Result<(State, Option<Value>), String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("the file is empty".into());
    }
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Eof => format!(
            "truncated JSON (the text stops at line {}, column {})",
            e.line(),
            e.column()
        ),
        _ => format!("invalid JSON ({e})"),
    })?;
    let not_a_list = |what: String| format!("not a todo list: {what}");
    let Value::Object(map) = &value else {
        return Err(not_a_list(format!(
            "expected an object {{\"tasks\": [...], \"nextId\": n}}, got {}",
            crate::params::kind(&value)
        )));
    };
    match map.get("version") {
        None => {}
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= FORMAT_VERSION => {}
            Some(n) if n > FORMAT_VERSION => {
                return Err(format!(
                    "{NEWER} (file format version {n}; this one reads up to {FORMAT_VERSION})"
                ))
            }
            _ => {
                return Err(not_a_list(format!(
                    "version: expected a positive integer, got {}",
                    crate::params::kind(v)
                )))
            }
        },
    }
    // A file must say both: `state_from_value` fills in what a host's table leaves out,
    // but a file missing either is not one this tool wrote.
    for (key, expected) in [("tasks", "an array"), ("nextId", "an integer")] {
        if !map.contains_key(key) {
            return Err(not_a_list(format!(
                "{key}: expected {expected}, got nothing"
            )));
        }
    }
    if !map.get("tasks").is_some_and(Value::is_array) {
        let got = map
            .get("tasks")
            .map(crate::params::kind)
            .unwrap_or_default();
        return Err(not_a_list(format!("tasks: expected an array, got {got}")));
    }
    // The same reading and the same rules as `core.list` (`State::validate`): a file
    // that breaks them is refused, a nextId not past every id is repaired.
    let log = value.as_object_mut().and_then(|m| m.shift_remove("log"));
    let state = crate::json::state_from_value(&value).map_err(|e| match e {
        crate::error::Error::State(rule) => format!("breaks the list's rules: {rule}"),
        other => not_a_list(other.to_string()),
    })?;
    Ok((state, log))
}

/// Write `bytes` to `path` so that the path holds the old text or the new, whole, at
/// every instant. A symbolic link is followed (the file it points to is replaced and the
/// link stays); an existing file keeps its permissions.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    if path.as_os_str().is_empty() {
        return Err(StoreError::Write {
            path: shown(path),
            reason: "the path is empty".into(),
        });
    }
    let target = resolve_link(path).map_err(|reason| StoreError::Write {
        path: shown(path),
        reason,
    })?;
    replace(&target, path, bytes, || Ok(()))?;
    Ok(())
}

/// Replace the file at `target` (a path no link is followed at: a link there would be
/// replaced, not its target) with `bytes`, atomically; errors name `shown`. `check` runs
/// last, after the new text is synced and just before the rename: an error from it
/// leaves the file as it was. Returns the new file's metadata, read from the file
/// written, so it is the file's own and not whatever the path holds a moment later.
pub(crate) fn replace(
    target: &Path,
    shown_as: &Path,
    bytes: &[u8],
    check: impl FnOnce() -> Result<(), String>,
) -> Result<fs::Metadata, StoreError> {
    let fail = |reason: String| StoreError::Write {
        path: shown(shown_as),
        reason,
    };
    let Some(name) = target.file_name() else {
        return Err(fail("the path does not name a file".into()));
    };
    let dir = parent_of(target);
    let existing = fs::metadata(target).ok();
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(fail("it is a directory".into()));
        }
        // A rename would replace a device or a pipe (`/dev/null`, say) with a plain file.
        if !meta.is_file() {
            return Err(fail("it is not a regular file".into()));
        }
    }
    let prefix = temporary_prefix(name);
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .rand_bytes(RANDOM_CHARS)
        .suffix(".tmp");
    if let Some(meta) = &existing {
        builder.permissions(meta.permissions());
    }
    let mut tmp = builder.tempfile_in(&dir).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            fail(format!("the directory {} does not exist", dir.display()))
        } else {
            fail(format!(
                "cannot create a file in {}: {}",
                dir.display(),
                reason(&e)
            ))
        }
    })?;
    // On any error below the temporary file is removed when `tmp` drops.
    // Through the plain file, whose errors do not carry the temporary name.
    let file = tmp.as_file_mut();
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .and_then(|()| file.sync_all())
        .map_err(|e| fail(reason(&e)))?;
    let meta = file.metadata().map_err(|e| fail(reason(&e)))?;
    check().map_err(fail)?;
    tmp.persist(target).map_err(|e| fail(reason(&e.error)))?;
    // From here on the file is saved: nothing below may turn that into an error.
    sync_dir(&dir);
    if sweep_due(&dir, &prefix) {
        remove_temporaries_in(&dir, &prefix, STALE_AFTER);
    }
    Ok(meta)
}

/// The directory a file is in (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What every temporary file of a save of `name` starts with: `.<name>.`.
fn temporary_prefix(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
}

/// Remove every temporary file a save of `target` left (`.<name>.<random>.tmp`), whatever
/// its age: for a caller that knows no save of it is under way (it holds the file's lock,
/// under which every save of it is made). `target` is the file itself, no link followed.
pub(crate) fn remove_temporaries(target: &Path) {
    let Some(name) = target.file_name() else {
        return;
    };
    remove_temporaries_in(
        &parent_of(target),
        &temporary_prefix(name),
        std::time::Duration::ZERO,
    );
}

/// Random characters in a temporary file's name (`.<name>.<random>.tmp`).
const RANDOM_CHARS: usize = 6;

/// A temporary file of ours older than this was left by a writer that died before its
/// rename (a save takes milliseconds), never one still being written.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// When this process last looked for each target's leftovers (directory and prefix).
type SweepLog = std::collections::HashMap<(PathBuf, std::ffi::OsString), std::time::Instant>;
static SWEPT: std::sync::Mutex<Option<SweepLog>> = std::sync::Mutex::new(None);
/// How many targets `SWEPT` remembers at most.
const SWEEP_LOG_MAX: usize = 4096;

/// Is it time to look for `prefix`'s leftovers in `dir` again? Listing a large directory
/// costs too much for every save; a temporary file can only become stale `STALE_AFTER`
/// after it was made, so looking once per that interval per target (and at a process's
/// first save of it) removes every stale one all the same.
fn sweep_due(dir: &Path, prefix: &std::ffi::OsStr) -> bool {
    // Nothing panics while the lock is held; a poisoned lock still holds a valid map.
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    let log = swept.get_or_insert_with(SweepLog::new);
    let now = std::time::Instant::now();
    let key = (dir.to_path_buf(), prefix.to_os_string());
    if log.len() >= SWEEP_LOG_MAX && !log.contains_key(&key) {
        // A process that saved this many lists forgets when it looked: the next save of
        // each looks again, as at the first one. The log stays small however long it runs.
        log.clear();
    }
    match log.get(&key) {
        Some(last) if now.duration_since(*last) < STALE_AFTER => false,
        _ => {
            log.insert(key, now);
            true
        }
    }
}

/// Remove what killed writers left beside the target (`.<name>.<random>.tmp`, at least
/// `min_age` old, so that no save can still be using it), so crashes do not pile files
/// up. Best effort: the save itself already succeeded. `write_atomic` lists the directory
/// at most once per `STALE_AFTER` for each target (`sweep_due`), not at every save.
fn remove_temporaries_in(dir: &Path, prefix: &std::ffi::OsStr, min_age: std::time::Duration) {
    #[cfg(unix)]
    {
        // Not `fs::read_dir`: std asserts that `closedir` succeeds, so an EIO from the
        // directory's close would panic after the save it follows had succeeded. rustix's
        // `Dir` closes without asserting, and every step here is best effort.
        use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
        let Ok(fd) = rfs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return;
        };
        let Ok(mut entries) = rfs::Dir::read_from(&fd) else {
            return;
        };
        let prefix = prefix.as_encoded_bytes();
        let now = std::time::SystemTime::now();
        while let Some(Ok(entry)) = entries.next() {
            let name = entry.file_name();
            let bytes = name.to_bytes();
            let ours = bytes.len() == prefix.len() + RANDOM_CHARS + ".tmp".len()
                && bytes.starts_with(prefix)
                && bytes.ends_with(b".tmp");
            if !ours {
                continue;
            }
            let Ok(stat) = rfs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let is_file = rfs::FileType::from_raw_mode(stat.st_mode) == rfs::FileType::RegularFile;
            let modified = u64::try_from(stat.st_mtime)
                .ok()
                .map(|secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
            let stale = is_file
                && modified
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age >= min_age);
            if stale {
                let _ = rfs::unlinkat(&fd, name, AtFlags::empty());
            }
        }
    }
    #[cfg(not(unix))]
    {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let prefix = prefix.as_encoded_bytes();
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let bytes = name.as_encoded_bytes();
            let ours = bytes.len() == prefix.len() + RANDOM_CHARS + ".tmp".len()
                && bytes.starts_with(prefix)
                && bytes.ends_with(b".tmp");
            let stale = ours
                && entry
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file())
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age >= min_age);
            if stale {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// The file a symbolic link points to, followed link by link, so that a dotfile kept as
/// a link stays one, even when its target does not exist yet (a dangling link: the
/// target is created); any other path as it is. A loop of links, or a chain longer than
/// the system follows, is refused: replacing the link with a plain file would lose it.
pub(crate) fn resolve_link(path: &Path) -> Result<PathBuf, String> {
    // Linux follows at most 40 links in one path.
    const MAX_HOPS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        let is_link = fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return Ok(current);
        }
        let to = fs::read_link(&current).map_err(|e| {
            format!(
                "cannot follow the symbolic link {}: {}",
                current.display(),
                reason(&e)
            )
        })?;
        // A relative target is relative to the link's directory; joined, not normalized,
        // so `..` means what the system makes of it.
        current = match current.parent() {
            Some(dir) if to.is_relative() => dir.join(to),
            _ => to,
        };
    }
    Err(format!(
        "a symbolic link that never reaches a file (a loop, or more than {MAX_HOPS} links); left as it is"
    ))
}

/// Make the rename durable. Best effort: by now the new file is in place, and some
/// filesystems refuse to sync a directory (EINVAL); reporting a failed save for a file
/// that was saved would be wrong.
fn sync_dir(dir: &Path) {
    // Opened like every file here: nothing put in the directory's place can block it.
    #[cfg(unix)]
    if let Ok(d) = open_for_reading(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The whole file at `path`, or why not. Nothing but a plain file is ever opened for
/// reading, and a file larger than `limit` is refused from its size, unread: opening a
/// pipe blocks until someone writes to it, reading a terminal or a device may never end,
/// and reading 2 GB to find out it is too large stalls the host.
///
/// The type and size are looked at before opening (so a device is never opened at all),
/// and again on the opened descriptor, because the path may be replaced in between: the
/// open itself does not block (`O_NONBLOCK`; `O_NOCTTY` so a terminal never becomes the
/// process's controlling one), and what was opened is checked before a byte is read. A
/// file that grows past `limit` while it is read is refused too.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, StoreError> {
    let file = open_checked(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| read_error(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(StoreError::TooLarge {
            path: shown(path),
            limit,
        });
    }
    Ok(bytes)
}

fn read_error(path: &Path, e: &io::Error) -> StoreError {
    if e.kind() == io::ErrorKind::NotFound {
        StoreError::Missing { path: shown(path) }
    } else {
        StoreError::Read {
            path: shown(path),
            reason: reason(e),
        }
    }
}

/// `path` opened for reading, checked as `read_file` checks it (a plain file, at most
/// `limit` bytes, before and after the open); nothing read yet.
pub(crate) fn open_checked(path: &Path, limit: u64) -> Result<File, StoreError> {
    let check = |meta: &fs::Metadata| {
        if !meta.is_file() {
            return Err(StoreError::NotFile {
                path: shown(path),
                what: not_a_file(meta),
            });
        }
        if meta.len() > limit {
            return Err(StoreError::TooLarge {
                path: shown(path),
                limit,
            });
        }
        Ok(())
    };
    check(&fs::metadata(path).map_err(|e| read_error(path, &e))?)?;
    let file = open_for_reading(path).map_err(|e| read_error(path, &e))?;
    check(&file.metadata().map_err(|e| read_error(path, &e))?)?;
    Ok(file)
}

/// What is at a path instead of a plain file, in words.
fn not_a_file(meta: &fs::Metadata) -> String {
    if meta.is_dir() {
        return "it is a directory".into();
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "it is a pipe (FIFO), not a regular file".into();
        }
        if t.is_char_device() || t.is_block_device() {
            return "it is a device, not a regular file".into();
        }
        if t.is_socket() {
            return "it is a socket, not a regular file".into();
        }
    }
    "it is not a regular file".into()
}

/// Open without blocking: on a pipe with no writer, a plain `open` waits forever.
fn open_for_reading(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // For a regular file O_NONBLOCK changes nothing; anything else is refused after
        // the open, before any read.
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::save_locale;
    use serde_json::json;

    fn state(n: usize) -> State {
        let tasks: Vec<Value> = (1..=n)
            .map(|i| json!({"id": i, "subject": format!("task {i}"), "status": "pending"}))
            .collect();
        crate::json::state_from_value(&json!({"tasks": tasks, "nextId": n + 1})).unwrap()
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_saved_list_loads_back_equal_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("list.json");
        let s = state(3);
        save(&path, &s).unwrap();
        assert_eq!(load(&path).unwrap(), s);
        save(&path, &state(1)).unwrap();
        assert_eq!(load(&path).unwrap(), state(1));
        assert_eq!(files_in(dir.path()), ["list.json"]);
    }

    #[test]
    fn the_file_is_the_snapshot_with_a_version() {
        let text = String::from_utf8(to_text(&state(1))).unwrap();
        assert_eq!(
            text,
            "{\"version\":1,\"tasks\":[{\"id\":1,\"subject\":\"task 1\",\"status\":\"pending\"}],\"nextId\":2}\n"
        );
    }

    #[test]
    fn a_snapshot_without_version_reads_as_version_1() {
        let s = parse(br#"{"tasks":[{"id":1,"subject":"a","status":"completed"}],"nextId":5}"#)
            .unwrap();
        assert_eq!(s.next_id, 5);
        assert_eq!(s.tasks.len(), 1);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let cases: [(&[u8], &str); 11] = [
            (b"", "the file is empty"),
            (b"  \n", "the file is empty"),
            (
                br#"{"version":1,"tasks":[{"id":1,"sub"#,
                "truncated JSON (the text stops at line 1, column 34)",
            ),
            (b"\x00garbage", "invalid JSON (expected value at line 1 column 1)"),
            (
                b"[1,2]",
                "not a todo list: expected an object {\"tasks\": [...], \"nextId\": n}, got an array",
            ),
            (br#"{"nextId":1}"#, "not a todo list: tasks: expected an array, got nothing"),
            (br#"{"tasks":[]}"#, "not a todo list: nextId: expected an integer, got nothing"),
            (br#"{"tasks":{},"nextId":1}"#, "not a todo list: tasks: expected an array, got an object"),
            (
                br#"{"tasks":[{"id":1,"subject":"a","status":"done"}],"nextId":2}"#,
                "not a todo list: tasks[1].status: expected one of pending, in_progress, completed, deleted, got string \"done\"",
            ),
            (
                br#"{"version":2,"tasks":[],"nextId":1}"#,
                "written by a newer rpiv_todo (file format version 2; this one reads up to 1)",
            ),
            (
                br#"{"version":"1","tasks":[],"nextId":1}"#,
                "not a todo list: version: expected a positive integer, got string \"1\"",
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                parse(bytes).unwrap_err(),
                want,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn a_file_that_breaks_the_lists_rules_is_refused_and_a_short_next_id_repaired() {
        let task = |id: i64, blocked: &str| {
            format!(r#"{{"id":{id},"subject":"t{id}","status":"pending"{blocked}}}"#)
        };
        let file = |tasks: &[String], next: i64| {
            format!(
                r#"{{"version":1,"tasks":[{}],"nextId":{next}}}"#,
                tasks.join(",")
            )
        };
        let cases = [
            (
                file(&[task(1, ""), task(1, "")], 2),
                "breaks the list's rules: tasks[2].id: #1 is already the id of tasks[1]",
            ),
            (
                file(&[task(1, r#","blockedBy":[9]"#)], 2),
                "breaks the list's rules: tasks[1].blockedBy: #9 is not in the list",
            ),
            (
                file(
                    &[
                        task(1, r#","blockedBy":[2]"#),
                        task(2, r#","blockedBy":[1]"#),
                    ],
                    3,
                ),
                "breaks the list's rules: tasks: the blockedBy edges form a cycle through #1",
            ),
            (
                file(&[task(0, "")], 1),
                "breaks the list's rules: tasks[1].id: ids are integers from 1, got 0",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text.as_bytes()).unwrap_err(), want, "{text}");
        }
        // nextId at the largest id would hand out #5 twice: it becomes 6.
        let s = parse(file(&[task(5, "")], 5).as_bytes()).unwrap();
        assert_eq!(s.next_id, 6);
    }

    #[test]
    fn load_names_the_path_for_a_missing_file_and_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.json");
        assert_eq!(
            load(&missing).unwrap_err().to_string(),
            format!("{}: no such file", missing.display())
        );
        assert_eq!(
            load(dir.path()).unwrap_err().to_string(),
            format!("{}: cannot read: it is a directory", dir.path().display())
        );
    }

    #[test]
    fn a_save_removes_what_a_killed_writer_left_long_ago_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let make = |name: &str, modified: Option<std::time::SystemTime>| {
            let f = File::create(d.join(name)).unwrap();
            if let Some(t) = modified {
                f.set_modified(t).unwrap();
            }
        };
        make(".list.json.AbC123.tmp", Some(old)); // a killed save of list.json, an hour ago
        make(".list.json.XyZ789.tmp", None); // a save that may still be running
        make(".other.json.AbC123.tmp", Some(old)); // another file's
        make(".list.json.toolongname.tmp", Some(old)); // not a name we make
        make("notes.tmp", Some(old));
        save(&d.join("list.json"), &state(1)).unwrap();
        assert_eq!(
            files_in(d),
            [
                ".list.json.XyZ789.tmp",
                ".list.json.toolongname.tmp",
                ".other.json.AbC123.tmp",
                "list.json",
                "notes.tmp"
            ]
        );
    }

    #[test]
    fn a_second_save_soon_after_the_first_does_not_list_the_directory_again() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        save(&d.join("list.json"), &state(1)).unwrap();
        // Left by a killed save an hour ago, but appearing only now: only a listing of
        // the directory would find it, and the second save must not list it.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        File::create(d.join(".list.json.AbC123.tmp"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        save(&d.join("list.json"), &state(2)).unwrap();
        assert_eq!(files_in(d), [".list.json.AbC123.tmp", "list.json"]);
        // Another target in the same directory has its own first look.
        assert!(sweep_due(d, std::ffi::OsStr::new(".third.json.")));
        assert!(!sweep_due(d, std::ffi::OsStr::new(".third.json.")));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_pipes_are_neither_read_nor_replaced() {
        // Reading /dev/null is harmless even if the check were gone (it would be empty).
        assert_eq!(
            load(Path::new("/dev/null")).unwrap_err().to_string(),
            "/dev/null: cannot read: it is a device, not a regular file"
        );
        // Replacing is tried on a pipe of our own, never on a real device.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "mkfifo (coreutils) makes the pipe"
        );
        assert_eq!(
            save(&fifo, &state(1)).unwrap_err().to_string(),
            format!("{}: cannot write: it is not a regular file", fifo.display())
        );
        assert_eq!(
            load(&fifo).unwrap_err().to_string(),
            format!(
                "{}: cannot read: it is a pipe (FIFO), not a regular file",
                fifo.display()
            )
        );
        assert!(!fs::metadata(&fifo).unwrap().is_file(), "still a pipe");
        assert_eq!(files_in(dir.path()), ["pipe"]);
    }

    #[test]
    fn a_save_into_a_missing_directory_fails_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("list.json");
        assert_eq!(
            save(&path, &state(1)).unwrap_err().to_string(),
            format!(
                "{}: cannot write: the directory {} does not exist",
                path.display(),
                dir.path().join("sub").display()
            )
        );
        assert!(files_in(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_a_link_and_permissions_are_kept() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        save(&real, &state(1)).unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        symlink(&real, &link).unwrap();
        save(&link, &state(2)).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(load(&real).unwrap(), state(2));
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(files_in(dir.path()), ["link.json", "real.json"]);
    }

    #[test]
    fn the_locale_is_merged_into_the_file_keeping_other_keys_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rpiv-i18n").join("locale.json");
        save_locale(&path, "de").unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\n  \"locale\": \"de\"\n}\n"
        );
        fs::write(&path, r#"{"theme":"dark","locale":"de","extra":{"a":[1]}}"#).unwrap();
        save_locale(&path, "pt-BR").unwrap();
        let v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"theme": "dark", "locale": "pt-BR", "extra": {"a": [1]}})
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "locale", "extra"]);
    }

    #[test]
    fn an_unknown_locale_or_a_file_that_is_not_an_object_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locale.json");
        let err = save_locale(&path, "xx").unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: unknown locale \"xx\"", path.display())),
            "{err}"
        );
        assert!(!path.exists());
        fs::write(&path, "[\"de\"]").unwrap();
        assert_eq!(
            save_locale(&path, "de").unwrap_err().to_string(),
            format!(
                "{}: expected a JSON object, got an array; left as it is",
                path.display()
            )
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "[\"de\"]");
        assert_eq!(files_in(dir.path()), ["locale.json"]);
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "mkfifo (coreutils) makes the pipe"
        );
    }

    #[cfg(unix)]
    #[test]
    fn each_failure_has_its_kind_decided_without_reading_the_message() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let fifo = d.join("pipe.json");
        mkfifo(&fifo);
        fs::write(d.join("bad.json"), "{").unwrap();
        let cases = [
            (d.join("missing.json"), FailureKind::Missing, "missing"),
            (d.to_path_buf(), FailureKind::NotFile, "not_file"),
            (fifo, FailureKind::NotFile, "not_file"),
            (PathBuf::from("/dev/zero"), FailureKind::NotFile, "not_file"),
            (d.join("bad.json"), FailureKind::Invalid, "invalid"),
            // A directory in the middle of the path: ENOTDIR, a system refusal.
            (d.join("bad.json").join("x"), FailureKind::Io, "io"),
        ];
        for (path, kind, name) in cases {
            let err = load(&path).unwrap_err();
            assert_eq!((err.kind(), err.kind().as_str()), (kind, name), "{err}");
        }
    }

    #[test]
    fn a_huge_file_is_refused_from_its_size_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.json");
        // 2 GiB, sparse: no disk used. Reading even the first 64 MiB of it would take a
        // visible moment; the size says enough.
        File::create(&path)
            .unwrap()
            .set_len(2 * 1024 * 1024 * 1024)
            .unwrap();
        let err = load(&path).unwrap_err();
        assert_eq!(err.kind(), FailureKind::TooLarge);
        assert_eq!(
            err.to_string(),
            format!(
                "{}: larger than 67108864 bytes, the most this file may hold: not read",
                path.display()
            )
        );
        // One byte over the limit is over; the limit itself is not.
        let small = dir.path().join("small.json");
        fs::write(&small, "12345").unwrap();
        assert_eq!(read_file(&small, 5).unwrap(), b"12345");
        assert_eq!(
            read_file(&small, 4).unwrap_err().kind(),
            FailureKind::TooLarge
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_at_the_path_is_never_opened_for_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.json");
        mkfifo(&fifo);
        // A plain open of a pipe with no writer waits for one: run the read on a thread,
        // and if it has not answered after a long while, become the writer so that the
        // thread ends and the test fails instead of hanging.
        let (tx, rx) = std::sync::mpsc::channel();
        let p = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_file(&p, 100).map_err(|e| e.to_string()));
        });
        let got = match rx.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(got) => got,
            Err(_) => {
                let _ = fs::OpenOptions::new().write(true).open(&fifo);
                panic!("reading {} blocked on the pipe", fifo.display());
            }
        };
        assert_eq!(
            got.unwrap_err(),
            format!(
                "{}: cannot read: it is a pipe (FIFO), not a regular file",
                fifo.display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_is_written_through_and_a_loop_is_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A dotfiles link whose target does not exist yet: the target is created.
        fs::create_dir(d.join("dotfiles")).unwrap();
        symlink("dotfiles/locale.json", d.join("locale.json")).unwrap();
        save_locale(&d.join("locale.json"), "de").unwrap();
        assert!(fs::symlink_metadata(d.join("locale.json"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(d.join("dotfiles/locale.json")).unwrap(),
            "{\n  \"locale\": \"de\"\n}\n"
        );
        // A loop: refused, both links stay.
        symlink("b.json", d.join("a.json")).unwrap();
        symlink("a.json", d.join("b.json")).unwrap();
        let err = save_locale(&d.join("a.json"), "de").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot read: a symbolic link that never reaches a file (a loop, or too many links)",
                d.join("a.json").display()
            )
        );
        assert_eq!(
            save(&d.join("a.json"), &state(1)).unwrap_err().to_string(),
            format!(
                "{}: cannot write: a symbolic link that never reaches a file (a loop, or more than 40 links); left as it is",
                d.join("a.json").display()
            )
        );
        for name in ["a.json", "b.json"] {
            assert!(fs::symlink_metadata(d.join(name))
                .unwrap()
                .file_type()
                .is_symlink());
        }
        assert_eq!(files_in(d), ["a.json", "b.json", "dotfiles", "locale.json"]);
    }

    #[test]
    fn a_locale_file_over_the_limit_is_neither_read_nor_merged_into() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locale.json");
        let big = format!(
            "{{\"locale\":\"de\",\"pad\":\"{}\"}}",
            "x".repeat(crate::i18n::LOCALE_FILE_MAX_BYTES as usize)
        );
        fs::write(&path, &big).unwrap();
        let err = save_locale(&path, "fr").unwrap_err();
        assert_eq!(err.kind(), FailureKind::TooLarge);
        assert_eq!(fs::read_to_string(&path).unwrap(), big);
    }
}
