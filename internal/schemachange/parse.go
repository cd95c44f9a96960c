package schemachange

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Kind is what one clause of a schema change does.
type Kind int

// Clause kinds. Unknown is any clause this package does not recognise:
// it is never judged safe to roll.
const (
	Unknown         Kind = iota
	AddColumn            // ADD [COLUMN] name definition
	DropColumn           // DROP [COLUMN] name
	ChangeColumn         // CHANGE / MODIFY: a column's type, name, attributes or place
	RenameColumn         // RENAME COLUMN a TO b
	SetDefault           // ALTER [COLUMN] name SET DEFAULT … / DROP DEFAULT
	AddIndex             // ADD INDEX/KEY/FULLTEXT/SPATIAL, CREATE INDEX
	AddUnique            // ADD UNIQUE, CREATE UNIQUE INDEX
	DropIndex            // DROP INDEX/KEY, DROP INDEX … ON
	RenameIndex          // RENAME INDEX/KEY a TO b
	IndexVisibility      // ALTER INDEX name [NOT] IGNORED
	AddPrimaryKey        // ADD PRIMARY KEY
	DropPrimaryKey       // DROP PRIMARY KEY
	AddForeignKey        // ADD [CONSTRAINT] FOREIGN KEY
	DropForeignKey       // DROP FOREIGN KEY
	AddCheck             // ADD [CONSTRAINT] CHECK
	DropConstraint       // DROP CONSTRAINT / DROP CHECK
	TableOption          // COMMENT=, AUTO_INCREMENT=, STATS_…, default charset …
	Rebuild              // FORCE, ENGINE=InnoDB, ROW_FORMAT=…: the same rows, rewritten
	ChangeEngine         // ENGINE= another engine
	ConvertCharset       // CONVERT TO CHARACTER SET
	RenameTable          // RENAME [TO|AS] name
	Partitioning         // PARTITION BY, ADD/DROP/… PARTITION
)

