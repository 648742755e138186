//! Precedence-climbing parser for the Python subset DaCe writes: sympy-style
//! symbolic expressions and simple tasklet code (assignments and expressions).

use std::fmt;

use crate::ir::dtype::DType;
use crate::ir::expr::{BinaryOp, Expr, Func, Stmt, Target, UnaryOp};

use super::lexer::{Punct, Tok, Token, tokenize};

/// Deepest syntactic nesting the parser follows: parentheses, brackets,
/// call arguments, conditional expressions and prefix operators (`(((x)))`,
/// `-(-(-x))`, `not not x`) each open one level while the parser recurses
/// into them. Sized for the smallest stacks sdfgc runs on: a debug build's
/// parser spends about 15 KiB of stack per level, and threads spawned by
/// the test suite (or by an application embedding the library) get 2 MiB.
/// DaCe's expressions stay far below it: the deepest in the fixtures is 4.
pub const MAX_NESTING: usize = 50;

/// Deepest expression tree the parser builds (a leaf has depth 1). A flat
/// chain `a + a + ... + a` is built left-deep without recursing, so its
/// depth is bounded separately from [`MAX_NESTING`]: every later pass
/// (simplifier, C++ printer, even `Drop`) recurses over the tree, at about
/// 2.5 KiB of stack per level in a debug build. The deepest tree in the
/// fixtures has depth 9.
pub const MAX_DEPTH: usize = 200;

/// A parse error with its 1-based position in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What went wrong, naming the offending construct.
    pub message: String,
}

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for PyError {}

/// Parses one expression (surrounding whitespace, newlines and comments allowed).
pub fn parse_expr(src: &str) -> Result<Expr, PyError> {
    let mut p = Parser::new(src)?;
    p.skip_newlines();
    if p.peek() == Tok::Eof {
        return Err(p.err_here("empty expression".into()));
    }
    let e = p.expr()?.expr;
    p.skip_newlines();
    match p.peek() {
        Tok::Eof => Ok(e),
        Tok::Punct(Punct::Comma) => Err(p.construct("tuple")),
        _ => Err(p.unexpected()),
    }
}

/// Parses tasklet or interstate code: statements separated by newlines or `;`.
/// Supports (augmented) assignments to names and subscripts, expression
/// statements and `pass`; anything else is an error naming the construct.
pub fn parse_code(src: &str) -> Result<Vec<Stmt>, PyError> {
    let mut p = Parser::new(src)?;
    let mut out = Vec::new();
    loop {
        while matches!(p.peek(), Tok::Newline | Tok::Punct(Punct::Semi)) {
            p.bump();
        }
        if p.peek() == Tok::Eof {
            return Ok(out);
        }
        p.statement(&mut out)?;
        match p.peek() {
            Tok::Newline | Tok::Punct(Punct::Semi) => {
                p.bump();
            }
            Tok::Eof => {}
            _ => return Err(p.unexpected()),
        }
    }
}

/// Python keywords (not usable as names).
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Keywords that start an (unsupported) statement.
const STMT_KEYWORDS: &[&str] = &[
    "assert", "async", "break", "class", "continue", "def", "del", "elif", "else", "except",
    "finally", "for", "from", "global", "if", "import", "nonlocal", "raise", "return", "try",
    "while", "with", "yield",
];

/// Module prefixes whose attributes resolve by their last component.
const MODULES: &[&str] = &["math", "np", "numpy", "dace", "cmath"];

/// Attributes of a value that tasklet code may read: `x.real`, `x.imag`, `x.conjugate()`.
const COMPLEX_ATTRIBUTES: &[&str] = &["real", "imag", "conjugate"];

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    /// Current syntactic nesting (see [`MAX_DEPTH`]).
    nesting: usize,
}

/// A parsed expression and the depth of its tree (a leaf has depth 1),
/// kept below [`MAX_DEPTH`] as the tree is built.
struct Tree {
    expr: Expr,
    depth: usize,
}

impl Tree {
    fn leaf(expr: Expr) -> Tree {
        Tree { expr, depth: 1 }
    }
}

/// The message of a [`MAX_DEPTH`] error.
fn too_deep() -> String {
    format!(
        "expression tree deeper than {MAX_DEPTH} levels (sdfgc's limit; \
         every operator of a chain like a + b + c counts as one level)"
    )
}

/// The message of a [`MAX_NESTING`] error.
fn too_nested() -> String {
    format!(
        "expression nested deeper than {MAX_NESTING} levels of parentheses, \
         calls, subscripts, conditionals and prefix operators (sdfgc's limit)"
    )
}

/// `Expr::Binary` of two trees, refused past [`MAX_DEPTH`].
fn bin(op: BinaryOp, a: Tree, b: Tree) -> Result<Tree, String> {
    node(1 + a.depth.max(b.depth), || Expr::bin(op, a.expr, b.expr))
}

/// `Expr::Unary` of a tree, refused past [`MAX_DEPTH`].
fn unary(op: UnaryOp, a: Tree) -> Result<Tree, String> {
    node(1 + a.depth, || Expr::Unary(op, Box::new(a.expr)))
}

/// A node of the given depth, built only when the depth is within the limit.
fn node(depth: usize, build: impl FnOnce() -> Expr) -> Result<Tree, String> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(Tree {
        expr: build(),
        depth,
    })
}

/// Depth of a node over the given children (1 for none).
fn depth_over(children: &[Tree]) -> usize {
    1 + children.iter().map(|t| t.depth).max().unwrap_or(0)
}

