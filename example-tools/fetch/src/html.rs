//! HTML reduced to its readable text.
//!
//! One pass over the document, without a tree or recursion: the text between
//! tags is kept, its entities decoded and its whitespace collapsed; block
//! elements start new lines; comments, declarations and the contents of
//! `head`, `script`, `style`, `noscript` and `template` are dropped. The text
//! is never longer than the document.

/// Elements dropped with their contents, up to their end tag.
const DROPPED: [&str; 4] = ["script", "style", "noscript", "template"];

/// Elements that begin and end a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "legend",
    "li",
    "main",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "tr",
    "ul",
];

/// Elements whose contents are set apart by spaces (table cells).
const CELLS: [&str; 2] = ["td", "th"];

/// The longest entity looked for, `&` and `;` excluded.
const MAX_ENTITY: usize = 32;

/// The readable text of `html`.
pub fn to_text(html: &str) -> String {
    let mut text = Text::with_capacity(html.len());
    let mut at = 0;
    while at < html.len() {
        let next = html[at..].find(['<', '&']).map_or(html.len(), |n| at + n);
        text.push_str(&html[at..next]);
        at = match html.as_bytes().get(next) {
            Some(b'<') => markup(html, next, &mut text),
            Some(_) => entity(html, next, &mut text),
            None => next,
        };
    }
    text.finish()
}

/// Handles the markup at `start` (a `<`); returns where the text resumes.
fn markup(html: &str, start: usize, text: &mut Text) -> usize {
    let after = &html[start + 1..];
    if after.starts_with("!--") {
        return html[start + 4..]
            .find("-->")
            .map_or(html.len(), |n| start + 4 + n + 3);
    }
    let closing = after.starts_with('/');
    let name_start = start + 1 + usize::from(closing);
    let name_len = html[name_start..]
        .bytes()
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    let name = &html[name_start..name_start + name_len];
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if closing || after.starts_with(['!', '?']) {
            // `<!DOCTYPE ...>`, `<?xml ...?>`, `</ bogus>`: skipped.
            return html[start..]
                .find('>')
                .map_or(html.len(), |n| start + n + 1);
        }
        text.push_char('<'); // a lone `<`, as in "a < b"
        return start + 1;
    }
    let end = tag_end(html, name_start + name_len);
    if !closing {
        if let Some(dropped) = DROPPED.iter().find(|d| name.eq_ignore_ascii_case(d)) {
            return after_end_tag(html, end, dropped);
        }
        if name.eq_ignore_ascii_case("head") {
            return after_head(html, end);
        }
    }
    if is_one_of(name, BLOCKS) {
        if name.eq_ignore_ascii_case("pre") {
            text.preformatted(!closing);
        }
        text.line_break();
    } else if is_one_of(name, &CELLS) {
        text.space();
    }
    end
}

/// Where the tag whose attributes start at `from` ends (after its `>`), a
/// `>` in a quoted attribute value not counting.
fn tag_end(html: &str, from: usize) -> usize {
    let mut quote = None;
    let mut after_equals = false;
    for (i, byte) in html.bytes().enumerate().skip(from) {
        match (quote, byte) {
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'>') => return i + 1,
            (None, b'=') => after_equals = true,
            (None, b'"' | b'\'') if after_equals => quote = Some(byte),
            (None, _) if byte.is_ascii_whitespace() => {}
            (None, _) => after_equals = false,
        }
    }
    html.len()
}

/// Where the text resumes after the end tag `</name>` found from `from`.
fn after_end_tag(html: &str, from: usize, name: &str) -> usize {
    let mut at = from;
    while let Some(n) = html[at..].find("</") {
        let tag = at + n + 2;
        if starts_with_name(&html[tag..], name) {
            return tag_end(html, tag + name.len());
        }
        at = tag;
    }
    html.len()
}

