#!/usr/bin/env python3
"""Driver-matrix scenario program for the Python drivers.

MATRIX_DRIVER=mysql-connector-python (MySQL Connector/Python 9.x, whatever
implementation mysql.connector.connect() picks by default) or pymysql.
Protocol and scenarios: test/drivers/README.md. One JSON line per scenario
on stdout, in order; diagnostics go to stderr.
"""

import csv
import datetime
import decimal
import hashlib
import json
import math
import os
import random
import signal
import sys
import time
import traceback
import warnings

SCENARIO_TIMEOUT = 60  # seconds, per scenario

ENV_KEYS = ("MATRIX_DRIVER", "MATRIX_HOST", "MATRIX_PORT", "MATRIX_USER", "MATRIX_PASSWORD", "MATRIX_DB",
            "MATRIX_USER2", "MATRIX_PASSWORD2", "MATRIX_SSL_CA", "MATRIX_PREFIX", "MATRIX_TMP")
ENV = {}

DRIVER = None  # "mysql-connector-python" or "pymysql"
mysql_connector = None
pymysql = None

# Wall time of a scenario's measured part (None: the whole scenario).
measured = None


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Unsupported(Exception):
    """The driver has no such feature."""


class ScenarioTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise ScenarioTimeout(f"timed out after {SCENARIO_TIMEOUT}s")


# ---- connections and helpers ---------------------------------------------


def connect(**extra):
    """A fresh connection with the scenario timeout on every socket
    operation, plus the driver-specific options in extra."""
    host, port = ENV["MATRIX_HOST"], int(ENV["MATRIX_PORT"])
    user = extra.pop("user", ENV["MATRIX_USER"])
    password = extra.pop("password", ENV["MATRIX_PASSWORD"])
    if DRIVER == "pymysql":
        kw = dict(host=host, port=port, user=user, password=password, database=ENV["MATRIX_DB"],
                  connect_timeout=10, read_timeout=SCENARIO_TIMEOUT, write_timeout=SCENARIO_TIMEOUT)
        kw.update(extra)
        return pymysql.connect(**kw)
    # use_pure=True: the pure-Python implementation. connect() alone picks
    # the C extension (see s_connect), whose prepared statements cannot
    # bind an int above 2**63-1 or a TIME and lose BLOB/BIT values.
    kw = dict(host=host, port=port, user=user, password=password, database=ENV["MATRIX_DB"], use_pure=True,
              connection_timeout=10, read_timeout=SCENARIO_TIMEOUT, write_timeout=SCENARIO_TIMEOUT)
    kw.update(extra)
    return mysql_connector.connect(**kw)


def name(suffix):
    return ENV["MATRIX_PREFIX"] + suffix


def fresh_table(cur, suffix, cols):
    t = name(suffix)
    cur.execute("DROP TABLE IF EXISTS " + t)
    cur.execute("CREATE TABLE " + t + " (" + cols + ")")
    return t


def one(cur, q, params=None):
    """The first column of the only row of q."""
    if params is None:
        cur.execute(q)
    else:
        cur.execute(q, params)
    rows = cur.fetchall()
    if not rows:
        return "(no row)"
    return render(rows[0][0])


