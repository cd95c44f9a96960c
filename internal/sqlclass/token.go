package sqlclass

// TokenKind says what a Token is.
type TokenKind uint8

// Token kinds produced by Tokenizer.
const (
	TokEOF         TokenKind = iota // end of input
	TokWord                         // unquoted identifier or keyword
	TokQuotedIdent                  // `back-quoted identifier`
	TokString                       // 'single', "double" or N'national' string
	TokNumber                       // 12, 1.5e3, .5, 0x1F, X'1F', 0b101, B'101'
	TokUserVar                      // @name, @'name', @`name`
	TokSysVar                       // @@name, @@session.name
	TokParam                        // ? placeholder
	TokPunct                        // operators and punctuation, e.g. ( , ; >= :=
	TokComment                      // comment; only when KeepComments is set
)

var tokenKindNames = [...]string{
	TokEOF:         "EOF",
	TokWord:        "Word",
	TokQuotedIdent: "QuotedIdent",
	TokString:      "String",
	TokNumber:      "Number",
	TokUserVar:     "UserVar",
	TokSysVar:      "SysVar",
	TokParam:       "Param",
	TokPunct:       "Punct",
	TokComment:     "Comment",
}

func (k TokenKind) String() string {
	if int(k) < len(tokenKindNames) {
		return tokenKindNames[k]
	}
	return "TokenKind(?)"
}

// Token is one lexical token: its kind and its byte range in the source.
// Keeping offsets rather than text keeps the tokenizer free of allocations;
// Text slices the source on demand.
type Token struct {
	Kind       TokenKind
	Start, End int
}

// Text returns the token's source text, quotes and all.
func (t Token) Text(src string) string { return src[t.Start:t.End] }

// is reports whether t is the punctuation p.
func (t Token) is(src, p string) bool {
	return t.Kind == TokPunct && t.End-t.Start == len(p) && src[t.Start:t.End] == p
}

// Tokenizer splits MySQL text into tokens. It understands exactly as much of
// the lexical grammar as is needed not to be fooled by text inside strings,
// quoted identifiers and comments:
//
//   - 'strings' and "strings" with doubled-quote and backslash escapes,
//     `identifiers` with doubled-backtick escapes;
//   - /* block */ comments, # line comments, and -- line comments, where --
//     starts a comment only when followed by whitespace, a control character
//     or the end of input (so 1--1 is arithmetic, as in MySQL);
//   - executable comments /*!NNNNN ... */ and /*M!NNNNNN ... */, whose
//     content is code: the markers are dropped and the content tokenized.
//
// The zero value is not useful; use NewTokenizer. A Tokenizer is a small
// value: copying it saves a position to return to, which is how the parsers
// in this package look ahead.
type Tokenizer struct {
	src string
	pos int
	// inExec is set inside an executable comment, where "*/" closes the
	// comment rather than being two operators.
	inExec bool
	// keepComments makes Next return comments rather than skip them.
	keepComments bool
	// marks counts executable-comment markers crossed so far (openers and
	// closers). A parser that slices source text between two tokens checks
	// it did not change, or the slice would hold half a comment.
	marks int
	// hint is the first galeon routing hint among the comments skipped
	// since hint was last cleared (hasHint says whether there is one), so
	// that a hint anywhere in a statement is seen: "SELECT ... /* galeon:writer */".
	hint    Token
	hasHint bool
	// last is the previous token returned, used to tell account names
	// ('user'@'host') from user variables and t.1col from .5.
	last Token
	// log, when set, records the tokens returned (TokenLog).
	log *TokenLog
	// replay, when set, holds a log's tokens (DigestLogged): Next returns
	// replay[pos] rather than lexing src. Such a tokenizer serves Next
	// only.
	replay []Token
}

// NewTokenizer returns a Tokenizer positioned at the start of src.
func NewTokenizer(src string) Tokenizer {
	return Tokenizer{src: src}
}

