<?php
// The driver-matrix scenario program for PHP's mysqli (MATRIX_DRIVER=mysqli)
// and PDO MySQL (MATRIX_DRIVER=pdo-mysql), both on mysqlnd. Protocol and
// scenarios: test/drivers/README.md. One JSON line per scenario on stdout;
// everything else goes to stderr.

declare(strict_types=1);

// Nothing but the JSON lines on stdout: PHP's own warnings go to stderr.
ini_set('display_errors', 'stderr');
error_reporting(E_ALL);

function env(string $k): string {
    $v = getenv($k);
    if ($v === false) {
        fwrite(STDERR, "environment variable $k is not set (see test/drivers/README.md)\n");
        exit(2);
    }
    return $v;
}

$E = [];
foreach (['driver', 'host', 'port', 'user', 'password', 'db', 'user2', 'password2', 'ssl_ca', 'prefix', 'tmp'] as $k) {
    $E[$k] = env('MATRIX_' . strtoupper($k));
}
$E['port'] = (int)$E['port'];
$PDO = $E['driver'] === 'pdo-mysql';
if (!$PDO && $E['driver'] !== 'mysqli') {
    fwrite(STDERR, "MATRIX_DRIVER must be mysqli or pdo-mysql, not {$E['driver']}\n");
    exit(2);
}
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);

class Unsupported extends Exception {}

$measured = null;