def render(v):
    """A canonical, type-tagged rendering of one fetched value."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "bool:" + str(v)
    if isinstance(v, int):
        return "int:" + str(v)
    if isinstance(v, float):
        return "float:" + repr(v)
    if isinstance(v, decimal.Decimal):
        return "dec:" + str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "bytes:" + bytes(v).hex()
    if isinstance(v, str):
        return "str:" + v
    if isinstance(v, datetime.datetime):
        return "datetime:" + v.isoformat()
    if isinstance(v, datetime.date):
        return "date:" + v.isoformat()
    if isinstance(v, datetime.timedelta):
        return "timedelta:" + str(v.days) + "d" + str(v.seconds) + "s" + str(v.microseconds) + "us"
    if isinstance(v, datetime.time):
        return "time:" + v.isoformat()
    if isinstance(v, (set, frozenset)):
        return "set:" + ",".join(sorted(str(x) for x in v))
    return type(v).__name__ + ":" + str(v)


def plain(v):
    """A value without its type tag (for short results)."""
    s = render(v)
    return s if v is None else s.split(":", 1)[1]


def render_rows(rows):
    return "\n".join("|".join(render(v) for v in row) for row in rows)


def sha(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def error_code(e):
    """errno/SQLSTATE of a driver exception."""
    if DRIVER == "pymysql":
        code = e.args[0] if e.args else "?"
        # PyMySQL does not keep the SQLSTATE of an error packet.
        return f"{code}/-"
    return f"{getattr(e, 'errno', '?')}/{getattr(e, 'sqlstate', None) or '-'}"


def db_error_class():
    return pymysql.err.MySQLError if DRIVER == "pymysql" else mysql_connector.Error


def dist_version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001 - only for the detail text
        return "?"


def closing(conn):
    try:
        conn.close()
    except Exception as e:  # noqa: BLE001 - closing a broken connection
        log("close:", repr(e))


# ---- scenarios -----------------------------------------------------------


def s_connect():
    if DRIVER == "pymysql":
        conn = pymysql.connect(host=ENV["MATRIX_HOST"], port=int(ENV["MATRIX_PORT"]), user=ENV["MATRIX_USER"],
                               password=ENV["MATRIX_PASSWORD"], database=ENV["MATRIX_DB"])
        detail = f"PyMySQL {dist_version('PyMySQL')} (pure Python)"
    else:
        conn = mysql_connector.connect(host=ENV["MATRIX_HOST"], port=int(ENV["MATRIX_PORT"]), user=ENV["MATRIX_USER"],
                                       password=ENV["MATRIX_PASSWORD"], database=ENV["MATRIX_DB"])
        impl = type(conn).__name__
        kind = "C extension" if impl.startswith("CMySQL") else "pure Python"
        detail = (f"mysql-connector-python {dist_version('mysql-connector-python')}: mysql.connector.connect() with "
                  f"defaults picked the {kind} ({impl}, HAVE_CEXT={mysql_connector.HAVE_CEXT}); every other scenario "
                  f"uses the pure-Python implementation (use_pure=True)")
    try:
        cur = conn.cursor()
        v = one(cur, "SELECT 1+1")
        return "select=" + v, detail
    finally:
        closing(conn)


TYPES_COLS = ("id INT PRIMARY KEY, ti TINYINT, i INT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT, du DOUBLE,"
              " da DATE, dt DATETIME(6), tm TIME, ts TIMESTAMP NULL, vc VARCHAR(64) CHARACTER SET utf8mb4,"
              " tx TEXT CHARACTER SET utf8mb4, bl BLOB, js JSON, bi BIT(8), en ENUM('a','b','c')")
TYPES_ROW = (1, -128, 2147483647, 18446744073709551615, decimal.Decimal("12345678901234.123456"), 1.5, math.pi,
             datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 23, 59, 58, 123456),
             datetime.timedelta(hours=12, minutes=34, seconds=56), datetime.datetime(2024, 1, 15, 10, 20, 30),
             "héllo wörld 🚀", "text åäö " * 200, bytes(range(256)), '{"a": 1, "b": [true, null, "x"]}',
             b"\xa5", "b")


def mismatches(want, got):
    """Columns whose fetched value is not the inserted one (allowing the
    driver's usual representations: bytes for text, int for BIT)."""
    bad = []
    for i, (w, g) in enumerate(zip(want, got)):
        if isinstance(g, (bytearray, memoryview)):
            g = bytes(g)
        if isinstance(w, str) and isinstance(g, bytes):
            g = g.decode("utf-8", "replace")
        if isinstance(w, bytes) and isinstance(g, int):
            g = g.to_bytes(len(w), "big")
        if isinstance(w, str) and w.startswith("{"):
            try:
                same = json.loads(w) == json.loads(g)
            except (TypeError, ValueError):
                same = False
        else:
            same = w == g and (w is None) == (g is None)
        if not same:
            bad.append(f"column {i + 1}: inserted {render(w)[:60]}, read {render(g)[:60]}")
    if len(want) != len(got):
        bad.append(f"{len(got)} columns read, {len(want)} inserted")
    return bad


def s_prepared_types():
    if DRIVER == "pymysql":
        raise Unsupported("PyMySQL has no server-side prepared statements (it interpolates parameters client-side)")
    conn = connect()
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "types", TYPES_COLS)
        pc = conn.cursor(prepared=True)
        detail = "cursor(prepared=True) is " + type(pc).__name__
        ins = "INSERT INTO " + t + " VALUES (" + ",".join("?" * 17) + ")"
        pc.execute(ins, TYPES_ROW)
        pc.execute(ins, (2,) + (None,) * 16)
        conn.commit()
        pc.execute("SELECT * FROM " + t + " WHERE id IN (?, ?) ORDER BY id", (1, 2))
        rows = pc.fetchall()
        out = render_rows(rows)
        log("prepared_types rendering:\n" + out)
        bad = mismatches(TYPES_ROW, rows[0]) + mismatches((2,) + (None,) * 16, rows[1])
        if bad:
            raise RuntimeError("values read back differ from those inserted: " + "; ".join(bad))
        return f"rows={len(rows)} sha256={sha(out)}", detail
    finally:
        closing(conn)


