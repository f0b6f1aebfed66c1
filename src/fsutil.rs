//! File-system helpers shared by every writer: atomic writes and
//! repository-relative display paths.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `contents` to `path` atomically: a temporary file in the same
/// folder, flushed, then renamed over `path`. A crash leaves either the old
/// file or the new one, never half of either. Creates missing parent folders.
///
/// Errors: [`Error::File`] naming `path` when the folder cannot be created or
/// the file cannot be written or renamed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents)
        .map_err(|e| Error::io(path, "write", e))?;
    file.commit()
}

/// A file being written atomically, as it is made ([`write_atomic`]'s
/// way for a file too large to hold whole: `build`'s streamed outputs,
/// issue 26, section 4): the bytes go to a temporary file in the same
/// folder, which [`AtomicFile::commit`] renames over the path. Dropped
/// without a commit, the temporary file is removed and the path keeps
/// what it held.
pub struct AtomicFile {
    path: PathBuf,
    tmp: std::io::BufWriter<tempfile::NamedTempFile>,
}

impl AtomicFile {
    /// Starts writing `path`: creates missing parent folders and the
    /// temporary file (private while written; on commit it keeps the mode
    /// of the file it replaces, or gets the umask's default).
    ///
    /// Errors: [`Error::File`] naming `path` when the folder or the
    /// temporary file cannot be created.
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create folder", e))?;
        let mut builder = tempfile::Builder::new();
        builder
            .prefix(TEMPORARY_PREFIX)
            .rand_bytes(TEMPORARY_RANDOM);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o7777)
                .unwrap_or(0o666);
            builder.permissions(std::fs::Permissions::from_mode(mode));
        }
        let tmp = builder
            .tempfile_in(&dir)
            .map_err(|e| Error::io(path, "write", e))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp: std::io::BufWriter::with_capacity(1 << 16, tmp),
        })
    }

    /// Flushes what was written and renames it over the path.
    ///
    /// Errors: [`Error::File`] naming the path when the bytes cannot be
    /// flushed or the file cannot be renamed.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let tmp = self
            .tmp
            .into_inner()
            .map_err(|e| Error::io(&path, "write", e.into_error()))?;
        tmp.persist(&path)
            .map_err(|e| Error::io(&path, "write", e.error))?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.tmp.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

/// Lexically normalized `path`: `.` dropped, `a/..` folded, the disk not
/// touched. A `..` folds only a named component: leading ones are kept
/// (`../../x` stays so; it once lost one `..` in two), and one past the
/// root stays at the root.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The members in which two JSON objects differ, in key order, as
/// `(key, value in a, value in b)` (`None`: absent there); two values that
/// are not both objects differ as a whole, under the key `""`. What `merge`
/// names of two shards' settings and `compare` of two conditions.
pub fn member_differences<'a>(
    a: &'a serde_json::Value,
    b: &'a serde_json::Value,
) -> Vec<(
    &'a str,
    Option<&'a serde_json::Value>,
    Option<&'a serde_json::Value>,
)> {
    let (Some(x), Some(y)) = (a.as_object(), b.as_object()) else {
        return if a == b {
            Vec::new()
        } else {
            vec![("", Some(a), Some(b))]
        };
    };
    let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    keys.into_iter()
        .filter(|k| x.get(*k) != y.get(*k))
        .map(|k| (k.as_str(), x.get(k), y.get(k)))
        .collect()
}