var kindNames = [...]string{
	Unknown: "unknown clause", AddColumn: "add column", DropColumn: "drop column",
	ChangeColumn: "change column", RenameColumn: "rename column", SetDefault: "set default",
	AddIndex: "add index", AddUnique: "add unique key", DropIndex: "drop index",
	RenameIndex: "rename index", IndexVisibility: "index visibility",
	AddPrimaryKey: "add primary key", DropPrimaryKey: "drop primary key",
	AddForeignKey: "add foreign key", DropForeignKey: "drop foreign key",
	AddCheck: "add check constraint", DropConstraint: "drop constraint",
	TableOption: "table option", Rebuild: "rebuild", ChangeEngine: "change engine",
	ConvertCharset: "convert character set", RenameTable: "rename table",
	Partitioning: "partitioning",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Clause is one clause of the change.
type Clause struct {
	Kind Kind
	// Text is the clause as written (for an index statement, as the
	// equivalent ALTER TABLE clause).
	Text string
	// Name is the column or index the clause names, unquoted.
	Name string
	// Placed: an added or changed column given a place (FIRST or AFTER).
	Placed bool
	// NotNull, HasDefault, Generated, AutoIncrement and InlineKey describe
	// an added column's definition; VolatileDefault is a DEFAULT (or ON
	// UPDATE) that is not a literal: CURRENT_TIMESTAMP, UUID(), NEXTVAL…,
	// which each node would compute itself.
	NotNull, HasDefault, Generated, AutoIncrement, InlineKey, VolatileDefault bool
}

// Change is one schema change statement, as far as choosing how to run it
// needs: its table and what each clause does.
type Change struct {
	// Text is the statement as given.
	Text string
	// Schema is the database it names ("" when the statement leaves it to
	// the session's default); Table the table.
	Schema, Table string
	Clauses       []Clause
	// Algorithm and Lock are the ALGORITHM= and LOCK= the statement asked
	// for ("" when it did not), upper case.
	Algorithm, Lock string
}

// Parse reads one ALTER TABLE, CREATE INDEX or DROP INDEX statement.
// Anything else, or text it cannot follow, is an error that says so:
// galeon runs schema changes it understands, not guesses.
func Parse(stmt string) (Change, error) {
	stmt = strings.TrimSpace(stmt)
	stmt = strings.TrimSpace(strings.TrimSuffix(stmt, ";"))
	c := Change{Text: stmt}
	if strings.Contains(stmt, "/*!") || strings.Contains(stmt, "/*M!") {
		return c, errors.New("the statement holds an executable comment (/*!…*/): write the change without it")
	}
	toks := tokens(stmt)
	if len(toks) == 0 {
		return c, errors.New("empty statement: give one ALTER TABLE, CREATE INDEX or DROP INDEX")
	}
	for _, tok := range toks {
		if tok.Kind == sqlclass.TokPunct && tok.Text(stmt) == ";" {
			return c, errors.New("more than one statement: give one ALTER TABLE, CREATE INDEX or DROP INDEX")
		}
	}
	p := &parser{src: stmt, toks: toks}
	var err error
	switch {
	case p.word(0, "ALTER"):
		err = p.alter(&c)
	case p.word(0, "CREATE"):
		err = p.createIndex(&c)
	case p.word(0, "DROP"):
		err = p.dropIndex(&c)
	default:
		err = fmt.Errorf("%q is not a schema change galeon runs: give one ALTER TABLE, CREATE INDEX or DROP INDEX", firstWords(stmt))
	}
	return c, err
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// tokens lexes src without comments.
func tokens(src string) []sqlclass.Token {
	t := sqlclass.NewTokenizer(src)
	var out []sqlclass.Token
	for {
		tok := t.Next()
		if tok.Kind == sqlclass.TokEOF {
			return out
		}
		out = append(out, tok)
	}
}

type parser struct {
	src  string
	toks []sqlclass.Token
	i    int
}

// word reports whether the token at i+off is the unquoted word w.
func (p *parser) word(off int, w string) bool {
	j := p.i + off
	return j < len(p.toks) && p.toks[j].Kind == sqlclass.TokWord && strings.EqualFold(p.toks[j].Text(p.src), w)
}

// punct reports whether the token at i+off is the punctuation s.
func (p *parser) punct(off int, s string) bool {
	j := p.i + off
	return j < len(p.toks) && p.toks[j].Kind == sqlclass.TokPunct && p.toks[j].Text(p.src) == s
}

// accept consumes the words ws if they come next, all of them.
func (p *parser) accept(ws ...string) bool {
	for k, w := range ws {
		if !p.word(k, w) {
			return false
		}
	}
	p.i += len(ws)
	return true
}

func (p *parser) done() bool { return p.i >= len(p.toks) }

// name consumes an identifier and returns it unquoted.
func (p *parser) name() (string, bool) {
	if p.done() {
		return "", false
	}
	tok := p.toks[p.i]
	switch tok.Kind {
	case sqlclass.TokWord:
		p.i++
		return tok.Text(p.src), true
	case sqlclass.TokQuotedIdent:
		p.i++
		s := tok.Text(p.src)[1:]
		if !strings.HasSuffix(s, "`") {
			return "", false // unterminated
		}
		n := strings.ReplaceAll(s[:len(s)-1], "``", "`")
		return n, n != ""
	}
	return "", false
}

// table consumes [schema.]table.
func (p *parser) table(c *Change) error {
	n, ok := p.name()
	if !ok {
		return errors.New("no table name where one was expected")
	}
	if p.punct(0, ".") {
		p.i++
		t, ok := p.name()
		if !ok {
			return fmt.Errorf("no table name after the database %q", n)
		}
		c.Schema, c.Table = n, t
		return nil
	}
	c.Table = n
	return nil
}

func (p *parser) alter(c *Change) error {
	p.i = 1
	online := false
	for {
		if p.accept("ONLINE") {
			online = true
			continue
		}
		if p.word(0, "IGNORE") {
			return errors.New("ALTER IGNORE TABLE deletes the rows that break a new unique key, each node its own: galeon does not run it; remove the duplicates first")
		}
		break
	}
	if !p.accept("TABLE") {
		return fmt.Errorf("%q is not a schema change galeon runs: give one ALTER TABLE, CREATE INDEX or DROP INDEX", firstWords(c.Text))
	}
	p.accept("IF", "EXISTS")
	if err := p.table(c); err != nil {
		return err
	}
	if p.done() {
		return errors.New("ALTER TABLE without a change")
	}
	for _, span := range p.split() {
		if len(span) == 0 {
			return errors.New("an empty clause between commas")
		}
		cl, meta := p.clause(span)
		if meta {
			if err := p.algorithmLock(span, c); err != nil {
				return err
			}
			continue
		}
		c.Clauses = append(c.Clauses, cl)
	}
	if len(c.Clauses) == 0 {
		return errors.New("ALTER TABLE without a change (only ALGORITHM/LOCK)")
	}
	if online && c.Lock == "" {
		c.Lock = "NONE" // ALTER ONLINE is LOCK=NONE
	}
	return nil
}

// algorithmLock reads a clause of ALGORITHM [=] x and LOCK [=] y options
// (in any order, with or without a comma between them).
func (p *parser) algorithmLock(span []sqlclass.Token, c *Change) error {
	sub := &parser{src: p.src, toks: span}
	for !sub.done() {
		var into *string
		switch {
		case sub.accept("ALGORITHM"):
			into = &c.Algorithm
		case sub.accept("LOCK"):
			into = &c.Lock
		default:
			return fmt.Errorf("%q: want ALGORITHM=… or LOCK=…", p.src[span[0].Start:span[len(span)-1].End])
		}
		if sub.punct(0, "=") {
			sub.i++
		}
		v, ok := sub.name()
		if !ok {
			return fmt.Errorf("%q: ALGORITHM and LOCK take a value", p.src[span[0].Start:span[len(span)-1].End])
		}
		*into = strings.ToUpper(v)
	}
	return nil
}

// split cuts the tokens from p.i to the end at commas outside parentheses.
func (p *parser) split() [][]sqlclass.Token {
	var out [][]sqlclass.Token
	depth, start := 0, p.i
	for j := p.i; j < len(p.toks); j++ {
		tok := p.toks[j]
		if tok.Kind != sqlclass.TokPunct {
			continue
		}
		switch tok.Text(p.src) {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, p.toks[start:j])
				start = j + 1
			}
		}
	}
	return append(out, p.toks[start:])
}