def s_batch():
    global measured
    conn = connect()
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "batch", "id INT PRIMARY KEY, v INT")
        conn.commit()
        rows = [(i, i) for i in range(1, 1001)]
        start = time.perf_counter()
        cur.executemany("INSERT INTO " + t + " (id, v) VALUES (%s, %s)", rows)
        conn.commit()
        measured = time.perf_counter() - start
        affected = cur.rowcount
        n = one(cur, "SELECT COUNT(*) FROM " + t)
        s = one(cur, "SELECT SUM(v) FROM " + t)
        return f"rows={plain_s(n)} sum={plain_s(s)} rowcount={affected}", "executemany() + commit()"
    finally:
        closing(conn)


def plain_s(rendered):
    """Strip the type tag of an already rendered value."""
    return rendered.split(":", 1)[1] if ":" in rendered else rendered


def s_transactions():
    conn = connect()
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "trx", "id INT PRIMARY KEY")
        conn.commit()
        if DRIVER == "pymysql":
            conn.begin()
        else:
            conn.start_transaction()
        cur.execute("INSERT INTO " + t + " VALUES (1)")
        cur.execute("SAVEPOINT sp1")
        cur.execute("INSERT INTO " + t + " VALUES (2)")
        cur.execute("ROLLBACK TO SAVEPOINT sp1")
        conn.commit()
        if DRIVER == "pymysql":
            conn.begin()
        else:
            conn.start_transaction()
        cur.execute("INSERT INTO " + t + " VALUES (3)")
        conn.rollback()
        v = one(cur, "SELECT IFNULL(GROUP_CONCAT(id ORDER BY id), '') FROM " + t)
        return "rows=" + plain_s(v), ""
    finally:
        closing(conn)


def multi_text():
    t = name("multi")
    return ("DROP TABLE IF EXISTS " + t + "; CREATE TABLE " + t + " (id INT PRIMARY KEY);"
            " INSERT INTO " + t + " VALUES (1),(2),(3); SELECT COUNT(*) AS n FROM " + t + ";"
            " SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3; UPDATE " + t + " SET id = id + 10 WHERE id > 1;"
            " SELECT SUM(id) FROM " + t)


def s_multi_statement():
    if DRIVER == "pymysql":
        from pymysql.constants import CLIENT
        conn = connect(client_flag=CLIENT.MULTI_STATEMENTS)
        detail = "client_flag=CLIENT.MULTI_STATEMENTS, execute() + nextset()"
    else:
        conn = connect()  # 9.x: multi statements are on by default; execute() + fetchsets()
        detail = "execute() + fetchsets() (the 9.x multi-statement API)"
    try:
        cur = conn.cursor()
        sets = []
        if DRIVER == "pymysql":
            cur.execute(multi_text())
            while True:
                if cur.description is not None:
                    sets.append("rows:" + ";".join(",".join(plain(v) for v in r) for r in cur.fetchall()))
                else:
                    sets.append(f"ok:{cur.rowcount}")
                if not cur.nextset():
                    break
        else:
            cur.execute(multi_text())
            for _stmt, rows in cur.fetchsets():
                sets.append("rows:" + ";".join(",".join(plain(v) for v in r) for r in rows))
        conn.commit()
        return "sets=[" + "] [".join(sets) + "]", detail
    finally:
        closing(conn)


def create_proc(cur):
    p = name("proc")
    cur.execute("DROP PROCEDURE IF EXISTS " + p)
    cur.execute("CREATE PROCEDURE " + p + "(IN a INT, OUT b INT, INOUT x INT) BEGIN"
                " SET b = a * 2; SET x = x + a; SELECT a AS a, 'first' AS s; SELECT seq FROM seq_1_to_3; END")
    return p