/// `path` made absolute against the current folder (no symlinks
/// resolved); as given when the current folder cannot be read.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// True when `a` and `b` name the same file or folder: the same path once
/// normalized, or the same place on disk (`../runs-x/`, a link, an
/// absolute spelling).
pub fn same_place(a: &Path, b: &Path) -> bool {
    normalize(a) == normalize(b)
        || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The path of `to` from the folder `from`, lexically, as its segments
/// (both [`normalize`]d first: `..` for each component of `from` past what
/// they share, then the rest of `to`, each as it is written); empty when
/// they are the same. Touches no disk: links are not resolved.
pub fn relative(from: &Path, to: &Path) -> Vec<String> {
    let from = normalize(from);
    let to = normalize(to);
    let mut a = from.components();
    let mut b = to.components().peekable();
    let mut ups = 0;
    while let Some(x) = a.next() {
        if b.peek() == Some(&x) {
            b.next();
        } else {
            ups = 1 + a.count();
            break;
        }
    }
    let mut parts = vec!["..".to_string(); ups];
    parts.extend(b.map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts
}

/// The first 4 KiB of the file at `path`, read as text (invalid UTF-8
/// replaced), where generated files carry their marks; `None` when it
/// cannot be read or is not a regular file ([`open_regular`]).
pub fn head(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = open_regular(path, Links::Follow).ok()??;
    let mut head = Vec::with_capacity(4096);
    file.take(4096).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The name prefix of [`write_atomic`]'s temporary files.
pub(crate) const TEMPORARY_PREFIX: &str = ".okn-tmp-";

/// How many random characters (ASCII letters and digits) follow
/// [`TEMPORARY_PREFIX`] in a temporary file's name.
const TEMPORARY_RANDOM: usize = 6;

/// True for a file name [`write_atomic`] gives its temporary files: one
/// left behind was a killed writer's, and `build` removes it.
pub fn is_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with(TEMPORARY_PREFIX)
}

/// True for a name exactly as [`write_atomic`] makes them:
/// `TEMPORARY_PREFIX` and six ASCII letters or digits, nothing else. What
/// [`remove_leftover_temporaries`] removes: a file of a person's that only
/// starts the same way is left alone.
pub fn is_our_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(|n| n.strip_prefix(TEMPORARY_PREFIX))
        .is_some_and(|rest| {
            rest.len() == TEMPORARY_RANDOM && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Removes the temporary files a killed [`write_atomic`] left under
/// `root` (a `merge` or `rescore` killed mid-write), so the next run
/// writes the bytes an uninterrupted one would (issue 24, item 26). Only
/// regular files named as ours ([`is_our_temporary`]) and last modified
/// before `before` (the start of the command: a concurrent writer's file,
/// about to be renamed, is not touched) are removed; links are neither
/// followed nor removed, and an unreadable folder is passed over. Returns
/// the paths removed, sorted.
///
/// Errors: [`Error::File`] naming a leftover that cannot be removed.
pub fn remove_leftover_temporaries(
    root: &Path,
    before: std::time::SystemTime,
) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if !entry.file_type().is_file() || !is_our_temporary(entry.file_name()) {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t < before);
        if !old {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Ok(()) => removed.push(entry.path().to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::io(
                    entry.path(),
                    "remove a leftover temporary file",
                    e,
                ));
            }
        }
    }
    Ok(removed)
}

/// True when `path` is a regular file and already holds exactly
/// `contents` ([`open_regular`]). A file of another length is not read.
pub fn same_contents(path: &Path, contents: &[u8]) -> bool {
    use std::io::Read;
    let Ok(Some(mut file)) = open_regular(path, Links::Follow) else {
        return false;
    };
    if !file
        .metadata()
        .is_ok_and(|m| m.len() == contents.len() as u64)
    {
        return false;
    }
    // One byte more than expected, to notice a file that grew meanwhile.
    let mut existing = Vec::with_capacity(contents.len() + 1);
    file.read_to_end(&mut existing).is_ok() && existing == contents
}

/// What [`open_regular`] does with a symbolic link where it expects a
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A link is refused: inside a runs root every recorded file is the
    /// file itself, and a link there could publish a file from outside it
    /// (issue 24, item 21; `docs/FORMAT.md`, "Re-scoring").
    Refuse,
    /// A link is followed to the file it names (an image a page embeds).
    Follow,
}

/// What a symbolic link inside a runs root is said to be.
pub const LINK_REFUSED: &str = "a symbolic link, not the file itself: a runs root holds its \
                                recorded files, and a link could publish a file from outside it";

/// What a file that is not a regular file is said to be.
pub const NOT_REGULAR: &str = "not a regular file (a named pipe, socket or device), which is \
                               never read: reading one could wait forever";

/// Opens `path` for reading when it is a regular file; `Ok(None)` when
/// nothing is there (a link that leads nowhere, with [`Links::Follow`],
/// counts as nothing). The one way a recorded file, or an image a page
/// embeds, is opened (issue 24, item 22): the file is opened without
/// blocking (`O_NONBLOCK`, so a named pipe never waits for a writer) and,
/// under [`Links::Refuse`], without following a link (`O_NOFOLLOW`), and
/// its type is checked on the open file, so what is read is what was
/// checked.
///
/// Errors ([`Error::File`] naming `path`): a symbolic link under
/// [`Links::Refuse`] ([`LINK_REFUSED`]); a folder; a named pipe, socket or
/// device ([`NOT_REGULAR`]); a file that exists and cannot be opened
/// (permission denied: never read as absent, issue 24, item 23).
pub fn open_regular(path: &Path, links: Links) -> Result<Option<std::fs::File>> {
    Ok(open_regular_sized(path, links)?.map(|(file, _)| file))
}

