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
    /// Another version, parsed.
    Other(State, Stamp),
    /// No file.
    Missing,
}

/// What the front of a file this module wrote looks like; the generation follows.
const HEAD: &[u8] = b"{\"version\":1,\"generation\":";
/// Bytes read to find the generation: the head and up to 20 digits.
const HEAD_LEN: usize = 64;

/// The generation written at the front of `head`, or 0 when there is none.
fn generation_of(head: &[u8]) -> u64 {
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
/// `generation` key, which readers of format 1 ignore).
pub fn to_text(state: &State, generation: u64) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        version: u64,
        generation: u64,
        tasks: &'a [crate::task::Task],
        #[serde(rename = "nextId")]
        next_id: i64,
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
        },
    );
    out.push(b'\n');
    out
}

/// A list kept in a file that other processes may change: its path, the lock beside it,
/// and what this process last read or wrote.
#[derive(Debug)]
pub struct SharedFile {
    path: PathBuf,
    lock_path: PathBuf,
    wait: Duration,
    seen: Option<Stamp>,
    notices: Vec<String>,
}

impl SharedFile {
    /// A handle on the list file at `path`; nothing is read or written yet. A call waits
    /// at most `wait` for another process's lock (capped at [`MAX_WAIT`]).
    pub fn new(path: impl Into<PathBuf>, wait: Duration) -> SharedFile {
        let path = path.into();
        let mut name = std::ffi::OsString::from(".");
        name.push(path.file_name().unwrap_or_default());
        name.push(".lock");
        let lock_path = path.with_file_name(name);
        SharedFile {
            path,
            lock_path,
            wait: wait.min(MAX_WAIT),
            seen: None,
            notices: Vec::new(),
        }
    }

    /// The list file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The generation this process last read or wrote (0: none yet, or a file without one).
    pub fn generation(&self) -> u64 {
        self.seen.map_or(0, |s| s.generation)
    }

    /// What happened that the caller did not ask about (an unreadable file moved aside),
    /// since the last time this was called.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Run `call` on the newest list. With `writes`, under the lock, and the list it
    /// leaves is saved when `call` says it changed it (second value); the reply is
    /// returned only once that list is in the file. On an error the list is as it was
    /// before the call, in `state` and in the file.
    pub fn transact<R>(
        &mut self,
        state: &mut State,
        writes: bool,
        call: impl FnOnce(&mut State) -> (R, bool),
    ) -> Result<R, TransactError> {
        let outcome = self.transact_locked(state, writes, call);
        self.note(outcome)
    }