def s_procedure_out():
    conn = connect()
    try:
        cur = conn.cursor()
        p = create_proc(cur)
        sets = []
        if DRIVER == "pymysql":
            # PyMySQL's callproc sets @_p_0.. and calls p(@_p_0, ...); OUT
            # values are read back with SELECT, as its documentation says.
            cur.callproc(p, (5, 0, 10))
            while True:
                if cur.description is not None:
                    sets.append(";".join(",".join(plain(v) for v in r) for r in cur.fetchall()))
                if not cur.nextset():
                    break
            cur.execute(f"SELECT @_{p}_1, @_{p}_2")
            outs = cur.fetchone()
            detail = "callproc() then SELECT @_p_1, @_p_2"
        else:
            outs = cur.callproc(p, (5, 0, 10))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                for r in cur.stored_results():
                    sets.append(";".join(",".join(plain(v) for v in row) for row in r.fetchall()))
            outs = outs[1:]
            detail = "callproc() returns the OUT/INOUT values, stored_results() the result sets"
        return "sets=[" + "] [".join(sets) + "] b_x=" + " ".join(plain(v) for v in outs), detail
    finally:
        closing(conn)


def large(mib):
    def scenario():
        data = random.Random(mib).randbytes(mib << 20)
        conn = connect()
        try:
            cur = conn.cursor()
            t = fresh_table(cur, f"large{mib}", "id INT PRIMARY KEY, b LONGBLOB")
            conn.commit()
            cur.execute("INSERT INTO " + t + " VALUES (%s, %s)", (1, data))
            conn.commit()
            cur.execute("SELECT b FROM " + t + " WHERE id = %s", (1,))
            back = bytes(cur.fetchone()[0])
            cur.fetchall()
            return f"len={len(back)} sha256={sha(back)} same={back == data}", "a bytes parameter of cursor.execute()"
        finally:
            closing(conn)
    return scenario


def s_stream():
    conn = connect()
    try:
        if DRIVER == "pymysql":
            cur = conn.cursor(pymysql.cursors.SSCursor)
            detail = "SSCursor (unbuffered)"
        else:
            cur = conn.cursor(buffered=False)
            detail = "cursor(buffered=False) is " + type(cur).__name__
        cur.execute("SELECT seq, MD5(seq) FROM seq_1_to_200000")
        h = hashlib.sha256()
        n = 0
        while True:
            rows = cur.fetchmany(1000)
            if not rows:
                break
            for a, b in rows:
                h.update(f"{plain(a)},{plain(b)}\n".encode())
                n += 1
        return f"rows={n} sha256={h.hexdigest()}", detail
    finally:
        closing(conn)


def s_cursor_fetch():
    if DRIVER == "pymysql":
        raise Unsupported("PyMySQL has no server-side prepared statements, so no server-side cursor (COM_STMT_FETCH)")
    raise Unsupported("Connector/Python has no API to open a server-side cursor: its prepared cursors execute "
                      "with CURSOR_TYPE_NO_CURSOR (COM_STMT_FETCH is only used if the server opened one)")


def s_errors():
    conn = connect()
    err_cls = db_error_class()
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "err", "id INT PRIMARY KEY")
        cur.execute("INSERT INTO " + t + " VALUES (1)")
        conn.commit()
        cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'")
        out = []
        for bad in ("SELEC 1", "INSERT INTO " + t + " VALUES (1)", "INSERT INTO " + t + " VALUES (1/0)"):
            code = "no error"
            try:
                cur.execute(bad)
            except err_cls as e:
                code = error_code(e)
            conn.rollback()
            out.append(code + " then " + plain_s(one(cur, "SELECT 1")))
        return "; ".join(out), ""
    finally:
        closing(conn)


def s_warnings():
    conn = connect()
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "ai", "id INT AUTO_INCREMENT PRIMARY KEY, v INT")
        conn.commit()
        out = []
        if DRIVER == "pymysql":
            cur.execute("SELECT CAST('abc' AS SIGNED)")
            out.append("cast=" + plain(cur.fetchone()[0]))
            out.append(f"driver_warning_count={conn._result.warning_count}")
            ws = conn.show_warnings()  # SHOW WARNINGS on this connection
            detail = "Connection.show_warnings()"
        else:
            conn.get_warnings = True  # the driver fetches SHOW WARNINGS after each statement
            wc = conn.cursor()
            wc.execute("SELECT CAST('abc' AS SIGNED)")
            out.append("cast=" + plain(wc.fetchall()[0][0]))
            out.append(f"driver_warning_count={wc.warning_count}")
            ws = wc.warnings or []
            wc.close()
            conn.get_warnings = False
            detail = "get_warnings=True, cursor.warnings"
        out.append("warnings=[" + ",".join(f"{w[0]}:{w[1]}" for w in ws) + "]")
        out.append("warning_count=" + plain_s(one(cur, "SELECT @@warning_count")))
        cur.execute("INSERT INTO " + t + " (v) VALUES (10)")
        driver_id = cur.lastrowid
        conn.commit()
        cur.execute("SELECT id FROM " + t)  # the plain SELECT
        row_id = cur.fetchall()[0][0]
        cur.execute("SELECT LAST_INSERT_ID(), ROW_COUNT()")
        lid, rc = cur.fetchone()
        cur.fetchall()
        out.append(f"last_insert_id_is_row_id={lid == row_id} driver_lastrowid_is_row_id={driver_id == row_id}"
                   f" row_count={plain(rc)}")
        cur.execute("SELECT SQL_CALC_FOUND_ROWS seq FROM seq_1_to_50 LIMIT 1")
        cur.fetchall()
        out.append("found_rows=" + plain_s(one(cur, "SELECT FOUND_ROWS()")))
        return " ".join(out), detail
    finally:
        closing(conn)