// clause classifies one ALTER TABLE clause. meta says it holds ALGORITHM
// or LOCK options, which are not changes (algorithmLock reads them).
func (p *parser) clause(span []sqlclass.Token) (cl Clause, meta bool) {
	sub := &parser{src: p.src, toks: span}
	cl.Text = p.src[span[0].Start:span[len(span)-1].End]
	switch {
	case sub.word(0, "ALGORITHM"), sub.word(0, "LOCK"):
		return cl, true
	case sub.accept("ADD"):
		sub.addClause(&cl)
	case sub.accept("DROP"):
		sub.dropClause(&cl)
	case sub.accept("CHANGE"), sub.accept("MODIFY"):
		cl.Kind = ChangeColumn
		sub.accept("COLUMN")
		sub.accept("IF", "EXISTS")
		cl.Name, _ = sub.name()
		cl.Placed = sub.has("FIRST") || sub.has("AFTER")
	case sub.accept("ALTER"):
		switch {
		case sub.accept("INDEX"), sub.accept("KEY"):
			cl.Kind = IndexVisibility
			cl.Name, _ = sub.name()
		default:
			sub.accept("COLUMN")
			cl.Name, _ = sub.name()
			if sub.accept("SET", "DEFAULT") || sub.accept("DROP", "DEFAULT") {
				cl.Kind = SetDefault
			}
		}
	case sub.accept("RENAME"):
		switch {
		case sub.accept("COLUMN"):
			cl.Kind = RenameColumn
			cl.Name, _ = sub.name()
		case sub.accept("INDEX"), sub.accept("KEY"):
			cl.Kind = RenameIndex
			cl.Name, _ = sub.name()
		default:
			cl.Kind = RenameTable
		}
	case sub.accept("FORCE"):
		cl.Kind = Rebuild
	case sub.accept("CONVERT", "TO"):
		cl.Kind = ConvertCharset
	case sub.accept("PARTITION", "BY"), sub.accept("REMOVE", "PARTITIONING"),
		sub.word(0, "COALESCE") || sub.word(0, "REORGANIZE") || sub.word(0, "EXCHANGE") ||
			sub.word(0, "TRUNCATE") || sub.word(0, "ANALYZE") || sub.word(0, "CHECK") ||
			sub.word(0, "OPTIMIZE") || sub.word(0, "REBUILD") || sub.word(0, "REPAIR") || sub.word(0, "PARTITIONS"):
		cl.Kind = Partitioning
	default:
		cl.Kind = tableOption(sub)
	}
	return cl, false
}