    fn transact_locked<R>(
        &mut self,
        state: &mut State,
        writes: bool,
        call: impl FnOnce(&mut State) -> (R, bool),
    ) -> Result<R, TransactError> {
        if !writes {
            self.take_in(state, false)?;
            return Ok(call(state).0);
        }
        let mut lock = self.lock()?;
        let found = self.take_in(state, true)?;
        let base = self.generation();
        // Kept only when the file cannot give the list back (there is none).
        let before = matches!(found, Synced::Missing).then(|| state.clone());
        let (reply, changed) = call(state);
        test_pause("after_read");
        if changed {
            if let Err(e) = self.write(&mut lock, state, base) {
                self.restore(state, before);
                return Err(TransactError::Store(e));
            }
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
        let mut lock = self.lock()?;
        let base = match self.read() {
            Ok(Found::Other(_, stamp)) => stamp.generation,
            Ok(Found::Same | Found::Missing) => self.generation(),
            Err(e @ StoreError::Invalid { .. }) => {
                self.move_aside(&e)?;
                self.generation()
            }
            Err(e) => return Err(TransactError::Store(e)),
        };
        self.write(&mut lock, state, base)
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
            fs::remove_file(&self.path).map_err(|e| {
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
            Ok(Found::Other(newest, stamp)) => {
                *state = newest;
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

    /// Put the list back as it was before a call whose save failed: from the file, which
    /// the lock kept unchanged, or from `before` when there is none.
    fn restore(&mut self, state: &mut State, before: Option<State>) {
        if let Some(before) = before {
            *state = before;
            return;
        }
        let seen = self.seen.take();
        match self.read() {
            Ok(Found::Other(old, stamp)) => {
                *state = old;
                self.seen = Some(stamp);
            }
            _ => self.seen = seen,
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
        let mut file = match store::open_checked(&self.path, store::MAX_LIST_BYTES) {
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
        let state = store::parse(&bytes).map_err(|what| StoreError::Invalid {
            path: self.shown(),
            what,
        })?;
        Ok(Found::Other(state, stamp))
    }

    fn read_error(&self, e: &io::Error) -> StoreError {
        StoreError::Read {
            path: self.shown(),
            reason: store::reason(e),
        }
    }

    /// Save `state` with the generation after `base`, the file's (under the lock).
    fn write(&mut self, lock: &mut Lock, state: &State, base: u64) -> Result<(), StoreError> {
        let generation = base.wrapping_add(1).max(1);
        lock.begin_write();
        store::write_atomic(&self.path, &to_text(state, generation))?;
        if lock.left_behind {
            // The last holder died while writing: its temporary file is still there.
            store::remove_temporaries(&self.path);
        }
        lock.end_write();
        self.seen = fs::metadata(&self.path)
            .ok()
            .map(|meta| Stamp::of(&meta, generation));
        Ok(())
    }

    /// Move a file whose content is not a list to `<file>.unreadable-<time>[-n]`, a name
    /// that never replaces another (under the lock).
    fn move_aside(&mut self, why: &StoreError) -> Result<(), TransactError> {
        let base = format!("{}.unreadable-{}", self.path.display(), utc_stamp());
        for n in 1..=1000 {
            let aside = if n == 1 {
                PathBuf::from(&base)
            } else {
                PathBuf::from(format!("{base}-{n}"))
            };
            if fs::symlink_metadata(&aside).is_ok() {
                continue;
            }
            return match fs::rename(&self.path, &aside) {
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
    left_behind: bool,
}

impl Lock {
    fn begin_write(&mut self) {
        if !self.left_behind {
            // Best effort: without the mark, a temporary file a crash leaves is removed
            // by the age-based sweep of `write_atomic` instead.
            let _ = (&self.file).write_all(b"w");
        }
    }

    fn end_write(&mut self) {
        if self.file.set_len(0).is_ok() {
            self.left_behind = false;
        }
    }
}

impl Lock {
    /// The lock if free now; `None` while another process holds it.
    fn try_take(path: &Path) -> io::Result<Option<Lock>> {
        // A lock file made by another user may be read-only to this one: a lock needs
        // only an open descriptor.
        let file = match fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
        {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && path.exists() => {
                File::open(path)?
            }
            other => other?,
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(e)) => return Err(e),
        }
        let held = file.metadata()?;
        // The file may have been removed (and another made) between the open and the
        // lock; a lock on a file no longer at the path locks nothing.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match fs::metadata(path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {}
                _ => return Ok(None),
            }
        }
        Ok(Some(Lock {
            file,
            left_behind: held.len() > 0,
        }))
    }
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

/// For tests of interleavings only: with `RPIV_TODO_TEST_PAUSE=<dir>`, a transaction
/// stops at `point` ("after_read": the call applied, the lock held, nothing written;
/// "after_write": saved and unlocked, the reply not yet returned) while the file
/// `<dir>/<point>` exists, after creating `<dir>/<point>.reached`. Unset (always, outside
/// those tests), this is one environment lookup.
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
        assert_eq!(a.generation(), 3);
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
        let text = to_text(&State::default(), 7);
        assert_eq!(generation_of(&text), 7);
        assert_eq!(store::parse(&text).unwrap(), State::default());
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_790), (2026, 12, 3));
    }
}
