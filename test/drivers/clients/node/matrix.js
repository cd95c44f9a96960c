// The driver-matrix scenario program for mysql2 (MATRIX_DRIVER=mysql2).
// Protocol and scenarios: test/drivers/README.md. One JSON line per
// scenario on stdout; everything else goes to stderr.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const mysql = require('mysql2/promise');

const SCENARIO_TIMEOUT_MS = 60000;

function env(k) {
  const v = process.env[k];
  if (v === undefined) {
    console.error(`environment variable ${k} is not set (see test/drivers/README.md)`);
    process.exit(2);
  }
  return v;
}

const E = {
  driver: env('MATRIX_DRIVER'), host: env('MATRIX_HOST'), port: Number(env('MATRIX_PORT')),
  user: env('MATRIX_USER'), password: env('MATRIX_PASSWORD'), db: env('MATRIX_DB'),
  user2: env('MATRIX_USER2'), password2: env('MATRIX_PASSWORD2'), sslCa: env('MATRIX_SSL_CA'),
  prefix: env('MATRIX_PREFIX'), tmp: env('MATRIX_TMP'),
};
if (E.driver !== 'mysql2') {
  console.error(`MATRIX_DRIVER must be mysql2, not ${E.driver}`);
  process.exit(2);
}

class Unsupported extends Error {}

// Connections a scenario opened; destroyed when it ends or times out.
let opened = [];
// Wall time of a scenario's measured part; null means the whole scenario.
let measuredMs = null;

async function open(options = {}) {
  const c = await mysql.createConnection({
    host: E.host, port: E.port, user: E.user, password: E.password, database: E.db,
    connectTimeout: 10000, ...options,
  });
  opened.push(c);
  return c;
}

// Drops and creates table prefix+name.
async function table(c, name, columns) {
  const t = E.prefix + name;
  await c.query(`DROP TABLE IF EXISTS ${t}`);
  await c.query(`CREATE TABLE ${t} (${columns})`);
  return t;
}

async function one(c, sql) {
  const [rows] = await c.query({ sql, rowsAsArray: true });
  return rows.length ? render(rows[0][0]) : '(no row)';
}

