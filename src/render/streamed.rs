//! Outputs made as they are written, never whole in memory: the files of
//! a root that grow with its attempts (its `summary.csv`, the site's
//! search index), so `build`'s peak memory does not (issue 26, section 4;
//! `docs/PERFORMANCE.md`, "memory, the whole-root files streamed").
//!
//! A [`Streamed`] output is a path and a function that writes the bytes.
//! `build` hands it a writer that compares what it is given with the file
//! on disk as it comes ([`Compare`]); when they differ and `build` writes,
//! it makes the output again into a temporary file beside the file
//! ([`crate::fsutil::AtomicFile`]), which then replaces it. Line ends are
//! compared as [`super::build`] compares whole outputs: a CRLF on disk
//! reads as LF, so a Windows checkout is not stale.

use std::io::{Read, Write};
use std::path::PathBuf;

use crate::error::Result;

/// What writes a streamed output's bytes, in order, into the writer
/// given (once).
pub type WriteBytes = Box<dyn FnOnce(&mut dyn Write) -> Result<()> + Send>;

/// One output made as it is written.
pub struct Streamed {
    /// Where it goes.
    pub path: PathBuf,
    /// Writes its bytes, in order, into the writer given (once).
    ///
    /// Errors: what the writer returns (named by [`Streamed::path`]) and
    /// what making the bytes meets (a recorded file that changed since
    /// the root was loaded).
    pub write: WriteBytes,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Work run once every other output was made, that makes one streamed
/// output or none (`None`: a first pass that left questions to the
/// second, which makes it).
pub type StreamJob = Box<dyn Fn() -> Result<Option<Streamed>> + Send + Sync>;

/// A reader's bytes with each CRLF read as LF (a lone CR is kept).
pub struct LfReader<R> {
    inner: R,
    raw: Box<[u8]>,
    at: usize,
    end: usize,
    /// A CR read last, not yet known to start a CRLF.
    cr: bool,
}

impl<R: Read> LfReader<R> {
    /// Wraps `inner` (read 64 KiB at a time).
    pub fn new(inner: R) -> LfReader<R> {
        LfReader {
            inner,
            raw: vec![0; 1 << 16].into_boxed_slice(),
            at: 0,
            end: 0,
            cr: false,
        }
    }
}

impl<R: Read> Read for LfReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < out.len() {
            if self.at == self.end {
                self.end = self.inner.read(&mut self.raw)?;
                self.at = 0;
                if self.end == 0 {
                    if self.cr {
                        self.cr = false;
                        out[n] = b'\r';
                        n += 1;
                    }
                    break;
                }
            }
            if self.cr {
                self.cr = false;
                if self.raw[self.at] != b'\n' {
                    out[n] = b'\r';
                    n += 1;
                    continue;
                }
            }
            // A run up to the next CR (or as much as fits), copied whole.
            let room = (out.len() - n).min(self.end - self.at);
            let run = &self.raw[self.at..self.at + room];
            let len = run.iter().position(|&b| b == b'\r').unwrap_or(room);
            out[n..n + len].copy_from_slice(&run[..len]);
            n += len;
            self.at += len;
            if len < room {
                // The CR: held until the next byte says what it is.
                self.at += 1;
                self.cr = true;
            }
        }
        Ok(n)
    }
}

/// A writer that compares what it is given with a reader's bytes, both
/// with each CRLF read as LF; [`Compare::finish`] says whether the two
/// were the same to the end. (An output with no file on disk is never
/// compared: `build` calls it missing.)
pub struct Compare<R> {
    old: LfReader<R>,
    same: bool,
    /// A CR written last, not yet known to start a CRLF.
    cr: bool,
    scratch: Vec<u8>,
}

impl<R: Read> Compare<R> {
    /// Compares with `old`'s bytes.
    pub fn new(old: R) -> Compare<R> {
        Compare {
            same: true,
            old: LfReader::new(old),
            cr: false,
            scratch: Vec::new(),
        }
    }