SESSION_SETS = ("SET time_zone = '+03:00'", "SET sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'",
                "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", "SET @matrix_uv = 42")
SESSION_READS = ("@@time_zone", "@@sql_mode", "@@character_set_connection", "@@collation_connection", "@matrix_uv")


def s_session_vars():
    conn = connect()
    try:
        cur = conn.cursor()
        for q in SESSION_SETS:
            cur.execute(q)
        out = [v + "=" + plain_s(one(cur, "SELECT " + v)) for v in SESSION_READS]
        return " ".join(out), ""
    finally:
        closing(conn)


def s_compression():
    if DRIVER == "pymysql":
        raise Unsupported("PyMySQL has no protocol compression (its compress argument raises NotImplementedError)")
    conn = connect(compress=True)
    try:
        cur = conn.cursor()
        t = fresh_table(cur, "compress", "id INT PRIMARY KEY, tx LONGTEXT")
        conn.commit()
        lines = []
        size, i = 0, 0
        while size < 1 << 20:
            line = f"line {i} of a compressible text\n"
            lines.append(line)
            size += len(line)
            i += 1
        text = "".join(lines)[: 1 << 20]
        cur.execute("INSERT INTO " + t + " VALUES (1, %s)", (text,))
        conn.commit()
        cur.execute("SELECT tx FROM " + t + " WHERE id = 1")
        back = cur.fetchall()[0][0]
        if isinstance(back, (bytes, bytearray)):
            back = bytes(back).decode()
        cur.execute("SELECT seq FROM seq_1_to_1000")
        rows = cur.fetchall()
        return (f"text_len={len(back)} text_sha256={sha(back)} same={back == text} rows={len(rows)}"
                f" sum={sum(r[0] for r in rows)}"), "compress=True"
    finally:
        closing(conn)


def s_load_data_local():
    path = os.path.join(ENV["MATRIX_TMP"], name("load.csv"))
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        for i in range(1, 10001):
            w.writerow((i, 2 * i))
    try:
        if DRIVER == "pymysql":
            conn = connect(local_infile=True)
            detail = "local_infile=True"
        else:
            conn = connect(allow_local_infile=True)
            detail = "allow_local_infile=True"
        try:
            cur = conn.cursor()
            t = fresh_table(cur, "load", "id INT PRIMARY KEY, v INT")
            cur.execute("LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE " + t +
                        " FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' (id, v)")
            affected = cur.rowcount
            conn.commit()
            n = one(cur, "SELECT COUNT(*) FROM " + t)
            s = one(cur, "SELECT SUM(v) FROM " + t)
            return f"affected={affected} rows={plain_s(n)} sum={plain_s(s)}", detail
        finally:
            closing(conn)
    finally:
        os.remove(path)


STATE = ("SELECT CONCAT_WS(' ', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), @@session.time_zone,"
         " IFNULL(CAST(@matrix_uv AS CHAR), 'NULL'))")