// conn opens a connection with the driver's defaults plus options.
function conn(array $opt = [], int $flags = 0) {
    global $E, $PDO;
    if ($PDO) {
        $dsn = "mysql:host={$E['host']};port={$E['port']};dbname={$E['db']}";
        return new PDO($dsn, $E['user'], $E['password'], $opt + [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    }
    $m = mysqli_init();
    foreach ($opt as $k => $v) {
        $m->options($k, $v);
    }
    $m->real_connect($E['host'], $E['user'], $E['password'], $E['db'], $E['port'], null, $flags);
    return $m;
}

function q($c, string $sql): void {
    global $PDO;
    if ($PDO) {
        $c->exec($sql);
    } else {
        $c->query($sql);
    }
}

function one($c, string $sql): string {
    global $PDO;
    if ($PDO) {
        $r = $c->query($sql)->fetch(PDO::FETCH_NUM);
    } else {
        $r = $c->query($sql)->fetch_row();
    }
    if (!$r) {
        return '(no row)';
    }
    return $r[0] === null ? 'NULL' : (string)$r[0];
}

function table($c, string $name, string $cols): string {
    global $E;
    $t = $E['prefix'] . $name;
    q($c, "DROP TABLE IF EXISTS $t");
    q($c, "CREATE TABLE $t ($cols)");
    return $t;
}

function render($v): string {
    if ($v === null) {
        return 'NULL';
    }
    if (is_float($v)) {
        return var_export($v, true); // shortest round-trip form, not precision=14
    }
    return (string)$v;
}

// typed renders one fetched value with its PHP type (binary strings as hex).
function typed($v): string {
    if (is_string($v) && !preg_match('//u', $v)) {
        return 'bin:' . bin2hex($v);
    }
    return ($v === null ? 'null' : gettype($v)) . ':' . render($v);
}

// mismatches lists the columns whose fetched value is not the inserted
// one, allowing the usual representations (numbers as strings, BIT as
// an integer or one byte, JSON re-encoded).
function mismatches(array $want, array $got): array {
    $bad = [];
    foreach ($want as $i => $w) {
        $g = $got[$i] ?? null;
        if ($w === null || $g === null) {
            $same = $w === $g;
        } elseif (is_float($w)) {
            $same = is_numeric($g) && (float)$g === $w;
        } elseif ($i === 15) { // BIT(8)
            $same = $g === $w || $g === ord($w) || $g === (string)ord($w);
        } elseif ($i === 14) { // JSON
            $same = json_decode((string)$g, true) === json_decode($w, true);
        } else {
            $same = (string)$g === (string)$w;
        }
        if (!$same) {
            $bad[] = 'column ' . ($i + 1) . ': inserted ' . substr(typed($w), 0, 60) . ', read ' . substr(typed($g), 0, 60);
        }
    }
    return $bad;
}

function rows_text(array $rows): string {
    $out = '';
    foreach ($rows as $r) {
        $out .= implode('|', array_map('render', $r)) . "\n";
    }
    return $out;
}

function sc_connect() {
    global $E, $PDO;
    $c = $PDO ? new PDO("mysql:host={$E['host']};port={$E['port']};dbname={$E['db']}", $E['user'], $E['password'])
              : new mysqli($E['host'], $E['user'], $E['password'], $E['db'], $E['port']);
    return ['select=' . one($c, 'SELECT 1+1'), 'PHP ' . PHP_VERSION . ', ' . ($PDO ? 'PDO MySQL' : 'mysqli')
        . ' on ' . mysqli_get_client_info() . ' (the client library of both)'];
}

function sc_prepared_types() {
    global $PDO;
    $c = conn($PDO ? [PDO::ATTR_EMULATE_PREPARES => false] : []);
    $t = table($c, 'types', "id INT PRIMARY KEY, ti TINYINT, i INT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT,"
        . " du DOUBLE, da DATE, dt DATETIME(6), tm TIME, ts TIMESTAMP NULL, vc VARCHAR(64) CHARACTER SET utf8mb4,"
        . " tx TEXT CHARACTER SET utf8mb4, bl BLOB, js JSON, bi BIT(8), en ENUM('a','b','c')");
    $all = '';
    for ($i = 0; $i < 256; $i++) {
        $all .= chr($i);
    }
    // BIGINT UNSIGNED max and the DECIMAL go as strings: a PHP int stops at
    // 2^63-1 and a double would round the DECIMAL.
    $vals = [1, -128, 2147483647, '18446744073709551615', '12345678901234.123456', 1.5, M_PI, '2024-02-29',
        '2024-02-29 23:59:58.123456', '12:34:56', '2024-01-15 10:20:30', "h\u{e9}llo w\u{f6}rld \u{1F680}",
        str_repeat("text \u{e5}\u{e4}\u{f6} ", 200), $all, '{"a": 1, "b": [true, null, "x"]}', 0xA5, 'b'];
    $nulls = array_merge([2], array_fill(0, 16, null));
    $ins = "INSERT INTO $t VALUES (" . implode(',', array_fill(0, 17, '?')) . ")";
    if ($PDO) {
        $bind = $vals;
        $bind[15] = "\xA5"; // PDO binds strings: BIT(8) takes the one byte
        // PDO turns a float parameter into a string with ini precision
        // (14 digits): the DOUBLE goes as its shortest exact string.
        $bind[6] = var_export(M_PI, true);
        $st = $c->prepare($ins);
        $st->execute($bind);
        $st->execute($nulls);
        $sel = $c->prepare("SELECT * FROM $t WHERE id IN (?, ?) ORDER BY id");
        $sel->execute([1, 2]);
        $rows = $sel->fetchAll(PDO::FETCH_NUM);
    } else {
        $st = $c->prepare($ins);
        $types = 'iiissddssssssbsis'; // b: the BLOB goes by send_long_data
        $null = null;
        $bind = $vals;
        $bind[13] = $null;
        $st->bind_param($types, ...$bind);
        $st->send_long_data(13, $all);
        $st->execute();
        $types2 = str_repeat('s', 17);
        $st2 = $c->prepare($ins);
        $st2->bind_param($types2, ...$nulls);
        $st2->execute();
        $sel = $c->prepare("SELECT * FROM $t WHERE id IN (?, ?) ORDER BY id");
        $a = 1;
        $b = 2;
        $sel->bind_param('ii', $a, $b);
        $sel->execute();
        $rows = $sel->get_result()->fetch_all(MYSQLI_NUM);
    }
    $out = '';
    foreach ($rows as $r) {
        $out .= implode('|', array_map('typed', $r)) . "\n";
    }
    fwrite(STDERR, "prepared_types rendering:\n$out");
    $want = $vals;
    $want[15] = "\xA5";
    $bad = array_merge(mismatches($want, $rows[0] ?? []), mismatches($nulls, $rows[1] ?? []));
    if (count($rows) !== 2 || $bad) {
        throw new Exception(count($rows) . ' rows; values read back differ from those inserted: ' . implode('; ', $bad));
    }
    return ['rows=' . count($rows) . ' sha256=' . hash('sha256', $out), $PDO
        ? 'ATTR_EMULATE_PREPARES=false: server-side prepare/execute'
        : 'prepare/bind_param (BLOB by send_long_data)/get_result'];
}

function sc_batch() {
    global $PDO, $measured;
    $c = conn($PDO ? [PDO::ATTR_EMULATE_PREPARES => false] : []);
    $t = table($c, 'batch', 'id INT PRIMARY KEY, v INT');
    // No batch API in PHP: a prepared INSERT executed 1,000 times in one transaction.
    $t0 = hrtime(true);
    if ($PDO) {
        $c->beginTransaction();
        $st = $c->prepare("INSERT INTO $t (id, v) VALUES (?, ?)");
        for ($i = 1; $i <= 1000; $i++) {
            $st->execute([$i, $i]);
        }
        $c->commit();
    } else {
        $c->begin_transaction();
        $st = $c->prepare("INSERT INTO $t (id, v) VALUES (?, ?)");
        $i = 0;
        $st->bind_param('ii', $i, $i);
        for ($i = 1; $i <= 1000; $i++) {
            $st->execute();
        }
        $c->commit();
    }
    $measured = (hrtime(true) - $t0) / 1e6;
    return ['rows=' . one($c, "SELECT COUNT(*) FROM $t") . ' sum=' . one($c, "SELECT SUM(v) FROM $t"),
        'no batch API in ' . ($PDO ? 'PDO' : 'mysqli') . ': one prepared INSERT executed 1,000 times in a transaction'];
}

function sc_transactions() {
    global $PDO;
    $c = conn();
    $t = table($c, 'trx', 'id INT PRIMARY KEY');
    $PDO ? $c->beginTransaction() : $c->begin_transaction();
    q($c, "INSERT INTO $t VALUES (1)");
    q($c, 'SAVEPOINT sp1');
    q($c, "INSERT INTO $t VALUES (2)");
    q($c, 'ROLLBACK TO SAVEPOINT sp1');
    $c->commit();
    $PDO ? $c->beginTransaction() : $c->begin_transaction();
    q($c, "INSERT INTO $t VALUES (3)");
    $c->rollback();
    return 'rows=' . one($c, "SELECT IFNULL(GROUP_CONCAT(id ORDER BY id), 'none') FROM $t");
}

function sc_multi_statement() {
    global $E, $PDO;
    $t = $E['prefix'] . 'multi';
    $sql = "DROP TABLE IF EXISTS $t; CREATE TABLE $t (id INT PRIMARY KEY); INSERT INTO $t VALUES (1),(2),(3);"
        . " SELECT COUNT(*) AS n FROM $t; SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3;"
        . " UPDATE $t SET id = id + 10 WHERE id > 1; SELECT SUM(id) FROM $t";
    $sets = [];
    if ($PDO) {
        $c = conn([PDO::MYSQL_ATTR_MULTI_STATEMENTS => true, PDO::ATTR_EMULATE_PREPARES => true]);
        $st = $c->query($sql);
        do {
            if ($st->columnCount() > 0) {
                $sets[] = trim(str_replace("\n", ';', rows_text($st->fetchAll(PDO::FETCH_NUM))), ';');
            }
        } while ($st->nextRowset());
    } else {
        $c = conn();
        $c->multi_query($sql);
        do {
            if ($r = $c->store_result()) {
                $sets[] = trim(str_replace("\n", ';', rows_text($r->fetch_all(MYSQLI_NUM))), ';');
                $r->free();
            }
        } while ($c->more_results() && $c->next_result());
    }
    return ['sets=[' . implode('] [', $sets) . ']', $PDO ? 'MYSQL_ATTR_MULTI_STATEMENTS, query() + nextRowset()'
        : 'multi_query() + store_result()/next_result()'];
}

function sc_procedure_out() {
    global $E, $PDO;
    $c = conn();
    $p = $E['prefix'] . 'proc';
    q($c, "DROP PROCEDURE IF EXISTS $p");
    q($c, "CREATE PROCEDURE $p(IN a INT, OUT b INT, INOUT x INT) BEGIN"
        . " SET b = a * 2; SET x = x + a; SELECT a AS a, 'first' AS s; SELECT seq FROM seq_1_to_3; END");
    q($c, 'SET @x = 10');
    $sets = [];
    // Neither binds OUT parameters: CALL p(?, @b, @x), then SELECT @b, @x.
    if ($PDO) {
        $st = $c->prepare("CALL $p(?, @b, @x)");
        $st->execute([5]);
        do {
            if ($st->columnCount() > 0) {
                $sets[] = trim(str_replace("\n", ';', rows_text($st->fetchAll(PDO::FETCH_NUM))), ';');
            }
        } while ($st->nextRowset());
        $st->closeCursor();
    } else {
        $st = $c->prepare("CALL $p(?, @b, @x)");
        $a = 5;
        $st->bind_param('i', $a);
        $st->execute();
        do {
            if ($r = $st->get_result()) {
                $sets[] = trim(str_replace("\n", ';', rows_text($r->fetch_all(MYSQLI_NUM))), ';');
            }
        } while ($st->more_results() && $st->next_result());
        $st->close();
    }
    return ['sets=[' . implode('] [', $sets) . '] b_x=' . one($c, "SELECT CONCAT(@b, ' ', @x)"),
        'no OUT parameter binding: CALL p(?, @b, @x), then SELECT @b, @x'];
}

function pseudo_random(int $n, int $seed): string {
    $x = $seed ?: 1;
    $block = '';
    for ($i = 0; $i < 65536; $i++) {
        $x ^= ($x << 13) & 0xFFFFFFFF;
        $x ^= $x >> 17;
        $x ^= ($x << 5) & 0xFFFFFFFF;
        $block .= chr($x & 0xFF);
    }
    return str_repeat($block, intdiv($n, 65536));
}

function sc_large(int $mib) {
    global $PDO;
    $data = pseudo_random($mib << 20, $mib);
    $c = conn($PDO ? [PDO::ATTR_EMULATE_PREPARES => false] : []);
    $t = table($c, "large$mib", 'id INT PRIMARY KEY, b LONGBLOB');
    if ($PDO) {
        $st = $c->prepare("INSERT INTO $t VALUES (1, ?)");
        $st->bindValue(1, $data, PDO::PARAM_LOB);
        $st->execute();
        $back = $c->query("SELECT b FROM $t WHERE id = 1")->fetchColumn();
    } else {
        // send_long_data, in 1 MiB pieces: a value larger than one packet.
        $st = $c->prepare("INSERT INTO $t VALUES (1, ?)");
        $null = null;
        $st->bind_param('b', $null);
        foreach (str_split($data, 1 << 20) as $piece) {
            $st->send_long_data(0, $piece);
        }
        $st->execute();
        $back = one($c, "SELECT b FROM $t WHERE id = 1");
    }
    return ['len=' . strlen($back) . ' sha256=' . hash('sha256', $back) . ' same=' . ($back === $data ? 'true' : 'false'),
        $PDO ? 'one PDO::PARAM_LOB parameter (server-side prepare)' : 'bind_param b + send_long_data in 1 MiB pieces'];
}

function sc_stream() {
    global $PDO;
    $h = hash_init('sha256');
    $n = 0;
    if ($PDO) {
        $c = conn([PDO::MYSQL_ATTR_USE_BUFFERED_QUERY => false]);
        $st = $c->query('SELECT seq, MD5(seq) FROM seq_1_to_200000');
        while ($r = $st->fetch(PDO::FETCH_NUM)) {
            $n++;
            hash_update($h, "{$r[0]},{$r[1]}\n");
        }
    } else {
        $c = conn();
        $res = $c->query('SELECT seq, MD5(seq) FROM seq_1_to_200000', MYSQLI_USE_RESULT);
        while ($r = $res->fetch_row()) {
            $n++;
            hash_update($h, "{$r[0]},{$r[1]}\n");
        }
        $res->free();
    }
    return ["rows=$n sha256=" . hash_final($h), $PDO ? 'MYSQL_ATTR_USE_BUFFERED_QUERY=false' : 'query(..., MYSQLI_USE_RESULT)'];
}

function sc_cursor_fetch() {
    global $PDO;
    if ($PDO) {
        throw new Unsupported('PDO MySQL has no server-side cursor (COM_STMT_FETCH)');
    }
    $c = conn();
    $st = $c->stmt_init();
    $st->prepare('SELECT seq, MD5(seq) FROM seq_1_to_10000');
    $st->attr_set(MYSQLI_STMT_ATTR_CURSOR_TYPE, MYSQLI_CURSOR_TYPE_READ_ONLY);
    // Fetch size 100: mysqlnd implements only 1 (it throws "Not
    // implemented" for more), so it sends one COM_STMT_FETCH per row.
    $prefetch = 'PREFETCH_ROWS=100 accepted';
    try {
        $st->attr_set(MYSQLI_STMT_ATTR_PREFETCH_ROWS, 100);
    } catch (mysqli_sql_exception $e) {
        $prefetch = 'PREFETCH_ROWS=100 refused by mysqlnd (' . $e->getMessage() . '): one row per COM_STMT_FETCH';
    }
    $st->execute();
    $st->bind_result($a, $b);
    $h = hash_init('sha256');
    $n = 0;
    while ($st->fetch()) {
        $n++;
        hash_update($h, "$a,$b\n");
    }
    return ["rows=$n sha256=" . hash_final($h), "CURSOR_TYPE_READ_ONLY; $prefetch"];
}

function sc_errors() {
    global $PDO;
    $c = conn();
    $t = table($c, 'err', 'id INT PRIMARY KEY');
    q($c, "INSERT INTO $t VALUES (1)");
    q($c, "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'");
    $out = [];
    foreach (['SELEC 1', "INSERT INTO $t VALUES (1)", "INSERT INTO $t VALUES (1/0)"] as $bad) {
        $code = 'no error';
        try {
            q($c, $bad);
        } catch (PDOException $e) {
            $code = $e->errorInfo[1] . '/' . $e->errorInfo[0];
        } catch (mysqli_sql_exception $e) {
            $code = $e->getCode() . '/' . $e->getSqlState();
        }
        $out[] = "$code then " . one($c, 'SELECT 1');
    }
    return implode('; ', $out);
}

function sc_warnings() {
    global $PDO;
    $c = conn();
    $t = table($c, 'ai', 'id INT AUTO_INCREMENT PRIMARY KEY, v INT');
    $out = ['cast=' . one($c, "SELECT CAST('abc' AS SIGNED)")];
    $codes = [];
    if ($PDO) {
        foreach ($c->query('SHOW WARNINGS')->fetchAll(PDO::FETCH_NUM) as $r) {
            $codes[] = $r[1];
        }
    } else {
        if ($w = $c->get_warnings()) { // mysqli's warnings API (SHOW WARNINGS underneath)
            do {
                $codes[] = $w->errno;
            } while ($w->next());
        }
    }
    $out[] = 'warnings=[' . implode(',', $codes) . ']';
    $out[] = 'warning_count=' . one($c, 'SELECT @@warning_count');
    q($c, "INSERT INTO $t (v) VALUES (10)");
    $drv = $PDO ? $c->lastInsertId() : $c->insert_id;
    $id = one($c, "SELECT id FROM $t"); // the plain SELECT
    $r = $PDO ? $c->query('SELECT LAST_INSERT_ID(), ROW_COUNT()')->fetch(PDO::FETCH_NUM)
              : $c->query('SELECT LAST_INSERT_ID(), ROW_COUNT()')->fetch_row();
    [$lid, $rc] = [render($r[0]), render($r[1])];
    $out[] = 'last_insert_id=' . ($lid === $id && (string)$drv === $id ? 'inserted id' : "$lid (driver $drv) but the row has id $id");
    $out[] = "row_count=$rc";
    one($c, 'SELECT SQL_CALC_FOUND_ROWS seq FROM seq_1_to_50 LIMIT 1');
    $out[] = 'found_rows=' . one($c, 'SELECT FOUND_ROWS()');
    return [implode(' ', $out), $PDO ? 'PDO has no warnings API: SHOW WARNINGS' : 'mysqli::get_warnings()'];
}

function sc_session_vars() {
    $c = conn();
    foreach (["SET time_zone = '+03:00'", "SET sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'",
        'SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci', 'SET @matrix_uv = 42'] as $s) {
        q($c, $s);
    }
    $out = [];
    foreach (['@@time_zone', '@@sql_mode', '@@character_set_connection', '@@collation_connection', '@matrix_uv'] as $v) {
        $out[] = "$v=" . one($c, "SELECT $v");
    }
    return implode(' ', $out);
}

function sc_compression() {
    global $PDO;
    $c = $PDO ? conn([PDO::MYSQL_ATTR_COMPRESS => true]) : conn([], MYSQLI_CLIENT_COMPRESS);
    $t = table($c, 'compress', 'id INT PRIMARY KEY, tx LONGTEXT');
    $text = '';
    for ($i = 0; strlen($text) < (1 << 20); $i++) {
        $text .= "line $i of a compressible text\n";
    }
    $text = substr($text, 0, 1 << 20);
    $st = $c->prepare("INSERT INTO $t VALUES (1, ?)");
    if ($PDO) {
        $st->execute([$text]);
    } else {
        $st->bind_param('s', $text);
        $st->execute();
    }
    $back = one($c, "SELECT tx FROM $t WHERE id = 1");
    $sum = 0;
    $n = 0;
    $rows = $PDO ? $c->query('SELECT seq FROM seq_1_to_1000')->fetchAll(PDO::FETCH_NUM) : $c->query('SELECT seq FROM seq_1_to_1000')->fetch_all(MYSQLI_NUM);
    foreach ($rows as $r) {
        $n++;
        $sum += (int)$r[0];
    }
    return ['text_len=' . strlen($back) . ' text_sha256=' . hash('sha256', $back) . ' same=' . ($back === $text ? 'true' : 'false')
        . " rows=$n sum=$sum", $PDO ? 'MYSQL_ATTR_COMPRESS' : 'MYSQLI_CLIENT_COMPRESS'];
}

function sc_load_data_local() {
    global $E, $PDO;
    $csv = $E['tmp'] . '/' . $E['prefix'] . 'load.csv';
    $body = '';
    for ($i = 1; $i <= 10000; $i++) {
        $body .= "$i," . (2 * $i) . "\n";
    }
    file_put_contents($csv, $body);
    try {
        // mysqli: MYSQLI_OPT_LOCAL_INFILE is not enough while php.ini has
        // mysqli.allow_local_infile=0 (the default, a system setting);
        // MYSQLI_OPT_LOAD_DATA_LOCAL_DIR (PHP 8.1+) allows this directory.
        $c = $PDO ? conn([PDO::MYSQL_ATTR_LOCAL_INFILE => true])
                  : conn([MYSQLI_OPT_LOCAL_INFILE => true, MYSQLI_OPT_LOAD_DATA_LOCAL_DIR => $E['tmp']]);
        $t = table($c, 'load', 'id INT PRIMARY KEY, v INT');
        $sql = "LOAD DATA LOCAL INFILE '$csv' INTO TABLE $t FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' (id, v)";
        if ($PDO) {
            $affected = $c->exec($sql);
        } else {
            $c->query($sql);
            $affected = $c->affected_rows;
        }
        return ["affected=$affected rows=" . one($c, "SELECT COUNT(*) FROM $t") . ' sum=' . one($c, "SELECT SUM(v) FROM $t"),
            $PDO ? 'MYSQL_ATTR_LOCAL_INFILE' : 'MYSQLI_OPT_LOCAL_INFILE + MYSQLI_OPT_LOAD_DATA_LOCAL_DIR'
                . ' (MYSQLI_OPT_LOCAL_INFILE alone is refused under the default mysqli.allow_local_infile=0)'];
    } finally {
        @unlink($csv);
    }
}

function sc_reset_change_user() {
    global $E, $PDO;
    $state = "SELECT CONCAT_WS(' ', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), @@session.time_zone, IFNULL(CAST(@matrix_uv AS CHAR), 'NULL'))";
    $c = conn();
    q($c, "SET SESSION time_zone = '+05:00'");
    q($c, 'SET @matrix_uv = 7');
    $out = ['before=[' . one($c, $state) . ']'];
    if ($PDO) {
        throw new Unsupported('PDO MySQL has neither COM_RESET_CONNECTION nor COM_CHANGE_USER');
    }
    // mysqli has no COM_RESET_CONNECTION call; change_user (COM_CHANGE_USER)
    // also resets the session.
    $c->change_user($E['user2'], $E['password2'], $E['db']);
    $out[] = 'reset=no API after_change_user=[' . one($c, $state) . ']';
    return [implode(' ', $out), 'mysqli::change_user(); mysqli has no reset-connection call'];
}

function sc_tls() {
    global $E, $PDO;
    // Both demand TLS once a CA is given (a server without TLS fails the
    // connect) and verify the certificate: a connection is TLS-verified.
    if ($PDO) {
        $c = conn([PDO::MYSQL_ATTR_SSL_CA => $E['ssl_ca'], PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT => true]);
        return ['tls=verified select=' . one($c, 'SELECT 1'), 'MYSQL_ATTR_SSL_CA + MYSQL_ATTR_SSL_VERIFY_SERVER_CERT;'
            . ' PHP exposes no TLS state: mysqlnd fails the connect unless TLS was negotiated and verified'];
    }
    $m = mysqli_init();
    $m->ssl_set(null, null, $E['ssl_ca'], null, null);
    $m->options(MYSQLI_OPT_SSL_VERIFY_SERVER_CERT, true);
    $m->real_connect($E['host'], $E['user'], $E['password'], $E['db'], $E['port'], null, MYSQLI_CLIENT_SSL);
    return ['tls=verified select=' . one($m, 'SELECT 1'), 'ssl_set + MYSQLI_OPT_SSL_VERIFY_SERVER_CERT + MYSQLI_CLIENT_SSL;'
        . ' PHP exposes no TLS state: mysqlnd fails the connect unless TLS was negotiated and verified'];
}

$SCENARIOS = [
    'connect' => 'sc_connect', 'prepared_types' => 'sc_prepared_types', 'batch' => 'sc_batch',
    'transactions' => 'sc_transactions', 'multi_statement' => 'sc_multi_statement', 'procedure_out' => 'sc_procedure_out',
    'large_20mib' => fn() => sc_large(20), 'large_40mib' => fn() => sc_large(40), 'stream_200k' => 'sc_stream',
    'cursor_fetch' => 'sc_cursor_fetch', 'errors' => 'sc_errors', 'warnings' => 'sc_warnings',
    'session_vars' => 'sc_session_vars', 'compression' => 'sc_compression', 'load_data_local' => 'sc_load_data_local',
    'reset_change_user' => 'sc_reset_change_user', 'tls' => 'sc_tls',
];

$only = array_filter(array_map('trim', explode(',', (string)getenv('MATRIX_SCENARIOS'))));
set_time_limit(0);
// The 60 s scenario timeout: every mysqlnd read waits at most this long.
ini_set('default_socket_timeout', '60');
ini_set('mysqlnd.net_read_timeout', '60');
foreach ($SCENARIOS as $name => $fn) {
    if ($only && !in_array($name, $only, true)) {
        continue;
    }
    $measured = null;
    $t0 = hrtime(true);
    $line = ['scenario' => $name, 'status' => 'pass', 'result' => '', 'detail' => ''];
    try {
        $r = $fn();
        if (is_array($r)) {
            [$line['result'], $line['detail']] = $r;
        } else {
            $line['result'] = $r;
        }
    } catch (Unsupported $e) {
        $line['status'] = 'unsupported';
        $line['detail'] = $e->getMessage();
    } catch (Throwable $e) {
        $line['status'] = 'fail';
        $line['detail'] = get_class($e) . ': ' . $e->getMessage();
        fwrite(STDERR, "$name: $e\n");
    }
    $line['ms'] = round($measured ?? (hrtime(true) - $t0) / 1e6, 1);
    echo json_encode($line, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
    gc_collect_cycles();
}
