//! A list file that several processes share: every change is one transaction.
//!
//! The editor, a second editor and an agent in a terminal (the MCP server) may all keep
//! the same list in one file. The rule that keeps them from losing each other's work is
//! SQLite's, for one small file: **a change is applied to the newest list on disk, under
//! an exclusive lock, and the reply is built from what was saved.**
//!
//! [`SharedFile::transact`] does all of it for one call: take the lock, read the file if
//! another process wrote it since this one last looked, run the call with the reducer,
//! write the result atomically ([`store::write_atomic`]), release the lock. No Lua code
//! runs while the lock is held, so a Lua error can never leave it held; the operating
//! system releases it when a process dies, so a crash never leaves a stale lock.
//!
//! # The lock
//! An advisory lock (`flock`, through [`File::try_lock`]) on a hidden sidecar file beside
//! the list, `.<name>.lock`: the list itself is replaced by a rename at every save, so a
//! lock on it would lock a file that is about to be gone. The lock is tried in short
//! steps up to a bound (100 ms by default), so a front end's loop never waits long; past
//! it the call gets an in-band error and nothing changes. On NFS `flock` is emulated with
//! byte-range locks (Linux 2.6.12 and later), which work across clients only where the
//! server runs a lock manager; on a file system without working locks, two writers on two
//! machines can still overwrite each other.
//!
//! # Knowing when to read again
//! Every write stores a generation number, one more than the file held, at the front of
//! the file (`{"version":1,"generation":7,...}`). A process remembers the generation it
//! last read or wrote together with the file's identity (device, inode, size, mtime);
//! when all of them still match, the list it holds is the file's and nothing is parsed.
//! A change that keeps the size and restores the mtime (and reuses the inode) still has a
//! new generation, so it is seen. A file without a generation (written by hand, or by
//! `core.save`) is read every time.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::journal::Journal;
use crate::store::{self, StoreError};
use crate::task::State;

/// How long a call waits for another process's lock by default.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(100);

/// The most a caller may ask to wait for the lock.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// What a shared file's transaction failed on. The list is unchanged in every case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransactError {
    /// Another process held the lock for longer than the wait.
    #[error("{path} is being changed by another program; nothing was changed; try again")]
    Busy {
        /// The list file, as given.
        path: String,
    },
    /// The file could not be read, locked or written.
    #[error("{0}; nothing was changed")]
    Store(StoreError),
}

impl TransactError {
    /// The kind Lua sees (as `core.load` names failures), "busy" for a held lock.
    pub fn kind(&self) -> &'static str {
        match self {
            TransactError::Busy { .. } => "busy",
            TransactError::Store(e) => e.kind().as_str(),
        }
    }
}

/// What [`SharedFile::sync`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    /// The file holds the list this process has.
    Unchanged,
    /// Another process wrote the file; its list replaced this one.
    Reloaded,
    /// There is no file: this process's list stays, and is written at its next change.
    Missing,
}

impl Synced {
    /// The name Lua sees.
    pub fn as_str(self) -> &'static str {
        match self {
            Synced::Unchanged => "unchanged",
            Synced::Reloaded => "reloaded",
            Synced::Missing => "missing",
        }
    }
}

/// What identifies one version of the file: when every field matches what this process
/// last read or wrote, the file holds the same list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    /// 0: the file carries none (it is then read every time).
    generation: u64,
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Stamp {
    fn of(meta: &fs::Metadata, generation: u64) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(-1, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        Stamp {
            generation,
            dev,
            ino,
            len: meta.len(),
            mtime_ns,
        }
    }
}

/// The file as a read found it.
enum Found {
    /// The same version this process last read or wrote.
    Same,
    /// Another version, parsed, with its record of changes.
    Other(State, Journal, Stamp),
    /// No file.
    Missing,
}

/// What the front of a file this module wrote looks like; the generation follows.
const HEAD: &[u8] = b"{\"version\":1,\"generation\":";
/// Bytes read to find the generation: the head and up to 20 digits.
const HEAD_LEN: usize = 64;

/// The generation written at the front of `head`, or 0 when there is none.
pub fn generation_of(head: &[u8]) -> u64 {
    let Some(rest) = head.strip_prefix(HEAD) else {
        return 0;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&b',') {
        return 0;
    }
    std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A list file's text with its generation in front (`store::to_text`'s format plus the
/// `generation` key and the record of changes, `log`, which readers of format 1 ignore).
pub fn to_text(state: &State, generation: u64, journal: &Journal) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        version: u64,
        generation: u64,
        tasks: &'a [crate::task::Task],
        #[serde(rename = "nextId")]
        next_id: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        log: Option<&'a Journal>,
    }
    let mut out = Vec::with_capacity(64 + state.tasks.len() * 128);
    // Plain data with string keys: serializing to a Vec cannot fail.
    let _ = serde_json::to_writer(
        &mut out,
        &File {
            version: store::FORMAT_VERSION,
            generation,
            tasks: &state.tasks,
            next_id: state.next_id,
            log: journal.epoch.is_some().then_some(journal),
        },
    );
    out.push(b'\n');
    out
}

