//! `calc`: a toolhost tool module with one tool, `evaluate`, that evaluates
//! arithmetic expressions.
//!
//! The evaluator is a hand-written recursive-descent parser that computes as
//! it parses. Expressions are limited in length ([`MAX_LENGTH`]) and nesting
//! depth ([`MAX_DEPTH`]), so no input can exhaust the stack, and every bad
//! input is an [`EvalError`] rather than a panic.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;

/// The longest expression accepted, in characters.
pub const MAX_LENGTH: usize = 10_000;

/// The deepest nesting accepted: parentheses, function calls, unary signs
/// and powers each count one level.
pub const MAX_DEPTH: usize = 256;

/// Evaluates an arithmetic expression and returns the number.
///
/// Operators, from loosest to tightest binding: `+ -`; `* / %`; unary `- +`;
/// `^` (power, right-associative: 2^3^2 = 2^9; binds tighter than unary
/// minus: -2^2 = -4). Also `**` for power and `×`, `÷`, `−`. Parentheses group.
/// Numbers: 42, 3.14, .5, 1.5e3, 2E-4. Constants: pi, e, tau. Functions:
/// sqrt, abs, min(a, ...), max(a, ...), round(x) or round(x, digits), floor,
/// ceil, trunc, exp, ln, log10, log2, log(x, base), sin, cos, tan, asin,
/// acos, atan, atan2(y, x), pow(x, y), hypot(x, y). Angles are in radians.
/// `%` is the remainder with the sign of the dividend (-7 % 3 = -1).
/// Numbers are 64-bit floats (about 16 significant digits).
pub fn eval(expression: &str) -> Result<f64, EvalError> {
    let length = expression.chars().count();
    if length > MAX_LENGTH {
        return Err(EvalError::TooLong { length });
    }
    let tokens = lex(expression)?;
    let mut parser = Parser {
        tokens: &tokens,
        next: 0,
        depth: 0,
        math_error: None,
    };
    let value = parser.expression().map_err(|e| *e)?;
    let token = parser.peek();
    if token.kind != Kind::End {
        return Err(*syntax(token, "an operator or the end of the expression"));
    }
    // Syntax errors are reported first; then the first arithmetic error.
    if let Some(error) = parser.math_error {
        return Err(error);
    }
    if !value.is_finite() {
        // Unreachable in practice: every operation checks its result.
        return Err(EvalError::TooLarge {
            what: "the expression".into(),
            position: 1,
        });
    }
    Ok(value)
}