// KeepComments makes Next return TokComment tokens instead of skipping them.
// Executable-comment markers are never returned.
func (t *Tokenizer) KeepComments(on bool) { t.keepComments = on }

// Offset is the byte offset where the next token scan starts (not
// meaningful for a tokenizer replaying a TokenLog).
func (t *Tokenizer) Offset() int { return t.pos }

// Next returns the next token, or a TokEOF token at the end of input.
// Unterminated strings and comments run to the end of input.
func (t *Tokenizer) Next() Token {
	if t.replay != nil {
		tok := Token{Kind: TokEOF, Start: len(t.src), End: len(t.src)}
		if t.pos < len(t.replay) {
			tok = t.replay[t.pos]
			t.pos++
		}
		t.last = tok
		return tok
	}
	tok := t.next()
	if tok.Kind != TokComment {
		if t.log != nil {
			t.log.add(t.last, tok)
		}
		t.last = tok
	}
	return tok
}

func (t *Tokenizer) next() Token {
	src := t.src
	for {
		for t.pos < len(src) && isSpace(src[t.pos]) {
			t.pos++
		}
		if t.pos >= len(src) {
			return Token{Kind: TokEOF, Start: len(src), End: len(src)}
		}
		start := t.pos
		c := src[start]
		switch {
		case c == '/' && peek(src, start+1) == '*':
			if n := execMarker(src, start); n > 0 {
				t.pos = start + n
				t.inExec = true
				t.marks++
				continue
			}
			end := indexFrom(src, start+2, "*/")
			if end < 0 {
				t.pos = len(src)
			} else {
				t.pos = end + 2
			}
			if t.keepComments {
				return Token{Kind: TokComment, Start: start, End: t.pos}
			}
			t.noteSkipped(start, t.pos)
			continue
		case c == '*' && t.inExec && peek(src, start+1) == '/':
			t.pos = start + 2
			t.inExec = false
			t.marks++
			continue
		case c == '#' || (c == '-' && peek(src, start+1) == '-' && isDashCommentEnd(src, start+2)):
			end := indexByteFrom(src, start, '\n')
			if end < 0 {
				end = len(src)
			}
			t.pos = end
			if t.keepComments {
				return Token{Kind: TokComment, Start: start, End: end}
			}
			t.noteSkipped(start, end)
			continue
		}
		return t.scan(start, c)
	}
}

// noteSkipped remembers the first skipped comment that is a routing hint.
func (t *Tokenizer) noteSkipped(start, end int) {
	if t.hasHint {
		return
	}
	if h, _ := parseHint(t.src[start:end]); h != HintNone {
		t.hint, t.hasHint = Token{Kind: TokComment, Start: start, End: end}, true
	}
}

// scan lexes one non-comment token starting at src[start] == c.
func (t *Tokenizer) scan(start int, c byte) Token {
	src := t.src
	switch {
	case c == '\'' || c == '"':
		t.pos = skipQuoted(src, start+1, c, true)
		return Token{Kind: TokString, Start: start, End: t.pos}
	case c == '`':
		t.pos = skipQuoted(src, start+1, '`', false)
		return Token{Kind: TokQuotedIdent, Start: start, End: t.pos}
	case c == '@':
		return t.scanVar(start)
	case c == '?':
		t.pos = start + 1
		return Token{Kind: TokParam, Start: start, End: t.pos}
	case isDigit(c):
		if t.afterQualifier() {
			// t.1col: after "ident." digits start an identifier.
			t.pos = skipIdent(src, start)
			return Token{Kind: TokWord, Start: start, End: t.pos}
		}
		return t.scanNumber(start)
	case c == '.' && isDigit(peek(src, start+1)) && !t.afterIdent():
		return t.scanNumber(start)
	case isIdentStart(c):
		// X'0F', B'01' and N'text' are literals, not words.
		if peek(src, start+1) == '\'' {
			switch c {
			case 'x', 'X', 'b', 'B':
				t.pos = skipQuoted(src, start+2, '\'', false)
				return Token{Kind: TokNumber, Start: start, End: t.pos}
			case 'n', 'N':
				t.pos = skipQuoted(src, start+2, '\'', true)
				return Token{Kind: TokString, Start: start, End: t.pos}
			}
		}
		t.pos = skipIdent(src, start)
		return Token{Kind: TokWord, Start: start, End: t.pos}
	}
	t.pos = start + punctLen(src, start)
	return Token{Kind: TokPunct, Start: start, End: t.pos}
}