def s_reset_change_user():
    if DRIVER == "pymysql":
        raise Unsupported("PyMySQL has neither COM_RESET_CONNECTION nor COM_CHANGE_USER")
    conn = connect()
    try:
        cur = conn.cursor()
        cur.execute("SET SESSION time_zone = '+05:00'")
        cur.execute("SET @matrix_uv = 7")
        out = ["before=[" + plain_s(one(cur, STATE)) + "]"]
        cur.close()
        ok = conn.cmd_reset_connection()
        cur = conn.cursor()
        out.append(f"reset={ok} after_reset=[" + plain_s(one(cur, STATE)) + "]")
        cur.execute("SET SESSION time_zone = '+06:00'")
        cur.execute("SET @matrix_uv = 8")
        cur.close()
        conn.cmd_change_user(username=ENV["MATRIX_USER2"], password=ENV["MATRIX_PASSWORD2"], database=ENV["MATRIX_DB"])
        cur = conn.cursor()
        out.append("after_change_user=[" + plain_s(one(cur, STATE)) + "]")
        return " ".join(out), "cmd_reset_connection(), cmd_change_user()"
    finally:
        closing(conn)


def s_tls():
    ca = ENV["MATRIX_SSL_CA"]
    if DRIVER == "pymysql":
        # ssl={'ca': ...} alone: CERT_REQUIRED and hostname check against
        # that CA. (Adding ssl_verify_cert=True would make PyMySQL rebuild
        # the ssl dict from ssl_ca=None and verify against the system CAs.)
        conn = connect(ssl={"ca": ca})
        import ssl as ssl_mod
        used = isinstance(conn._sock, ssl_mod.SSLSocket)
        detail = "ssl={'ca': ...} (verify_mode CERT_REQUIRED, check_hostname); TLS seen as the driver's socket being an SSLSocket"
    else:
        conn = connect(ssl_ca=ca, ssl_verify_cert=True)
        if type(conn).__name__.startswith("CMySQL"):
            # The C extension does not maintain is_secure; ask libmysqlclient.
            used = bool(conn._cmysql.get_ssl_cipher())
            detail = "ssl_ca + ssl_verify_cert=True; TLS seen by the C extension's get_ssl_cipher()"
        else:
            used = conn.is_secure
            detail = "ssl_ca + ssl_verify_cert=True; TLS seen by is_secure"
    try:
        if not used:
            raise RuntimeError("the driver connected without TLS (" + detail + ")")
        cur = conn.cursor()
        v = one(cur, "SELECT 1")
        return f"tls={used} select={plain_s(v)}", detail
    finally:
        closing(conn)


SCENARIOS = [
    ("connect", s_connect), ("prepared_types", s_prepared_types), ("batch", s_batch),
    ("transactions", s_transactions), ("multi_statement", s_multi_statement), ("procedure_out", s_procedure_out),
    ("large_20mib", large(20)), ("large_40mib", large(40)), ("stream_200k", s_stream),
    ("cursor_fetch", s_cursor_fetch), ("errors", s_errors), ("warnings", s_warnings),
    ("session_vars", s_session_vars), ("compression", s_compression), ("load_data_local", s_load_data_local),
    ("reset_change_user", s_reset_change_user), ("tls", s_tls),
]


def main():
    global DRIVER, mysql_connector, pymysql, measured
    missing = [k for k in ENV_KEYS if k not in os.environ]
    if missing:
        log("environment variables not set (see test/drivers/README.md): " + ", ".join(missing))
        return 2
    ENV.update({k: os.environ[k] for k in ENV_KEYS})
    DRIVER = ENV["MATRIX_DRIVER"]
    if DRIVER == "pymysql":
        import pymysql as _p
        import pymysql.cursors  # noqa: F401
        pymysql = _p
    elif DRIVER == "mysql-connector-python":
        import mysql.connector as _m
        mysql_connector = _m
    else:
        log(f"MATRIX_DRIVER must be mysql-connector-python or pymysql, not {DRIVER}")
        return 2
    only = {s.strip() for s in os.environ.get("MATRIX_SCENARIOS", "").split(",") if s.strip()}
    signal.signal(signal.SIGALRM, _on_alarm)
    for sc_name, fn in SCENARIOS:
        if only and sc_name not in only:
            continue
        measured = None
        status, result, detail = "pass", "", ""
        start = time.perf_counter()
        signal.alarm(SCENARIO_TIMEOUT)
        try:
            result, detail = fn()
        except Unsupported as e:
            status, result, detail = "unsupported", "", str(e)
        except BaseException as e:  # noqa: BLE001 - every failure is reported, never fatal
            if isinstance(e, KeyboardInterrupt):
                raise
            status, detail = "fail", f"{type(e).__name__}: {e}"
            log(f"{sc_name}: " + "".join(traceback.format_exception(e)))
        finally:
            signal.alarm(0)
        took = measured if measured is not None else time.perf_counter() - start
        line = {"scenario": sc_name, "status": status, "result": result, "detail": detail,
                "ms": round(took * 1000, 1)}
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