/// Formats a result: integers without a fractional part ("14"), other
/// numbers in the shortest form that reads back as the same float
/// ("0.30000000000000004"), and very large or small magnitudes in exponent
/// notation ("1e300", "1.5e-10").
pub fn format_number(value: f64) -> String {
    if value == 0.0 {
        return "0".into(); // also turns -0 into 0
    }
    let magnitude = value.abs();
    if !(1e-7..1e16).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalError {
    /// The expression is empty or only whitespace.
    Empty,
    /// The expression is longer than [`MAX_LENGTH`] characters.
    TooLong {
        /// Its length in characters.
        length: usize,
    },
    /// The expression nests deeper than [`MAX_DEPTH`].
    TooDeep {
        /// Where the limit was reached (1-based character position).
        position: usize,
    },
    /// The text does not follow the grammar.
    Syntax {
        /// 1-based character position of the offending token.
        position: usize,
        /// What the parser expected there.
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// A number literal that does not fit in a 64-bit float.
    NumberTooLarge {
        /// The literal.
        text: String,
        /// Its 1-based position.
        position: usize,
    },
    /// A name that is neither a constant nor a function.
    UnknownName {
        /// The name.
        name: String,
        /// Its 1-based position.
        position: usize,
        /// Whether it was called like a function.
        called: bool,
    },
    /// A function named without its argument list, or a constant called.
    Misused {
        /// Explanation.
        message: String,
        /// 1-based position of the name.
        position: usize,
    },
    /// A function called with the wrong number of arguments.
    Arity {
        /// The function.
        function: &'static str,
        /// What it takes, e.g. "1 argument".
        takes: &'static str,
        /// How many it got.
        got: usize,
        /// 1-based position of the function name.
        position: usize,
    },
    /// Division by zero.
    DivisionByZero {
        /// 1-based position of the operator or function.
        position: usize,
    },
    /// Remainder (`%`) with divisor zero.
    ModuloByZero {
        /// 1-based position of the `%`.
        position: usize,
    },
    /// An argument outside a function's domain, or a result that is not a
    /// real number.
    NotReal {
        /// What was computed, e.g. "sqrt(-1)".
        what: String,
        /// 1-based position of the operator or function.
        position: usize,
    },
    /// A result too large for a 64-bit float.
    TooLarge {
        /// What overflowed.
        what: String,
        /// 1-based position of the operator or function.
        position: usize,
    },
    /// Any other invalid argument.
    InvalidArgument {
        /// Explanation.
        message: String,
        /// 1-based position of the function name.
        position: usize,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Empty => write!(f, "the expression is empty"),
            EvalError::TooLong { length } => write!(
                f,
                "the expression is too long: {length} characters (the limit is {MAX_LENGTH})"
            ),
            EvalError::TooDeep { position } => write!(
                f,
                "the expression is nested too deeply at position {position} (the limit is {MAX_DEPTH} levels)"
            ),
            EvalError::Syntax {
                position,
                expected,
                found,
            } => write!(
                f,
                "syntax error at position {position}: expected {expected}, found {found}"
            ),
            EvalError::NumberTooLarge { text, position } => {
                write!(f, "the number '{text}' at position {position} is too large")
            }
            EvalError::UnknownName {
                name,
                position,
                called: true,
            } => write!(
                f,
                "unknown function '{name}' at position {position} (functions: {})",
                function_names()
            ),
            EvalError::UnknownName {
                name,
                position,
                called: false,
            } => write!(
                f,
                "unknown name '{name}' at position {position} (constants: pi, e, tau; functions need parentheses, e.g. sqrt(2))"
            ),
            EvalError::Misused { message, position } => {
                write!(f, "{message} (at position {position})")
            }
            EvalError::Arity {
                function,
                takes,
                got,
                position,
            } => write!(
                f,
                "{function} takes {takes}, got {got} (at position {position})"
            ),
            EvalError::DivisionByZero { position } => {
                write!(f, "division by zero at position {position}")
            }
            EvalError::ModuloByZero { position } => {
                write!(f, "modulo by zero at position {position}")
            }
            EvalError::NotReal { what, position } => write!(
                f,
                "result is not a real number: {what} (at position {position})"
            ),
            EvalError::TooLarge { what, position } => write!(
                f,
                "result is too large: {what} overflows a 64-bit float (at position {position})"
            ),
            EvalError::InvalidArgument { message, position } => {
                write!(f, "{message} (at position {position})")
            }
        }
    }
}

impl std::error::Error for EvalError {}

// ---------------------------------------------------------------- lexer

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Number(f64),
    Name,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    LParen,
    RParen,
    Comma,
    End,
}

/// A token: small and `Copy`, to keep the parser's stack frames small.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind,
    /// 1-based character position.
    position: usize,
    /// The source text of the token ("" for End).
    text: &'a str,
}

impl Token<'_> {
    fn describe(&self) -> String {
        match self.kind {
            Kind::End => "the end of the expression".into(),
            Kind::Number(_) => format!("the number '{}'", self.text),
            Kind::Name => format!("'{}'", self.text),
            _ => format!("'{}'", self.text),
        }
    }
}