// has reports whether the word w appears among the rest of the tokens.
func (p *parser) has(w string) bool {
	for j := p.i; j < len(p.toks); j++ {
		if p.toks[j].Kind == sqlclass.TokWord && strings.EqualFold(p.toks[j].Text(p.src), w) {
			return true
		}
	}
	return false
}

func (p *parser) addClause(cl *Clause) {
	constraint := p.accept("CONSTRAINT")
	if constraint && !p.word(0, "PRIMARY") && !p.word(0, "UNIQUE") && !p.word(0, "FOREIGN") && !p.word(0, "CHECK") {
		p.accept("IF", "NOT", "EXISTS")
		p.name()
	}
	switch {
	case p.word(0, "PRIMARY"):
		cl.Kind = AddPrimaryKey
	case p.word(0, "UNIQUE"):
		cl.Kind = AddUnique
	case p.word(0, "FOREIGN"):
		cl.Kind = AddForeignKey
	case p.word(0, "CHECK"):
		cl.Kind = AddCheck
	case constraint:
		// CONSTRAINT [name] followed by anything else: Unknown.
	case p.accept("INDEX"), p.accept("KEY"), p.accept("FULLTEXT"), p.accept("SPATIAL"):
		cl.Kind = AddIndex
		p.accept("INDEX")
		p.accept("KEY")
		p.accept("IF", "NOT", "EXISTS")
		if !p.punct(0, "(") {
			cl.Name, _ = p.name()
		}
	case p.word(0, "PARTITION"), p.word(0, "PERIOD"), p.word(0, "SYSTEM"):
		cl.Kind = Unknown
		if p.word(0, "PARTITION") {
			cl.Kind = Partitioning
		}
	default:
		p.accept("COLUMN")
		p.accept("IF", "NOT", "EXISTS")
		if p.punct(0, "(") {
			return // ADD (a INT, b INT): Unknown, several columns at once
		}
		name, ok := p.name()
		if !ok {
			return
		}
		cl.Kind, cl.Name = AddColumn, name
		p.columnDefinition(cl)
	}
}

// columnDefinition notes what matters in the rest of an added column's
// definition: NOT NULL, DEFAULT, generated, AUTO_INCREMENT, inline keys,
// FIRST/AFTER. Parenthesised parts (type lengths, expressions) are
// skipped whole.
func (p *parser) columnDefinition(cl *Clause) {
	depth := 0
	for ; p.i < len(p.toks); p.i++ {
		tok := p.toks[p.i]
		if tok.Kind == sqlclass.TokPunct {
			switch tok.Text(p.src) {
			case "(":
				depth++
			case ")":
				depth--
			}
			continue
		}
		if depth > 0 || tok.Kind != sqlclass.TokWord {
			continue
		}
		switch w := strings.ToUpper(tok.Text(p.src)); w {
		case "NOT":
			if p.word(1, "NULL") {
				cl.NotNull = true
			}
		case "DEFAULT":
			cl.HasDefault = true
			if !p.literalAt(1) {
				cl.VolatileDefault = true
			}
		case "ON":
			if p.word(1, "UPDATE") {
				cl.VolatileDefault = true
			}
		case "AS", "GENERATED":
			cl.Generated = true
		case "AUTO_INCREMENT", "SERIAL":
			cl.AutoIncrement = true
		case "UNIQUE", "PRIMARY", "KEY", "REFERENCES", "CHECK", "CONSTRAINT":
			cl.InlineKey = true
		case "FIRST", "AFTER":
			cl.Placed = true
		case "PARTITION", "ENGINE":
			// A table option or partitioning after the column, in the same
			// clause (no comma needed): not a column's definition.
			cl.Kind = Unknown
			return
		}
	}
}

