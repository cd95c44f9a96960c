package sqlclass

// Kind is the statement type, as far as routing and session tracking care.
// The zero value is Other, the conservative "don't know".
type Kind uint8

// Statement kinds.
const (
	Other        Kind = iota // anything not listed; routed to the writer
	Empty                    // only whitespace, comments or ';'
	Select                   // SELECT, TABLE, VALUES, WITH ... SELECT, (SELECT ...)
	Insert                   // INSERT
	Update                   // UPDATE
	Delete                   // DELETE
	Replace                  // REPLACE
	DDL                      // CREATE, ALTER, DROP, TRUNCATE, RENAME
	Begin                    // BEGIN [WORK], START TRANSACTION ...
	Commit                   // COMMIT
	Rollback                 // ROLLBACK (not ROLLBACK TO SAVEPOINT)
	Savepoint                // SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT
	Set                      // SET ...
	Use                      // USE db
	Show                     // SHOW ...
	Explain                  // EXPLAIN, DESCRIBE, DESC
	Call                     // CALL proc
	Do                       // DO expr
	LockTables               // LOCK TABLES
	UnlockTables             // UNLOCK TABLES
	Prepare                  // SQL-level PREPARE
	Execute                  // SQL-level EXECUTE
	Deallocate               // DEALLOCATE PREPARE, DROP PREPARE
	Handler                  // HANDLER ... OPEN/READ/CLOSE
	Load                     // LOAD DATA, LOAD XML
	Flush                    // FLUSH
	Kill                     // KILL
	numKinds
)

var kindNames = [numKinds]string{
	Other:        "Other",
	Empty:        "Empty",
	Select:       "Select",
	Insert:       "Insert",
	Update:       "Update",
	Delete:       "Delete",
	Replace:      "Replace",
	DDL:          "DDL",
	Begin:        "Begin",
	Commit:       "Commit",
	Rollback:     "Rollback",
	Savepoint:    "Savepoint",
	Set:          "Set",
	Use:          "Use",
	Show:         "Show",
	Explain:      "Explain",
	Call:         "Call",
	Do:           "Do",
	LockTables:   "LockTables",
	UnlockTables: "UnlockTables",
	Prepare:      "Prepare",
	Execute:      "Execute",
	Deallocate:   "Deallocate",
	Handler:      "Handler",
	Load:         "Load",
	Flush:        "Flush",
	Kill:         "Kill",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(?)"
}

// writes reports whether statements of kind k must run on the writer
// whatever their details. Begin, Set, Explain and the reads are decided by
// their handlers; everything unknown counts as a write.
func (k Kind) writes() bool {
	switch k {
	case Empty, Select, Begin, Commit, Rollback, Savepoint, Set, Use, Show, Explain:
		return false
	}
	return true
}

// kindOf maps a first keyword to its kind when the keyword alone settles
// it, which is the fast path. slow is set when the kind depends on what
// follows and a handler must look further.
func kindOf(w string) (k Kind, slow bool) {
	switch len(w) {
	case 2:
		if eqFold(w, "DO") {
			return Do, false
		}
	case 3:
		switch {
		case eqFold(w, "SET"):
			return Set, true
		case eqFold(w, "USE"):
			return Use, false
		}
	case 4:
		switch {
		case eqFold(w, "SHOW"):
			return Show, true
		case eqFold(w, "CALL"):
			return Call, false
		case eqFold(w, "DROP"):
			return DDL, true
		case eqFold(w, "LOCK"):
			return LockTables, true
		case eqFold(w, "LOAD"):
			return Load, true
		case eqFold(w, "WITH"):
			return Select, true
		case eqFold(w, "DESC"):
			return Explain, true
		case eqFold(w, "KILL"):
			return Kill, false
		}
	case 5:
		switch {
		case eqFold(w, "BEGIN"):
			return Begin, true
		case eqFold(w, "START"):
			return Other, true
		case eqFold(w, "ALTER"):
			return DDL, true
		case eqFold(w, "TABLE"):
			return Select, false
		case eqFold(w, "FLUSH"):
			return Flush, true
		}
	case 6:
		switch {
		case eqFold(w, "SELECT"):
			return Select, false
		case eqFold(w, "INSERT"):
			return Insert, false
		case eqFold(w, "UPDATE"):
			return Update, false
		case eqFold(w, "DELETE"):
			return Delete, false
		case eqFold(w, "CREATE"):
			return DDL, true
		case eqFold(w, "COMMIT"):
			return Commit, true
		case eqFold(w, "RENAME"):
			return DDL, true
		case eqFold(w, "VALUES"):
			return Select, false
		case eqFold(w, "UNLOCK"):
			return UnlockTables, true
		}
	case 7:
		switch {
		case eqFold(w, "REPLACE"):
			return Replace, false
		case eqFold(w, "EXPLAIN"):
			return Explain, true
		case eqFold(w, "RELEASE"):
			return Savepoint, true
		case eqFold(w, "PREPARE"):
			return Prepare, false
		case eqFold(w, "EXECUTE"):
			return Execute, false
		case eqFold(w, "HANDLER"):
			return Handler, false
		}
	case 8:
		switch {
		case eqFold(w, "ROLLBACK"):
			return Rollback, true
		case eqFold(w, "TRUNCATE"):
			return DDL, true
		case eqFold(w, "DESCRIBE"):
			return Explain, true
		}
	case 9:
		if eqFold(w, "SAVEPOINT") {
			return Savepoint, false
		}
	case 10:
		if eqFold(w, "DEALLOCATE") {
			return Deallocate, false
		}
	}
	return Other, true
}