/// [`open_regular`], with the file's length in bytes as the open file
/// states it (what a reader reserves before reading it whole).
///
/// Errors: as [`open_regular`].
fn open_regular_sized(path: &Path, links: Links) -> Result<Option<(std::fs::File, u64)>> {
    // On Unix the open itself refuses a link (`O_NOFOLLOW`: ELOOP) and
    // says a path leads nowhere, so no `lstat` goes before it (a third of
    // the system calls of reading a runs root: docs/PERFORMANCE.md,
    // "build and build --check").
    #[cfg(not(unix))]
    {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, "read", e)),
        };
        if meta.file_type().is_symlink() && links == Links::Refuse {
            return Err(Error::file(path, LINK_REFUSED));
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if links == Links::Refuse {
            libc::O_NOFOLLOW
        } else {
            0
        };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW met a link put there since it was looked at.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::file(path, LINK_REFUSED));
        }
        Err(e) => return Err(Error::io(path, "read", e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, "read", e))?;
    if meta.is_dir() {
        return Err(Error::file(path, "a folder, where a file was expected"));
    }
    if !meta.is_file() {
        return Err(Error::file(path, NOT_REGULAR));
    }
    Ok(Some((file, meta.len())))
}

/// The bytes of the regular file at `path` ([`open_regular`]); `Ok(None)`
/// when nothing is there.
///
/// Errors: those of [`open_regular`]; a read that fails.
pub fn read_regular(path: &Path, links: Links) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let Some((file, len)) = open_regular_sized(path, links)? else {
        return Ok(None);
    };
    // Room for the whole file and the read that finds its end: one
    // allocation. Read through `Take`, whose reader asks nothing of the
    // file (a `File`'s own asks its size and position again: a `statx`
    // and an `lseek` per file); a file that grew since is read whole.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "read", e))?;
    Ok(Some(bytes))
}

/// What one folder holds, from one listing of it: the reader of an
/// attempt folder asks after a dozen files, most of them there, some not
/// (a stderr log, a journal), and opening or `stat`-ing each by its path
/// was a fifth of the system calls of `build --check`
/// (docs/PERFORMANCE.md, "build and build --check"). A name the listing
/// lacks is absent without a system call; one it holds is read as every
/// recorded file is ([`read_recorded`]): a link, a named pipe, a folder
/// or a file that cannot be read is an error, never absent.
#[derive(Debug, Clone)]
pub struct Listing {
    dir: PathBuf,
    /// Entry names, each with whether it is a regular file (links not
    /// followed); `None` when the folder could not be listed (each file
    /// is then asked after on its own, by its path).
    entries: Option<Vec<(std::ffi::OsString, bool)>>,
}

impl Listing {
    /// Lists `dir` (a folder that is not there lists empty).
    pub fn of(dir: &Path) -> Listing {
        let entries = match std::fs::read_dir(dir) {
            Ok(read) => Some(
                read.flatten()
                    .map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_file())))
                    .collect(),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
            Err(_) => None,
        };
        Listing {
            dir: dir.to_path_buf(),
            entries,
        }
    }

    /// The folder listed.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `Some(Some(regular))` for an entry the listing holds, `Some(None)`
    /// for a name it lacks, `None` when the folder could not be listed.
    fn entry(&self, name: &str) -> Option<Option<bool>> {
        self.entries
            .as_ref()
            .map(|entries| entries.iter().find(|(n, _)| n == name).map(|(_, f)| *f))
    }

    /// Whether it holds an entry `name` of any kind (a link or a folder
    /// too); true when the folder could not be listed, so that a reader
    /// asks after the path and meets the error.
    pub fn may_hold(&self, name: &str) -> bool {
        self.entry(name) != Some(None)
    }

    /// Whether it holds a regular file `name` (a link is none).
    pub fn is_file(&self, name: &str) -> bool {
        match self.entry(name) {
            Some(found) => found == Some(true),
            None => std::fs::symlink_metadata(self.dir.join(name)).is_ok_and(|m| m.is_file()),
        }
    }

    /// The names of the regular files it holds among `names`.
    pub fn files(&self, names: &[&str]) -> std::collections::BTreeSet<String> {
        names
            .iter()
            .filter(|n| self.is_file(n))
            .map(|n| n.to_string())
            .collect()
    }

    /// The bytes of its file `name` ([`read_recorded`]), `None` when it
    /// is absent; nothing is opened for a name the folder lacks.
    ///
    /// Errors: as [`read_recorded`].
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        if !self.may_hold(name) {
            return Ok(None);
        }
        read_recorded(&self.dir.join(name))
    }

    /// Opens its file `name` as [`open_regular`] refusing links does, to
    /// show it can be read; `Ok(false)` when it is absent.
    ///
    /// Errors: as [`open_regular`].
    pub fn open(&self, name: &str) -> Result<bool> {
        if !self.may_hold(name) {
            return Ok(false);
        }
        Ok(open_regular(&self.dir.join(name), Links::Refuse)?.is_some())
    }
}