fn lex(source: &str) -> Result<Vec<Token<'_>>, EvalError> {
    let indices: Vec<(usize, char)> = source.char_indices().collect();
    let chars: Vec<char> = indices.iter().map(|&(_, c)| c).collect();
    // The source text of characters start..end.
    let slice = |start: usize, end: usize| {
        let byte = |k: usize| indices.get(k).map_or(source.len(), |&(b, _)| b);
        &source[byte(start)..byte(end)]
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let position = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i < chars.len() && chars[i] == '.' {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if slice(start, i) == "." {
                return Err(EvalError::Syntax {
                    position,
                    expected: "a digit before or after '.'".into(),
                    found: "'.' alone".into(),
                });
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    while j < chars.len() && chars[j].is_ascii_digit() {
                        j += 1;
                    }
                    i = j;
                } else {
                    let found = match chars.get(j) {
                        Some(c) => format!("'{c}'"),
                        None => "the end of the expression".into(),
                    };
                    return Err(EvalError::Syntax {
                        position: j + 1,
                        expected: format!(
                            "digits after the exponent '{}' of the number starting at position {position}",
                            chars[i]
                        ),
                        found,
                    });
                }
            }
            if i < chars.len() && chars[i] == '.' {
                return Err(EvalError::Syntax {
                    position: i + 1,
                    expected: "an operator or the end of the expression".into(),
                    found: "a second '.' in a number".into(),
                });
            }
            let text = slice(start, i);
            let value: f64 = text.parse().map_err(|_| EvalError::Syntax {
                position,
                expected: "a number".into(),
                found: format!("'{text}'"),
            })?;
            if !value.is_finite() {
                return Err(EvalError::NumberTooLarge {
                    text: text.into(),
                    position,
                });
            }
            tokens.push(Token {
                kind: Kind::Number(value),
                position,
                text,
            });
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token {
                kind: Kind::Name,
                position,
                text: slice(start, i),
            });
            continue;
        }
        let (kind, len) = match c {
            '+' => (Kind::Plus, 1),
            '-' | '−' => (Kind::Minus, 1),
            '*' if chars.get(i + 1) == Some(&'*') => (Kind::Caret, 2),
            '*' | '×' => (Kind::Star, 1),
            '/' | '÷' => (Kind::Slash, 1),
            '%' => (Kind::Percent, 1),
            '^' => (Kind::Caret, 1),
            '(' => (Kind::LParen, 1),
            ')' => (Kind::RParen, 1),
            ',' => (Kind::Comma, 1),
            _ => {
                return Err(EvalError::Syntax {
                    position,
                    expected: "a number, an operator, a name or a parenthesis".into(),
                    found: format!("'{}'", c.escape_debug()),
                });
            }
        };
        tokens.push(Token {
            kind,
            position,
            text: slice(i, i + len),
        });
        i += len;
    }
    if tokens.is_empty() {
        return Err(EvalError::Empty);
    }
    tokens.push(Token {
        kind: Kind::End,
        position: chars.len() + 1,
        text: "",
    });
    Ok(tokens)
}

fn syntax(token: Token<'_>, expected: &str) -> Box<EvalError> {
    Box::new(EvalError::Syntax {
        position: token.position,
        expected: expected.into(),
        found: token.describe(),
    })
}

/// Parser results; the error is boxed to keep stack frames small.
type Parsed<T> = Result<T, Box<EvalError>>;

// ---------------------------------------------------------------- parser

/// Computes while parsing. Arithmetic errors are recorded (the first one
/// wins) and parsing goes on, so that syntax errors anywhere take priority.
struct Parser<'a> {
    tokens: &'a [Token<'a>],
    next: usize,
    depth: usize,
    math_error: Option<EvalError>,
}

const OPERAND: &str = "a number, '(' or a function name";

impl<'a> Parser<'a> {
    fn peek(&self) -> Token<'a> {
        // `lex` always ends the list with End, and `advance` never passes it.
        self.tokens[self.next.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token<'a> {
        let token = self.peek();
        if token.kind != Kind::End {
            self.next += 1;
        }
        token
    }

    fn fail(&mut self, error: EvalError) -> f64 {
        if self.math_error.is_none() {
            self.math_error = Some(error);
        }
        f64::NAN
    }

    /// Checks an operation's result: NaN is "not a real number", infinity
    /// (from finite operands) is "too large".
    fn check(&mut self, value: f64, what: impl FnOnce() -> String, position: usize) -> f64 {
        if value.is_nan() {
            self.fail(EvalError::NotReal {
                what: what(),
                position,
            })
        } else if value.is_infinite() {
            self.fail(EvalError::TooLarge {
                what: what(),
                position,
            })
        } else {
            value
        }
    }

    /// expression := term (('+' | '-') term)*
    fn expression(&mut self) -> Parsed<f64> {
        let mut value = self.term()?;
        loop {
            let op = self.peek();
            let add = match op.kind {
                Kind::Plus => true,
                Kind::Minus => false,
                _ => return Ok(value),
            };
            self.advance();
            let rhs = self.term()?;
            let result = if add { value + rhs } else { value - rhs };
            value = self.check(
                result,
                || {
                    format!(
                        "{} {} {}",
                        format_number(value),
                        op.text,
                        format_number(rhs)
                    )
                },
                op.position,
            );
        }
    }

