package sqlclass

import "testing"

// view is the part of a Result the classification table checks. Fields
// left at their zero value are expected to be zero.
type view struct {
	Kind           Kind
	Write          bool
	ReadOnlyTxn    bool
	Locking        bool
	Into           bool
	Local          bool
	ImplicitCommit bool
	Multi          bool
	UserVars       bool
	Temp           TempTableOp
	Adv            AdvisoryLockOp
	SameConn       bool
	Hint           Hint
	Group          string
	Chain, Release bool
}

func viewOf(r Result) view {
	return view{
		Kind: r.Kind, Write: r.IsWrite(), ReadOnlyTxn: r.ReadOnlyTxn,
		Locking: r.Locking, Into: r.Into, Local: r.Local,
		ImplicitCommit: r.ImplicitCommit, Multi: r.MultiStatement,
		UserVars: r.UsesUserVars, Temp: r.TempTable, Adv: r.AdvisoryLock,
		SameConn: r.NeedsSameConn, Hint: r.Hint, Group: r.HostGroup,
		Chain: r.Chain, Release: r.Release,
	}
}

var classifyTests = []struct {
	sql  string
	want view
}{
	// Reads.
	{"SELECT c FROM sbtest1 WHERE id=1234", view{Kind: Select}},
	{"select 1", view{Kind: Select}},
	{"SeLeCt * from t", view{Kind: Select}},
	{"  \n\tSELECT 1", view{Kind: Select}},
	{"(SELECT 1) UNION (SELECT 2)", view{Kind: Select}},
	{"((select a from t))", view{Kind: Select}},
	{"WITH cte AS (SELECT 1) SELECT * FROM cte", view{Kind: Select}},
	{"with recursive c (n) as (select 1 union all select n+1 from c where n<5) select * from c", view{Kind: Select}},
	{"WITH a AS (SELECT 1), b AS (SELECT 2) (SELECT * FROM a)", view{Kind: Select}},
	{"WITH c AS (SELECT id FROM t) UPDATE t JOIN c USING (id) SET x=1", view{Kind: Update, Write: true}},
	{"WITH c AS (SELECT id FROM t) DELETE FROM t WHERE id IN (SELECT id FROM c)", view{Kind: Delete, Write: true}},
	{"WITH c AS (SELECT 1)", view{Kind: Other, Write: true}},
	{"TABLE t", view{Kind: Select}},
	{"VALUES ROW(1,2)", view{Kind: Select}},
	{"SHOW TABLES", view{Kind: Show}},
	{"show full processlist", view{Kind: Show}},
	{"SHOW WARNINGS", view{Kind: Show, SameConn: true}},
	{"show count(*) errors", view{Kind: Show, SameConn: true}},
	{"EXPLAIN SELECT * FROM t", view{Kind: Explain}},
	{"explain format=json select 1", view{Kind: Explain}},
	{"EXPLAIN UPDATE t SET a=1", view{Kind: Explain, Write: true}},
	{"EXPLAIN ANALYZE DELETE FROM t", view{Kind: Explain, Write: true}},
	{"DESCRIBE t", view{Kind: Explain}},
	{"desc t", view{Kind: Explain}},
	{"describe select 1", view{Kind: Explain}},
	{"", view{Kind: Empty}},
	{"   ", view{Kind: Empty}},
	{"/* only a comment */", view{Kind: Empty}},
	{";", view{Kind: Empty}},
	{"-- c\n;;", view{Kind: Empty}},

	// DML.
	{"INSERT INTO t VALUES (1)", view{Kind: Insert, Write: true}},
	{"insert ignore into t select * from u", view{Kind: Insert, Write: true}},
	{"Update t SET a=1", view{Kind: Update, Write: true}},
	{"delete from t where id=1", view{Kind: Delete, Write: true}},
	{"REPLACE INTO t VALUES (1)", view{Kind: Replace, Write: true}},
	{"replace into t values (1)", view{Kind: Replace, Write: true}},
	{"INSERT INTO t SELECT * FROM u FOR UPDATE", view{Kind: Insert, Write: true, Locking: true}},
	{"INSERT INTO t (a) VALUES (LAST_INSERT_ID())", view{Kind: Insert, Write: true, SameConn: true}},
	{"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a=VALUES(a)", view{Kind: Insert, Write: true}},

	// Locking reads and SELECT ... INTO.
	{"SELECT * FROM t WHERE id=1 FOR UPDATE", view{Kind: Select, Write: true, Locking: true}},
	{"select * from t for update nowait", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t FOR UPDATE SKIP LOCKED", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t FOR SHARE", view{Kind: Select, Write: true, Locking: true}},
	{"select * from t for share of t nowait", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t LOCK IN SHARE MODE", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t WHERE a IN (SELECT b FROM u FOR UPDATE)", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t /* FOR UPDATE */", view{Kind: Select}},
	{"SELECT 'FOR UPDATE' FROM t", view{Kind: Select}},
	{`SELECT "for update", 'lock in share mode' FROM t`, view{Kind: Select}},
	{"SELECT `for update` FROM t", view{Kind: Select}},
	{"SELECT * FROM t -- FOR UPDATE", view{Kind: Select}},
	{"SELECT * FROM t # FOR UPDATE", view{Kind: Select}},
	{"SELECT 'it''s' FROM t FOR UPDATE", view{Kind: Select, Write: true, Locking: true}},
	{`SELECT 'it\'s FOR UPDATE' FROM t`, view{Kind: Select}},
	{"SELECT a INTO @x FROM t", view{Kind: Select, Write: true, Into: true, UserVars: true}},
	{"SELECT * FROM t INTO OUTFILE '/tmp/x'", view{Kind: Select, Write: true, Into: true}},
	{"select 1 into dumpfile '/tmp/y'", view{Kind: Select, Write: true, Into: true}},

	// Hints.
	{"/* galeon:writer */ SELECT 1", view{Kind: Select, Hint: HintWriter}},
	{"/* galeon:reader */ SELECT 1", view{Kind: Select, Hint: HintReader}},
	{"SELECT /* galeon:writer */ 1", view{Kind: Select, Hint: HintWriter}},
	{"select /*galeon:READER*/ * from t", view{Kind: Select, Hint: HintReader}},
	{"/* galeon:hostgroup=olap */ SELECT 1", view{Kind: Select, Hint: HintHostgroup, Group: "olap"}},
	{"SELECT /* galeon:hostgroup = reports-2 */ 1", view{Kind: Select, Hint: HintHostgroup, Group: "reports-2"}},
	{"/* galeon:hostgroup= */ SELECT 1", view{Kind: Select}},
	{"/* galeon:hostgroup=bad name */ SELECT 1", view{Kind: Select}},
	{"/* galeon:primary */ SELECT 1", view{Kind: Select}},
	{"-- galeon:writer\nSELECT 1", view{Kind: Select, Hint: HintWriter}},
	{"# galeon:reader\nSELECT 1", view{Kind: Select, Hint: HintReader}},
	{"/* x */ /* galeon:writer */ SELECT 1", view{Kind: Select, Hint: HintWriter}},
	{"/* galeon:reader */ /* galeon:writer */ SELECT 1", view{Kind: Select, Hint: HintReader}},
	{"(/* galeon:writer */ SELECT 1)", view{Kind: Select, Hint: HintWriter}},
	// A hint counts anywhere in the statement, as MaxScale's do; the
	// first one wins.
	{"SELECT 1 /* galeon:writer */", view{Kind: Select, Hint: HintWriter}},
	{"SELECT a, /* galeon:writer */ b FROM t", view{Kind: Select, Hint: HintWriter}},
	{"SELECT COUNT(*) FROM w WHERE node='x' -- galeon:writer", view{Kind: Select, Hint: HintWriter}},
	{"SELECT /* galeon:reader */ a FROM t /* galeon:writer */", view{Kind: Select, Hint: HintReader}},
	{"SELECT a FROM t /* galeon:bogus */", view{Kind: Select}},
	{"SELECT '/* galeon:writer */'", view{Kind: Select}},
	{"/*+ galeon:writer */ SELECT 1", view{Kind: Select}},
	{"SELECT /*+ MAX_EXECUTION_TIME(100) */ 1", view{Kind: Select}},
	{"UPDATE /* galeon:hostgroup=w1 */ t SET a=1", view{Kind: Update, Write: true, Hint: HintHostgroup, Group: "w1"}},

	// Executable comments are code, not hints or comments.
	{"/*! galeon:writer */ SELECT 1", view{Kind: Other, Write: true}},
	{"/*!40101 SET NAMES utf8 */", view{Kind: Set}},
	{"/*!50000 SELECT */ 1", view{Kind: Select}},
	{"/*M!100100 INSERT INTO t VALUES (1) */", view{Kind: Insert, Write: true}},
	{"SELECT * FROM t /*!80000 FOR UPDATE */", view{Kind: Select, Write: true, Locking: true}},
	{"SELECT * FROM t /*M! FOR UPDATE */", view{Kind: Select, Write: true, Locking: true}},
	{"/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */", view{Kind: Set, UserVars: true}},

	// Comments before the first keyword.
	{"-- comment\nSELECT 1", view{Kind: Select}},
	{"--\nDELETE FROM t", view{Kind: Delete, Write: true}},
	{"# comment\r\nINSERT INTO t VALUES (1)", view{Kind: Insert, Write: true}},
	{"/* multi\nline */ update t set a=1", view{Kind: Update, Write: true}},
	{"/**/SELECT 1", view{Kind: Select}},
	{"--x\nSELECT 1", view{Kind: Other, Write: true}}, // not a comment: "--x" is two minuses and x

	// Transactions.
	{"BEGIN", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"begin work", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"BEGIN;", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"START TRANSACTION", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"start transaction read only", view{Kind: Begin, ReadOnlyTxn: true, ImplicitCommit: true}},
	{"START TRANSACTION READ WRITE", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"START TRANSACTION WITH CONSISTENT SNAPSHOT", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", view{Kind: Begin, ReadOnlyTxn: true, ImplicitCommit: true}},
	{"START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", view{Kind: Begin, ReadOnlyTxn: true, ImplicitCommit: true}},
	{"START TRANSACTION READ ONLY, READ WRITE", view{Kind: Begin, Write: true, ImplicitCommit: true}},
	{"/* galeon:reader */ START TRANSACTION READ ONLY", view{Kind: Begin, ReadOnlyTxn: true, ImplicitCommit: true, Hint: HintReader}},
	{"COMMIT", view{Kind: Commit}},
	{"commit work", view{Kind: Commit}},
	{"COMMIT AND CHAIN", view{Kind: Commit, Chain: true}},
	{"COMMIT AND NO CHAIN NO RELEASE", view{Kind: Commit}},
	{"COMMIT RELEASE", view{Kind: Commit, Release: true}},
	{"ROLLBACK", view{Kind: Rollback}},
	{"rollback work and chain", view{Kind: Rollback, Chain: true}},
	{"ROLLBACK TO SAVEPOINT sp1", view{Kind: Savepoint}},
	{"rollback to sp1", view{Kind: Savepoint}},
	{"ROLLBACK WORK TO SAVEPOINT sp1", view{Kind: Savepoint}},
	{"SAVEPOINT sp1", view{Kind: Savepoint}},
	{"RELEASE SAVEPOINT sp1", view{Kind: Savepoint}},
	{"XA START 'x'", view{Kind: Other, Write: true}},

	// SET and USE.
	{"SET autocommit=0", view{Kind: Set}},
	{"SET autocommit=1", view{Kind: Set, ImplicitCommit: true}},
	{"set autocommit = ON", view{Kind: Set, ImplicitCommit: true}},
	{"SET @@session.autocommit=OFF", view{Kind: Set}},
	{"SET autocommit=@v", view{Kind: Set, ImplicitCommit: true, UserVars: true}},
	{"SET GLOBAL autocommit=1", view{Kind: Set, Write: true}},
	{"SET NAMES utf8mb4", view{Kind: Set}},
	{"SET @a = 1", view{Kind: Set, UserVars: true}},
	{"SET @@x = 1", view{Kind: Set}},
	{"SET GLOBAL max_connections = 1000", view{Kind: Set, Write: true}},
	{"SET PERSIST max_connections = 1000", view{Kind: Set, Write: true}},
	{"SET @@global.read_only = 1", view{Kind: Set, Write: true}},
	{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", view{Kind: Set}},
	{"SET TRANSACTION READ ONLY", view{Kind: Set}},
	{"SET PASSWORD = 'x'", view{Kind: Set, Write: true, ImplicitCommit: true}},
	{"SET ROLE ALL", view{Kind: Set, Write: true}},
	{"SET @x = (SELECT a FROM t FOR UPDATE)", view{Kind: Set, UserVars: true, Write: true, Locking: true}},
	{"SET @l = GET_LOCK('a', 10)", view{Kind: Set, UserVars: true, Write: true, Adv: LockAcquire}},
	{"SET STATEMENT max_statement_time=1 FOR SELECT * FROM t", view{Kind: Select}},
	{"SET STATEMENT max_statement_time=1 FOR UPDATE t SET a=1", view{Kind: Update, Write: true}},
	{"SET STATEMENT x=@v FOR SELECT 1", view{Kind: Select, UserVars: true}},
	{"SET STATEMENT x=1", view{Kind: Other, Write: true}},
	{"USE db1", view{Kind: Use}},
	{"use `my db`", view{Kind: Use}},

	// DDL.
	{"CREATE TABLE t (a int)", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"create table if not exists t like u", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"ALTER TABLE t ADD COLUMN b int", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"DROP TABLE t", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"drop database d", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"TRUNCATE TABLE t", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"truncate t", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"RENAME TABLE a TO b", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE INDEX i ON t (a)", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE USER 'u'@'%' IDENTIFIED BY 'p'", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE TEMPORARY TABLE tt (a int)", view{Kind: DDL, Write: true, Temp: TempCreate}},
	{"create temporary table if not exists tt select * from t", view{Kind: DDL, Write: true, Temp: TempCreate}},
	{"CREATE OR REPLACE TEMPORARY TABLE tt (a int)", view{Kind: DDL, Write: true, Temp: TempCreate}},
	{"DROP TEMPORARY TABLE tt", view{Kind: DDL, Write: true, Temp: TempDrop}},
	{"drop temporary table if exists tt", view{Kind: DDL, Write: true, Temp: TempDrop}},
	{"ALTER TABLE tt ENGINE=InnoDB", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE DEFINER=`root`@`localhost` PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE DEFINER=CURRENT_USER() FUNCTION f() RETURNS INT RETURN 1", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"CREATE ALGORITHM=MERGE SQL SECURITY DEFINER VIEW v AS SELECT 1", view{Kind: DDL, Write: true, ImplicitCommit: true}},
	{"GRANT SELECT ON *.* TO 'u'@'h'", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"REVOKE ALL ON *.* FROM u", view{Kind: Other, Write: true, ImplicitCommit: true, UserVars: false}},
	{"ANALYZE TABLE t", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"OPTIMIZE TABLE t", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"RESET MASTER", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"RESET PERSIST", view{Kind: Other, Write: true}},
	{"START SLAVE", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"CHANGE MASTER TO MASTER_HOST='h'", view{Kind: Other, Write: true, ImplicitCommit: true}},

	// Routines and SQL-level prepared statements.
	{"CALL p(1)", view{Kind: Call, Write: true}},
	{"call p(@out)", view{Kind: Call, Write: true, UserVars: true}},
	{"DO SLEEP(1)", view{Kind: Do, Write: true}},
	{"do release_lock('x')", view{Kind: Do, Write: true, Adv: LockRelease}},
	{"PREPARE s FROM 'SELECT 1'", view{Kind: Prepare, Write: true}},
	{"prepare s from @sql", view{Kind: Prepare, Write: true, UserVars: true}},
	{"EXECUTE s USING @a", view{Kind: Execute, Write: true, UserVars: true}},
	{"DEALLOCATE PREPARE s", view{Kind: Deallocate, Write: true}},
	{"DROP PREPARE s", view{Kind: Deallocate, Write: true}},
	{"HANDLER t OPEN", view{Kind: Handler, Write: true}},
	{"handler t read first", view{Kind: Handler, Write: true}},

	// Locks, loads, admin.
	{"LOCK TABLES t READ", view{Kind: LockTables, Write: true, ImplicitCommit: true}},
	{"lock table t write, u read", view{Kind: LockTables, Write: true, ImplicitCommit: true}},
	{"UNLOCK TABLES", view{Kind: UnlockTables, Write: true, ImplicitCommit: true}},
	{"LOCK INSTANCE FOR BACKUP", view{Kind: Other, Write: true}},
	{"FLUSH TABLES WITH READ LOCK", view{Kind: LockTables, Write: true, ImplicitCommit: true}},
	{"FLUSH TABLES t FOR EXPORT", view{Kind: LockTables, Write: true, ImplicitCommit: true}},
	{"FLUSH PRIVILEGES", view{Kind: Flush, Write: true, ImplicitCommit: true}},
	{"flush logs", view{Kind: Flush, Write: true, ImplicitCommit: true}},
	{"LOAD DATA INFILE '/tmp/x' INTO TABLE t", view{Kind: Load, Write: true}},
	{"load data local infile 'x.csv' into table t", view{Kind: Load, Write: true, Local: true}},
	{"LOAD DATA LOW_PRIORITY LOCAL INFILE 'x' INTO TABLE t", view{Kind: Load, Write: true, Local: true}},
	{"LOAD XML LOCAL INFILE 'x.xml' INTO TABLE t", view{Kind: Load, Write: true, Local: true}},
	{"LOAD INDEX INTO CACHE t", view{Kind: Other, Write: true, ImplicitCommit: true}},
	{"KILL 42", view{Kind: Kill, Write: true}},
	{"kill query 42", view{Kind: Kill, Write: true}},

	// State effects.
	{"SELECT @a", view{Kind: Select, UserVars: true}},
	{"SELECT @a := 1", view{Kind: Select, UserVars: true}},
	{"SELECT @`quoted var`", view{Kind: Select, UserVars: true}},
	{"SELECT @@version", view{Kind: Select}},
	{"SELECT @@session.sql_mode, @@GLOBAL.read_only", view{Kind: Select}},
	{"SELECT '@notavar'", view{Kind: Select}},
	{"SELECT GET_LOCK('l', 10)", view{Kind: Select, Write: true, Adv: LockAcquire}},
	{"select get_lock ('l', 10)", view{Kind: Select, Write: true, Adv: LockAcquire}},
	{"SELECT RELEASE_LOCK('l')", view{Kind: Select, Write: true, Adv: LockRelease}},
	{"SELECT RELEASE_ALL_LOCKS()", view{Kind: Select, Write: true, Adv: LockRelease}},
	{"SELECT IS_USED_LOCK('l')", view{Kind: Select, Write: true, Adv: LockInspect}},
	{"SELECT IS_FREE_LOCK('l')", view{Kind: Select, Write: true, Adv: LockInspect}},
	{"SELECT get_lock FROM t", view{Kind: Select}},
	{"SELECT 'GET_LOCK(1)'", view{Kind: Select}},
	{"SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 10", view{Kind: Select, SameConn: true}},
	{"SELECT FOUND_ROWS()", view{Kind: Select, SameConn: true}},
	{"SELECT LAST_INSERT_ID()", view{Kind: Select, SameConn: true}},
	{"select row_count()", view{Kind: Select, SameConn: true}},
	{"SELECT @@identity", view{Kind: Select, SameConn: true}},
	{"SELECT @@session.warning_count", view{Kind: Select, SameConn: true}},
	{"SELECT @@last_gtid", view{Kind: Select, SameConn: true}},
	{"select @@SESSION.LAST_GTID as g", view{Kind: Select, SameConn: true}},
	{"GET DIAGNOSTICS @n = NUMBER", view{Kind: Other, Write: true, SameConn: true, UserVars: true}},
	{"SELECT NEXTVAL(s)", view{Kind: Select, Write: true}},
	{"SELECT NEXT VALUE FOR s", view{Kind: Select, Write: true}},

	// Multi-statements.
	{"SELECT 1; SELECT 2", view{Kind: Select, Multi: true}},
	{"SELECT 1; UPDATE t SET a=1", view{Kind: Update, Write: true, Multi: true}},
	{"SELECT ';'; SELECT 2", view{Kind: Select, Multi: true}},
	{"SELECT ';' FROM t", view{Kind: Select}},
	{"SELECT \"a;b\", `c;d` FROM t", view{Kind: Select}},
	{"SELECT 1 /* ; DELETE FROM t */", view{Kind: Select}},
	{"SELECT 1 -- ; DELETE FROM t", view{Kind: Select}},
	{"SELECT 1 # ; DELETE FROM t", view{Kind: Select}},
	{"SELECT 1;", view{Kind: Select}},
	{"SELECT 1;;  ", view{Kind: Select}},
	{"SELECT 1; -- trailing comment", view{Kind: Select}},
	{"; SELECT 1", view{Kind: Select}},
	{"SELECT 'it\\'s;'; DELETE FROM t", view{Kind: Delete, Write: true, Multi: true}},
	{"SET @a=1; SELECT @a", view{Kind: Set, Multi: true, UserVars: true}},
	{"CREATE TEMPORARY TABLE t1 (a int); INSERT INTO t1 VALUES (1)", view{Kind: DDL, Write: true, Multi: true, Temp: TempCreate}},
	{"SELECT 1; /* galeon:writer */ SELECT 2", view{Kind: Select, Multi: true, Hint: HintWriter}},
	{"START TRANSACTION READ ONLY; SELECT 1", view{Kind: Begin, Multi: true, ReadOnlyTxn: true, ImplicitCommit: true}},
	{"START TRANSACTION READ ONLY; UPDATE t SET a=1", view{Kind: Update, Write: true, Multi: true, ImplicitCommit: true}},
	{"SELECT GET_LOCK('a',1); SELECT RELEASE_LOCK('a')", view{Kind: Select, Write: true, Multi: true, Adv: LockAcquire | LockRelease}},

	// Unknown and odd.
	{"FOO BAR", view{Kind: Other, Write: true}},
	{"123", view{Kind: Other, Write: true}},
	{"'SELECT 1'", view{Kind: Other, Write: true}},
	{"`select`", view{Kind: Other, Write: true}},
	{"BEGIN NOT ATOMIC SELECT 1; SELECT 2; END", view{Kind: Other, Write: true}},
	{"SELECT 'unterminated", view{Kind: Select}},
	{"SELECT /* unterminated", view{Kind: Select}},
}

func TestClassify(t *testing.T) {
	for _, tc := range classifyTests {
		got := viewOf(Classify(tc.sql))
		if got != tc.want {
			t.Errorf("Classify(%q)\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}

func TestUsesLastInsertID(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT LAST_INSERT_ID()":                              true,
		"INSERT INTO c (p) VALUES (last_insert_id())":          true,
		"SELECT @@identity":                                    true,
		"SELECT @@session.last_insert_id":                      true,
		"SELECT FOUND_ROWS()":                                  false,
		"SELECT ROW_COUNT(), @@warning_count":                  false,
		"SELECT 1; SELECT LAST_INSERT_ID()":                    true,
		"SELECT 'LAST_INSERT_ID()' FROM t":                     false,
		"SELECT id FROM t /* LAST_INSERT_ID() in a comment */": false,
	} {
		if got := Classify(q).UsesLastInsertID; got != want {
			t.Errorf("%q: UsesLastInsertID = %v, want %v", q, got, want)
		}
	}
}