func (p *parser) dropClause(cl *Clause) {
	switch {
	case p.accept("PRIMARY", "KEY"):
		cl.Kind = DropPrimaryKey
	case p.accept("FOREIGN", "KEY"):
		cl.Kind = DropForeignKey
		p.accept("IF", "EXISTS")
		cl.Name, _ = p.name()
	case p.accept("INDEX"), p.accept("KEY"):
		cl.Kind = DropIndex
		p.accept("IF", "EXISTS")
		cl.Name, _ = p.name()
		if strings.EqualFold(cl.Name, "PRIMARY") {
			cl.Kind = DropPrimaryKey
		}
	case p.accept("CONSTRAINT"), p.accept("CHECK"):
		cl.Kind = DropConstraint
		p.accept("IF", "EXISTS")
		cl.Name, _ = p.name()
	case p.word(0, "PARTITION"):
		cl.Kind = Partitioning
	case p.word(0, "PERIOD"), p.word(0, "SYSTEM"), p.word(0, "DEFAULT"):
		cl.Kind = Unknown
	default:
		p.accept("COLUMN")
		p.accept("IF", "EXISTS")
		if name, ok := p.name(); ok && (p.done() || p.word(0, "RESTRICT") || p.word(0, "CASCADE")) {
			cl.Kind, cl.Name = DropColumn, name
		}
	}
}

// literalAt reports whether a literal starts at i+off: a number, a
// string, NULL, TRUE or FALSE, or a signed number.
func (p *parser) literalAt(off int) bool {
	j := p.i + off
	if j >= len(p.toks) {
		return false
	}
	switch tok := p.toks[j]; tok.Kind {
	case sqlclass.TokNumber, sqlclass.TokString:
		return true
	case sqlclass.TokWord:
		w := strings.ToUpper(tok.Text(p.src))
		return w == "NULL" || w == "TRUE" || w == "FALSE"
	case sqlclass.TokPunct:
		if t := tok.Text(p.src); t == "-" || t == "+" {
			return j+1 < len(p.toks) && p.toks[j+1].Kind == sqlclass.TokNumber
		}
	}
	return false
}

// Table options by what they do to the table's rows.
var (
	rebuildOptions = []string{"ROW_FORMAT", "KEY_BLOCK_SIZE", "PAGE_COMPRESSED", "PAGE_COMPRESSION_LEVEL",
		"ENCRYPTED", "ENCRYPTION_KEY_ID", "PAGE_CHECKSUM", "TRANSACTIONAL"}
	metaOptions = []string{"COMMENT", "AUTO_INCREMENT", "STATS_PERSISTENT", "STATS_AUTO_RECALC",
		"STATS_SAMPLE_PAGES", "MAX_ROWS", "MIN_ROWS", "AVG_ROW_LENGTH", "PACK_KEYS", "CHECKSUM",
		"DELAY_KEY_WRITE", "CHARSET", "COLLATE"}
)

// tableOption classifies a clause made of table options (ENGINE=,
// COMMENT=, …, several of them without commas, as MariaDB allows): every
// one must be known; an ENGINE other than InnoDB is ChangeEngine; a
// clause that is anything else is Unknown.
func tableOption(p *parser) Kind {
	kind := TableOption
	for !p.done() {
		p.accept("DEFAULT")
		switch {
		case p.accept("ENABLE", "KEYS"), p.accept("DISABLE", "KEYS"):
			continue
		case p.accept("ENGINE"):
			p.optionValue()
			if p.i == 0 || !strings.EqualFold(p.toks[p.i-1].Text(p.src), "InnoDB") {
				return ChangeEngine
			}
			kind = Rebuild
		case p.accept("CHARACTER", "SET"):
			p.optionValue()
		case p.done() || p.toks[p.i].Kind != sqlclass.TokWord:
			return Unknown
		default:
			w := strings.ToUpper(p.toks[p.i].Text(p.src))
			switch {
			case slices.Contains(rebuildOptions, w):
				kind = Rebuild
			case slices.Contains(metaOptions, w):
			default:
				return Unknown
			}
			p.i++
			p.optionValue()
		}
	}
	return kind
}

// optionValue consumes [=] value.
func (p *parser) optionValue() {
	if p.punct(0, "=") {
		p.i++
	}
	if !p.done() {
		p.i++
	}
}