    /// term := unary (('*' | '/' | '%') unary)*
    fn term(&mut self) -> Parsed<f64> {
        let mut value = self.unary()?;
        loop {
            let op = self.peek();
            if !matches!(op.kind, Kind::Star | Kind::Slash | Kind::Percent) {
                return Ok(value);
            }
            self.advance();
            let rhs = self.unary()?;
            let what = || {
                format!(
                    "{} {} {}",
                    format_number(value),
                    op.text,
                    format_number(rhs)
                )
            };
            value = match op.kind {
                Kind::Star => self.check(value * rhs, what, op.position),
                Kind::Slash if rhs == 0.0 => self.fail(EvalError::DivisionByZero {
                    position: op.position,
                }),
                Kind::Slash => self.check(value / rhs, what, op.position),
                _ if rhs == 0.0 => self.fail(EvalError::ModuloByZero {
                    position: op.position,
                }),
                _ => self.check(value % rhs, what, op.position),
            };
        }
    }

    /// unary := ('-' | '+') unary | power
    fn unary(&mut self) -> Parsed<f64> {
        let token = self.peek();
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Box::new(EvalError::TooDeep {
                position: token.position,
            }));
        }
        let result = match token.kind {
            Kind::Minus => {
                self.advance();
                self.unary().map(|v| -v)
            }
            Kind::Plus => {
                self.advance();
                self.unary()
            }
            _ => self.power(),
        };
        self.depth -= 1;
        result
    }

    /// power := primary ('^' unary)?    (right-associative via unary)
    fn power(&mut self) -> Parsed<f64> {
        let base = self.primary()?;
        let op = self.peek();
        if op.kind != Kind::Caret {
            return Ok(base);
        }
        self.advance();
        let exponent = self.unary()?;
        Ok(self.pow(base, exponent, op.position))
    }

    #[inline(never)] // not on the recursion path: keep its locals off it
    fn pow(&mut self, base: f64, exponent: f64, position: usize) -> f64 {
        if base == 0.0 && exponent < 0.0 {
            return self.fail(EvalError::DivisionByZero { position });
        }
        if base < 0.0 && exponent.fract() != 0.0 && exponent.is_finite() {
            return self.fail(EvalError::NotReal {
                what: format!(
                    "({}) ^ {} raises a negative number to a fractional power",
                    format_number(base),
                    format_number(exponent)
                ),
                position,
            });
        }
        self.check(
            base.powf(exponent),
            || format!("{} ^ {}", format_number(base), format_number(exponent)),
            position,
        )
    }

    /// primary := number | name | name '(' arguments ')' | '(' expression ')'
    fn primary(&mut self) -> Parsed<f64> {
        let token = self.advance();
        match token.kind {
            Kind::Number(value) => Ok(value),
            Kind::LParen => {
                let value = self.expression()?;
                let close = self.peek();
                if close.kind != Kind::RParen {
                    return Err(syntax(close, "an operator or ')'"));
                }
                self.advance();
                Ok(value)
            }
            Kind::Name => {
                let name = token.text.to_lowercase();
                if self.peek().kind == Kind::LParen {
                    let open = self.advance();
                    let Some(function) = lookup(&name) else {
                        if constant(&name).is_some() {
                            return Err(Box::new(EvalError::Misused {
                                message: format!(
                                    "'{}' is a constant, not a function; to multiply write {} * (...)",
                                    token.text, token.text
                                ),
                                position: token.position,
                            }));
                        }
                        return Err(Box::new(EvalError::UnknownName {
                            name: token.text.into(),
                            position: token.position,
                            called: true,
                        }));
                    };
                    let args = self.arguments(open)?;
                    Ok(self.call(function, &args, token.position))
                } else if let Some(value) = constant(&name) {
                    Ok(value)
                } else if lookup(&name).is_some() {
                    Err(Box::new(EvalError::Misused {
                        message: format!(
                            "'{}' is a function: call it with parentheses, e.g. {}(2)",
                            token.text, name
                        ),
                        position: token.position,
                    }))
                } else {
                    Err(Box::new(EvalError::UnknownName {
                        name: token.text.into(),
                        position: token.position,
                        called: false,
                    }))
                }
            }
            _ => Err(syntax(token, OPERAND)),
        }
    }

    /// arguments := (expression (',' expression)*)? ')'   after the '('
    fn arguments(&mut self, open: Token<'_>) -> Parsed<Vec<f64>> {
        let mut args = Vec::new();
        if self.peek().kind == Kind::RParen {
            self.advance();
            return Ok(args);
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Box::new(EvalError::TooDeep {
                position: open.position,
            }));
        }
        loop {
            args.push(self.expression()?);
            let token = self.peek();
            match token.kind {
                Kind::Comma => {
                    self.advance();
                }
                Kind::RParen => {
                    self.advance();
                    break;
                }
                _ => return Err(syntax(token, "an operator, ',' or ')'")),
            }
        }
        self.depth -= 1;
        Ok(args)
    }

    #[inline(never)] // not on the recursion path: keep its locals off it
    fn call(&mut self, function: Function, args: &[f64], position: usize) -> f64 {
        let name = function.name;
        let arity_ok = match function.arity {
            Arity::Exactly(n) => args.len() == n,
            Arity::AtLeastOne => !args.is_empty(),
            Arity::OneOrTwo => args.len() == 1 || args.len() == 2,
        };
        if !arity_ok {
            let takes = match function.arity {
                Arity::Exactly(1) => "1 argument",
                Arity::Exactly(_) => "2 arguments",
                Arity::AtLeastOne => "at least 1 argument",
                Arity::OneOrTwo => "1 or 2 arguments (x, digits)",
            };
            let takes = if name == "log" {
                "2 arguments (x, base); use ln(x) for the natural logarithm or log10(x)"
            } else {
                takes
            };
            return self.fail(EvalError::Arity {
                function: name,
                takes,
                got: args.len(),
                position,
            });
        }
        let shown = || {
            let list: Vec<String> = args.iter().map(|&a| format_number(a)).collect();
            format!("{name}({})", list.join(", "))
        };
        let x = args[0];
        let y = args.get(1).copied().unwrap_or(f64::NAN);
        let not_real = |this: &mut Self, why: &str| {
            this.fail(EvalError::NotReal {
                what: format!("{} {why}", shown()),
                position,
            })
        };
        let value = match name {
            "sqrt" if x < 0.0 => {
                return not_real(self, "takes the square root of a negative number");
            }
            "ln" | "log10" | "log2" if x <= 0.0 => {
                return not_real(self, "takes the logarithm of a number that is not positive");
            }
            "log" if x <= 0.0 || y <= 0.0 || y == 1.0 => {
                return not_real(self, "needs x > 0 and a base that is positive and not 1");
            }
            "asin" | "acos" if !(-1.0..=1.0).contains(&x) => {
                return not_real(self, "needs an argument from -1 to 1");
            }
            "pow" => return self.pow(x, y, position),
            "sqrt" => x.sqrt(),
            "abs" => x.abs(),
            "min" => args.iter().copied().fold(f64::INFINITY, f64::min),
            "max" => args.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            "round" if args.len() == 2 => return self.round_to(x, y, position),
            "round" => x.round(),
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            "trunc" => x.trunc(),
            "exp" => x.exp(),
            "ln" => x.ln(),
            "log10" => x.log10(),
            "log2" => x.log2(),
            "log" => x.ln() / y.ln(),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "atan2" => x.atan2(y),
            "hypot" => x.hypot(y),
            _ => f64::NAN, // every name in FUNCTIONS is handled above
        };
        self.check(value, shown, position)
    }

    #[inline(never)] // not on the recursion path: keep its locals off it
    fn round_to(&mut self, x: f64, digits: f64, position: usize) -> f64 {
        if digits.fract() != 0.0 || !(-15.0..=15.0).contains(&digits) {
            return self.fail(EvalError::InvalidArgument {
                message: format!(
                    "round(x, digits) needs a whole number of digits from -15 to 15, got {}",
                    format_number(digits)
                ),
                position,
            });
        }
        let scale = 10f64.powi(digits as i32);
        let scaled = x * scale;
        if !scaled.is_finite() {
            return x; // already more precise than a float can show
        }
        let rounded = scaled.round() / scale;
        self.check(
            rounded,
            || format!("round({}, {})", format_number(x), format_number(digits)),
            position,
        )
    }
}

