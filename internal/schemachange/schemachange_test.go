package schemachange

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		stmt          string
		schema, table string
		kinds         []Kind
		names         []string
		algorithm     string
		err           string
	}{
		{stmt: "ALTER TABLE t ADD COLUMN c INT NULL", table: "t", kinds: []Kind{AddColumn}, names: []string{"c"}},
		{stmt: "alter table `db`.`my``t` add c varchar(10) default 'x', algorithm=inplace, lock=none;", schema: "db", table: "my`t", kinds: []Kind{AddColumn}, names: []string{"c"}, algorithm: "INPLACE"},
		{stmt: "ALTER TABLE t ADD INDEX k (a, b), DROP INDEX old", table: "t", kinds: []Kind{AddIndex, DropIndex}, names: []string{"k", "old"}},
		{stmt: "ALTER TABLE t ADD KEY (a)", table: "t", kinds: []Kind{AddIndex}, names: []string{""}},
		{stmt: "ALTER TABLE t ADD FULLTEXT INDEX ft (body)", table: "t", kinds: []Kind{AddIndex}, names: []string{"ft"}},
		{stmt: "ALTER TABLE t ADD UNIQUE KEY u (a)", table: "t", kinds: []Kind{AddUnique}},
		{stmt: "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES p(id)", table: "t", kinds: []Kind{AddForeignKey}},
		{stmt: "ALTER TABLE t ADD CONSTRAINT UNIQUE (a)", table: "t", kinds: []Kind{AddUnique}},
		{stmt: "ALTER TABLE t ADD PRIMARY KEY (id)", table: "t", kinds: []Kind{AddPrimaryKey}},
		{stmt: "ALTER TABLE t DROP PRIMARY KEY", table: "t", kinds: []Kind{DropPrimaryKey}},
		{stmt: "ALTER TABLE t DROP COLUMN c, DROP d", table: "t", kinds: []Kind{DropColumn, DropColumn}, names: []string{"c", "d"}},
		{stmt: "ALTER TABLE t DROP FOREIGN KEY fk", table: "t", kinds: []Kind{DropForeignKey}},
		{stmt: "ALTER TABLE t MODIFY c BIGINT", table: "t", kinds: []Kind{ChangeColumn}, names: []string{"c"}},
		{stmt: "ALTER TABLE t CHANGE COLUMN c d INT", table: "t", kinds: []Kind{ChangeColumn}, names: []string{"c"}},
		{stmt: "ALTER TABLE t RENAME COLUMN c TO d", table: "t", kinds: []Kind{RenameColumn}},
		{stmt: "ALTER TABLE t RENAME INDEX a TO b", table: "t", kinds: []Kind{RenameIndex}},
		{stmt: "ALTER TABLE t RENAME TO u", table: "t", kinds: []Kind{RenameTable}},
		{stmt: "ALTER TABLE t ALTER COLUMN c SET DEFAULT 3", table: "t", kinds: []Kind{SetDefault}},
		{stmt: "ALTER TABLE t ALTER c DROP DEFAULT", table: "t", kinds: []Kind{SetDefault}},
		{stmt: "ALTER TABLE t ALTER INDEX k IGNORED", table: "t", kinds: []Kind{IndexVisibility}},
		{stmt: "ALTER TABLE t ENGINE=InnoDB", table: "t", kinds: []Kind{Rebuild}},
		{stmt: "ALTER TABLE t ENGINE = MyISAM", table: "t", kinds: []Kind{ChangeEngine}},
		{stmt: "ALTER TABLE t FORCE", table: "t", kinds: []Kind{Rebuild}},
		{stmt: "ALTER TABLE t ROW_FORMAT=DYNAMIC", table: "t", kinds: []Kind{Rebuild}},
		{stmt: "ALTER TABLE t COMMENT = 'x', AUTO_INCREMENT=100", table: "t", kinds: []Kind{TableOption, TableOption}},
		{stmt: "ALTER TABLE t DEFAULT CHARSET utf8mb4", table: "t", kinds: []Kind{TableOption}},
		{stmt: "ALTER TABLE t DEFAULT CHARACTER SET = utf8mb4 COLLATE utf8mb4_bin", table: "t", kinds: []Kind{TableOption}},
		{stmt: "ALTER TABLE t COMMENT='x' ENGINE=Aria", table: "t", kinds: []Kind{ChangeEngine}},
		{stmt: "ALTER TABLE t AUTO_INCREMENT=5 ENGINE=MyISAM", table: "t", kinds: []Kind{ChangeEngine}},
		{stmt: "ALTER TABLE t ENGINE=InnoDB COMMENT 'x' ENGINE=MyISAM", table: "t", kinds: []Kind{ChangeEngine}},
		{stmt: "ALTER TABLE t ROW_FORMAT=DYNAMIC COMMENT 'x'", table: "t", kinds: []Kind{Rebuild}},
		{stmt: "ALTER TABLE t COMMENT 'x' FROBNICATE=1", table: "t", kinds: []Kind{Unknown}},
		{stmt: "ALTER TABLE t ADD COLUMN c INT; DROP TABLE x", err: "more than one statement"},
		{stmt: "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4", table: "t", kinds: []Kind{ConvertCharset}},
		{stmt: "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4", table: "t", kinds: []Kind{Partitioning}},
		{stmt: "ALTER TABLE t ORDER BY a", table: "t", kinds: []Kind{Unknown}},
		{stmt: "ALTER TABLE t ADD (a INT, b INT)", table: "t", kinds: []Kind{Unknown}},
		{stmt: "ALTER ONLINE TABLE IF EXISTS s.t ADD COLUMN IF NOT EXISTS c DECIMAL(10,2) NOT NULL DEFAULT 0 AFTER b", schema: "s", table: "t", kinds: []Kind{AddColumn}, names: []string{"c"}},
		{stmt: "CREATE INDEX k ON s.t (a) ALGORITHM=INPLACE LOCK=NONE", schema: "s", table: "t", kinds: []Kind{AddIndex}, names: []string{"k"}, algorithm: "INPLACE"},
		{stmt: "CREATE UNIQUE INDEX u USING BTREE ON t (a)", table: "t", kinds: []Kind{AddUnique}, names: []string{"u"}},
		{stmt: "DROP INDEX k ON t", table: "t", kinds: []Kind{DropIndex}, names: []string{"k"}},
		{stmt: "DROP INDEX `PRIMARY` ON t", table: "t", kinds: []Kind{DropPrimaryKey}},
		{stmt: "ALTER TABLE t ADD INDEX (a), ALGORITHM=INPLACE LOCK=NONE", table: "t", kinds: []Kind{AddIndex}, algorithm: "INPLACE"},
		{stmt: "ALTER TABLE t ADD INDEX (a), LOCK = SHARED, ALGORITHM = NOCOPY", table: "t", kinds: []Kind{AddIndex}, algorithm: "NOCOPY"},
		{stmt: "ALTER TABLE t ADD INDEX (a), ALGORITHM=INPLACE FORCE", err: "want ALGORITHM"},
		{stmt: "ALTER IGNORE TABLE t ADD UNIQUE (a)", err: "ALTER IGNORE"},
		{stmt: "UPDATE t SET a = 1", err: "not a schema change"},
		{stmt: "ALTER USER x", err: "not a schema change"},
		{stmt: "ALTER TABLE t", err: "without a change"},
		{stmt: "ALTER TABLE t ALGORITHM=INSTANT", err: "without a change"},
		{stmt: "ALTER TABLE t ADD c INT, , DROP d", err: "empty clause"},
		{stmt: "/*!50000 ALTER TABLE t ADD c INT */", err: "executable comment"},
		{stmt: "", err: "empty statement"},
	} {
		c, err := Parse(tc.stmt)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one with %q", tc.stmt, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.stmt, err)
			continue
		}
		if c.Schema != tc.schema || c.Table != tc.table || c.Algorithm != tc.algorithm {
			t.Errorf("%q: schema %q table %q algorithm %q, want %q %q %q", tc.stmt, c.Schema, c.Table, c.Algorithm, tc.schema, tc.table, tc.algorithm)
		}
		if len(c.Clauses) != len(tc.kinds) {
			t.Errorf("%q: %d clauses %+v, want %v", tc.stmt, len(c.Clauses), c.Clauses, tc.kinds)
			continue
		}
		for i, cl := range c.Clauses {
			if cl.Kind != tc.kinds[i] {
				t.Errorf("%q clause %d (%q): %v, want %v", tc.stmt, i, cl.Text, cl.Kind, tc.kinds[i])
			}
			if tc.names != nil && cl.Name != tc.names[i] {
				t.Errorf("%q clause %d: name %q, want %q", tc.stmt, i, cl.Name, tc.names[i])
			}
		}
	}
}