/// A list kept in a file that other processes may change: its path, the lock beside it,
/// and what this process last read or wrote.
#[derive(Debug)]
pub struct SharedFile {
    /// The path as given, which messages name.
    given: PathBuf,
    /// The file itself: `given` with every symbolic link resolved, once, here. The lock,
    /// the temporary files and the write all sit beside it, so a handle opened through a
    /// link and one opened through its target lock the same file.
    path: Result<PathBuf, String>,
    lock_path: PathBuf,
    wait: Duration,
    seen: Option<Stamp>,
    /// The file's record of changes, as last read or written.
    journal: Journal,
    notices: Vec<String>,
}

impl SharedFile {
    /// A handle on the list file at `path`; nothing is read or written yet. A call waits
    /// at most `wait` for another process's lock (capped at [`MAX_WAIT`]).
    ///
    /// A symbolic link at `path` is resolved now, once: the handle keeps the file it
    /// leads to (which need not exist yet) even if the link is changed later. A link that
    /// never reaches a file (a loop) makes every call fail in-band. Hard links are not
    /// supported: two names of one file have two locks.
    pub fn new(path: impl Into<PathBuf>, wait: Duration) -> SharedFile {
        let given = path.into();
        let resolved = if given.as_os_str().is_empty() {
            Err("the path is empty".to_string())
        } else {
            store::resolve_link(&given)
        };
        let beside = resolved.as_ref().unwrap_or(&given);
        let mut name = std::ffi::OsString::from(".");
        name.push(beside.file_name().unwrap_or_default());
        name.push(".lock");
        let lock_path = beside.with_file_name(name);
        SharedFile {
            given,
            path: resolved,
            lock_path,
            wait: wait.min(MAX_WAIT),
            seen: None,
            journal: Journal::default(),
            notices: Vec::new(),
        }
    }

    /// The list file, as given.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// The file itself (every link resolved), or why there is none.
    fn target(&self) -> Result<&Path, StoreError> {
        self.path.as_deref().map_err(|reason| StoreError::Write {
            path: self.shown(),
            reason: reason.clone(),
        })
    }

    /// The generation this process last read or wrote (0: none yet, or a file without one).
    pub fn generation(&self) -> u64 {
        self.seen.map_or(0, |s| s.generation)
    }