/// Splits trees into their expressions.
fn exprs(trees: Vec<Tree>) -> Vec<Expr> {
    trees.into_iter().map(|t| t.expr).collect()
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Result<Self, PyError> {
        Ok(Parser {
            toks: tokenize(src)?,
            pos: 0,
            nesting: 0,
        })
    }

    /// Runs `f` one syntactic nesting level deeper, refusing to go past
    /// [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, PyError>) -> Result<T, PyError> {
        if self.nesting >= MAX_NESTING {
            return Err(self.err_here(too_nested()));
        }
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    /// Turns a tree-building error (the depth limit) into a located error.
    fn located<T>(&self, r: Result<T, String>) -> Result<T, PyError> {
        r.map_err(|m| self.err_here(m))
    }

    fn peek(&self) -> Tok<'a> {
        self.toks[self.pos].kind
    }

    fn peek_at(&self, k: usize) -> Tok<'a> {
        self.toks[(self.pos + k).min(self.toks.len() - 1)].kind
    }

    fn bump(&mut self) -> Token<'a> {
        let t = self.toks[self.pos];
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is_punct(&self, p: Punct) -> bool {
        self.peek() == Tok::Punct(p)
    }

    fn is_kw(&self, kw: &str) -> bool {
        self.peek() == Tok::Name(kw)
    }

    fn eat(&mut self, p: Punct) -> bool {
        let hit = self.is_punct(p);
        if hit {
            self.bump();
        }
        hit
    }

    fn expect(&mut self, p: Punct) -> Result<(), PyError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Tok::Newline {
            self.bump();
        }
    }

    fn err_at(t: &Token<'_>, message: String) -> PyError {
        PyError {
            line: t.line,
            col: t.col,
            message,
        }
    }

    fn err_here(&self, message: String) -> PyError {
        Self::err_at(&self.toks[self.pos], message)
    }

    fn construct(&self, what: &str) -> PyError {
        self.err_here(format!("unsupported Python construct {what}"))
    }

    fn unexpected(&self) -> PyError {
        match self.peek() {
            Tok::Newline => self.err_here("unexpected end of line".into()),
            Tok::Eof => self.err_here("unexpected end of input".into()),
            t => self.err_here(format!("unexpected token {t}")),
        }
    }

    // ---------------------------------------------------------------- statements

    fn statement(&mut self, out: &mut Vec<Stmt>) -> Result<(), PyError> {
        if let Tok::Name(n) = self.peek() {
            if STMT_KEYWORDS.contains(&n) {
                return Err(self.construct(&format!("'{n}' statement")));
            }
            if n == "pass" {
                self.bump();
                return Ok(());
            }
            if let Tok::Punct(p @ (Punct::Assign | Punct::AugAssign(_))) = self.peek_at(1) {
                if KEYWORDS.contains(&n) {
                    return Err(self.err_here(format!("cannot assign to keyword '{n}'")));
                }
                self.bump();
                self.bump();
                let value = self.rhs()?;
                out.push(Stmt::Assign {
                    target: Target::Name(n.to_string()),
                    op: aug_op(p),
                    value,
                });
                return Ok(());
            }
        }
        let start = self.toks[self.pos];
        let e = self.expr()?.expr;
        match self.peek() {
            Tok::Punct(p @ (Punct::Assign | Punct::AugAssign(_))) => {
                let target = match e {
                    Expr::Index(n, idx) => Target::Index(n, idx),
                    Expr::Sym(n) => Target::Name(n),
                    _ => {
                        return Err(Self::err_at(
                            &start,
                            "cannot assign to this expression".into(),
                        ));
                    }
                };
                self.bump();
                let value = self.rhs()?;
                out.push(Stmt::Assign {
                    target,
                    op: aug_op(p),
                    value,
                });
            }
            Tok::Punct(Punct::Comma) => {
                let assigns = self.toks[self.pos..]
                    .iter()
                    .take_while(|t| {
                        !matches!(t.kind, Tok::Newline | Tok::Eof | Tok::Punct(Punct::Semi))
                    })
                    .any(|t| t.kind == Tok::Punct(Punct::Assign));
                return Err(self.construct(if assigns { "tuple unpacking" } else { "tuple" }));
            }
            Tok::Punct(Punct::Colon) => return Err(self.construct("annotation or block")),
            _ => out.push(Stmt::Expr(e)),
        }
        Ok(())
    }

    fn rhs(&mut self) -> Result<Expr, PyError> {
        let v = self.expr()?.expr;
        match self.peek() {
            Tok::Punct(Punct::Assign) => Err(self.construct("chained assignment")),
            Tok::Punct(Punct::Comma) => Err(self.construct("tuple")),
            _ => Ok(v),
        }
    }

    // ---------------------------------------------------------------- expressions

    /// `a if c else b`, the lowest-precedence expression (one nesting level:
    /// every parenthesis, subscript and call argument comes through here).
    fn expr(&mut self) -> Result<Tree, PyError> {
        self.nested(Self::conditional)
    }

    fn conditional(&mut self) -> Result<Tree, PyError> {
        if self.is_kw("lambda") {
            return Err(self.construct("'lambda'"));
        }
        let a = self.or_test()?;
        if !self.is_kw("if") {
            return Ok(a);
        }
        self.bump();
        let c = self.or_test()?;
        if !self.is_kw("else") {
            return Err(self.err_here("expected 'else' in conditional expression".into()));
        }
        self.bump();
        let b = self.expr()?;
        let depth = 1 + c.depth.max(a.depth).max(b.depth);
        self.located(node(depth, || {
            Expr::Ternary(Box::new(c.expr), Box::new(a.expr), Box::new(b.expr))
        }))
    }

    fn or_test(&mut self) -> Result<Tree, PyError> {
        let mut a = self.and_test()?;
        while self.is_kw("or") {
            self.bump();
            let b = self.and_test()?;
            a = self.located(bin(BinaryOp::Or, a, b))?;
        }
        Ok(a)
    }

    fn and_test(&mut self) -> Result<Tree, PyError> {
        let mut a = self.not_test()?;
        while self.is_kw("and") {
            self.bump();
            let b = self.not_test()?;
            a = self.located(bin(BinaryOp::And, a, b))?;
        }
        Ok(a)
    }

    fn not_test(&mut self) -> Result<Tree, PyError> {
        if self.is_kw("not") {
            self.bump();
            let a = self.nested(Self::not_test)?;
            return self.located(unary(UnaryOp::Not, a));
        }
        self.comparison()
    }

    fn cmp_op(&self) -> Result<Option<BinaryOp>, PyError> {
        Ok(Some(match self.peek() {
            Tok::Punct(Punct::Eq) => BinaryOp::Eq,
            Tok::Punct(Punct::Ne) => BinaryOp::Ne,
            Tok::Punct(Punct::Lt) => BinaryOp::Lt,
            Tok::Punct(Punct::Le) => BinaryOp::Le,
            Tok::Punct(Punct::Gt) => BinaryOp::Gt,
            Tok::Punct(Punct::Ge) => BinaryOp::Ge,
            Tok::Name("in") => return Err(self.construct("'in' operator")),
            Tok::Name("is") => return Err(self.construct("'is' operator")),
            Tok::Name("not") if self.peek_at(1) == Tok::Name("in") => {
                return Err(self.construct("'not in' operator"));
            }
            _ => return Ok(None),
        }))
    }

    /// Comparisons; chains `a < b < c` become `(a < b) and (b < c)`.
    fn comparison(&mut self) -> Result<Tree, PyError> {
        let mut left = self.binary(0)?;
        let Some(mut op) = self.cmp_op()? else {
            return Ok(left);
        };
        let mut acc: Option<Tree> = None;
        loop {
            self.bump();
            let right = self.binary(0)?;
            let right_copy = Tree {
                expr: right.expr.clone(),
                depth: right.depth,
            };
            let cmp = self.located(bin(op, left, right_copy))?;
            acc = Some(match acc {
                None => cmp,
                Some(a) => self.located(bin(BinaryOp::And, a, cmp))?,
            });
            match self.cmp_op()? {
                Some(n) => {
                    op = n;
                    left = right;
                }
                None => return Ok(acc.expect("one comparison was made")),
            }
        }
    }

    /// Binary operators from `|` up to `*`, by precedence climbing.
    fn binary(&mut self, min_prec: u8) -> Result<Tree, PyError> {
        let mut lhs = self.unary()?;
        loop {
            let (op, prec) = match self.peek() {
                Tok::Punct(Punct::Pipe) => (BinaryOp::BitOr, 1),
                Tok::Punct(Punct::Caret) => (BinaryOp::BitXor, 2),
                Tok::Punct(Punct::Amp) => (BinaryOp::BitAnd, 3),
                Tok::Punct(Punct::Shl) => (BinaryOp::Shl, 4),
                Tok::Punct(Punct::Shr) => (BinaryOp::Shr, 4),
                Tok::Punct(Punct::Plus) => (BinaryOp::Add, 5),
                Tok::Punct(Punct::Minus) => (BinaryOp::Sub, 5),
                Tok::Punct(Punct::Star) => (BinaryOp::Mul, 6),
                Tok::Punct(Punct::Slash) => (BinaryOp::Div, 6),
                Tok::Punct(Punct::DSlash) => (BinaryOp::FloorDiv, 6),
                Tok::Punct(Punct::Percent) => (BinaryOp::Mod, 6),
                Tok::Punct(Punct::At) => return Err(self.construct("matrix multiplication '@'")),
                _ => return Ok(lhs),
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            lhs = self.located(bin(op, lhs, rhs))?;
        }
    }

    /// Unary `-`, `+`, `~` (binding looser than `**` on their right).
    fn unary(&mut self) -> Result<Tree, PyError> {
        match self.peek() {
            Tok::Punct(Punct::Minus) => {
                self.bump();
                // `-9223372036854775808` is representable although its magnitude is not.
                if self.peek() == Tok::Int(1 << 63)
                    && !matches!(
                        self.peek_at(1),
                        Tok::Punct(Punct::DStar | Punct::LParen | Punct::LBracket | Punct::Dot)
                    )
                {
                    self.bump();
                    return Ok(Tree::leaf(Expr::Int(i64::MIN)));
                }
                let a = self.nested(Self::unary)?;
                self.located(negate(a))
            }
            Tok::Punct(Punct::Plus) => {
                self.bump();
                self.nested(Self::unary)
            }
            Tok::Punct(Punct::Tilde) => {
                self.bump();
                let a = self.nested(Self::unary)?;
                self.located(unary(UnaryOp::BitNot, a))
            }
            _ => self.power(),
        }
    }

    /// `base ** exponent` (right-associative; the exponent may carry a unary sign).
    fn power(&mut self) -> Result<Tree, PyError> {
        let base = self.primary()?;
        if self.eat(Punct::DStar) {
            let exp = self.nested(Self::unary)?;
            return self.located(bin(BinaryOp::Pow, base, exp));
        }
        Ok(base)
    }

    /// An atom followed by subscripts.
    fn primary(&mut self) -> Result<Tree, PyError> {
        let mut e = self.atom()?;
        loop {
            match self.peek() {
                Tok::Punct(Punct::LBracket) => {
                    let at = self.bump();
                    let idx = self.subscripts()?;
                    let depth = depth_over(&idx).max(e.depth);
                    let expr = match e.expr {
                        Expr::Sym(n) => Expr::Index(n, exprs(idx)),
                        Expr::Index(n, mut v) => {
                            v.extend(exprs(idx));
                            Expr::Index(n, v)
                        }
                        _ => {
                            return Err(Self::err_at(
                                &at,
                                "subscript of a non-name expression".into(),
                            ));
                        }
                    };
                    e = Tree { expr, depth };
                }
                Tok::Punct(Punct::LParen) => {
                    return Err(self.err_here("call of a non-function expression".into()));
                }
                Tok::Punct(Punct::Dot) => {
                    let func = match self.peek_at(1) {
                        Tok::Name("real") => Func::Real,
                        Tok::Name("imag") => Func::Imag,
                        Tok::Name("conjugate")
                            if self.peek_at(2) == Tok::Punct(Punct::LParen)
                                && self.peek_at(3) == Tok::Punct(Punct::RParen) =>
                        {
                            Func::Conj
                        }
                        _ => return Err(self.construct("attribute access")),
                    };
                    self.bump();
                    self.bump();
                    if func == Func::Conj {
                        self.bump();
                        self.bump();
                    }
                    let (depth, inner) = (e.depth + 1, e.expr);
                    e = self.located(node(depth, move || Expr::Call(func, vec![inner])))?;
                }
                _ => return Ok(e),
            }
        }
    }

    fn subscripts(&mut self) -> Result<Vec<Tree>, PyError> {
        let mut idx = Vec::new();
        loop {
            if self.is_punct(Punct::Colon) {
                return Err(self.construct("slice"));
            }
            idx.push(self.expr()?);
            if self.is_punct(Punct::Colon) {
                return Err(self.construct("slice"));
            }
            if self.eat(Punct::Comma) {
                if self.eat(Punct::RBracket) {
                    return Ok(idx);
                }
                continue;
            }
            self.expect(Punct::RBracket)?;
            return Ok(idx);
        }
    }

    fn atom(&mut self) -> Result<Tree, PyError> {
        let t = self.toks[self.pos];
        match t.kind {
            Tok::Int(v) => {
                self.bump();
                i64::try_from(v)
                    .map(|v| Tree::leaf(Expr::Int(v)))
                    .map_err(|_| Self::err_at(&t, format!("integer literal '{v}' out of range")))
            }
            Tok::Float(v) => {
                self.bump();
                Ok(Tree::leaf(Expr::Float(v)))
            }
            Tok::Imag(v) => {
                self.bump();
                Ok(Tree::leaf(Expr::Call(
                    Func::Complex,
                    vec![Expr::Float(0.0), Expr::Float(v)],
                )))
            }
            Tok::Name(n) => self.name(n),
            Tok::Punct(Punct::LParen) => {
                self.bump();
                if self.is_punct(Punct::RParen) {
                    return Err(self.construct("empty tuple"));
                }
                let e = self.expr()?;
                if self.is_punct(Punct::Comma) {
                    return Err(self.construct("tuple"));
                }
                if self.is_kw("for") {
                    return Err(self.construct("generator expression"));
                }
                self.expect(Punct::RParen)?;
                Ok(e)
            }
            Tok::Str => Err(self.construct("string literal")),
            Tok::Punct(Punct::LBracket) => Err(self.construct("list literal")),
            Tok::Punct(Punct::LBrace) => Err(self.construct("dict/set literal")),
            Tok::Punct(Punct::Star) => Err(self.construct("'*' unpacking")),
            Tok::Punct(Punct::DStar) => Err(self.construct("'**' unpacking")),
            _ => Err(self.unexpected()),
        }
    }

    /// A (possibly dotted) name: constant, symbol, or the callee of a call.
    fn name(&mut self, n: &'a str) -> Result<Tree, PyError> {
        let t = self.bump();
        match n {
            "True" | "true" => return Ok(Tree::leaf(Expr::Bool(true))),
            "False" | "false" => return Ok(Tree::leaf(Expr::Bool(false))),
            "None" | "lambda" | "yield" | "await" => {
                return Err(Self::err_at(
                    &t,
                    format!("unsupported Python construct '{n}'"),
                ));
            }
            _ if KEYWORDS.contains(&n) => {
                return Err(Self::err_at(&t, format!("unexpected token '{n}'")));
            }
            _ => {}
        }
        let (mut last, mut dotted, mut path) = (n, false, String::new());
        if self.is_punct(Punct::Dot) && !MODULES.contains(&n) {
            let attr = match self.peek_at(1) {
                Tok::Name(a) => a,
                _ => "",
            };
            if COMPLEX_ATTRIBUTES.contains(&attr) {
                // `x.real`, `x.imag`, `x.conjugate()`: read by `primary`.
                return Ok(Tree::leaf(Expr::Sym(n.to_string())));
            }
            return Err(self.construct(&format!("attribute access '{n}.{attr}'")));
        }
        while MODULES.contains(&last) && self.is_punct(Punct::Dot) {
            self.bump();
            match self.bump().kind {
                Tok::Name(a) => {
                    last = a;
                    if path.is_empty() {
                        path.push_str(n);
                    }
                    path.push('.');
                    path.push_str(a);
                }
                _ => {
                    return Err(Self::err_at(
                        &self.toks[self.pos - 1],
                        "expected a name after '.'".into(),
                    ));
                }
            }
            dotted = true;
        }
        if self.is_punct(Punct::LParen) {
            return self.call(&t, last);
        }
        Ok(Tree::leaf(match last {
            "nan" | "NaN" => Expr::Float(f64::NAN),
            "inf" | "oo" => Expr::Float(f64::INFINITY),
            "pi" => Expr::Float(std::f64::consts::PI),
            "e" | "E" if dotted => Expr::Float(std::f64::consts::E),
            _ if dotted => return Err(Self::err_at(&t, format!("unknown name '{path}'"))),
            _ => Expr::Sym(last.to_string()),
        }))
    }

    fn call(&mut self, at: &Token<'a>, name: &str) -> Result<Tree, PyError> {
        self.bump(); // (
        let mut args = Vec::new();
        loop {
            if self.eat(Punct::RParen) {
                break;
            }
            match (self.peek(), self.peek_at(1)) {
                (Tok::Punct(Punct::Star), _) => return Err(self.construct("'*args'")),
                (Tok::Punct(Punct::DStar), _) => return Err(self.construct("'**kwargs'")),
                (Tok::Name("dtype"), Tok::Punct(Punct::Assign)) if name == "symbol" => {
                    // `symbol(N, dtype=dace.int64)`: DaCe's typed symbol; the type is not needed here.
                    self.bump();
                    self.bump();
                    // Skip the type (`dace.int64`).
                    while !matches!(
                        self.peek(),
                        Tok::Punct(Punct::Comma) | Tok::Punct(Punct::RParen) | Tok::Eof
                    ) {
                        self.bump();
                    }
                    if !self.eat(Punct::Comma) {
                        self.expect(Punct::RParen)?;
                        break;
                    }
                    continue;
                }
                (Tok::Name(k), Tok::Punct(Punct::Assign)) => {
                    return Err(self.construct(&format!("keyword argument '{k}='")));
                }
                _ => {}
            }
            args.push(self.expr()?);
            if self.is_kw("for") {
                return Err(self.construct("generator expression"));
            }
            if !self.eat(Punct::Comma) {
                self.expect(Punct::RParen)?;
                break;
            }
        }
        if name == "symbol" && args.len() == 1 {
            return match args.pop().map(|t| t.expr) {
                Some(Expr::Sym(s)) => Ok(Tree::leaf(Expr::Sym(s))),
                _ => Err(Self::err_at(
                    at,
                    "symbol(...) must name a symbol".to_string(),
                )),
            };
        }
        resolve_call(name, args).map_err(|m| Self::err_at(at, m))
    }
}