// ---------------------------------------------------------------- names

#[derive(Debug, Clone, Copy)]
enum Arity {
    Exactly(usize),
    AtLeastOne,
    OneOrTwo,
}

#[derive(Debug, Clone, Copy)]
struct Function {
    name: &'static str,
    arity: Arity,
}

const FUNCTIONS: &[Function] = &{
    use Arity::*;
    [
        Function {
            name: "sqrt",
            arity: Exactly(1),
        },
        Function {
            name: "abs",
            arity: Exactly(1),
        },
        Function {
            name: "min",
            arity: AtLeastOne,
        },
        Function {
            name: "max",
            arity: AtLeastOne,
        },
        Function {
            name: "round",
            arity: OneOrTwo,
        },
        Function {
            name: "floor",
            arity: Exactly(1),
        },
        Function {
            name: "ceil",
            arity: Exactly(1),
        },
        Function {
            name: "trunc",
            arity: Exactly(1),
        },
        Function {
            name: "exp",
            arity: Exactly(1),
        },
        Function {
            name: "ln",
            arity: Exactly(1),
        },
        Function {
            name: "log10",
            arity: Exactly(1),
        },
        Function {
            name: "log2",
            arity: Exactly(1),
        },
        Function {
            name: "log",
            arity: Exactly(2),
        },
        Function {
            name: "sin",
            arity: Exactly(1),
        },
        Function {
            name: "cos",
            arity: Exactly(1),
        },
        Function {
            name: "tan",
            arity: Exactly(1),
        },
        Function {
            name: "asin",
            arity: Exactly(1),
        },
        Function {
            name: "acos",
            arity: Exactly(1),
        },
        Function {
            name: "atan",
            arity: Exactly(1),
        },
        Function {
            name: "atan2",
            arity: Exactly(2),
        },
        Function {
            name: "pow",
            arity: Exactly(2),
        },
        Function {
            name: "hypot",
            arity: Exactly(2),
        },
    ]
};