    /// The file's record of changes, as this process last read or wrote it.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// What happened that the caller did not ask about (an unreadable file moved aside),
    /// since the last time this was called.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn shown(&self) -> String {
        self.given.display().to_string()
    }

    /// Run `call` on the newest list. With `writes`, under the lock, and the list it
    /// leaves is saved when `call` says it changed it (second value); the reply is
    /// returned only once that list is in the file. On an error the list is as it was
    /// before the call, in `state` and in the file. The file's record of changes is kept
    /// as it is (see [`SharedFile::transact_with`] to add to it).
    pub fn transact<R>(
        &mut self,
        state: &mut State,
        writes: bool,
        call: impl FnOnce(&mut State) -> (R, bool),
    ) -> Result<R, TransactError> {
        self.transact_with(state, writes, |state, _| call(state))
    }

    /// [`SharedFile::transact`] where `call` may also add to the file's record of changes
    /// ([`crate::journal`]), saved with the list it leaves.
    pub fn transact_with<R>(
        &mut self,
        state: &mut State,
        writes: bool,
        call: impl FnOnce(&mut State, &mut Journal) -> (R, bool),
    ) -> Result<R, TransactError> {
        let outcome = self.transact_locked(state, writes, call);
        self.note(outcome)
    }

    fn transact_locked<R>(
        &mut self,
        state: &mut State,
        writes: bool,
        call: impl FnOnce(&mut State, &mut Journal) -> (R, bool),
    ) -> Result<R, TransactError> {
        if !writes {
            self.take_in(state, false)?;
            let mut journal = self.journal.clone();
            return Ok(call(state, &mut journal).0);
        }
        let lock = self.lock()?;
        let base = match self.take_in(state, true)? {
            Synced::Missing => {
                // A file made anew: a new life of its record too.
                self.journal = Journal::default();
                fresh_generation()
            }
            Synced::Unchanged | Synced::Reloaded => self.generation(),
        };
        // The call changes a copy, which becomes the list only once it is in the file: a
        // failed save leaves `state` as the file holds it, with nothing to put back.
        let mut next = state.clone();
        let mut journal = self.journal.clone();
        let (reply, changed) = call(&mut next, &mut journal);
        test_pause("after_read");
        if changed {
            self.write(&lock, &next, &journal, base)
                .map_err(TransactError::Store)?;
            *state = next;
            self.journal = journal;
        }
        drop(lock);
        test_pause("after_write");
        Ok(reply)
    }

    /// Write `state` as the file's list whatever list the file holds (a host's replay or
    /// load wins over it), under the lock. A file that is not a list is moved aside first;
    /// one that cannot be read now is left alone.
    pub fn write_over(&mut self, state: &State) -> Result<(), TransactError> {
        let outcome = self.write_over_locked(state);
        self.note(outcome)
    }

    fn write_over_locked(&mut self, state: &State) -> Result<(), TransactError> {
        let lock = self.lock()?;
        let base = match self.read() {
            Ok(Found::Other(_, journal, stamp)) => {
                self.journal = journal;
                stamp.generation
            }
            Ok(Found::Same) => self.generation(),
            Ok(Found::Missing) => fresh_generation(),
            Err(e @ StoreError::Invalid { .. }) => {
                self.move_aside(&e)?;
                self.journal = Journal::default();
                fresh_generation()
            }
            Err(e) => return Err(TransactError::Store(e)),
        };
        let journal = self.journal.clone();
        self.write(&lock, state, &journal, base)
            .map_err(TransactError::Store)
    }

    /// Keep a failure among the notices too (the caller's user hears of it, not only the
    /// model), then pass it on.
    fn note<T>(&mut self, outcome: Result<T, TransactError>) -> Result<T, TransactError> {
        if let Err(e) = &outcome {
            self.notices.push(e.to_string());
        }
        outcome
    }

    /// Take in what another process wrote (a watcher calls this when the file may have
    /// changed): no lock, and nothing parsed when the file holds what this process last
    /// read or wrote.
    pub fn sync(&mut self, state: &mut State) -> Result<Synced, TransactError> {
        self.take_in(state, false)
    }

    /// Remove the file when it holds what this process last read or wrote (another
    /// process's newer list stays). True when removed.
    pub fn remove_if_unchanged(&mut self) -> Result<bool, TransactError> {
        let lock = self.lock()?;
        let same = match self.read_head() {
            Ok(Some(head)) => Some(head.stamp) == self.seen && head.stamp.generation != 0,
            _ => false,
        };
        if same {
            fs::remove_file(self.target().map_err(TransactError::Store)?).map_err(|e| {
                TransactError::Store(StoreError::Write {
                    path: self.shown(),
                    reason: e.to_string(),
                })
            })?;
            // The lock file goes too, while it is held: a process that locked it before
            // the removal finds it is no longer the file at the path, and locks anew.
            let _ = fs::remove_file(&self.lock_path);
        }
        drop(lock);
        self.seen = None;
        Ok(same)
    }

    /// Make `state` the file's newest list. With `locked` (a transaction), a file whose
    /// content is not a list is moved aside and this process's list stays.
    fn take_in(&mut self, state: &mut State, locked: bool) -> Result<Synced, TransactError> {
        match self.read() {
            Ok(Found::Same) => Ok(Synced::Unchanged),
            Ok(Found::Other(newest, journal, stamp)) => {
                *state = newest;
                self.journal = journal;
                self.seen = Some(stamp);
                Ok(Synced::Reloaded)
            }
            Ok(Found::Missing) => Ok(Synced::Missing),
            Err(e @ StoreError::Invalid { .. }) if locked => {
                self.move_aside(&e)?;
                Ok(Synced::Missing)
            }
            Err(e) => Err(TransactError::Store(e)),
        }
    }

    /// The lock, waited for up to `wait` in short steps.
    fn lock(&self) -> Result<Lock, TransactError> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            match Lock::try_take(&self.lock_path) {
                Ok(Some(lock)) => return Ok(lock),
                Ok(None) => {}
                Err(e) => {
                    let dir = self
                        .lock_path
                        .parent()
                        .filter(|d| !d.as_os_str().is_empty());
                    let reason = match dir {
                        Some(dir) if e.kind() == io::ErrorKind::NotFound && !dir.exists() => {
                            format!("the directory {} does not exist", dir.display())
                        }
                        _ => format!(
                            "cannot lock it ({}): {}",
                            self.lock_path.display(),
                            store::reason(&e)
                        ),
                    };
                    return Err(TransactError::Store(StoreError::Write {
                        path: self.shown(),
                        reason,
                    }));
                }
            }
            let waited = start.elapsed();
            if waited >= self.wait {
                return Err(TransactError::Busy { path: self.shown() });
            }
            std::thread::sleep(pause.min(self.wait - waited));
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// The file's generation and identity from its first bytes (`None`: no file).
    fn read_head(&self) -> Result<Option<Head>, StoreError> {
        let path = self.target()?;
        let mut file = match store::open_checked(path, store::MAX_LIST_BYTES) {
            Ok(f) => f,
            Err(StoreError::Missing { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata().map_err(|e| self.read_error(&e))?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
        (&mut file)
            .take(HEAD_LEN as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| self.read_error(&e))?;
        let stamp = Stamp::of(&meta, generation_of(&bytes));
        Ok(Some(Head { file, stamp, bytes }))
    }

    /// The file as it is now, parsed only when it is not the version this process has.
    fn read(&self) -> Result<Found, StoreError> {
        let Some(Head {
            file,
            stamp,
            mut bytes,
        }) = self.read_head()?
        else {
            return Ok(Found::Missing);
        };
        if Some(stamp) == self.seen && stamp.generation != 0 {
            return Ok(Found::Same);
        }
        file.take(store::MAX_LIST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.read_error(&e))?;
        if bytes.len() as u64 > store::MAX_LIST_BYTES {
            return Err(StoreError::TooLarge {
                path: self.shown(),
                limit: store::MAX_LIST_BYTES,
            });
        }
        let (state, journal) = store::parse_file_with_log(&self.given, &bytes)?;
        Ok(Found::Other(state, journal, stamp))
    }

    fn read_error(&self, e: &io::Error) -> StoreError {
        StoreError::Read {
            path: self.shown(),
            reason: store::reason(e),
        }
    }

    /// Save `state` with the generation after `base`, the file's (under `lock`). The
    /// rename happens only while `lock` is still the lock file's: if a third program
    /// removed or replaced it, another process may hold the new one, and nothing is saved.
    fn write(
        &mut self,
        lock: &Lock,
        state: &State,
        journal: &Journal,
        base: u64,
    ) -> Result<(), StoreError> {
        let generation = base.wrapping_add(1).max(1);
        let target = self.target()?.to_path_buf();
        lock.begin_write();
        let text = to_text(state, generation, journal);
        let meta = store::replace(&target, &self.given, &text, || lock.check(&self.lock_path))?;
        if lock.left_behind.get() {
            // The last holder died while writing: its temporary file is still there.
            store::remove_temporaries(&target);
        }
        lock.end_write();
        self.seen = Some(Stamp::of(&meta, generation));
        Ok(())
    }

    /// Move a file whose content is not a list to `<file>.unreadable-<time>[-n]`, a name
    /// that never replaces another (under the lock).
    fn move_aside(&mut self, why: &StoreError) -> Result<(), TransactError> {
        let target = self.target().map_err(TransactError::Store)?.to_path_buf();
        let base = format!("{}.unreadable-{}", target.display(), utc_stamp());
        for n in 1..=1000 {
            let aside = if n == 1 {
                PathBuf::from(&base)
            } else {
                PathBuf::from(format!("{base}-{n}"))
            };
            if fs::symlink_metadata(&aside).is_ok() {
                continue;
            }
            return match fs::rename(&target, &aside) {
                Ok(()) => {
                    self.notices.push(format!(
                        "{why}; kept as {}, and a new list is saved in its place",
                        aside.display()
                    ));
                    self.seen = None;
                    Ok(())
                }
                Err(e) => Err(TransactError::Store(StoreError::Write {
                    path: self.shown(),
                    reason: format!("{why}; it could not be moved aside ({})", store::reason(&e)),
                })),
            };
        }
        Err(TransactError::Store(why.clone()))
    }
}

/// The first bytes of the list file, and the file open to read the rest.
struct Head {
    file: File,
    stamp: Stamp,
    bytes: Vec<u8>,
}

/// The lock on a list's sidecar file; released when dropped (or when the process dies).
/// While a holder writes the list, the sidecar holds one byte: a holder that finds it
/// there knows the last one died in the middle of a save, and removes what it left.
struct Lock {
    file: File,
    left_behind: std::cell::Cell<bool>,
}

impl Lock {
    fn begin_write(&self) {
        if !self.left_behind.get() {
            // Best effort: without the mark, a temporary file a crash leaves is removed
            // by the age-based sweep of `write_atomic` instead.
            let _ = (&self.file).write_all(b"w");
        }
    }

    fn end_write(&self) {
        if self.file.set_len(0).is_ok() {
            self.left_behind.set(false);
        }
    }

    /// Is this still the file at `path`? A lock on a file removed (or replaced) since it
    /// was taken excludes nobody: another process may have made and locked a new one.
    fn check(&self, path: &Path) -> Result<(), String> {
        if same_file(&self.file, path) {
            Ok(())
        } else {
            Err(format!(
                "its lock file {} was removed or replaced while this program held it; \
                 another program may be changing the list",
                path.display()
            ))
        }
    }

    /// The lock if free now; `None` while another process holds it. The lock file is
    /// made (0600) when missing; a symbolic link, or anything but a regular file, at its
    /// path is refused, never followed or written.
    fn try_take(path: &Path) -> io::Result<Option<Lock>> {
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // std opens with O_CLOEXEC already. O_NONBLOCK: a pipe planted at the path
            // must not block the open (it is refused below).
            options
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = options.open(path).map_err(|e| {
            #[cfg(unix)]
            if e.raw_os_error() == Some(libc::ELOOP) {
                return io::Error::other("it is a symbolic link, which a lock file never is");
            }
            e
        })?;
        let held = file.metadata()?;
        if !held.is_file() {
            return Err(io::Error::other("it is not a regular file"));
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(e)) => return Err(e),
        }
        // The file may have been removed (and another made) between the open and the
        // lock; a lock on a file no longer at the path locks nothing.
        if !same_file(&file, path) {
            return Ok(None);
        }
        Ok(Some(Lock {
            file,
            left_behind: std::cell::Cell::new(held.len() > 0),
        }))
    }
}

impl Drop for Lock {
    /// Unlocked before the file is closed: a lock goes with its open file, so if the close
    /// ever left the descriptor open, this process would lock itself out.
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Is `file` the file at `path` now (no link followed)?
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::symlink_metadata(path)) {
            (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// The generation a new file starts from: random (below 2^52, so it stays exact in any
/// JSON reader), so that a stamp another process kept from an earlier file at this path
/// cannot match the new one.
fn fresh_generation() -> u64 {
    crate::journal::random_u64() >> 12
}

/// The time now as `YYYYMMDDTHHMMSSZ` (UTC).
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// For tests of interleavings only, in builds with the `test-pause` feature: with
/// `RPIV_TODO_TEST_PAUSE=<dir>`, a transaction stops at `point` ("after_read": the call
/// applied, the lock held, nothing written; "after_write": saved and unlocked, the reply
/// not yet returned) while the file `<dir>/<point>` exists, after creating
/// `<dir>/<point>.reached`. Without the feature (every release) this is nothing.
#[cfg(feature = "test-pause")]
fn test_pause(point: &str) {
    let Some(dir) = std::env::var_os("RPIV_TODO_TEST_PAUSE") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let gate = dir.join(point);
    if !gate.exists() {
        return;
    }
    let _ = File::create(dir.join(format!("{point}.reached")));
    let start = Instant::now();
    while gate.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(not(feature = "test-pause"))]
fn test_pause(_point: &str) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::reducer::{self, Reply};

    fn create(subject: &str) -> impl FnOnce(&mut State) -> (Reply, bool) + '_ {
        move |s: &mut State| {
            let p =
                Params::from_value(&serde_json::json!({"action": "create", "subject": subject}))
                    .unwrap();
            let r = reducer::apply(s, &p);
            let changed = r.error.is_none();
            (r, changed)
        }
    }

    /// Two processes' handles on one list file.
    fn two_handles(path: &Path) -> (SharedFile, SharedFile) {
        (
            SharedFile::new(path, DEFAULT_WAIT),
            SharedFile::new(path, DEFAULT_WAIT),
        )
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("rpiv-shared")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn two_handles_never_lose_or_renumber() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let (mut a, mut b) = two_handles(&path);
        let (mut sa, mut sb) = (State::default(), State::default());
        let r1 = a.transact(&mut sa, true, create("one")).unwrap();
        let first = a.generation();
        let r2 = b.transact(&mut sb, true, create("two")).unwrap();
        let r3 = a.transact(&mut sa, true, create("three")).unwrap();
        assert_eq!(r1.text, "Created #1: one (pending)");
        assert_eq!(r2.text, "Created #2: two (pending)");
        assert_eq!(r3.text, "Created #3: three (pending)");
        let file = store::load(&path).unwrap();
        let subjects: Vec<_> = file
            .tasks
            .iter()
            .map(|t| (t.id, t.subject.as_str()))
            .collect();
        assert_eq!(subjects, [(1, "one"), (2, "two"), (3, "three")]);
        assert_eq!(a.generation(), first + 2);
        assert_eq!(b.sync(&mut sb).unwrap(), Synced::Reloaded);
        assert_eq!(sb.tasks.len(), 3);
        assert_eq!(b.sync(&mut sb).unwrap(), Synced::Unchanged);
    }

    #[test]
    fn a_same_size_change_with_its_mtime_restored_is_seen() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let (mut a, mut b) = two_handles(&path);
        let (mut sa, mut sb) = (State::default(), State::default());
        a.transact(&mut sa, true, create("aaaa")).unwrap();
        b.sync(&mut sb).unwrap();
        let before = fs::metadata(&path).unwrap();
        // Another writer: same length, new generation; its mtime then put back.
        let mut other = State::default();
        let mut c = SharedFile::new(&path, DEFAULT_WAIT);
        c.sync(&mut other).unwrap();
        other.tasks[0].subject = "bbbb".into();
        c.write_over(&other).unwrap();
        let file = File::options().write(true).open(&path).unwrap();
        file.set_modified(before.modified().unwrap()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), before.len());
        assert_eq!(b.sync(&mut sb).unwrap(), Synced::Reloaded);
        assert_eq!(sb.tasks[0].subject, "bbbb");
    }

    #[test]
    fn a_held_lock_is_waited_for_then_refused_in_band() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let mut a = SharedFile::new(&path, Duration::from_millis(30));
        let held = Lock::try_take(&a.lock_path).unwrap().unwrap();
        let mut s = State::default();
        let start = Instant::now();
        let e = a.transact(&mut s, true, create("x")).unwrap_err();
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert_eq!(e.kind(), "busy");
        assert!(e.to_string().ends_with("nothing was changed; try again"));
        assert!(s.tasks.is_empty());
        assert!(!path.exists());
        drop(held);
        assert!(a.transact(&mut s, true, create("x")).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_save_leaves_the_list_as_it_was() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let path = dir.path().join("l.json");
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        a.transact(&mut s, true, create("kept")).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o500)).unwrap();
        let writable = File::create(dir.path().join("probe")).is_ok();
        let e = a.transact(&mut s, true, create("lost"));
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        if writable {
            return; // root ignores the mode; the read-only case is tested from Lua as a user
        }
        let e = e.unwrap_err();
        assert!(e.to_string().contains("nothing was changed"), "{e}");
        assert_eq!(s.tasks.len(), 1);
        assert_eq!(s.next_id, 2);
    }

    #[test]
    fn an_invalid_file_is_moved_aside_by_the_next_change() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        fs::write(&path, "not json").unwrap();
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        assert_eq!(a.sync(&mut s).unwrap_err().kind(), "invalid");
        let r = a.transact(&mut s, true, create("x")).unwrap();
        assert_eq!(r.text, "Created #1: x (pending)");
        let notices = a.take_notices();
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains(".unreadable-"), "{notices:?}");
        let aside: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("unreadable"))
            .collect();
        assert_eq!(fs::read(aside[0].path()).unwrap(), b"not json");
    }

    #[test]
    fn remove_keeps_another_process_newer_list() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let (mut a, mut b) = two_handles(&path);
        let (mut sa, mut sb) = (State::default(), State::default());
        a.transact(&mut sa, true, create("a")).unwrap();
        b.transact(&mut sb, true, create("b")).unwrap();
        assert!(!a.remove_if_unchanged().unwrap());
        assert!(path.exists());
        assert!(b.remove_if_unchanged().unwrap());
        assert!(!path.exists());
    }

    #[test]
    fn the_next_save_removes_what_a_writer_killed_mid_save_left() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        a.transact(&mut s, true, create("one")).unwrap();
        assert_eq!(
            fs::metadata(&a.lock_path).unwrap().len(),
            0,
            "no mark between saves"
        );
        // What a kill between the temporary file's creation and the rename leaves.
        fs::write(&a.lock_path, b"w").unwrap();
        let left = dir.path().join(".l.json.Ab12Cd.tmp");
        fs::write(&left, b"{\"version\":1").unwrap();
        let other = dir.path().join(".other.json.Ab12Cd.tmp");
        fs::write(&other, b"x").unwrap();
        a.transact(&mut s, true, create("two")).unwrap();
        assert!(!left.exists(), "the dead writer's temporary file is gone");
        assert!(other.exists(), "another list's is not touched");
        assert_eq!(fs::metadata(&a.lock_path).unwrap().len(), 0);
        assert_eq!(store::load(&path).unwrap().tasks.len(), 2);
    }

    #[test]
    fn generations_are_read_from_the_head_only_when_written_here() {
        assert_eq!(
            generation_of(b"{\"version\":1,\"generation\":42,\"tasks\":[]"),
            42
        );
        assert_eq!(generation_of(b"{\"version\":1,\"tasks\":[]"), 0);
        assert_eq!(generation_of(b"{\"version\":1,\"generation\":42"), 0);
        assert_eq!(generation_of(b"{\"version\":1,\"generation\":,"), 0);
        let text = to_text(&State::default(), 7, &Journal::default());
        assert_eq!(generation_of(&text), 7);
        assert_eq!(store::parse(&text).unwrap(), State::default());
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_790), (2026, 12, 3));
    }

    /// The list file's content, parsed.
    fn on_disk(path: &Path) -> Vec<(i64, String)> {
        store::load(path)
            .unwrap()
            .tasks
            .iter()
            .map(|t| (t.id, t.subject.clone()))
            .collect()
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    #[test]
    fn a_link_and_its_target_share_one_lock_and_one_file() {
        use std::os::unix::fs::symlink;
        let dir = tmp();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        symlink("real.json", &link).unwrap();
        let mut via_link = SharedFile::new(&link, Duration::from_millis(20));
        let mut via_real = SharedFile::new(&real, DEFAULT_WAIT);
        assert_eq!(via_link.lock_path, via_real.lock_path);
        assert_eq!(via_link.lock_path, dir.path().join(".real.json.lock"));
        // While the target's lock is held, a call through the link waits for it.
        let (mut sl, mut sr) = (State::default(), State::default());
        let held = Lock::try_take(&via_real.lock_path).unwrap().unwrap();
        let e = via_link.transact(&mut sl, true, create("a")).unwrap_err();
        assert_eq!(e.kind(), "busy");
        drop(held);
        let r1 = via_link.transact(&mut sl, true, create("a")).unwrap();
        let r2 = via_real.transact(&mut sr, true, create("b")).unwrap();
        assert_eq!(
            (r1.text.as_str(), r2.text.as_str()),
            ("Created #1: a (pending)", "Created #2: b (pending)")
        );
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(on_disk(&real), [(1, "a".into()), (2, "b".into())]);
        // Retargeting the link later does not move this handle's list.
        fs::remove_file(&link).unwrap();
        symlink("elsewhere.json", &link).unwrap();
        via_link.transact(&mut sl, true, create("c")).unwrap();
        assert_eq!(on_disk(&real).len(), 3);
        assert!(!dir.path().join("elsewhere.json").exists());
    }

    #[test]
    fn a_refused_save_changes_nothing_and_its_id_is_given_again() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        a.transact(&mut s, true, create("kept")).unwrap();
        let lock_path = a.lock_path.clone();
        // The save is refused at its last step (the lock file is gone, see below).
        let e = a
            .transact(&mut s, true, |s: &mut State| {
                let out = create("refused")(s);
                fs::remove_file(&lock_path).unwrap();
                out
            })
            .unwrap_err();
        assert!(e.to_string().ends_with("nothing was changed"), "{e}");
        assert_eq!(s.tasks.len(), 1, "the refused task is not in the list held");
        assert_eq!(s.next_id, 2, "nor is its id used up");
        let r = a.transact(&mut s, true, create("next")).unwrap();
        assert_eq!(r.text, "Created #2: next (pending)");
        assert_eq!(on_disk(&path), [(1, "kept".into()), (2, "next".into())]);
    }

    #[test]
    fn a_lock_file_removed_while_held_refuses_the_save_and_loses_nothing() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let (mut a, mut b) = two_handles(&path);
        let (mut sa, mut sb) = (State::default(), State::default());
        a.transact(&mut sa, true, create("one")).unwrap();
        let lock_path = a.lock_path.clone();
        let mut b_said = None;
        let e = a
            .transact(&mut sa, true, |s: &mut State| {
                let out = create("from-A")(s);
                // A third program removes the lock file A holds; B makes a new one,
                // locks it and saves while A still thinks it holds the lock.
                fs::remove_file(&lock_path).unwrap();
                b_said = Some(b.transact(&mut sb, true, create("from-B")).unwrap().text);
                out
            })
            .unwrap_err();
        assert_eq!(b_said.as_deref(), Some("Created #2: from-B (pending)"));
        assert!(e.to_string().contains("was removed or replaced"), "{e}");
        assert!(e.to_string().ends_with("nothing was changed"), "{e}");
        assert_eq!(on_disk(&path), [(1, "one".into()), (2, "from-B".into())]);
        // A's next call takes in B's task and numbers after it.
        let r = a.transact(&mut sa, true, create("from-A")).unwrap();
        assert_eq!(r.text, "Created #3: from-A (pending)");
    }

    #[test]
    fn a_newer_format_is_refused_in_band_and_never_moved_aside() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let newer = br#"{"version":2,"generation":5,"ops":[],"tasks":[],"nextId":1}"#;
        fs::write(&path, newer).unwrap();
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        for _ in 0..2 {
            let e = a.transact(&mut s, true, create("x")).unwrap_err();
            assert_eq!(e.kind(), "newer");
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: written by a newer rpiv_todo (file format version 2; this one reads up to 1); nothing was changed",
                    path.display()
                )
            );
            assert_eq!(a.write_over(&s).unwrap_err().kind(), "newer");
            assert_eq!(a.sync(&mut s).unwrap_err().kind(), "newer");
        }
        assert_eq!(fs::read(&path).unwrap(), newer);
        assert_eq!(names_in(dir.path()), [".l.json.lock", "l.json"]);
        assert!(s.tasks.is_empty());
    }

    #[test]
    fn a_new_file_starts_from_a_random_generation() {
        let dir = tmp();
        let mut seen = Vec::new();
        for n in 0..4 {
            let path = dir.path().join(format!("l{n}.json"));
            let mut a = SharedFile::new(&path, DEFAULT_WAIT);
            a.transact(&mut State::default(), true, create("x"))
                .unwrap();
            let g = a.generation();
            assert!(g > 1 && g < 1 << 52, "{g}");
            assert_eq!(generation_of(&fs::read(&path).unwrap()), g);
            seen.push(g);
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 4, "{seen:?}");
    }

    #[test]
    fn a_file_removed_and_made_again_never_matches_an_old_stamp() {
        let dir = tmp();
        let path = dir.path().join("l.json");
        let (mut a, mut b) = two_handles(&path);
        let (mut sa, mut sb) = (State::default(), State::default());
        a.transact(&mut sa, true, create("old")).unwrap();
        let old = a.generation();
        fs::remove_file(&path).unwrap();
        b.transact(&mut sb, true, create("new")).unwrap();
        assert_ne!(b.generation(), old.wrapping_add(1));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_lock_path_is_refused_and_followed_nowhere() {
        use std::os::unix::fs::symlink;
        let dir = tmp();
        let path = dir.path().join("l.json");
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        symlink(&victim, dir.path().join(".l.json.lock")).unwrap();
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        let mut s = State::default();
        let e = a.transact(&mut s, true, create("x")).unwrap_err();
        assert!(e.to_string().contains("it is a symbolic link"), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!path.exists());
        // A dangling one: nothing is made where it points.
        let elsewhere = tmp();
        let made = elsewhere.path().join("made");
        fs::remove_file(dir.path().join(".l.json.lock")).unwrap();
        symlink(&made, dir.path().join(".l.json.lock")).unwrap();
        assert!(a.transact(&mut s, true, create("x")).is_err());
        assert!(!made.exists());
        // Nor a pipe.
        fs::remove_file(dir.path().join(".l.json.lock")).unwrap();
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.path().join(".l.json.lock"))
            .status();
        assert!(fifo.is_ok_and(|s| s.success()));
        let e = a.transact(&mut s, true, create("x")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn the_lock_file_is_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let path = dir.path().join("l.json");
        let mut a = SharedFile::new(&path, DEFAULT_WAIT);
        a.transact(&mut State::default(), true, create("x"))
            .unwrap();
        let mode = fs::metadata(&a.lock_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[cfg(not(feature = "test-pause"))]
    #[test]
    fn the_test_pause_is_not_in_this_build() {
        let dir = tmp();
        let gates = dir.path().join("gates");
        fs::create_dir(&gates).unwrap();
        fs::write(gates.join("after_read"), "").unwrap();
        // Only this test sets the variable; a build with the pause would stop here for
        // 60 s and leave `after_read.reached`.
        std::env::set_var("RPIV_TODO_TEST_PAUSE", &gates);
        let mut a = SharedFile::new(dir.path().join("l.json"), DEFAULT_WAIT);
        a.transact(&mut State::default(), true, create("x"))
            .unwrap();
        std::env::remove_var("RPIV_TODO_TEST_PAUSE");
        assert!(!gates.join("after_read.reached").exists());
    }
}