/// The bytes of a file a runs root recorded ([`read_regular`] refusing
/// links); `Ok(None)` when it is absent.
///
/// Errors: as [`open_regular`] under [`Links::Refuse`].
pub fn read_recorded(path: &Path) -> Result<Option<Vec<u8>>> {
    read_regular(path, Links::Refuse)
}

/// A JSON file a runs root recorded, read into `T` ([`read_recorded`]);
/// `Ok(None)` when it is absent.
///
/// Errors: as [`read_recorded`]; bytes that are not UTF-8 or do not parse
/// as `T` (naming the line).
pub fn read_recorded_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    read_recorded(path)?
        .map(|bytes| parse_json(path, bytes))
        .transpose()
}

/// `bytes` read from the recorded JSON file `path` (`None` when it is
/// absent) parsed into `T`, as [`read_recorded_json`] parses them.
///
/// Errors: bytes that are not UTF-8 or not a `T`, naming the line.
pub fn parse_recorded_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    bytes: Option<Vec<u8>>,
) -> Result<Option<T>> {
    bytes.map(|bytes| parse_json(path, bytes)).transpose()
}

/// `bytes` read from `path` parsed as JSON into `T`.
fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, bytes: Vec<u8>) -> Result<T> {
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count() as u64;
        Error::at_line(path, line, "not valid UTF-8")
    })?;
    serde_json::from_str(&text).map_err(|e| Error::at_line(path, e.line() as u64, e.to_string()))
}

/// Reads a whole file a user or a record names (a corpus's `.rq` files
/// and ground truth, a profile, `study.toml`, `okn-benchmark.toml`, a
/// template, a catalog, RDF data), following a link, only when it is a
/// regular file ([`open_regular`]): a named pipe planted where one is
/// expected would otherwise wait forever for a writer (issue 24, items 3
/// and 22).
///
/// Errors: [`Error::File`] naming `path`: absent, a folder, a named pipe,
/// socket or device ([`NOT_REGULAR`]), or a file that cannot be read.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    read_regular(path, Links::Follow)?.ok_or_else(|| {
        Error::io(
            path,
            "read",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })
}

/// [`read_file`] as UTF-8 text, naming the file (and line) on failure.
///
/// Errors: those of [`read_file`]; bytes that are not UTF-8 (the line of
/// the first that is not).
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count() as u64;
        Error::at_line(path, line, "not valid UTF-8")
    })
}

/// Reads a JSON file into `T`, naming the file and line on failure. Only
/// a regular file is read (a link is followed; [`open_regular`]).
///
/// Errors: a file that is absent or cannot be read; bytes that are not
/// UTF-8 or do not parse as `T` (naming the line).
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> crate::error::Result<T> {
    match read_regular(path, Links::Follow)? {
        Some(bytes) => parse_json(path, bytes),
        None => Err(Error::io(
            path,
            "read",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )),
    }
}

/// Writes `value` as pretty JSON with a final newline, atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> crate::error::Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::error::Error::file(path, format!("cannot write JSON: {e}")))?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// Bytes free for an unprivileged writer on the file system holding
/// `path` (or its nearest existing ancestor), when the system says.
pub fn available_bytes(path: &Path) -> Option<u64> {
    let existing = path
        .ancestors()
        .find(|a| a.exists() && !a.as_os_str().is_empty())?;
    available_at(existing)
}

