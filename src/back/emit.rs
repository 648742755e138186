//! An indentation-aware text builder for generated code.

/// A position in an [`Emitter`]'s text and the indentation there.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    at: usize,
    indent: usize,
}

/// Accumulates lines of code with consistent indentation.
#[derive(Default, Debug)]
pub struct Emitter {
    buf: String,
    indent: usize,
}

impl Emitter {
    /// An empty emitter at the given indentation level.
    pub fn new(indent: usize) -> Emitter {
        Emitter {
            buf: String::new(),
            indent,
        }
    }

    /// Emits one line (or several, each indented).
    pub fn line(&mut self, text: impl AsRef<str>) {
        for l in text.as_ref().lines() {
            self.one_line(&[l]);
        }
    }

    /// Emits one line made of `parts` (which hold no line breaks).
    fn one_line(&mut self, parts: &[&str]) {
        if parts.iter().all(|p| p.trim().is_empty()) {
            self.buf.push('\n');
            return;
        }
        // Preprocessor directives stay at column 0 only for #if/#endif; pragmas indent.
        for _ in 0..self.indent {
            self.buf.push_str("    ");
        }
        for p in parts {
            self.buf.push_str(p);
        }
        self.buf.push('\n');
    }

    /// Where the next line goes, for [`Emitter::insert_line`].
    pub fn mark(&self) -> Mark {
        Mark {
            at: self.buf.len(),
            indent: self.indent,
        }
    }

    /// Inserts one line at `mark` (taken on this emitter, with nothing
    /// inserted before it since), indented as the line there.
    pub fn insert_line(&mut self, mark: Mark, text: &str) {
        let line = format!("{}{text}\n", "    ".repeat(mark.indent));
        self.buf.insert_str(mark.at, &line);
    }

    /// Emits `text {` and indents.
    pub fn open(&mut self, text: impl AsRef<str>) {
        let t = text.as_ref();
        if t.is_empty() {
            self.one_line(&["{"]);
        } else if t.contains('\n') {
            self.line(format!("{t} {{"));
        } else {
            self.one_line(&[t, " {"]);
        }
        self.indent += 1;
    }

    /// Dedents and emits `}` (with an optional suffix such as `;` or ` else {`).
    pub fn close_with(&mut self, suffix: &str) {
        self.indent = self.indent.saturating_sub(1);
        if suffix.contains(['\n', '\r']) {
            self.line(format!("}}{suffix}"));
        } else {
            self.one_line(&["}", suffix]);
        }
    }

    /// Dedents and emits `}`.
    pub fn close(&mut self) {
        self.close_with("");
    }

    /// Indents one level without emitting anything (after `close_with(" else {")`).
    pub fn indent_in(&mut self) {
        self.indent += 1;
    }

    /// Emits a label at one level less indentation.
    pub fn label(&mut self, name: &str) {
        self.indent = self.indent.saturating_sub(1);
        self.line(format!("{name}:;"));
        self.indent += 1;
    }

    /// Current indentation level.
    pub fn indent(&self) -> usize {
        self.indent
    }

    /// Removes and returns the text emitted since `mark`.
    pub fn take_since(&mut self, mark: Mark) -> String {
        self.buf.split_off(mark.at)
    }

    /// Appends `text` (lines emitted on this emitter) one level deeper.
    pub fn append_deeper(&mut self, text: &str) {
        for l in text.lines() {
            if !l.is_empty() {
                self.buf.push_str("    ");
                self.buf.push_str(l);
            }
            self.buf.push('\n');
        }
    }

    /// Appends `text` (whole lines) verbatim.
    pub fn append_raw(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    /// Appends the text of another emitter verbatim.
    pub fn append(&mut self, other: Emitter) {
        self.buf.push_str(&other.buf);
    }

    /// The text so far.
    pub fn finish(self) -> String {
        self.buf
    }

    /// True if nothing was emitted.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}
