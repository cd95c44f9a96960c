package schemachange

import "testing"

// FuzzParse: any text either parses into a change with a table and
// clauses, or is refused with an error; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ALTER TABLE t ADD COLUMN c INT NULL", "ALTER TABLE `a``b`.t DROP c, ALGORITHM=INPLACE",
		"CREATE UNIQUE INDEX k ON t (a) LOCK=NONE", "DROP INDEX k ON d.t", "ALTER TABLE `", "ALTER TABLE t ADD (",
		"ALTER TABLE t ALTER COLUMN c SET DEFAULT 'x'", "CREATE INDEX k ON t (a) ALGORITHM",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		c, err := Parse(stmt)
		if err != nil {
			return
		}
		if c.Table == "" || len(c.Clauses) == 0 {
			t.Fatalf("%q parsed without a table or clauses: %+v", stmt, c)
		}
		_ = c.AlterText(c.QualifiedTable("d"), "INSTANT")
		_ = Decide(c, Table{}, Probe{}, Auto)
	})
}