#[cfg(unix)]
fn available_at(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: statvfs reads the NUL-terminated path and fills `stat`; it
    // is read only when the call succeeded.
    let status = unsafe { libc::statvfs(c_path.as_ptr(), stat.as_mut_ptr()) };
    if status != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let stat = unsafe { stat.assume_init() };
    #[allow(clippy::useless_conversion)]
    Some(u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize)))
}

#[cfg(not(unix))]
fn available_at(_path: &Path) -> Option<u64> {
    None
}

/// A file's bytes, mapped into memory where the system allows it, else
/// read into a buffer (an empty file, a pipe, a file system without
/// mapping). Derefs to `&[u8]`.
///
/// Mapping spares the copy from the page cache and the zeroed pages a
/// buffer needs: on the 100,000-row pair of docs/PERFORMANCE.md it is a
/// quarter of `score`'s time. The tool writes every file by rename
/// ([`write_atomic`]), so a file it mapped is never changed under it; a
/// file another program truncates while it is mapped can end the process
/// (SIGBUS), as with any program that maps its input (ripgrep does).
pub enum FileBytes {
    /// The file mapped read-only.
    Mapped(memmap2::Mmap),
    /// The file read whole.
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(map) => map,
            FileBytes::Read(bytes) => bytes,
        }
    }
}