// afterIdent reports whether the previous token ends exactly here and is an
// identifier, so that ".5" is a qualifier dot rather than a number.
func (t *Tokenizer) afterIdent() bool {
	return t.last.End == t.pos && (t.last.Kind == TokWord || t.last.Kind == TokQuotedIdent)
}

// afterQualifier reports whether the previous token is a "." directly after
// which we stand.
func (t *Tokenizer) afterQualifier() bool {
	return t.last.End == t.pos && t.last.Kind == TokPunct && t.last.End-t.last.Start == 1 && t.src[t.last.Start] == '.'
}

// scanVar lexes @user, @'user', @@sys, @@scope.sys, or a bare @ when it
// separates the parts of a quoted account name ('u'@'h').
func (t *Tokenizer) scanVar(start int) Token {
	src := t.src
	if peek(src, start+1) == '@' {
		p := start + 2
		for {
			if peek(src, p) == '`' {
				p = skipQuoted(src, p+1, '`', false)
			} else {
				p = skipIdent(src, p)
			}
			if peek(src, p) == '.' && p+1 < len(src) && (isIdentByte(src[p+1]) || src[p+1] == '`') {
				p++
				continue
			}
			break
		}
		t.pos = p
		return Token{Kind: TokSysVar, Start: start, End: p}
	}
	if t.last.End == start && start > 0 && (t.last.Kind == TokString || t.last.Kind == TokQuotedIdent) {
		// Account name 'user'@'host': the @ glues user and host together.
		// Unquoted root@localhost is read as a variable, which can only
		// over-report UsesUserVars (pinning is the safe mistake), whereas
		// reading SELECT@v as an account would hide a variable.
		t.pos = start + 1
		return Token{Kind: TokPunct, Start: start, End: t.pos}
	}
	p := start + 1
	switch q := peek(src, p); q {
	case '\'', '"', '`':
		p = skipQuoted(src, p+1, q, q != '`')
	default:
		for p < len(src) && (isIdentByte(src[p]) || src[p] == '.') {
			p++
		}
	}
	t.pos = p
	return Token{Kind: TokUserVar, Start: start, End: p}
}

// scanNumber lexes a numeric literal. Text that starts like a number but
// runs on into identifier characters (1abc, 0xZZ) is an identifier in
// MySQL, and is returned as a word.
func (t *Tokenizer) scanNumber(start int) Token {
	src := t.src
	p := start
	if src[p] == '0' && (peek(src, p+1) == 'x' || peek(src, p+1) == 'b') {
		q := p + 2
		for q < len(src) && (isHexDigit(src[q]) && (src[p+1] == 'x' || src[q] == '0' || src[q] == '1')) {
			q++
		}
		if q > p+2 && !isIdentByte(peek(src, q)) {
			t.pos = q
			return Token{Kind: TokNumber, Start: start, End: q}
		}
	}
	for p < len(src) && isDigit(src[p]) {
		p++
	}
	plain := true
	if peek(src, p) == '.' {
		plain = false
		p++
		for p < len(src) && isDigit(src[p]) {
			p++
		}
	}
	if c := peek(src, p); c == 'e' || c == 'E' {
		q := p + 1
		if c := peek(src, q); c == '+' || c == '-' {
			q++
		}
		if isDigit(peek(src, q)) {
			for q < len(src) && isDigit(src[q]) {
				q++
			}
			p = q
			plain = false
		}
	}
	if plain && isIdentByte(peek(src, p)) {
		t.pos = skipIdent(src, p)
		return Token{Kind: TokWord, Start: start, End: t.pos}
	}
	t.pos = p
	return Token{Kind: TokNumber, Start: start, End: p}
}