fn aug_op(p: Punct) -> Option<BinaryOp> {
    match p {
        Punct::AugAssign(op) => Some(op),
        _ => None,
    }
}

/// Unary minus, folded into numeric literals.
fn negate(e: Tree) -> Result<Tree, String> {
    match e.expr {
        Expr::Int(v) if v != i64::MIN => Ok(Tree::leaf(Expr::Int(-v))),
        Expr::Float(v) => Ok(Tree::leaf(Expr::Float(-v))),
        expr => unary(UnaryOp::Neg, Tree { expr, ..e }),
    }
}

/// Folds `f(a, b, c)` into `join(join(a, b), c)`, refused past [`MAX_DEPTH`].
fn fold(args: Vec<Tree>, join: impl Fn(Expr, Expr) -> Expr) -> Result<Tree, String> {
    let mut it = args.into_iter();
    let first = it.next().expect("arity checked");
    it.try_fold(first, |acc, a| {
        node(1 + acc.depth.max(a.depth), || join(acc.expr, a.expr))
    })
}

/// Maps a called name (last component of a dotted name) to an expression.
fn resolve_call(name: &str, args: Vec<Tree>) -> Result<Tree, String> {
    let n = args.len();
    let arity = |want: usize| {
        if n == want {
            Ok(())
        } else {
            Err(format!(
                "function '{name}' takes {want} argument{}, got {n}",
                if want == 1 { "" } else { "s" }
            ))
        }
    };
    let at_least = |want: usize| {
        if n >= want {
            Ok(())
        } else {
            Err(format!(
                "function '{name}' takes at least {want} arguments, got {n}"
            ))
        }
    };
    let func = match name {
        "Min" | "min" => {
            at_least(2)?;
            return fold(args, |a, b| Expr::Call(Func::Min, vec![a, b]));
        }
        "Max" | "max" => {
            at_least(2)?;
            return fold(args, |a, b| Expr::Call(Func::Max, vec![a, b]));
        }
        "And" | "Or" => {
            at_least(1)?;
            let op = if name == "And" {
                BinaryOp::And
            } else {
                BinaryOp::Or
            };
            return fold(args, |a, b| Expr::bin(op, a, b));
        }
        "Not" => {
            arity(1)?;
            let a = args.into_iter().next().expect("arity checked");
            return unary(UnaryOp::Not, a);
        }
        "Mod" | "Eq" | "Ne" | "Lt" | "Le" | "Gt" | "Ge" => {
            arity(2)?;
            let op = match name {
                "Mod" => BinaryOp::Mod,
                "Eq" => BinaryOp::Eq,
                "Ne" => BinaryOp::Ne,
                "Lt" => BinaryOp::Lt,
                "Le" => BinaryOp::Le,
                "Gt" => BinaryOp::Gt,
                _ => BinaryOp::Ge,
            };
            let mut it = args.into_iter();
            let (a, b) = (it.next(), it.next());
            return bin(op, a.expect("arity checked"), b.expect("arity checked"));
        }
        "Abs" | "abs" | "fabs" => Func::Abs,
        "floor" => Func::Floor,
        "ceiling" | "ceil" => Func::Ceil,
        "int_floor" => Func::IntFloor,
        "int_ceil" => Func::IntCeil,
        "sqrt" => Func::Sqrt,
        "exp" => Func::Exp,
        "log" => Func::Log,
        "log10" => Func::Log10,
        "log2" => Func::Log2,
        "pow" => Func::Pow,
        "sin" => Func::Sin,
        "cos" => Func::Cos,
        "tan" => Func::Tan,
        "asin" => Func::Asin,
        "acos" => Func::Acos,
        "atan" => Func::Atan,
        "atan2" => Func::Atan2,
        "sinh" => Func::Sinh,
        "cosh" => Func::Cosh,
        "tanh" => Func::Tanh,
        "isnan" => Func::IsNan,
        "isinf" => Func::IsInf,
        "copysign" => Func::CopySign,
        "fmod" => Func::Fmod,
        "real" => Func::Real,
        "imag" => Func::Imag,
        "conj" | "conjugate" => Func::Conj,
        "complex" if n == 1 => Func::Cast(DType::Complex128),
        "complex" => Func::Complex,
        "int" | "int_" => Func::Cast(DType::Int64),
        "float" | "double" | "float_" => Func::Cast(DType::Float64),
        _ => match DType::from_dace_name(name) {
            Some(t) => Func::Cast(t),
            None => return Err(format!("unknown function '{name}'")),
        },
    };
    let want = match func {
        Func::IntFloor
        | Func::IntCeil
        | Func::Pow
        | Func::Atan2
        | Func::CopySign
        | Func::Fmod
        | Func::Complex
        | Func::CMod => 2,
        _ => 1,
    };
    arity(want)?;
    let depth = depth_over(&args);
    node(depth, || Expr::Call(func, exprs(args)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Expr {
        Expr::sym(n)
    }
    fn b(op: BinaryOp, a: Expr, c: Expr) -> Expr {
        Expr::bin(op, a, c)
    }
    fn call(f: Func, a: Vec<Expr>) -> Expr {
        Expr::Call(f, a)
    }
    fn p(src: &str) -> Expr {
        parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }
    fn assign(name: &str, value: Expr) -> Stmt {
        Stmt::Assign {
            target: Target::Name(name.into()),
            op: None,
            value,
        }
    }
    fn code(src: &str) -> Vec<Stmt> {
        parse_code(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }
    fn err(src: &str) -> PyError {
        match parse_code(src) {
            Ok(v) => panic!("{src} parsed: {v:?}"),
            Err(e) => e,
        }
    }

    const SAMPLES: &[&str] = &[
        "N - 1",
        "Max(0, N - 1)",
        "int_ceil(N, 32)",
        "Min(a, b)",
        "floor(x)",
        "Mod(i, 2)",
        "1 + $__out_IDim_range_0",
        "Max(0, 2 + $i_end - $i_start)",
        "N**2",
        "__out = (__in1 + __in2)",
        "__out = (- 1e+300)",
        "__out = dace.float32(0.5)",
        "__out = (__in1 ** dace.float64(3))",
        "__tlet_val = __tlet_field[(__tlet_index_Vertex - __u_vert_Vertex_range_0), ((- __u_vert_K_range_0) + i_K_gtx_vertical)]",
        "__tlet_val = (__tlet_field[(__tlet_index - __cf_Cell_range_0)] if (__tlet_index != (- 1)) else math.nan)",
        "o = abs(a)\ng = a",
        "r2 = (abs((x - y)) if (x > y) else (- abs(y)))\nr3 = (abs(kk) if (kk > 0) else min(kk, (- 7)))",
        "c = (1 if (x or (not y)) else 0)",
        "__out = (not (__tmp6 != __tmp7))",
        "__out = (dace.int64(__in1) & 7)",
        "__tlet_result = math.pow(__tlet_arg0, __tlet_arg1)",
        "__tlet_out = double(1.7976931348623157e+308)",
        "i_K_gtx_vertical = Min(__mass_K_range_0, __p_K_range_0)",
        "(i_K_gtx_vertical < Max(__mass_K_range_1, __p_K_range_1))",
        "(gt_metrics_level >= 10)",
        "ob = (m and (fl > 3))",
        "__out = (__in1 // __in2)",
        "x += 1",
        "1",
        "(t < TSTEPS)",
        "not (i < N)",
    ];

    #[test]
    fn all_samples_parse() {
        for src in SAMPLES {
            code(src);
            if !src.contains('=') || src.contains("==") || src.contains(">=") {
                p(src);
            }
        }
    }

    #[test]
    fn sample_trees() {
        assert_eq!(p("N - 1"), b(BinaryOp::Sub, s("N"), Expr::Int(1)));
        assert_eq!(
            p("Max(0, N - 1)"),
            call(
                Func::Max,
                vec![Expr::Int(0), b(BinaryOp::Sub, s("N"), Expr::Int(1))]
            )
        );
        assert_eq!(p("Mod(i, 2)"), b(BinaryOp::Mod, s("i"), Expr::Int(2)));
        assert_eq!(
            p("1 + $__out_IDim_range_0"),
            b(BinaryOp::Add, Expr::Int(1), s("__out_IDim_range_0"))
        );
        assert_eq!(p("N**2"), b(BinaryOp::Pow, s("N"), Expr::Int(2)));
        assert_eq!(
            code("__out = (- 1e+300)"),
            vec![assign("__out", Expr::Float(-1e300))]
        );
        assert_eq!(
            code("__out = dace.float32(0.5)"),
            vec![assign(
                "__out",
                call(Func::Cast(DType::Float32), vec![Expr::Float(0.5)])
            )]
        );
        assert_eq!(
            code("__tlet_out = double(1.7976931348623157e+308)"),
            vec![assign(
                "__tlet_out",
                call(Func::Cast(DType::Float64), vec![Expr::Float(f64::MAX)])
            )]
        );
        let v = code(SAMPLES[13]);
        assert_eq!(
            v,
            vec![assign(
                "__tlet_val",
                Expr::Index(
                    "__tlet_field".into(),
                    vec![
                        b(
                            BinaryOp::Sub,
                            s("__tlet_index_Vertex"),
                            s("__u_vert_Vertex_range_0")
                        ),
                        b(
                            BinaryOp::Add,
                            Expr::Unary(UnaryOp::Neg, Box::new(s("__u_vert_K_range_0"))),
                            s("i_K_gtx_vertical")
                        ),
                    ]
                )
            )]
        );
        let Stmt::Assign {
            value: Expr::Ternary(c, a, e),
            ..
        } = &code(SAMPLES[14])[0]
        else {
            panic!()
        };
        assert_eq!(**c, b(BinaryOp::Ne, s("__tlet_index"), Expr::Int(-1)));
        assert!(matches!(**a, Expr::Index(ref n, ref i) if n == "__tlet_field" && i.len() == 1));
        assert!(matches!(**e, Expr::Float(v) if v.is_nan()));
        assert_eq!(code("o = abs(a)\ng = a").len(), 2);
        assert_eq!(
            code("x += 1"),
            vec![Stmt::Assign {
                target: Target::Name("x".into()),
                op: Some(BinaryOp::Add),
                value: Expr::Int(1)
            }]
        );
        assert_eq!(code("1"), vec![Stmt::Expr(Expr::Int(1))]);
        assert_eq!(
            p("not (i < N)"),
            Expr::Unary(UnaryOp::Not, Box::new(b(BinaryOp::Lt, s("i"), s("N"))))
        );
        assert_eq!(p("math.pow(a, b)"), call(Func::Pow, vec![s("a"), s("b")]));
        assert_eq!(
            p("dace.int64(x) & 7"),
            b(
                BinaryOp::BitAnd,
                call(Func::Cast(DType::Int64), vec![s("x")]),
                Expr::Int(7)
            )
        );
    }

    #[test]
    fn precedence() {
        let neg = |e| Expr::Unary(UnaryOp::Neg, Box::new(e));
        assert_eq!(p("-x**2"), neg(b(BinaryOp::Pow, s("x"), Expr::Int(2))));
        assert_eq!(p("2**-1"), b(BinaryOp::Pow, Expr::Int(2), Expr::Int(-1)));
        assert_eq!(
            p("a**b**c"),
            b(BinaryOp::Pow, s("a"), b(BinaryOp::Pow, s("b"), s("c")))
        );
        assert_eq!(
            p("a - b - c"),
            b(BinaryOp::Sub, b(BinaryOp::Sub, s("a"), s("b")), s("c"))
        );
        assert_eq!(
            p("a + b * c"),
            b(BinaryOp::Add, s("a"), b(BinaryOp::Mul, s("b"), s("c")))
        );
        assert_eq!(
            p("a | b ^ c & d << 1"),
            b(
                BinaryOp::BitOr,
                s("a"),
                b(
                    BinaryOp::BitXor,
                    s("b"),
                    b(
                        BinaryOp::BitAnd,
                        s("c"),
                        b(BinaryOp::Shl, s("d"), Expr::Int(1))
                    )
                )
            )
        );
        assert_eq!(
            p("a < b < c"),
            b(
                BinaryOp::And,
                b(BinaryOp::Lt, s("a"), s("b")),
                b(BinaryOp::Lt, s("b"), s("c"))
            )
        );
        assert_eq!(
            p("a < b <= c == d"),
            b(
                BinaryOp::And,
                b(
                    BinaryOp::And,
                    b(BinaryOp::Lt, s("a"), s("b")),
                    b(BinaryOp::Le, s("b"), s("c"))
                ),
                b(BinaryOp::Eq, s("c"), s("d"))
            )
        );
        assert_eq!(
            p("not a == b and c or d"),
            b(
                BinaryOp::Or,
                b(
                    BinaryOp::And,
                    Expr::Unary(UnaryOp::Not, Box::new(b(BinaryOp::Eq, s("a"), s("b")))),
                    s("c")
                ),
                s("d")
            )
        );
        assert_eq!(
            p("a if c else b if d else e"),
            Expr::Ternary(
                Box::new(s("c")),
                Box::new(s("a")),
                Box::new(Expr::Ternary(
                    Box::new(s("d")),
                    Box::new(s("b")),
                    Box::new(s("e"))
                ))
            )
        );
        assert_eq!(p("+-+x"), neg(s("x")));
        assert_eq!(p("~x"), Expr::Unary(UnaryOp::BitNot, Box::new(s("x"))));
        assert_eq!(p("-(1)"), Expr::Int(-1));
        assert_eq!(p("- -2.5"), Expr::Float(2.5));
        assert_eq!(p("-9223372036854775808"), Expr::Int(i64::MIN));
        assert_eq!(
            p("a[i][j + 1]"),
            Expr::Index(
                "a".into(),
                vec![s("i"), b(BinaryOp::Add, s("j"), Expr::Int(1))]
            )
        );
        assert_eq!(p("a[i, j,]"), Expr::Index("a".into(), vec![s("i"), s("j")]));
    }

    #[test]
    fn complex_literals_and_attributes() {
        let cplx = |re: f64, im: f64| call(Func::Complex, vec![Expr::Float(re), Expr::Float(im)]);
        assert_eq!(p("1j"), cplx(0.0, 1.0));
        assert_eq!(p("2.5J"), cplx(0.0, 2.5));
        assert_eq!(p("1e-3j"), cplx(0.0, 1e-3));
        assert_eq!(
            p("-1j * x"),
            b(
                BinaryOp::Mul,
                Expr::Unary(UnaryOp::Neg, Box::new(cplx(0.0, 1.0))),
                s("x")
            )
        );
        assert_eq!(p("x.real"), call(Func::Real, vec![s("x")]));
        assert_eq!(
            p("a[i].imag + 1"),
            b(
                BinaryOp::Add,
                call(Func::Imag, vec![Expr::Index("a".into(), vec![s("i")])]),
                Expr::Int(1)
            )
        );
        assert_eq!(p("z.conjugate()"), call(Func::Conj, vec![s("z")]));
        assert_eq!(p("np.conj(z)"), call(Func::Conj, vec![s("z")]));
        assert_eq!(p("numpy.real(z)"), call(Func::Real, vec![s("z")]));
        assert_eq!(p("imag(z)"), call(Func::Imag, vec![s("z")]));
        assert_eq!(
            p("complex(a, b)"),
            call(Func::Complex, vec![s("a"), s("b")])
        );
        assert_eq!(
            p("complex(a)"),
            call(Func::Cast(DType::Complex128), vec![s("a")])
        );
        assert_eq!(
            p("dace.complex64(a)"),
            call(Func::Cast(DType::Complex64), vec![s("a")])
        );
        assert!(parse_expr("x.conjugate").is_err());
        assert!(parse_expr("x.shape").is_err());
    }

    #[test]
    fn literals_names_and_functions() {
        assert_eq!(p("0x10"), Expr::Int(16));
        assert_eq!(p(".5"), Expr::Float(0.5));
        assert_eq!(p("2."), Expr::Float(2.0));
        assert_eq!(p("True"), Expr::Bool(true));
        assert_eq!(p("false"), Expr::Bool(false));
        assert_eq!(p("  $N \n"), s("N"));
        assert_eq!(p("math.inf"), Expr::Float(f64::INFINITY));
        assert_eq!(p("-oo"), Expr::Float(f64::NEG_INFINITY));
        assert_eq!(p("np.pi"), Expr::Float(std::f64::consts::PI));
        assert_eq!(p("math.e"), Expr::Float(std::f64::consts::E));
        assert_eq!(p("E"), s("E"));
        assert!(matches!(p("NaN"), Expr::Float(v) if v.is_nan()));
        assert_eq!(
            p("Min(a, b, c)"),
            call(
                Func::Min,
                vec![call(Func::Min, vec![s("a"), s("b")]), s("c")]
            )
        );
        assert_eq!(
            p("And(a, b, c)"),
            b(BinaryOp::And, b(BinaryOp::And, s("a"), s("b")), s("c"))
        );
        assert_eq!(p("Ge(a, 1)"), b(BinaryOp::Ge, s("a"), Expr::Int(1)));
        assert_eq!(p("Not(a)"), Expr::Unary(UnaryOp::Not, Box::new(s("a"))));
        assert_eq!(p("int(x)"), call(Func::Cast(DType::Int64), vec![s("x")]));
        assert_eq!(
            p("np.float32(x)"),
            call(Func::Cast(DType::Float32), vec![s("x")])
        );
        assert_eq!(p("uint8(x)"), call(Func::Cast(DType::UInt8), vec![s("x")]));
        assert_eq!(
            p("dace.bool_(x)"),
            call(Func::Cast(DType::Bool), vec![s("x")])
        );
        assert_eq!(p("dace.math.exp(x)"), call(Func::Exp, vec![s("x")]));
        assert_eq!(p("cmath.sqrt(x)"), call(Func::Sqrt, vec![s("x")]));
        assert_eq!(p("ceiling(x)"), call(Func::Ceil, vec![s("x")]));
        assert_eq!(p("fabs(x)"), call(Func::Abs, vec![s("x")]));
        for f in [
            "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "isnan", "isinf",
            "log", "log2", "log10",
        ] {
            assert!(
                matches!(p(&format!("{f}(x)")), Expr::Call(_, ref a) if a.len() == 1),
                "{f}"
            );
        }
        for f in ["atan2", "copysign", "fmod", "pow", "int_floor"] {
            assert!(
                matches!(p(&format!("{f}(x, y)")), Expr::Call(_, ref a) if a.len() == 2),
                "{f}"
            );
        }
    }

    #[test]
    fn statements() {
        assert_eq!(
            code("a[i, j] //= 2; pass\n\n# comment\nb = a[i] # trailing\nsqrt(x)"),
            vec![
                Stmt::Assign {
                    target: Target::Index("a".into(), vec![s("i"), s("j")]),
                    op: Some(BinaryOp::FloorDiv),
                    value: Expr::Int(2)
                },
                assign("b", Expr::Index("a".into(), vec![s("i")])),
                Stmt::Expr(call(Func::Sqrt, vec![s("x")])),
            ]
        );
        assert_eq!(code("").len(), 0);
        assert_eq!(code("x = (a +\n   b)").len(), 1);
        for (op, src) in [
            (BinaryOp::Sub, "x -= 1"),
            (BinaryOp::Mul, "x *= 1"),
            (BinaryOp::Div, "x /= 1"),
            (BinaryOp::Mod, "x %= 1"),
            (BinaryOp::Pow, "x **= 1"),
            (BinaryOp::BitAnd, "x &= 1"),
            (BinaryOp::BitOr, "x |= 1"),
            (BinaryOp::BitXor, "x ^= 1"),
            (BinaryOp::Shl, "x <<= 1"),
            (BinaryOp::Shr, "x >>= 1"),
        ] {
            assert!(
                matches!(code(src)[0], Stmt::Assign { op: Some(o), .. } if o == op),
                "{src}"
            );
        }
        // A name that is a constant elsewhere can still be assigned.
        assert_eq!(code("pi = 3"), vec![assign("pi", Expr::Int(3))]);
    }

    #[test]
    fn errors_name_the_construct() {
        let cases = [
            ("for i in x:\n  pass", "'for' statement", 1),
            ("x = 1\nif x:\n  y = 2", "'if' statement", 2),
            ("while x: pass", "'while' statement", 1),
            ("def f(): pass", "'def' statement", 1),
            ("import math", "'import' statement", 1),
            ("return x", "'return' statement", 1),
            ("with a: pass", "'with' statement", 1),
            ("class A: pass", "'class' statement", 1),
            ("f = lambda x: x", "'lambda'", 1),
            ("a, b = 1, 2", "tuple unpacking", 1),
            ("x = a[1:2]", "slice", 1),
            ("x = foo(1)", "unknown function 'foo'", 1),
            ("x = f(a=1)", "keyword argument 'a='", 1),
            ("x = f(*a)", "'*args'", 1),
            ("x = 'abc'", "string literal", 1),
            ("x = [1, 2]", "list literal", 1),
            ("x = {1: 2}", "dict/set literal", 1),
            ("x = a.b", "attribute access 'a.b'", 1),
            ("x = np.float64", "unknown name 'np.float64'", 1),
            ("x = math.floor", "unknown name 'math.floor'", 1),
            ("x = a[i](x)", "call of a non-function", 1),
            ("x = (1, 2)", "tuple", 1),
            ("x = 99999999999999999999", "out of range", 1),
            ("x = 9223372036854775808", "out of range", 1),
            ("x = (a + b))", "unexpected token ')'", 1),
            ("x = Max(a)", "at least 2", 1),
            ("x = int(a, b)", "takes 1 argument", 1),
            ("x = pow(a)", "takes 2 arguments", 1),
            ("x = a in b", "'in' operator", 1),
            ("x = y = 1", "chained assignment", 1),
            ("x = None", "'None'", 1),
            ("x = f(a)(b)", "unknown function 'f'", 1),
            ("x = (a)(b)", "call of a non-function", 1),
            ("x = 1 +", "unexpected end", 1),
            ("x = a if b", "expected 'else'", 1),
        ];
        for (src, msg, line) in cases {
            let e = err(src);
            assert!(e.message.contains(msg), "{src}: got '{}'", e.message);
            assert_eq!(e.line, line, "{src}: {e}");
        }
        let e = err("x = (a + b))");
        assert_eq!((e.line, e.col), (1, 12));
        assert_eq!(e.to_string(), "line 1, column 12: unexpected token ')'");
        let e = err("x = 1\ny = foo(2)");
        assert_eq!(
            (e.line, e.col, e.message.as_str()),
            (2, 5, "unknown function 'foo'")
        );
        assert!(parse_expr("x = 1").is_err());
        assert!(parse_expr("").is_err());
    }

    // ------------------------------------------------------------ resource limits

    /// `prefix * n + core + suffix * n`.
    fn nest(prefix: &str, core: &str, suffix: &str, n: usize) -> String {
        format!("{}{core}{}", prefix.repeat(n), suffix.repeat(n))
    }

    /// `a op a op ... op a` with `n` terms.
    fn chain(op: &str, n: usize) -> String {
        vec!["a"; n].join(op)
    }

    /// Both parsers refuse `src` with a limit error.
    fn assert_refused(src: &str) {
        let what = &src[..src.len().min(40)];
        let mut results = vec![parse_code(src).map(|_| ())];
        if !src.contains(" = ") {
            results.push(parse_expr(src).map(|_| ()));
        }
        let nested = format!("nested deeper than {MAX_NESTING} levels");
        let deep = format!("tree deeper than {MAX_DEPTH} levels");
        for r in results {
            match r {
                Ok(()) => panic!("{what}...: parsed"),
                Err(e) => assert!(
                    e.message.contains(&nested) || e.message.contains(&deep),
                    "{what}...: {e}"
                ),
            }
        }
    }

    /// Adversarial inputs 100,000 levels deep (or long) are refused with an
    /// error naming the limit, not a stack overflow (unit tests run on
    /// threads with a 2 MiB stack).
    #[test]
    fn deep_inputs_are_refused() {
        const N: usize = 100_000;
        let cases = [
            nest("(", "a", ")", N),
            nest("-(", "a", ")", N),
            nest("a+(", "a", ")", N),
            nest("f(", "a", ")", N),
            nest("sqrt(", "a", ")", N),
            nest("a[", "i", "]", N),
            nest("-", "a", "", N),
            nest("~", "a", "", N),
            nest("+", "a", "", N),
            nest("not ", "a", "", N),
            nest("a if c else ", "b", "", N),
            nest("Min(a, ", "b", ")", N),
            chain("+", N),
            chain("-", N),
            chain(" * ", N),
            chain(" and ", N),
            chain(" or ", N),
            chain(" < ", N),
            chain("**", N),
            format!("Min({})", chain(", ", N)),
            format!("Max({})", chain(", ", N)),
            format!("And({})", chain(", ", N)),
            format!("x = {}", chain("+", N)),
            format!("x[{}] = 1", chain("+", N)),
        ];
        for src in &cases {
            assert_refused(src);
        }
        // Wide but shallow is fine.
        let wide = format!("a[{}]", chain(", ", N));
        assert!(matches!(parse_expr(&wide), Ok(Expr::Index(_, ref v)) if v.len() == N));
        let many = vec!["x = a + b"; N].join("\n");
        assert_eq!(code(&many).len(), N);
    }

    /// The deepest inputs the parser accepts, one for each way of building
    /// depth, and the input one level past each.
    fn at_the_limit() -> Vec<(String, String)> {
        let (d, n) = (MAX_DEPTH, MAX_NESTING);
        // Chain length per level for nested chains of depth at most d.
        let k = (d - 1) / (n - 1);
        vec![
            // Tree depth: a left-deep chain of d - 1 operators has depth d.
            (chain("+", d), chain("+", d + 1)),
            (chain(" - ", d), chain(" - ", d + 1)),
            (chain("*", d), chain("*", d + 1)),
            (chain(" and ", d), chain(" and ", d + 1)),
            (
                format!("Min({})", chain(", ", d)),
                format!("Min({})", chain(", ", d + 1)),
            ),
            // Nested chains add up when the parenthesis is the left operand:
            // (((a)+a+a)+a+a) has depth 1 + 2 * 2.
            (
                nest("(", "a", &format!("){}", "+a".repeat(k)), n - 1),
                nest("(", "a", &format!("){}", "+a".repeat(k + 1)), n - 1),
            ),
            // Syntactic nesting: one level per parenthesis (the outermost
            // expression is the first) ...
            (nest("(", "a", ")", n - 1), nest("(", "a", ")", n)),
            (nest("a+(", "a", ")", n - 1), nest("a+(", "a", ")", n)),
            (nest("-", "a", "", n - 1), nest("-", "a", "", n)),
            // ... and two per `-(`: the prefix and the parenthesis.
            (nest("-(", "a", ")", n / 2 - 1), nest("-(", "a", ")", n / 2)),
        ]
    }

    #[test]
    fn limit_is_exact() {
        for (ok, bad) in at_the_limit() {
            let e = parse_expr(&ok).unwrap_or_else(|e| panic!("{}...: {e}", &ok[..40]));
            assert!(tree_depth(&e) <= MAX_DEPTH);
            assert_refused(&bad);
        }
        // The error points at the token where the limit was passed.
        let e = parse_expr(&chain("+", MAX_DEPTH + 1)).unwrap_err();
        assert_eq!((e.line, e.col), (1, 2 * MAX_DEPTH + 2));
        let e = parse_expr(&nest("(", "a", ")", MAX_NESTING)).unwrap_err();
        assert_eq!((e.line, e.col), (1, MAX_NESTING + 1));
    }

    /// Every later pass recurses over trees: the deepest accepted ones must
    /// go through the simplifier and the C++ printer on a 2 MiB stack.
    #[test]
    fn accepted_trees_survive_later_passes() {
        for (ok, _) in at_the_limit() {
            let e = parse_expr(&ok).unwrap();
            let s = crate::ir::simplify::simplify(&e);
            assert!(!crate::back::cexpr::to_cpp(&e).is_empty());
            assert!(!crate::back::cexpr::to_cpp(&s).is_empty());
            let _ = crate::ir::simplify::free_symbols(&e);
            assert_eq!(e.clone(), e);
        }
    }

    /// Depth of a tree (a leaf is 1), without recursion.
    fn tree_depth(e: &Expr) -> usize {
        let mut max = 0;
        let mut stack = vec![(e, 1)];
        while let Some((e, d)) = stack.pop() {
            max = max.max(d);
            match e {
                Expr::Unary(_, a) => stack.push((a, d + 1)),
                Expr::Binary(_, a, b) => stack.extend([(&**a, d + 1), (&**b, d + 1)]),
                Expr::Ternary(c, a, b) => {
                    stack.extend([(&**c, d + 1), (&**a, d + 1), (&**b, d + 1)])
                }
                Expr::Call(_, v) | Expr::Index(_, v) => stack.extend(v.iter().map(|x| (x, d + 1))),
                _ => {}
            }
        }
        max
    }
}