/// Maps or reads `path` ([`FileBytes`]).
///
/// Errors: the file cannot be opened or read ([`crate::error::Error::io`],
/// naming the file).
pub fn map_file(path: &Path) -> crate::error::Result<FileBytes> {
    let file = std::fs::File::open(path).map_err(|e| crate::error::Error::io(path, "read", e))?;
    let regular = file
        .metadata()
        .map(|m| m.is_file() && m.len() > 0)
        .unwrap_or(false);
    if regular {
        // SAFETY: read-only and no longer than the `FileBytes`; files are
        // replaced by rename, never rewritten in place (see the type's docs).
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Mapped(map));
        }
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut bytes)
        .map_err(|e| crate::error::Error::io(path, "read", e))?;
    Ok(FileBytes::Read(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing reads as every recorded file is read: a regular file's
    /// bytes, nothing for a name the folder lacks, and an error for a link
    /// (followed or dangling), a folder or a named pipe (issue 24, items 21
    /// and 22).
    #[test]
    fn listings_read_regular_files_and_refuse_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("attempt-1");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("answer.csv"), b"a\n1\n").unwrap();
        std::fs::create_dir(dir.join("cwd")).unwrap();
        std::fs::write(tmp.path().join("outside.json"), b"{}").unwrap();
        let mut refused = vec!["cwd"];
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(tmp.path().join("outside.json"), dir.join("calls.json")).unwrap();
            symlink(dir.join("cwd"), dir.join("agent.json")).unwrap();
            symlink(dir.join("gone"), dir.join("episode.json")).unwrap();
            let fifo =
                std::ffi::CString::new(dir.join("prompt.txt").as_os_str().as_encoded_bytes())
                    .unwrap();
            // SAFETY: mkfifo reads the NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
            refused.extend(["calls.json", "agent.json", "episode.json", "prompt.txt"]);
        }
        for folder in [dir.clone(), tmp.path().join("missing")] {
            let listing = Listing::of(&folder);
            let here = folder == dir;
            assert_eq!(listing.read("answer.csv").unwrap().is_some(), here);
            assert!(listing.is_file("answer.csv") == here);
            assert_eq!(listing.read("metrics.json").unwrap(), None);
            assert!(!listing.open("metrics.json").unwrap());
            assert_eq!(listing.open("answer.csv").unwrap(), here);
            for name in &refused {
                assert!(!listing.is_file(name), "{name}");
                assert_eq!(listing.read(name).is_err(), here, "{name}");
                assert_eq!(listing.open(name).is_err(), here, "{name}");
            }
        }
    }

    /// A red team found `../..` normalized to nothing, so `build` compared
    /// a run inside the repository for one four levels above it.
    #[test]
    fn leading_parent_steps_are_kept_and_named_ones_folded() {
        let n = |p: &str| normalize(Path::new(p)).display().to_string();
        assert_eq!(n("../.."), "../..");
        assert_eq!(n("a/../../../../x"), "../../../x");
        assert_eq!(n("a/b/../c/./d/.."), "a/c");
        assert_eq!(n("/.."), "/");
        assert_eq!(n("/a/../.."), "/");
        assert_eq!(n("./x/"), "x");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_error_of_the_temporary_file_names_the_file_being_written() {
        // /dev/full is not a folder: the temporary file cannot be made in
        // it, and tempfile's error names the temporary file.
        let e = tempfile::Builder::new()
            .prefix(TEMPORARY_PREFIX)
            .tempfile_in("/dev/full")
            .unwrap_err();
        assert!(e.to_string().contains(TEMPORARY_PREFIX), "{e}");
        let message = Error::io(Path::new("out/README.md"), "write", e).to_string();
        assert_eq!(
            message,
            "out/README.md: cannot write: Not a directory (os error 20)"
        );
    }

    #[test]
    fn a_failed_write_names_the_file_not_the_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("README.md");
        std::fs::create_dir(&target).unwrap();
        let message = write_atomic(&target, b"x").unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{}: cannot write: ", target.display())),
            "{message}"
        );
        assert!(!message.contains(TEMPORARY_PREFIX), "{message}");
    }

    #[test]
    fn writes_and_replaces_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(same_contents(&path, b"two"));
        assert!(!same_contents(&path, b"tw"));
        assert!(!same_contents(&path, b"two!"));
        assert!(!same_contents(&path, b"one"));
        assert!(!same_contents(&dir.path().join("none"), b""));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("out.txt")]);
    }

    /// Files written through a temporary file once came out 0600 (the
    /// temporary file's mode), unreadable to a web server or a colleague.
    #[cfg(unix)]
    #[test]
    fn new_files_get_the_umask_default_and_replacements_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        write_atomic(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode & 0o044, 0, "group/other cannot read: {mode:o}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"y").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn unwritable_folder_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let err = write_atomic(&blocker.join("out.txt"), b"x").unwrap_err();
        assert!(err.to_string().contains("file"), "{err}");
    }

    /// Issue 24, items 21 to 23: a regular file is read, an absent one is
    /// none, and a link (under `Refuse`), a folder, a named pipe or a
    /// dangling link each answer at once, as errors or absence.
    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_opened_and_nothing_waits() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("file"), b"bytes").unwrap();
        std::fs::create_dir(d.join("folder")).unwrap();
        std::os::unix::fs::symlink(d.join("file"), d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("gone"), d.join("dangling")).unwrap();
        let fifo = std::ffi::CString::new(d.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let read = |name: &str, links| read_regular(&d.join(name), links);
        assert_eq!(read("file", Links::Refuse).unwrap().unwrap(), b"bytes");
        assert_eq!(read("absent", Links::Refuse).unwrap(), None);
        assert_eq!(read("link", Links::Follow).unwrap().unwrap(), b"bytes");
        assert_eq!(read("dangling", Links::Follow).unwrap(), None);
        for (name, links, says) in [
            ("link", Links::Refuse, LINK_REFUSED),
            ("dangling", Links::Refuse, LINK_REFUSED),
            ("folder", Links::Refuse, "a folder"),
            ("fifo", Links::Refuse, NOT_REGULAR),
            ("fifo", Links::Follow, NOT_REGULAR),
        ] {
            let e = read(name, links).unwrap_err().to_string();
            assert!(e.contains(says), "{name}: {e}");
        }
        assert!(!same_contents(&d.join("fifo"), b""));
        assert_eq!(head(&d.join("fifo")), None);
        let e = read_json::<serde_json::Value>(&d.join("fifo")).unwrap_err();
        assert!(e.to_string().contains(NOT_REGULAR), "{e}");
    }

    #[test]
    fn a_file_is_mapped_an_empty_one_read_and_a_missing_one_named() {
        let dir = tempfile::tempdir().unwrap();
        let full = dir.path().join("full.csv");
        std::fs::write(&full, "a,b\n1,2\n").unwrap();
        let bytes = map_file(&full).unwrap();
        assert!(matches!(bytes, FileBytes::Mapped(_)));
        assert_eq!(&*bytes, b"a,b\n1,2\n");
        let empty = dir.path().join("empty.csv");
        std::fs::write(&empty, "").unwrap();
        let bytes = map_file(&empty).unwrap();
        assert!(matches!(bytes, FileBytes::Read(_)));
        assert!(bytes.is_empty());
        let err = map_file(&dir.path().join("missing.csv")).err().unwrap();
        assert!(err.to_string().contains("missing.csv"), "{err}");
    }
}