// createIndex reads CREATE [ONLINE|OFFLINE] [UNIQUE|FULLTEXT|SPATIAL]
// INDEX [IF NOT EXISTS] name [USING …] ON table (…) [options].
func (p *parser) createIndex(c *Change) error {
	p.i = 1
	p.accept("OR", "REPLACE")
	for p.accept("ONLINE") || p.accept("OFFLINE") {
	}
	kind, prefix := AddIndex, "ADD INDEX "
	switch {
	case p.accept("UNIQUE"):
		kind, prefix = AddUnique, "ADD UNIQUE INDEX "
	case p.accept("FULLTEXT"):
		prefix = "ADD FULLTEXT INDEX "
	case p.accept("SPATIAL"):
		prefix = "ADD SPATIAL INDEX "
	}
	if !p.accept("INDEX") {
		return fmt.Errorf("%q is not a schema change galeon runs: give one ALTER TABLE, CREATE INDEX or DROP INDEX", firstWords(c.Text))
	}
	p.accept("IF", "NOT", "EXISTS")
	name, ok := p.name()
	if !ok {
		return errors.New("CREATE INDEX without an index name")
	}
	for !p.done() && !p.word(0, "ON") {
		p.i++ // USING BTREE before ON
	}
	if !p.accept("ON") {
		return errors.New("CREATE INDEX without ON table")
	}
	if err := p.table(c); err != nil {
		return err
	}
	rest, err := p.indexRest(c)
	if err != nil {
		return err
	}
	c.Clauses = []Clause{{Kind: kind, Name: name, Text: prefix + quoteName(name) + " " + rest}}
	return nil
}

// dropIndex reads DROP INDEX [IF EXISTS] name ON table [options].
func (p *parser) dropIndex(c *Change) error {
	p.i = 1
	p.accept("ONLINE")
	if !p.accept("INDEX") {
		return fmt.Errorf("%q is not a schema change galeon runs: give one ALTER TABLE, CREATE INDEX or DROP INDEX", firstWords(c.Text))
	}
	p.accept("IF", "EXISTS")
	name, ok := p.name()
	if !ok {
		return errors.New("DROP INDEX without an index name")
	}
	if !p.accept("ON") {
		return errors.New("DROP INDEX without ON table")
	}
	if err := p.table(c); err != nil {
		return err
	}
	if _, err := p.indexRest(c); err != nil {
		return err
	}
	kind := DropIndex
	if strings.EqualFold(name, "PRIMARY") {
		kind = DropPrimaryKey
	}
	c.Clauses = []Clause{{Kind: kind, Name: name, Text: "DROP INDEX " + quoteName(name)}}
	return nil
}

// indexRest returns the text after an index statement's table up to an
// ALGORITHM/LOCK option, which it records.
func (p *parser) indexRest(c *Change) (string, error) {
	start := p.i
	end := len(p.toks)
	for j := p.i; j < len(p.toks); j++ {
		if w := p.toks[j]; w.Kind == sqlclass.TokWord && (strings.EqualFold(w.Text(p.src), "ALGORITHM") || strings.EqualFold(w.Text(p.src), "LOCK")) {
			if end == len(p.toks) {
				end = j
			}
			k := j + 1
			if k < len(p.toks) && p.toks[k].Kind == sqlclass.TokPunct && p.toks[k].Text(p.src) == "=" {
				k++
			}
			if k >= len(p.toks) {
				return "", fmt.Errorf("%s without a value", strings.ToUpper(w.Text(p.src)))
			}
			v := strings.ToUpper(p.toks[k].Text(p.src))
			if strings.EqualFold(w.Text(p.src), "ALGORITHM") {
				c.Algorithm = v
			} else {
				c.Lock = v
			}
			j = k
		}
	}
	if start >= end {
		return "", nil
	}
	return p.src[p.toks[start].Start:p.toks[end-1].End], nil
}

// quoteName back-quotes an identifier.
func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// QualifiedTable is the change's table as `schema`.`table`, with
// defaultSchema where the statement names none.
func (c Change) QualifiedTable(defaultSchema string) string {
	s := c.Schema
	if s == "" {
		s = defaultSchema
	}
	return quoteName(s) + "." + quoteName(c.Table)
}

// AlterText is the change as one ALTER TABLE statement on table (already
// quoted), with algorithm (when not empty) in place of the statement's
// own ALGORITHM, and the statement's LOCK: what galeon runs, and what its
// probe runs on a copy with ALGORITHM=INSTANT.
func (c Change) AlterText(table, algorithm string) string {
	parts := make([]string, 0, len(c.Clauses)+1)
	for _, cl := range c.Clauses {
		parts = append(parts, cl.Text)
	}
	if algorithm != "" {
		parts = append(parts, "ALGORITHM="+algorithm)
	}
	if c.Lock != "" {
		parts = append(parts, "LOCK="+c.Lock)
	}
	return "ALTER TABLE " + table + " " + strings.Join(parts, ", ")
}