func TestColumnDefinition(t *testing.T) {
	for _, tc := range []struct {
		stmt string
		want Clause
	}{
		{"ALTER TABLE t ADD c INT", Clause{Kind: AddColumn, Name: "c"}},
		{"ALTER TABLE t ADD c INT NOT NULL", Clause{Kind: AddColumn, Name: "c", NotNull: true}},
		{"ALTER TABLE t ADD c INT NOT NULL DEFAULT 0", Clause{Kind: AddColumn, Name: "c", NotNull: true, HasDefault: true}},
		{"ALTER TABLE t ADD c INT DEFAULT NULL FIRST", Clause{Kind: AddColumn, Name: "c", HasDefault: true, Placed: true}},
		{"ALTER TABLE t ADD c INT AS (a+1) VIRTUAL", Clause{Kind: AddColumn, Name: "c", Generated: true}},
		{"ALTER TABLE t ADD c SERIAL", Clause{Kind: AddColumn, Name: "c", AutoIncrement: true}},
		{"ALTER TABLE t ADD c INT UNIQUE", Clause{Kind: AddColumn, Name: "c", InlineKey: true}},
		{"ALTER TABLE t ADD c ENUM('NOT','FIRST') COMMENT 'AFTER x'", Clause{Kind: AddColumn, Name: "c"}},
		{"ALTER TABLE t ADD c INT DEFAULT -1", Clause{Kind: AddColumn, Name: "c", HasDefault: true}},
		{"ALTER TABLE t ADD c VARCHAR(3) NOT NULL DEFAULT 'x'", Clause{Kind: AddColumn, Name: "c", NotNull: true, HasDefault: true}},
		{"ALTER TABLE t ADD c TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP", Clause{Kind: AddColumn, Name: "c", NotNull: true, HasDefault: true, VolatileDefault: true}},
		{"ALTER TABLE t ADD c CHAR(36) DEFAULT (UUID())", Clause{Kind: AddColumn, Name: "c", HasDefault: true, VolatileDefault: true}},
		{"ALTER TABLE t ADD c DATETIME NULL ON UPDATE NOW()", Clause{Kind: AddColumn, Name: "c", VolatileDefault: true}},
		{"ALTER TABLE t ADD c INT KEY", Clause{Kind: AddColumn, Name: "c", InlineKey: true}},
		{"ALTER TABLE t ADD c INT CHECK (c > 0)", Clause{Kind: AddColumn, Name: "c", InlineKey: true}},
		{"ALTER TABLE t ADD c INT NULL PARTITION BY HASH(id)", Clause{Kind: Unknown, Name: "c"}},
		{"ALTER TABLE t ADD c INT NULL ENGINE=MyISAM", Clause{Kind: Unknown, Name: "c"}},
	} {
		c, err := Parse(tc.stmt)
		if err != nil {
			t.Fatalf("%q: %v", tc.stmt, err)
		}
		got := c.Clauses[0]
		got.Text = ""
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.stmt, got, tc.want)
		}
	}
}