    /// Compares `bytes`, already normalized, with the next of the old,
    /// 64 KiB at a time: what it holds does not grow with what it is
    /// given at once (a whole output of 7.7 MB, from `build`).
    fn next(&mut self, bytes: &[u8]) {
        for piece in bytes.chunks(1 << 16) {
            if !self.same {
                return;
            }
            self.scratch.resize(piece.len(), 0);
            let mut got = 0;
            while got < piece.len() {
                match self.old.read(&mut self.scratch[got..]) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got += n,
                }
            }
            self.same = got == piece.len() && self.scratch[..] == *piece;
        }
    }

    /// True when what was written is the old bytes, to their end.
    pub fn finish(mut self) -> bool {
        if self.cr {
            self.cr = false;
            self.next(b"\r");
        }
        if !self.same {
            return false;
        }
        let mut one = [0u8; 1];
        matches!(self.old.read(&mut one), Ok(0))
    }
}

impl<R: Read> Write for Compare<R> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.same || buf.is_empty() {
            return Ok(buf.len());
        }
        let mut start = 0;
        if self.cr {
            self.cr = false;
            if buf[0] != b'\n' {
                self.next(b"\r");
            }
        }
        while let Some(i) = buf[start..].iter().position(|&b| b == b'\r') {
            let at = start + i;
            self.next(&buf[start..at]);
            match buf.get(at + 1) {
                None => self.cr = true,
                Some(b'\n') => {}
                Some(_) => self.next(b"\r"),
            }
            start = at + 1;
        }
        self.next(&buf[start..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes held in memory up to this many, then moved to a temporary file.
pub const SPILL_MEMORY: usize = 1 << 20;

/// Byte records by key, in memory while they are small and in an
/// anonymous temporary file (removed by the system once closed) past
/// [`SPILL_MEMORY`] bytes: what the site's question jobs gather for a
/// streamed output (each question's `summary.csv` rows, its search index
/// entry), held until the output is made, so memory does not grow with
/// the attempts (issue 26, section 4). A key put again replaces its
/// record (a second pass of `build` makes them again).
#[derive(Debug)]
pub struct Spill<K> {
    at: std::collections::BTreeMap<K, (u64, usize)>,
    memory: Vec<u8>,
    file: Option<std::fs::File>,
    len: u64,
}

impl<K> Default for Spill<K> {
    fn default() -> Spill<K> {
        Spill {
            at: std::collections::BTreeMap::new(),
            memory: Vec::new(),
            file: None,
            len: 0,
        }
    }
}

/// The error of a temporary file that could not be made, written or read.
fn spill_error(e: std::io::Error) -> crate::error::Error {
    crate::error::Error::io(
        std::env::temp_dir(),
        "hold what build gathered in a temporary file in",
        e,
    )
}

impl<K: Ord> Spill<K> {
    /// Keeps `bytes` as `key`'s record.
    ///
    /// Errors: the temporary file cannot be made or written (named by the
    /// system's temporary folder: set `TMPDIR` to another).
    pub fn put(&mut self, key: K, bytes: &[u8]) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        if self.file.is_none() && self.memory.len() + bytes.len() > SPILL_MEMORY {
            let mut file = tempfile::tempfile().map_err(spill_error)?;
            file.write_all(&self.memory).map_err(spill_error)?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => {
                file.seek(SeekFrom::Start(self.len)).map_err(spill_error)?;
                file.write_all(bytes).map_err(spill_error)?;
            }
            None => self.memory.extend_from_slice(bytes),
        }
        self.at.insert(key, (self.len, bytes.len()));
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// Calls `each` with every record, in key order (one record in memory
    /// at a time).
    ///
    /// Errors: the temporary file cannot be read; what `each` returns.
    pub fn for_each(&mut self, mut each: impl FnMut(&K, &[u8]) -> Result<()>) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut buf = Vec::new();
        for (key, &(at, len)) in &self.at {
            match &mut self.file {
                Some(file) => {
                    buf.resize(len, 0);
                    file.seek(SeekFrom::Start(at)).map_err(spill_error)?;
                    file.read_exact(&mut buf).map_err(spill_error)?;
                    each(key, &buf)?;
                }
                None => {
                    // Within the memory held: positions are below its length.
                    let start = usize::try_from(at).unwrap_or(usize::MAX);
                    let record = self.memory.get(start..start.saturating_add(len));
                    each(key, record.unwrap_or_default())?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `new` written in chunks of `size` compared with `old`.
    fn same(old: &[u8], new: &[u8], size: usize) -> bool {
        let mut compare = Compare::new(old);
        for chunk in new.chunks(size.max(1)) {
            compare.write_all(chunk).unwrap();
        }
        compare.finish()
    }

    #[test]
    fn a_streamed_output_is_the_file_on_disk_only_when_every_byte_is_line_ends_aside() {
        let cases: &[(&[u8], &[u8], bool)] = &[
            (b"a,b\n1,2\n", b"a,b\n1,2\n", true),
            (b"a,b\r\n1,2\r\n", b"a,b\n1,2\n", true),
            (b"a,b\n1,2\n", b"a,b\r\n1,2\r\n", true),
            (b"a,b\n1,2\n", b"a,b\n1,2\n3\n", false),
            (b"a,b\n1,2\n3\n", b"a,b\n1,2\n", false),
            (b"a\rb\n", b"a\rb\n", true),
            (b"a\rb\n", b"a\nb\n", false),
            (b"a\r", b"a\r", true),
            (b"a\r", b"a", false),
            (b"a", b"a\r", false),
            (b"\r\r\n", b"\r\r\n", true),
            (b"\r\r\n", b"\r\n", false),
            (b"", b"", true),
            (b"", b"x", false),
            (b"x", b"", false),
        ];
        for &(old, new, expected) in cases {
            for size in [1, 2, 3, 7, 1 << 20] {
                assert_eq!(
                    same(old, new, size),
                    expected,
                    "{:?} against {:?}, written {size} bytes at a time",
                    String::from_utf8_lossy(old),
                    String::from_utf8_lossy(new)
                );
            }
        }
    }

    #[test]
    fn crlf_is_read_as_lf_across_every_read_boundary() {
        let text = b"one\r\ntwo\rthree\r\n\r\nfour\r".repeat(5000);
        let mut whole = Vec::new();
        LfReader::new(&text[..]).read_to_end(&mut whole).unwrap();
        let expected = b"one\ntwo\rthree\n\nfour\r".repeat(5000);
        assert_eq!(whole, expected);
        // Read a few bytes at a time, the same.
        let mut reader = LfReader::new(&text[..]);
        let mut pieces = Vec::new();
        let mut buf = [0u8; 5];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            pieces.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pieces, expected);
    }

    #[test]
    fn a_spill_gives_its_records_back_in_key_order_in_memory_and_past_it() {
        for size in [10usize, SPILL_MEMORY / 3 + 1] {
            let mut spill = Spill::default();
            let record = |k: u32| vec![(k % 251) as u8; size + k as usize];
            spill.put(1, &record(99)).unwrap();
            for k in [5u32, 4, 2, 3, 1] {
                spill.put(k, &record(k * 10 + u32::from(k == 1))).unwrap();
            }
            // 1 was put twice: its second record stands.
            assert_eq!(spill.len(), 5);
            let mut seen = Vec::new();
            spill
                .for_each(|k, bytes| {
                    let want = *k * 10 + u32::from(*k == 1);
                    assert_eq!(bytes, &record(want)[..], "record {k}, {size} bytes");
                    seen.push(*k);
                    Ok(())
                })
                .unwrap();
            assert_eq!(seen, [1, 2, 3, 4, 5]);
            assert_eq!(spill.file.is_some(), size > 1000, "{size}");
        }
    }
}