// execMarker returns the length of an executable-comment opener at src[i]
// ("/*!", "/*!80000", "/*M!100100"), or 0 if there is none. A run of five
// or six digits right after the marker is the version and is skipped too.
// The version is not compared with anything: we cannot know the backend's,
// and treating the content as code is the conservative reading.
func execMarker(src string, i int) int {
	n := 0
	switch {
	case peek(src, i+2) == '!':
		n = 3
	case peek(src, i+2) == 'M' && peek(src, i+3) == '!':
		n = 4
	default:
		return 0
	}
	d := 0
	for d < 6 && isDigit(peek(src, i+n+d)) {
		d++
	}
	if d == 5 || d == 6 {
		n += d
	}
	return n
}

// skipQuoted returns the offset just past the closing quote q of a quoted
// token whose body starts at p. A doubled quote is an escaped quote; with
// backslash set, so is a backslash followed by any byte.
func skipQuoted(src string, p int, q byte, backslash bool) int {
	end, _ := scanQuoted(src, p, q, backslash)
	return end
}

// scanQuoted is skipQuoted that also reports whether the closing quote was
// found; an unterminated token runs to the end of src.
func scanQuoted(src string, p int, q byte, backslash bool) (end int, closed bool) {
	for p < len(src) {
		c := src[p]
		switch {
		case backslash && c == '\\':
			p += 2
		case c == q:
			if peek(src, p+1) == q {
				p += 2
				continue
			}
			return p + 1, true
		default:
			p++
		}
	}
	return len(src), false
}

func skipIdent(src string, p int) int {
	for p < len(src) && isIdentByte(src[p]) {
		p++
	}
	return p
}

// punctLen returns the length of the operator at src[i]. Multi-byte
// operators are kept whole so that := and >= stay one token.
func punctLen(src string, i int) int {
	switch c := src[i]; c {
	case '<':
		if peek(src, i+1) == '=' && peek(src, i+2) == '>' {
			return 3
		}
		if n := peek(src, i+1); n == '=' || n == '>' || n == '<' {
			return 2
		}
	case '-':
		if peek(src, i+1) == '>' {
			if peek(src, i+2) == '>' {
				return 3
			}
			return 2
		}
	case '>':
		if n := peek(src, i+1); n == '=' || n == '>' {
			return 2
		}
	case '!', ':':
		if peek(src, i+1) == '=' {
			return 2
		}
	case '|', '&':
		if peek(src, i+1) == c {
			return 2
		}
	}
	return 1
}

func peek(src string, i int) byte {
	if i < len(src) {
		return src[i]
	}
	return 0
}

func indexFrom(src string, from int, sub string) int {
	for i := from; i+len(sub) <= len(src); i++ {
		if src[i] == sub[0] && src[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func indexByteFrom(src string, from int, b byte) int {
	for i := from; i < len(src); i++ {
		if src[i] == b {
			return i
		}
	}
	return -1
}

// isDashCommentEnd reports whether the byte after "--" makes it a comment:
// whitespace, a control character, or the end of input.
func isDashCommentEnd(src string, i int) bool {
	return i >= len(src) || src[i] <= ' ' || src[i] == 0x7f
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// isIdentStart reports bytes that begin an unquoted identifier. Bytes of
// multi-byte UTF-8 sequences count, as MySQL allows non-ASCII identifiers.
func isIdentStart(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '_' || c == '$' || c >= 0x80
}

func isIdentByte(c byte) bool { return isIdentStart(c) || isDigit(c) }