func TestAlterText(t *testing.T) {
	c, err := Parse("CREATE INDEX k ON s.t (a, b) COMMENT 'x' ALGORITHM=INPLACE")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AlterText(c.QualifiedTable("d"), "INSTANT"), "ALTER TABLE `s`.`t` ADD INDEX `k` (a, b) COMMENT 'x', ALGORITHM=INSTANT"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c, err = Parse("ALTER TABLE t ADD c INT, ALGORITHM=COPY, DROP INDEX k")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AlterText(c.QualifiedTable("d"), ""), "ALTER TABLE `d`.`t` ADD c INT, DROP INDEX k"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c, err = Parse("ALTER ONLINE TABLE t ADD INDEX (a)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AlterText(c.QualifiedTable("d"), "INSTANT"), "ALTER TABLE `d`.`t` ADD INDEX (a), ALGORITHM=INSTANT, LOCK=NONE"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDecide(t *testing.T) {
	tbl := Table{Columns: []string{"id", "u", "k", "c", "pad"}, PrimaryKey: []string{"id"}, Unique: map[string][]string{"uk": {"u"}}}
	instant := Probe{Ran: true, Instant: true}
	copying := Probe{Ran: true, Why: "ALGORITHM=INSTANT is not supported. Reason: ..."}
	for _, tc := range []struct {
		stmt    string
		probe   Probe
		asked   Method
		method  Method // "" = refused
		algo    string
		unsafe  int
		whyPart string
	}{
		// Instant changes run as TOI, even when they could not roll.
		{"ALTER TABLE t ADD c2 INT", instant, Auto, TOI, "INSTANT", 0, "metadata change only"},
		{"ALTER TABLE t ADD c2 INT FIRST", instant, Auto, TOI, "INSTANT", 1, "metadata change only"},
		{"ALTER TABLE t RENAME COLUMN c TO c2", instant, Auto, TOI, "INSTANT", 1, ""},
		// Not instant, rows compatible: rolled.
		{"ALTER TABLE t ADD INDEX kc (k, c)", copying, Auto, RSU, "", 0, "rolled one node at a time"},
		{"CREATE INDEX kc ON t (k, c)", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t DROP INDEX kc, ADD INDEX kc2 (c)", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t ENGINE=InnoDB", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t ADD c2 INT NOT NULL DEFAULT 0", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t DROP COLUMN pad", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t DROP COLUMN pad, DROP c", copying, Auto, RSU, "", 0, ""},
		{"ALTER TABLE t DROP COLUMN u", copying, Auto, "", "", 2, "unique key uk"},
		{"ALTER TABLE t DROP INDEX uk", copying, Auto, "", "", 1, "drops unique key uk"},
		{"ALTER TABLE t DROP INDEX UK", copying, Auto, "", "", 1, "drops unique key UK"},
		{"ALTER TABLE t ADD c2 TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP", copying, Auto, "", "", 1, "not a literal"},
		{"ALTER TABLE t ADD c2 INT NULL", copying, Auto, RSU, "", 0, "Write nothing to c2"},
		{"ALTER TABLE t COMMENT='x' ENGINE=Aria", copying, Auto, "", "", 1, "InnoDB tables only"},
		{"ALTER TABLE t ADD c2 INT", Probe{}, Auto, RSU, "", 0, "not probed"},
		// Not instant, rows incompatible: refused, with the reasons.
		{"ALTER TABLE t MODIFY c BIGINT", copying, Auto, "", "", 1, "changes column c"},
		{"ALTER TABLE t DROP COLUMN k", copying, Auto, "", "", 1, "not among the last columns"},
		{"ALTER TABLE t DROP COLUMN id", copying, Auto, "", "", 2, "primary key"},
		{"ALTER TABLE t ADD c2 INT AFTER id", copying, Auto, "", "", 1, "FIRST/AFTER"},
		{"ALTER TABLE t ADD c2 INT NOT NULL", copying, Auto, "", "", 1, "without a DEFAULT"},
		{"ALTER TABLE t ADD UNIQUE (c)", copying, Auto, "", "", 1, "unique key"},
		{"ALTER TABLE t ADD c2 INT, DROP pad", copying, Auto, "", "", 1, "adds and drops"},
		{"ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4", copying, Auto, "", "", 1, "character set"},
		{"ALTER TABLE t ENGINE=MyISAM", copying, Auto, "", "", 1, "InnoDB tables only"},
		{"ALTER TABLE t ORDER BY c", copying, Auto, "", "", 1, "does not know"},
		// Forced TOI runs anything; asked RSU never overrides the rules.
		{"ALTER TABLE t MODIFY c BIGINT", copying, TOI, TOI, "", 1, "write stall lasts"},
		{"ALTER TABLE t ADD c2 INT", instant, TOI, TOI, "INSTANT", 0, ""},
		{"ALTER TABLE t ADD c2 INT", instant, RSU, RSU, "", 0, "RSU as asked"},
		{"ALTER TABLE t MODIFY c BIGINT", copying, RSU, "", "", 1, "cannot roll"},
	} {
		c, err := Parse(tc.stmt)
		if err != nil {
			t.Fatalf("%q: %v", tc.stmt, err)
		}
		p := Decide(c, tbl, tc.probe, tc.asked)
		if p.Method != tc.method || p.Refused != (tc.method == "") || p.Algorithm != tc.algo || len(p.Unsafe) != tc.unsafe || !strings.Contains(p.Why, tc.whyPart) {
			t.Errorf("%q (%s): %+v\nwant method %q algorithm %q, %d unsafe, why with %q", tc.stmt, tc.asked, p, tc.method, tc.algo, tc.unsafe, tc.whyPart)
		}
		if p.Refused && !strings.Contains(p.Why, "--method toi") {
			t.Errorf("%q: a refusal names no option: %s", tc.stmt, p.Why)
		}
	}
}

func TestDropsTailWithoutDefinition(t *testing.T) {
	c, _ := Parse("ALTER TABLE t DROP COLUMN pad")
	if u := RollUnsafe(c, Table{}); len(u) != 1 || !strings.Contains(u[0], "could not read") {
		t.Errorf("unsafe %v", u)
	}
}