fn function_names() -> String {
    let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
    names.join(", ")
}

fn lookup(name: &str) -> Option<Function> {
    FUNCTIONS.iter().copied().find(|f| f.name == name)
}

fn constant(name: &str) -> Option<f64> {
    match name {
        "pi" | "π" => Some(std::f64::consts::PI),
        "e" => Some(std::f64::consts::E),
        "tau" | "τ" => Some(std::f64::consts::TAU),
        _ => None,
    }
}

// ---------------------------------------------------------------- the tool

/// Evaluates an arithmetic expression exactly as written and returns the
/// number (e.g. "14", "0.30000000000000004", "1.5e-10"). Operators: + - * /
/// % (remainder, sign of the dividend) and ^ or ** (power, right-associative,
/// binds tighter than unary minus: -2^2 = -4); parentheses; unary - and +.
/// Numbers: 42, 3.14, .5, 1.5e3. Constants: pi, e, tau. Functions: sqrt,
/// abs, min(a, b, ...), max(a, b, ...), round(x) or round(x, digits), floor,
/// ceil, trunc, exp, ln (natural log), log10, log2, log(x, base), sin, cos,
/// tan, asin, acos, atan, atan2(y, x), pow(x, y), hypot(x, y); angles in
/// radians. No variables, no implicit multiplication (write 2*pi, not 2pi).
/// Computes with 64-bit floats (about 16 significant digits). Errors name
/// the position (1-based character) and the problem: syntax errors, division
/// by zero, results that are not real numbers or are too large.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Evaluate {
    /// The expression, e.g. "2 * (3 + 4)" or "sqrt(2) / 2" (at most 10000 characters).
    pub expression: String,
}

/// The `evaluate` tool: [`eval`], formatted with [`format_number`].
pub fn evaluate(args: Evaluate) -> Result<String, EvalError> {
    eval(&args.expression).map(format_number)
}

toolhost_guest::export_tools!(evaluate);

#[cfg(test)]
mod tests;