function render(v) {
  if (v === null || v === undefined) return 'NULL';
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

// Renders every result of a multi-result query (an array with one entry per
// result): result sets as rs[...], OK packets as uc=N.
function allResults(results) {
  const parts = [];
  for (const r of results) {
    if (Array.isArray(r)) {
      parts.push(`rs[${r.map((row) => Object.values(row).map(render).join(',')).join(';')}]`);
    } else {
      parts.push(`uc=${r.affectedRows}`);
    }
  }
  return parts.join('|');
}

// ---- scenarios ----------------------------------------------------------

async function connect() {
  const c = await mysql.createConnection({ host: E.host, port: E.port, user: E.user, password: E.password, database: E.db });
  opened.push(c);
  return `select=${await one(c, 'SELECT 1+1')}`;
}

async function preparedTypes() {
  // execute() is a server-side prepared statement (COM_STMT_PREPARE/EXECUTE).
  const c = await open({ supportBigNumbers: true, bigNumberStrings: true, dateStrings: true });
  const t = await table(c, 'types', 'id INT PRIMARY KEY, ti TINYINT, i INT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT,'
    + ' du DOUBLE, da DATE, dt DATETIME(6), tm TIME, ts TIMESTAMP NULL, vc VARCHAR(64) CHARACTER SET utf8mb4,'
    + ' tx TEXT CHARACTER SET utf8mb4, bl BLOB, js JSON, bi BIT(8), en ENUM(\'a\',\'b\',\'c\')');
  const all = Buffer.alloc(256);
  for (let i = 0; i < 256; i++) all[i] = i;
  const insert = `INSERT INTO ${t} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`;
  await c.execute(insert, [1, -128, 2147483647, '18446744073709551615', '12345678901234.123456', 1.5, Math.PI,
    '2024-02-29', '2024-02-29 23:59:58.123456', '12:34:56', '2024-01-15 10:20:30', 'h\u00e9llo w\u00f6rld \u{1F680}',
    'text \u00e5\u00e4\u00f6 '.repeat(200), all, '{"a": 1, "b": [true, null, "x"]}', 0xA5, 'b']);
  await c.execute(insert, [2, ...new Array(16).fill(null)]);
  const [rows] = await c.execute({ sql: `SELECT * FROM ${t} WHERE id IN (?, ?) ORDER BY id`, rowsAsArray: true }, [1, 2]);
  const out = rows.map((r) => r.map(render).join('|') + '\n').join('');
  process.stderr.write(`prepared_types rendering:\n${out}`);
  return `rows=${rows.length} sha256=${sha256(out)}`;
}

async function batch() {
  // mysql2 has no batch API of its own: its bulk insert is VALUES ? with an array of rows.
  const c = await open();
  const t = await table(c, 'batch', 'id INT PRIMARY KEY, v INT');
  const rows = [];
  for (let i = 1; i <= 1000; i++) rows.push([i, i]);
  const t0 = process.hrtime.bigint();
  await c.query(`INSERT INTO ${t} (id, v) VALUES ?`, [rows]);
  measuredMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return `rows=${await one(c, `SELECT COUNT(*) FROM ${t}`)} sum=${await one(c, `SELECT SUM(v) FROM ${t}`)}`;
}

async function transactions() {
  const c = await open();
  const t = await table(c, 'trx', 'id INT PRIMARY KEY');
  await c.beginTransaction();
  await c.query(`INSERT INTO ${t} VALUES (1)`);
  await c.query('SAVEPOINT sp1');
  await c.query(`INSERT INTO ${t} VALUES (2)`);
  await c.query('ROLLBACK TO SAVEPOINT sp1');
  await c.commit();
  await c.beginTransaction();
  await c.query(`INSERT INTO ${t} VALUES (3)`);
  await c.rollback();
  return `rows=${await one(c, `SELECT IFNULL(GROUP_CONCAT(id ORDER BY id), '') FROM ${t}`)}`;
}

async function multiStatement() {
  const c = await open({ multipleStatements: true });
  const t = E.prefix + 'multi';
  const [results] = await c.query(`DROP TABLE IF EXISTS ${t}; CREATE TABLE ${t} (id INT PRIMARY KEY);`
    + ` INSERT INTO ${t} VALUES (1),(2),(3); SELECT COUNT(*) AS n FROM ${t};`
    + ` SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3; UPDATE ${t} SET id = id + 10 WHERE id > 1;`
    + ` SELECT SUM(id) FROM ${t}`);
  return allResults(results);
}

async function procedureOut() {
  // mysql2 has no OUT-parameter binding: CALL p(?, @b, @x), then SELECT @b, @x.
  const c = await open();
  const p = E.prefix + 'proc';
  await c.query(`DROP PROCEDURE IF EXISTS ${p}`);
  await c.query(`CREATE PROCEDURE ${p}(IN a INT, OUT b INT, INOUT x INT) BEGIN`
    + " SET b = a * 2; SET x = x + a; SELECT a AS a, 'first' AS s; SELECT seq FROM seq_1_to_3; END");
  await c.query('SET @x = 10');
  const [results] = await c.execute(`CALL ${p}(?, @b, @x)`, [5]);
  const [[out]] = await c.query('SELECT @b AS b, @x AS x');
  return `${allResults(results)} b=${out.b} x=${out.x}`;
}

// Deterministic pseudo-random bytes (xorshift32), so both runs send the same value.
function pseudoRandom(n, seed) {
  const b = Buffer.allocUnsafe(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

async function large(mib) {
  const data = pseudoRandom(mib << 20, mib);
  const c = await open();
  const t = await table(c, `large${mib}`, 'id INT PRIMARY KEY, b LONGBLOB');
  await c.execute(`INSERT INTO ${t} VALUES (?, ?)`, [1, data]);
  const [[row]] = await c.execute(`SELECT b FROM ${t} WHERE id = ?`, [1]);
  return `len=${row.b.length} sha256=${sha256(row.b)} same=${row.b.equals(data)}`;
}

async function stream() {
  const c = await open();
  const h = crypto.createHash('sha256');
  let n = 0;
  // query().stream() of the callback connection: rows arrive one by one, unbuffered.
  const s = c.connection.query({ sql: 'SELECT seq, MD5(seq) FROM seq_1_to_200000', rowsAsArray: true }).stream();
  for await (const row of s) {
    n++;
    h.update(`${row[0]},${row[1]}\n`);
  }
  return `rows=${n} sha256=${h.digest('hex')}`;
}

async function cursorFetch() {
  throw new Unsupported('mysql2 has no server-side cursor (COM_STMT_FETCH)');
}

async function errors() {
  const c = await open();
  const t = await table(c, 'err', 'id INT PRIMARY KEY');
  await c.query(`INSERT INTO ${t} VALUES (1)`);
  await c.query("SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'");
  const out = [];
  for (const bad of ['SELEC 1', `INSERT INTO ${t} VALUES (1)`, `INSERT INTO ${t} VALUES (1/0)`]) {
    let code = 'no error';
    try {
      await c.query(bad);
    } catch (e) {
      if (!e.errno) throw e;
      code = `${e.errno}/${e.sqlState}`;
    }
    out.push(`${code} then ${await one(c, 'SELECT 1')}`);
  }
  return out.join('; ');
}

async function warnings() {
  const c = await open();
  const t = await table(c, 'ai', 'id INT AUTO_INCREMENT PRIMARY KEY, v INT');
  const out = [`cast=${await one(c, "SELECT CAST('abc' AS SIGNED)")}`];
  // mysql2 has no warnings API for a SELECT: SHOW WARNINGS.
  const [w] = await c.query('SHOW WARNINGS');
  out.push(`warnings=[${w.map((r) => r.Code).join(',')}]`);
  out.push(`warning_count=${await one(c, 'SELECT @@warning_count')}`);
  const [ins] = await c.query(`INSERT INTO ${t} (v) VALUES (10)`);
  out.push(`row_count=${await one(c, 'SELECT ROW_COUNT()')}`);
  await one(c, 'SELECT 1');
  const id = await one(c, `SELECT id FROM ${t}`);
  const lid = await one(c, 'SELECT LAST_INSERT_ID()');
  out.push(`last_insert_id=${lid === id && String(ins.insertId) === id ? 'inserted id' : `${lid} (driver ${ins.insertId}) but the row has id ${id}`}`);
  await one(c, 'SELECT SQL_CALC_FOUND_ROWS seq FROM seq_1_to_50 LIMIT 1');
  out.push(`found_rows=${await one(c, 'SELECT FOUND_ROWS()')}`);
  return out.join(' ');
}

async function sessionVars() {
  const c = await open();
  await c.query("SET time_zone = '+03:00'");
  await c.query("SET sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'");
  await c.query('SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci');
  await c.query('SET @matrix_uv = 42');
  const out = [];
  for (const q of ['@@time_zone', '@@sql_mode', '@@character_set_connection', '@@collation_connection', '@matrix_uv']) {
    out.push(`${q}=${await one(c, `SELECT ${q}`)}`);
  }
  return out.join(' ');
}

async function compression() {
  const c = await open({ compress: true });
  const t = await table(c, 'compress', 'id INT PRIMARY KEY, tx LONGTEXT');
  let text = '';
  for (let i = 0; text.length < (1 << 20); i++) text += `line ${i} of a compressible text\n`;
  text = text.slice(0, 1 << 20);
  await c.query(`INSERT INTO ${t} VALUES (1, ?)`, [text]);
  const back = await one(c, `SELECT tx FROM ${t} WHERE id = 1`);
  const [rows] = await c.query({ sql: 'SELECT seq FROM seq_1_to_1000', rowsAsArray: true });
  const sum = rows.reduce((s, r) => s + Number(r[0]), 0);
  return `text_len=${back.length} text_sha256=${sha256(back)} rows=${rows.length} sum=${sum}`;
}

async function loadDataLocal() {
  const csv = path.join(E.tmp, `${E.prefix}load.csv`);
  let body = '';
  for (let i = 1; i <= 10000; i++) body += `${i},${i * 2}\n`;
  fs.writeFileSync(csv, body);
  try {
    // infileStreamFactory is how mysql2 answers the server's file request.
    const c = await open({ infileStreamFactory: (p) => fs.createReadStream(p) });
    const t = await table(c, 'load', 'id INT PRIMARY KEY, v INT');
    const [res] = await c.query(`LOAD DATA LOCAL INFILE '${csv}' INTO TABLE ${t} FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' (id, v)`);
    return `affected=${res.affectedRows} rows=${await one(c, `SELECT COUNT(*) FROM ${t}`)} sum=${await one(c, `SELECT SUM(v) FROM ${t}`)}`;
  } finally {
    fs.rmSync(csv, { force: true });
  }
}

async function resetChangeUser() {
  const state = "SELECT CONCAT_WS(' ', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), @@session.time_zone, IFNULL(CAST(@matrix_uv AS CHAR), 'NULL'))";
  const c = await open();
  const out = [];
  await c.query("SET SESSION time_zone = '+05:00'");
  await c.query('SET @matrix_uv = 7');
  out.push(`before=[${await one(c, state)}]`);
  await c.reset(); // COM_RESET_CONNECTION
  out.push(`after_reset=[${await one(c, state)}]`);
  await c.query("SET SESSION time_zone = '+06:00'");
  await c.query('SET @matrix_uv = 8');
  await c.changeUser({ user: E.user2, password: E.password2 }); // COM_CHANGE_USER
  out.push(`after_change_user=[${await one(c, state)}]`);
  return out.join(' ');
}

async function tlsScenario() {
  const c = await open({ ssl: { ca: fs.readFileSync(E.sslCa), rejectUnauthorized: true } });
  const secure = Boolean(c.connection.stream && c.connection.stream.encrypted);
  return `tls=${secure} select=${await one(c, 'SELECT 1')}`;
}

const SCENARIOS = [
  ['connect', connect],
  ['prepared_types', preparedTypes],
  ['batch', batch],
  ['transactions', transactions],
  ['multi_statement', multiStatement],
  ['procedure_out', procedureOut],
  ['large_20mib', () => large(20)],
  ['large_40mib', () => large(40)],
  ['stream_200k', stream],
  ['cursor_fetch', cursorFetch],
  ['errors', errors],
  ['warnings', warnings],
  ['session_vars', sessionVars],
  ['compression', compression],
  ['load_data_local', loadDataLocal],
  ['reset_change_user', resetChangeUser],
  ['tls', tlsScenario],
];

function describe(e) {
  if (e instanceof Unsupported) return e.message;
  let s = `${e.name || 'Error'}: ${e.message}`;
  if (e.errno) s += ` [errno ${e.errno} sqlstate ${e.sqlState} code ${e.code}]`;
  else if (e.code) s += ` [${e.code}]`;
  return s;
}

async function runOne(name, fn) {
  opened = [];
  measuredMs = null;
  let status = 'pass', result = '', detail = '';
  const t0 = process.hrtime.bigint();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout: no answer within ${SCENARIO_TIMEOUT_MS / 1000}s`)), SCENARIO_TIMEOUT_MS);
  });
  try {
    result = await Promise.race([fn(), timeout]);
  } catch (e) {
    status = e instanceof Unsupported ? 'unsupported' : 'fail';
    detail = describe(e);
    if (status === 'fail') console.error(e);
  } finally {
    clearTimeout(timer);
  }
  for (const c of opened) {
    try { c.destroy(); } catch (_) { /* already gone */ }
  }
  const ms = measuredMs !== null ? measuredMs : Number(process.hrtime.bigint() - t0) / 1e6;
  if (status !== 'pass') console.error(`${name}: ${status}: ${detail}`);
  process.stdout.write(JSON.stringify({ scenario: name, status, result, detail, ms: Math.round(ms * 10) / 10 }) + '\n');
}

async function main() {
  // Drivers and stray prints never reach the protocol stream.
  console.log = console.error;
  console.info = console.error;
  console.warn = console.error;
  const only = (process.env.MATRIX_SCENARIOS || '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const [name, fn] of SCENARIOS) {
    if (only.length === 0 || only.includes(name)) await runOne(name, fn);
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
