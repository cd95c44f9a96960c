// The driver-matrix scenario program for MySQL Connector/J and MariaDB
// Connector/J (MATRIX_DRIVER=mysql-connector-j | mariadb-connector-j).
// Protocol and scenarios: test/drivers/README.md. One JSON line per
// scenario on stdout; everything else goes to stderr.
//
// Plain JDBC; the driver-specific classes are used only where JDBC has no
// API (reset connection, change user, "is this connection TLS").

import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class Matrix {
    interface Scenario {
        String run() throws Exception;
    }

    /** Thrown by a scenario whose feature the driver does not have. */
    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;

        Unsupported(String why) {
            super(why);
        }
    }

    static final PrintStream OUT = System.out;
    static final int SCENARIO_TIMEOUT_S = 60;

    static String driver, host, port, user, password, db, user2, password2, sslCa, prefix, tmp;
    static boolean mysqlCJ;
    /** Wall time of a scenario's measured part; -1 means the whole scenario. */
    static volatile double measuredMs = -1;

    public static void main(String[] args) throws Exception {
        System.setOut(System.err); // drivers and stray prints never reach the protocol stream
        driver = env("MATRIX_DRIVER");
        if (!driver.equals("mysql-connector-j") && !driver.equals("mariadb-connector-j")) {
            System.err.println("MATRIX_DRIVER must be mysql-connector-j or mariadb-connector-j, not " + driver);
            System.exit(2);
        }
        mysqlCJ = driver.equals("mysql-connector-j");
        host = env("MATRIX_HOST");
        port = env("MATRIX_PORT");
        user = env("MATRIX_USER");
        password = env("MATRIX_PASSWORD");
        db = env("MATRIX_DB");
        user2 = env("MATRIX_USER2");
        password2 = env("MATRIX_PASSWORD2");
        sslCa = env("MATRIX_SSL_CA");
        prefix = env("MATRIX_PREFIX");
        tmp = env("MATRIX_TMP");

        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("connect", Matrix::connect);
        all.put("prepared_types", Matrix::preparedTypes);
        all.put("batch", Matrix::batch);
        all.put("transactions", Matrix::transactions);
        all.put("multi_statement", Matrix::multiStatement);
        all.put("procedure_out", Matrix::procedureOut);
        all.put("large_20mib", () -> large(20));
        all.put("large_40mib", () -> large(40));
        all.put("stream_200k", Matrix::stream);
        all.put("cursor_fetch", Matrix::cursorFetch);
        all.put("errors", Matrix::errors);
        all.put("warnings", Matrix::warnings);
        all.put("session_vars", Matrix::sessionVars);
        all.put("compression", Matrix::compression);
        all.put("load_data_local", Matrix::loadDataLocal);
        all.put("reset_change_user", Matrix::resetChangeUser);
        all.put("tls", Matrix::tls);

        List<String> only = System.getenv("MATRIX_SCENARIOS") == null || System.getenv("MATRIX_SCENARIOS").isBlank()
                ? null : Arrays.asList(System.getenv("MATRIX_SCENARIOS").split("\\s*,\\s*"));
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true); // a scenario stuck past its timeout does not keep the JVM alive
            return t;
        });
        for (Map.Entry<String, Scenario> e : all.entrySet()) {
            if (only == null || only.contains(e.getKey())) {
                runOne(pool, e.getKey(), e.getValue());
            }
        }
        OUT.flush();
        System.exit(0);
    }

    static void runOne(ExecutorService pool, String name, Scenario s) {
        String status = "pass", result = "", detail = "";
        measuredMs = -1;
        long t0 = System.nanoTime();
        Future<String> f = pool.submit(s::run);
        try {
            result = f.get(SCENARIO_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            status = "fail";
            detail = "timeout: no answer within " + SCENARIO_TIMEOUT_S + "s";
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof Unsupported) {
                status = "unsupported";
            } else {
                status = "fail";
                c.printStackTrace();
            }
            detail = describe(c);
        } catch (InterruptedException e) {
            status = "fail";
            detail = "interrupted";
        }
        double ms = measuredMs >= 0 ? measuredMs : (System.nanoTime() - t0) / 1e6;
        if (!status.equals("pass")) {
            System.err.println(name + ": " + status + ": " + detail);
        }
        OUT.println("{\"scenario\":" + json(name) + ",\"status\":" + json(status) + ",\"result\":" + json(result)
                + ",\"detail\":" + json(detail) + ",\"ms\":" + String.format(java.util.Locale.ROOT, "%.1f", ms) + "}");
        OUT.flush();
    }

    static String describe(Throwable t) {
        if (t instanceof Unsupported) {
            return t.getMessage();
        }
        StringBuilder b = new StringBuilder(t.getClass().getName() + ": " + t.getMessage());
        if (t instanceof SQLException se) {
            b.append(" [code ").append(se.getErrorCode()).append(" sqlstate ").append(se.getSQLState()).append("]");
        }
        return b.toString();
    }

    // ---- connections --------------------------------------------------

    /** A connection with the driver's defaults plus the given URL options. */
    static Connection open(String options) throws SQLException {
        return openAs(user, password, options);
    }

    static Connection openAs(String u, String p, String options) throws SQLException {
        String url = (mysqlCJ ? "jdbc:mysql://" : "jdbc:mariadb://") + host + ":" + port + "/" + db
                + "?connectTimeout=10000&socketTimeout=" + (SCENARIO_TIMEOUT_S * 1000)
                + (options.isEmpty() ? "" : "&" + options);
        return DriverManager.getConnection(url, u, p);
    }

    static Connection open() throws SQLException {
        return open("");
    }

    /** Drops and creates table prefix+name. */
    static String table(Connection c, String name, String columns) throws SQLException {
        String t = prefix + name;
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + t);
            st.execute("CREATE TABLE " + t + " (" + columns + ")");
        }
        return t;
    }

    static String one(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                return "(no row)";
            }
            String v = rs.getString(1);
            return v == null ? "NULL" : v;
        }
    }

    // ---- scenarios ----------------------------------------------------

    static String connect() throws Exception {
        String url = (mysqlCJ ? "jdbc:mysql://" : "jdbc:mariadb://") + host + ":" + port + "/" + db;
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            return "select=" + one(c, "SELECT 1+1");
        }
    }

    static String preparedTypes() throws Exception {
        try (Connection c = open("useServerPrepStmts=true")) {
            String t = table(c, "types", "id INT PRIMARY KEY, ti TINYINT, i INT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT,"
                    + " du DOUBLE, da DATE, dt DATETIME(6), tm TIME, ts TIMESTAMP NULL, vc VARCHAR(64) CHARACTER SET utf8mb4,"
                    + " tx TEXT CHARACTER SET utf8mb4, bl BLOB, js JSON, bi BIT(8), en ENUM('a','b','c')");
            byte[] all = new byte[256];
            for (int i = 0; i < 256; i++) {
                all[i] = (byte) i;
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")) {
                ps.setInt(1, 1);
                ps.setByte(2, (byte) -128);
                ps.setInt(3, 2147483647);
                ps.setBigDecimal(4, new BigDecimal("18446744073709551615"));
                ps.setBigDecimal(5, new BigDecimal("12345678901234.123456"));
                ps.setFloat(6, 1.5f);
                ps.setDouble(7, Math.PI);
                ps.setObject(8, LocalDate.of(2024, 2, 29));
                ps.setObject(9, LocalDateTime.of(2024, 2, 29, 23, 59, 58, 123456000));
                ps.setObject(10, LocalTime.of(12, 34, 56));
                ps.setObject(11, LocalDateTime.of(2024, 1, 15, 10, 20, 30));
                ps.setString(12, "h\u00e9llo w\u00f6rld \uD83D\uDE80");
                ps.setString(13, "text \u00e5\u00e4\u00f6 ".repeat(200));
                ps.setBytes(14, all);
                ps.setString(15, "{\"a\": 1, \"b\": [true, null, \"x\"]}");
                ps.setInt(16, 0xA5);
                ps.setString(17, "b");
                ps.executeUpdate();
                int[] types = {Types.TINYINT, Types.INTEGER, Types.BIGINT, Types.DECIMAL, Types.FLOAT, Types.DOUBLE, Types.DATE,
                    Types.TIMESTAMP, Types.TIME, Types.TIMESTAMP, Types.VARCHAR, Types.VARCHAR, Types.VARBINARY, Types.VARCHAR,
                    Types.INTEGER, Types.VARCHAR};
                ps.setInt(1, 2);
                for (int i = 0; i < types.length; i++) {
                    ps.setNull(i + 2, types[i]);
                }
                ps.executeUpdate();
            }
            StringBuilder out = new StringBuilder();
            int rows = 0;
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + t + " WHERE id IN (?, ?) ORDER BY id")) {
                ps.setInt(1, 1);
                ps.setInt(2, 2);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows++;
                        List<String> f = new ArrayList<>();
                        f.add(String.valueOf(rs.getInt(1)));
                        f.add(v(rs, rs.getByte(2)));
                        f.add(v(rs, rs.getInt(3)));
                        f.add(v(rs, rs.getBigDecimal(4) == null ? null : rs.getBigDecimal(4).toPlainString()));
                        f.add(v(rs, rs.getBigDecimal(5) == null ? null : rs.getBigDecimal(5).toPlainString()));
                        f.add(v(rs, rs.getFloat(6)));
                        f.add(v(rs, rs.getDouble(7)));
                        f.add(v(rs, rs.getObject(8, LocalDate.class)));
                        f.add(v(rs, rs.getObject(9, LocalDateTime.class)));
                        f.add(v(rs, rs.getObject(10, LocalTime.class)));
                        f.add(v(rs, rs.getObject(11, LocalDateTime.class)));
                        f.add(v(rs, rs.getString(12)));
                        f.add(v(rs, rs.getString(13)));
                        byte[] b = rs.getBytes(14);
                        f.add(v(rs, b == null ? null : HexFormat.of().formatHex(b)));
                        f.add(v(rs, rs.getString(15)));
                        f.add(v(rs, rs.getLong(16)));
                        f.add(v(rs, rs.getString(17)));
                        out.append(String.join("|", f)).append('\n');
                    }
                }
            }
            System.err.print("prepared_types rendering:\n" + out);
            return "rows=" + rows + " sha256=" + sha256(out.toString().getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Renders a column value, NULL when the last getter read SQL NULL. */
    static String v(ResultSet rs, Object o) throws SQLException {
        return rs.wasNull() || o == null ? "NULL" : o.toString();
    }

    static String batch() throws Exception {
        try (Connection c = open()) {
            String t = table(c, "batch", "id INT PRIMARY KEY, v INT");
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (id, v) VALUES (?, ?)")) {
                for (int i = 1; i <= 1000; i++) {
                    ps.setInt(1, i);
                    ps.setInt(2, i);
                    ps.addBatch();
                }
                long t0 = System.nanoTime();
                ps.executeBatch();
                c.commit();
                measuredMs = (System.nanoTime() - t0) / 1e6;
            }
            c.setAutoCommit(true);
            return "rows=" + one(c, "SELECT COUNT(*) FROM " + t) + " sum=" + one(c, "SELECT SUM(v) FROM " + t);
        }
    }

    static String transactions() throws Exception {
        try (Connection c = open()) {
            String t = table(c, "trx", "id INT PRIMARY KEY");
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.executeUpdate("INSERT INTO " + t + " VALUES (1)");
                Savepoint sp = c.setSavepoint("sp1");
                st.executeUpdate("INSERT INTO " + t + " VALUES (2)");
                c.rollback(sp);
                c.commit();
                st.executeUpdate("INSERT INTO " + t + " VALUES (3)");
                c.rollback();
            }
            c.setAutoCommit(true);
            return "rows=" + one(c, "SELECT IFNULL(GROUP_CONCAT(id ORDER BY id), '') FROM " + t);
        }
    }

    static String multiStatement() throws Exception {
        try (Connection c = open("allowMultiQueries=true"); Statement st = c.createStatement()) {
            String t = prefix + "multi";
            String sql = "DROP TABLE IF EXISTS " + t + "; CREATE TABLE " + t + " (id INT PRIMARY KEY);"
                    + " INSERT INTO " + t + " VALUES (1),(2),(3); SELECT COUNT(*) AS n FROM " + t + ";"
                    + " SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3; UPDATE " + t + " SET id = id + 10 WHERE id > 1;"
                    + " SELECT SUM(id) FROM " + t;
            return allResults(st, st.execute(sql));
        }
    }

    /** Renders every result of a statement: result sets as rs[...], update counts as uc=N. */
    static String allResults(Statement st, boolean isResultSet) throws SQLException {
        List<String> parts = new ArrayList<>();
        while (true) {
            if (isResultSet) {
                try (ResultSet rs = st.getResultSet()) {
                    parts.add("rs[" + rows(rs) + "]");
                }
            } else {
                int n = st.getUpdateCount();
                if (n == -1) {
                    break;
                }
                parts.add("uc=" + n);
            }
            isResultSet = st.getMoreResults();
        }
        return String.join("|", parts);
    }

    static String rows(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
            List<String> cols = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                cols.add(String.valueOf(rs.getString(i)));
            }
            rows.add(String.join(",", cols));
        }
        return String.join(";", rows);
    }

    static String procedureOut() throws Exception {
        try (Connection c = open()) {
            String p = prefix + "proc";
            try (Statement st = c.createStatement()) {
                st.execute("DROP PROCEDURE IF EXISTS " + p);
                st.execute("CREATE PROCEDURE " + p + "(IN a INT, OUT b INT, INOUT x INT) BEGIN"
                        + " SET b = a * 2; SET x = x + a; SELECT a AS a, 'first' AS s; SELECT seq FROM seq_1_to_3; END");
            }
            try (CallableStatement cs = c.prepareCall("{call " + p + "(?, ?, ?)}")) {
                cs.setInt(1, 5);
                cs.registerOutParameter(2, Types.INTEGER);
                cs.setInt(3, 10);
                cs.registerOutParameter(3, Types.INTEGER);
                String sets = allResults(cs, cs.execute());
                return sets + " b=" + cs.getInt(2) + " x=" + cs.getInt(3);
            }
        }
    }

    static String large(int mib) throws Exception {
        byte[] data = new byte[mib << 20];
        new Random(mib).nextBytes(data);
        try (Connection c = open()) {
            String t = table(c, "large" + mib, "id INT PRIMARY KEY, b LONGBLOB");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " VALUES (?, ?)")) {
                ps.setInt(1, 1);
                ps.setBytes(2, data);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT b FROM " + t + " WHERE id = ?")) {
                ps.setInt(1, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    byte[] got = rs.getBytes(1);
                    return "len=" + got.length + " sha256=" + sha256(got) + " same=" + Arrays.equals(got, data);
                }
            }
        }
    }

    static final String STREAM_SQL = "SELECT seq, MD5(seq) FROM seq_1_to_200000";

    static String stream() throws Exception {
        try (Connection c = open();
             Statement st = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
            // MySQL Connector/J streams row by row with Integer.MIN_VALUE;
            // MariaDB Connector/J streams in chunks of the fetch size.
            st.setFetchSize(mysqlCJ ? Integer.MIN_VALUE : 1000);
            try (ResultSet rs = st.executeQuery(STREAM_SQL)) {
                return hashRows(rs);
            }
        }
    }

    static String hashRows(ResultSet rs) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        long n = 0;
        while (rs.next()) {
            n++;
            md.update((rs.getLong(1) + "," + rs.getString(2) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return "rows=" + n + " sha256=" + HexFormat.of().formatHex(md.digest());
    }

    static String cursorFetch() throws Exception {
        if (!mysqlCJ) {
            throw new Unsupported("MariaDB Connector/J has no server-side cursor (COM_STMT_FETCH); fetchSize only streams");
        }
        try (Connection c = open("useCursorFetch=true");
             PreparedStatement ps = c.prepareStatement("SELECT seq, MD5(seq) FROM seq_1_to_10000")) {
            ps.setFetchSize(100);
            try (ResultSet rs = ps.executeQuery()) {
                return hashRows(rs);
            }
        }
    }

    static String errors() throws Exception {
        try (Connection c = open(); Statement st = c.createStatement()) {
            String t = table(c, "err", "id INT PRIMARY KEY");
            st.executeUpdate("INSERT INTO " + t + " VALUES (1)");
            st.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'");
            List<String> out = new ArrayList<>();
            for (String bad : new String[] {"SELEC 1", "INSERT INTO " + t + " VALUES (1)", "INSERT INTO " + t + " VALUES (1/0)"}) {
                String code = "no error";
                try {
                    st.execute(bad);
                } catch (SQLException e) {
                    code = e.getErrorCode() + "/" + e.getSQLState();
                }
                out.add(code + " then " + one(c, "SELECT 1"));
            }
            return String.join("; ", out);
        }
    }

    static String warnings() throws Exception {
        try (Connection c = open(); Statement st = c.createStatement()) {
            String t = table(c, "ai", "id INT AUTO_INCREMENT PRIMARY KEY, v INT");
            List<String> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT CAST('abc' AS SIGNED)")) {
                rs.next();
                out.add("cast=" + rs.getString(1));
            }
            List<String> codes = new ArrayList<>();
            for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
                codes.add(String.valueOf(w.getErrorCode()));
            }
            out.add("warnings=[" + String.join(",", codes) + "]");
            out.add("warning_count=" + one(c, "SELECT @@warning_count"));
            st.executeUpdate("INSERT INTO " + t + " (v) VALUES (10)");
            out.add("row_count=" + one(c, "SELECT ROW_COUNT()"));
            one(c, "SELECT 1");
            String id = one(c, "SELECT id FROM " + t);
            String lid = one(c, "SELECT LAST_INSERT_ID()");
            out.add("last_insert_id=" + (lid.equals(id) ? "inserted id" : lid + " but the row has id " + id));
            one(c, "SELECT SQL_CALC_FOUND_ROWS seq FROM seq_1_to_50 LIMIT 1");
            out.add("found_rows=" + one(c, "SELECT FOUND_ROWS()"));
            return String.join(" ", out);
        }
    }

    static String sessionVars() throws Exception {
        try (Connection c = open(); Statement st = c.createStatement()) {
            st.execute("SET time_zone = '+03:00'");
            st.execute("SET sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'");
            st.execute("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
            st.execute("SET @matrix_uv = 42");
            List<String> out = new ArrayList<>();
            for (String q : new String[] {"@@time_zone", "@@sql_mode", "@@character_set_connection", "@@collation_connection", "@matrix_uv"}) {
                out.add(q + "=" + one(c, "SELECT " + q));
            }
            return String.join(" ", out);
        }
    }

    static String compression() throws Exception {
        try (Connection c = open("useCompression=true")) {
            String t = table(c, "compress", "id INT PRIMARY KEY, tx LONGTEXT");
            StringBuilder sb = new StringBuilder(1 << 20);
            for (int i = 0; sb.length() < (1 << 20); i++) {
                sb.append("line ").append(i).append(" of a compressible text\n");
            }
            String text = sb.substring(0, 1 << 20);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " VALUES (1, ?)")) {
                ps.setString(1, text);
                ps.executeUpdate();
            }
            String back = one(c, "SELECT tx FROM " + t + " WHERE id = 1");
            String rows;
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT seq FROM seq_1_to_1000")) {
                long n = 0, sum = 0;
                while (rs.next()) {
                    n++;
                    sum += rs.getLong(1);
                }
                rows = "rows=" + n + " sum=" + sum;
            }
            return "text_len=" + back.length() + " text_sha256=" + sha256(back.getBytes(StandardCharsets.UTF_8)) + " " + rows;
        }
    }

    static String loadDataLocal() throws Exception {
        Path csv = Path.of(tmp, prefix + "load.csv");
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= 10000; i++) {
            sb.append(i).append(',').append(i * 2).append('\n');
        }
        Files.writeString(csv, sb);
        try (Connection c = open(mysqlCJ ? "allowLoadLocalInfile=true" : "allowLocalInfile=true"); Statement st = c.createStatement()) {
            String t = table(c, "load", "id INT PRIMARY KEY, v INT");
            int n = st.executeUpdate("LOAD DATA LOCAL INFILE '" + csv + "' INTO TABLE " + t
                    + " FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' (id, v)");
            return "affected=" + n + " rows=" + one(c, "SELECT COUNT(*) FROM " + t) + " sum=" + one(c, "SELECT SUM(v) FROM " + t);
        } finally {
            Files.deleteIfExists(csv);
        }
    }

    static String resetChangeUser() throws Exception {
        String state = "SELECT CONCAT_WS(' ', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), @@session.time_zone, IFNULL(CAST(@matrix_uv AS CHAR), 'NULL'))";
        // MariaDB Connector/J's reset() sends COM_RESET_CONNECTION only with useResetConnection.
        try (Connection c = open(mysqlCJ ? "" : "useResetConnection=true"); Statement st = c.createStatement()) {
            List<String> out = new ArrayList<>();
            st.execute("SET SESSION time_zone = '+05:00'");
            st.execute("SET @matrix_uv = 7");
            out.add("before=[" + one(c, state) + "]");
            if (mysqlCJ) {
                c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).resetServerState(); // COM_RESET_CONNECTION
            } else {
                c.unwrap(org.mariadb.jdbc.Connection.class).reset(); // COM_RESET_CONNECTION
            }
            out.add("after_reset=[" + one(c, state) + "]");
            st.execute("SET SESSION time_zone = '+06:00'");
            st.execute("SET @matrix_uv = 8");
            if (mysqlCJ) {
                c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser(user2, password2); // COM_CHANGE_USER
                out.add("after_change_user=[" + one(c, state) + "]");
            } else {
                out.add("change_user=driver has no API");
            }
            return String.join(" ", out);
        }
    }

    static String tls() throws Exception {
        String opts;
        if (mysqlCJ) {
            // Connector/J reads trust anchors only from a key store: build a
            // PKCS#12 one from the CA's PEM.
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            try (var in = Files.newInputStream(Path.of(sslCa))) {
                ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            Path store = Path.of(tmp, prefix + "truststore.p12");
            try (var o = Files.newOutputStream(store)) {
                ks.store(o, "matrix".toCharArray());
            }
            opts = "sslMode=VERIFY_CA&trustCertificateKeyStoreUrl=" + store.toUri() + "&trustCertificateKeyStoreType=PKCS12"
                    + "&trustCertificateKeyStorePassword=matrix";
        } else {
            opts = "sslMode=verify-ca&serverSslCert=" + sslCa;
        }
        try (Connection c = open(opts)) {
            boolean secure = mysqlCJ
                    ? c.unwrap(com.mysql.cj.jdbc.ConnectionImpl.class).getSession().isSSLEstablished()
                    : c.unwrap(org.mariadb.jdbc.Connection.class).getContext()
                            .hasClientCapability(org.mariadb.jdbc.util.constants.Capabilities.SSL);
            return "tls=" + secure + " select=" + one(c, "SELECT 1");
        }
    }

    // ---- helpers ------------------------------------------------------

    static String env(String k) {
        String v = System.getenv(k);
        if (v == null) {
            System.err.println("environment variable " + k + " is not set (see test/drivers/README.md)");
            System.exit(2);
        }
        return v;
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