/// Where the text resumes after the head that started at `from`: after
/// `</head>`, or at `<body` if the head is not closed.
fn after_head(html: &str, from: usize) -> usize {
    let mut at = from;
    while let Some(n) = html[at..].find('<') {
        let lt = at + n;
        let rest = &html[lt + 1..];
        match rest.strip_prefix('/') {
            Some(name) if starts_with_name(name, "head") => return tag_end(html, lt + 6),
            None if starts_with_name(rest, "body") => return lt,
            _ => at = lt + 1,
        }
    }
    html.len()
}

/// Whether `text` starts with the tag name `name` (in any case), not
/// followed by more of a name.
fn starts_with_name(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= name.len()
        && bytes[..name.len()].eq_ignore_ascii_case(name.as_bytes())
        && !bytes.get(name.len()).is_some_and(u8::is_ascii_alphanumeric)
}

fn is_one_of(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// Decodes the entity at `start` (a `&`); returns where the text resumes.
/// An `&` that starts no known entity is kept as it is.
fn entity(html: &str, start: usize, text: &mut Text) -> usize {
    let rest = &html[start + 1..];
    let semicolon = rest.bytes().take(MAX_ENTITY + 1).position(|b| b == b';');
    if let Some(c) = semicolon.and_then(|n| decode(&rest[..n])) {
        text.push_char(c);
        return start + 1 + semicolon.unwrap_or_default() + 1;
    }
    text.push_char('&');
    start + 1
}

/// The character of the entity `name` (between `&` and `;`): numeric
/// (`#38`, `#x26`) or one of the common named ones.
fn decode(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let value = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => number.parse(),
        };
        // As browsers do, a code point that is no character becomes U+FFFD.
        let c = char::from_u32(value.ok()?).filter(|&c| c != '\0');
        return Some(c.unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Some(match name {
        "amp" | "AMP" => '&',
        "lt" | "LT" => '<',
        "gt" | "GT" => '>',
        "quot" | "QUOT" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "times" => '×',
        "euro" => '€',
        "pound" => '£',
        _ => return None,
    })
}

/// The text being written: whitespace collapsed, line breaks merged.
struct Text {
    out: String,
    /// Whitespace seen since the last character written.
    space: bool,
    /// A line break asked for since the last character written.
    line: bool,
    /// How many `pre` elements are open: inside one, whitespace is kept.
    pre: u32,
}

impl Text {
    fn with_capacity(capacity: usize) -> Text {
        Text {
            out: String::with_capacity(capacity),
            space: false,
            line: false,
            pre: 0,
        }
    }

    fn push_str(&mut self, text: &str) {
        text.chars().for_each(|c| self.push_char(c));
    }

    fn push_char(&mut self, c: char) {
        if self.pre > 0 {
            if c != '\r' {
                self.flush();
                self.out.push(c);
            }
        } else if c.is_whitespace() {
            self.space = true;
        } else {
            self.flush();
            self.out.push(c);
        }
    }

    /// A space between table cells.
    fn space(&mut self) {
        self.space = true;
    }

    fn line_break(&mut self) {
        self.line = true;
    }

    fn preformatted(&mut self, open: bool) {
        self.pre = if open {
            self.pre.saturating_add(1)
        } else {
            self.pre.saturating_sub(1)
        };
    }

    /// Writes the pending line break or space, if any.
    fn flush(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            if self.line {
                self.out.push('\n');
            } else if self.space {
                self.out.push(' ');
            }
        }
        self.line = false;
        self.space = false;
    }

    fn finish(self) -> String {
        self.out.trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn keeps_text_and_breaks_lines_at_blocks() {
        let html = "<!DOCTYPE html><html><body><h1>Title</h1><p>One <b>bold</b> \
                    word.</p><div>Two</div>Three<br>Four<ul><li>a</li><li>b</li></ul></body></html>";
        assert_eq!(
            to_text(html),
            "Title\nOne bold word.\nTwo\nThree\nFour\na\nb"
        );
    }

    #[test]
    fn drops_head_scripts_styles_and_comments() {
        let html = "<html><head><title>T</title><style>p{}</style></head>\
                    <body><script>if (a < b) { x = '</p>'; }</script>Shown<!-- not -->\
                    <noscript>no js</noscript><STYLE type=text/css>.a{}</STYLE> too\
                    <template><p>inert</p></template></body></html>";
        assert_eq!(to_text(html), "Shown too");
    }

    #[test]
    fn a_head_without_its_end_tag_ends_at_the_body() {
        assert_eq!(to_text("<head><title>T</title><body>Text"), "Text");
        assert_eq!(to_text("<head><meta charset=utf-8>"), "");
        assert_eq!(to_text("<header>Kept</header>"), "Kept");
    }

    #[test]
    fn decodes_entities() {
        assert_eq!(
            to_text("a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &#x41;&#66; f&nbsp;g"),
            "a & b <c> \"d\" 'e' AB f g"
        );
        assert_eq!(to_text("&copy; &mdash; &hellip;"), "© — …");
        // Unknown or unterminated entities stay as written.
        assert_eq!(to_text("AT&T &bogus; & x &amp"), "AT&T &bogus; & x &amp");
        assert_eq!(
            to_text("&#0; &#xD800; &#99999999;"),
            "\u{FFFD} \u{FFFD} \u{FFFD}"
        );
        // Decoded markup characters are text, not markup.
        assert_eq!(
            to_text("&lt;script&gt;x&lt;/script&gt;"),
            "<script>x</script>"
        );
    }

    #[test]
    fn collapses_whitespace() {
        assert_eq!(
            to_text("  a \n\t b  <p>\n  c  </p>\n\n<p></p><div> d</div>  "),
            "a b\nc\nd"
        );
        assert_eq!(
            to_text("<table><tr><td>1</td><td>2</td></tr><tr><th>3</th></tr></table>"),
            "1 2\n3"
        );
    }

    #[test]
    fn keeps_whitespace_in_pre() {
        assert_eq!(
            to_text("<p>Code:</p><pre>fn main() {\r\n    x();\n}</pre>after"),
            "Code:\nfn main() {\n    x();\n}\nafter"
        );
    }

    #[test]
    fn tags_with_attributes() {
        assert_eq!(
            to_text("<a href=\"/x?a>b\" title='1 > 0'>link</a> <img alt=\"pic\"> <p class=x>p</p>"),
            "link\np"
        );
        // Quotes only count after `=`.
        assert_eq!(to_text("<a it's>x</a>"), "x");
    }

    #[test]
    fn stray_and_unterminated_markup() {
        assert_eq!(to_text("1 < 2 and 3 <= 4, <3"), "1 < 2 and 3 <= 4, <3");
        assert_eq!(to_text("a <!-- never closed"), "a");
        assert_eq!(to_text("a <script>never closed"), "a");
        assert_eq!(to_text("a <p class=\"never closed"), "a");
        assert_eq!(to_text("a </ b> c <?php x ?> d"), "a c d");
        assert_eq!(to_text("<scripts>kept</scripts>"), "kept");
        assert_eq!(to_text(""), "");
        assert_eq!(to_text("<"), "<");
        assert_eq!(to_text("&"), "&");
    }

    #[test]
    fn non_ascii_text() {
        assert_eq!(to_text("<p>Grüße</p><p>日本語 ✓</p>"), "Grüße\n日本語 ✓");
    }

    #[test]
    fn adversarial_input_is_linear_and_never_grows() {
        let n = 200_000;
        for unit in [
            "<", "&", "<a", "<!--", "</script", "<p>", "&#x41;", "<a b='", "<head>",
        ] {
            let html = unit.repeat(n);
            let text = to_text(&html);
            assert!(text.len() <= html.len(), "{unit}");
        }
        let html = format!("<script>{}", "</scrip".repeat(n));
        assert_eq!(to_text(&html), "");
    }
}
